"""/dbCheckpoint's sends (ratis_server/checkpoint_sender.py), on OM's om.db: GETs share one checkpoint
streamed from its hard links (no tar copy per GET), at most `max_sends` at once (503 past it), a fetcher that
stops reading is cut after `stall_s` and the checkpoint is deleted with its last send; an older checkpoint is
not shared. And what a follower downloads (db_checkpoint.download): only from an OM's certificate, within a
deadline, and only what fits on its disk."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import http.server
import os
import shutil
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from unittest import mock

import pytest
from aiohttp import web

from pyozone.common.http_server import HttpServer
from pyozone.common.tls import TlsStore
from pyozone.hdds.security import x509 as X
from pyozone.om.db_checkpoint import CHECKSUM_HEADER, CheckpointError, PackedCheckpoint, download
from pyozone.ratis.messages import TermIndex
from pyozone.ratis_server.checkpoint_sender import CheckpointSender
from tests.polling import wait_for_async
from tests.tls_certs import CertAuthority

BIG = 16 << 20
"""More than the sockets' buffers hold, so a fetcher that does not read stalls the send."""


class Packs:
    """Makes checkpoints of one big file, each in its own directory (as db_checkpoint.pack does)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.made: list[PackedCheckpoint] = []
        self.data = os.urandom(BIG)

    async def __call__(self) -> PackedCheckpoint:
        directory = self.root / f"serve-{len(self.made)}" / "om.db"
        directory.mkdir(parents=True)
        (directory / "000001.sst").write_bytes(self.data)
        draft = PackedCheckpoint(directory, (("000001.sst", BIG),), "", 0, TermIndex(1, 5))
        body = b"".join(draft.chunks())
        packed = dataclasses.replace(draft, sha256=hashlib.sha256(body).hexdigest(), size=len(body))
        self.made.append(packed)
        return packed

    def on_disk(self) -> list[str]:
        return sorted(p.name for p in self.root.iterdir())


@asynccontextmanager
async def serving(sender: CheckpointSender, tls: TlsStore | None = None) -> AsyncIterator[int]:
    app = web.Application()
    app.router.add_get("/dbCheckpoint", sender.send)
    server = HttpServer(app)
    port = await server.start("127.0.0.1", 0, tls.server_context() if tls is not None else None)
    try:
        yield port
    finally:
        await server.stop()


def never_reading(port: int) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall(b"GET /dbCheckpoint HTTP/1.1\r\nHost: om\r\n\r\n")
    return s


def fetch(port: int) -> tuple[int, bytes, str | None]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/dbCheckpoint", timeout=30) as answer:
            return answer.status, answer.read(), answer.headers.get(CHECKSUM_HEADER)
    except urllib.error.HTTPError as e:
        return e.code, e.read(), None


def run(coroutine: object) -> None:
    asyncio.run(asyncio.wait_for(coroutine, 60))  # type: ignore[arg-type]


def test_gets_that_never_read_share_one_checkpoint_are_bounded_and_cut(tmp_path: Path) -> None:
    """Each GET packed its own full tar copy of om.db, kept while its fetcher did not read: 32 such GETs held
    32 copies on the OM's disk."""

    async def scenario() -> None:
        packs = Packs(tmp_path)
        sender = CheckpointSender(packs, max_sends=4, stall_s=2.0)
        async with serving(sender) as port:
            idle = [await asyncio.to_thread(never_reading, port) for _ in range(6)]
            try:
                await wait_for_async(lambda: sender.sends == 4, 10, "four sends under way")
                heads = await asyncio.gather(*(asyncio.to_thread(_first_bytes, s) for s in idle))
                assert sorted(head[9:12] for head in heads) == [b"200"] * 4 + [b"503"] * 2
                assert len(packs.made) == 1 and packs.on_disk() == ["serve-0"]  # one checkpoint, shared
                assert [p.name for p in (tmp_path / "serve-0").rglob("*")] == ["om.db", "000001.sst"]
                await wait_for_async(lambda: sender.sends == 0, 20, "the stalled sends cut")
                assert packs.on_disk() == []  # deleted with its last send
            finally:
                for s in idle:
                    s.close()
            status, body, checksum = await asyncio.to_thread(fetch, port)
            assert status == 200 and hashlib.sha256(body).hexdigest() == checksum
            assert len(body) == packs.made[-1].size and len(packs.made) == 2
            await wait_for_async(lambda: packs.on_disk() == [], 10, "the second one deleted once sent")

    run(scenario())


def _first_bytes(s: socket.socket) -> bytes:
    s.settimeout(5)
    try:
        return s.recv(64)
    except TimeoutError:
        return b""


def test_an_older_checkpoint_still_sent_is_not_shared(tmp_path: Path) -> None:
    async def scenario() -> None:
        now = [100.0]
        packs = Packs(tmp_path)
        sender = CheckpointSender(packs, share_s=10, wait_s=0.5, stall_s=30, clock=lambda: now[0])
        async with serving(sender) as port:
            idle = await asyncio.to_thread(never_reading, port)
            try:
                await wait_for_async(lambda: sender.sends == 1, 10, "a send under way")
                now[0] += 11
                status, body, _ = await asyncio.to_thread(fetch, port)
                assert status == 503 and b"older checkpoint" in body
                assert len(packs.made) == 1
            finally:
                idle.close()
            await wait_for_async(lambda: sender.sends == 0, 10, "the send ended with its fetcher")
            status, _, _ = await asyncio.to_thread(fetch, port)
            assert status == 200 and len(packs.made) == 2

    run(scenario())


def test_a_follower_downloads_only_from_an_om_certificate(tmp_path: Path) -> None:
    """The follower checked the leader's host name but not that its certificate was an OM's: any service
    certificate of the cluster's CA naming that host could serve it an om.db."""
    ca = CertAuthority(tmp_path / "ca")
    follower = ca.store("om2", X.Identity(X.CertRole.OM, "om", "127.0.0.1"))

    async def scenario() -> None:
        for role, refused in ((X.CertRole.DATANODE, True), (X.CertRole.OM, False)):
            server_tls = ca.store(f"{role.value}-server", X.Identity(role, role.value, "127.0.0.1"))
            async with serving(CheckpointSender(Packs(tmp_path / role.value)), server_tls) as port:
                url = f"https://127.0.0.1:{port}/dbCheckpoint"
                into = tmp_path / f"{role.value}.tar"
                if refused:
                    with pytest.raises(CheckpointError, match="not an OM's; refused"):
                        await asyncio.to_thread(download, url, follower.client_context(), into)
                    assert not into.exists()
                else:
                    await asyncio.to_thread(download, url, follower.client_context(), into)
                    assert into.stat().st_size > BIG

    run(scenario())


def test_a_download_past_its_deadline_or_larger_than_the_disk_is_refused(tmp_path: Path) -> None:
    async def scenario() -> None:
        (tmp_path / "packs").mkdir()
        async with serving(CheckpointSender(Packs(tmp_path / "packs"))) as port:
            url = f"http://127.0.0.1:{port}/dbCheckpoint"
            ticks = iter([0.0, *[100.0] * 100])
            into = tmp_path / "late.tar"
            with pytest.raises(CheckpointError, match="took longer than 5 s; refused"):
                await asyncio.to_thread(download, url, None, into, 30, 5, lambda: next(ticks))
            assert not into.exists()
            small = tmp_path / "small"
            small.mkdir()
            with (
                mock.patch.object(shutil, "disk_usage", return_value=shutil._ntuple_diskusage(1, 0, BIG)),  # type: ignore[attr-defined]
                pytest.raises(CheckpointError, match="less than twice that"),
            ):
                await asyncio.to_thread(download, url, None, small / "om.db.tar")
            assert list(small.iterdir()) == []

    run(scenario())


def test_a_server_closing_after_its_answer_is_checked_for_an_om_certificate_too(tmp_path: Path) -> None:
    """Checked after the answer, a server that closes the connection with it (HTTP/1.0) left no socket to
    check, and its om.db was taken."""
    ca = CertAuthority(tmp_path / "ca")
    follower = ca.store("om2", X.Identity(X.CertRole.OM, "om", "127.0.0.1"))
    datanode = ca.store("dn", X.Identity(X.CertRole.DATANODE, "dn", "127.0.0.1"))
    body = b"not even a tar"

    class OneShot(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header(CHECKSUM_HEADER, hashlib.sha256(body).hexdigest())
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), OneShot)
    server.socket = datanode.server_context().wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"https://127.0.0.1:{server.server_address[1]}/dbCheckpoint"
        with pytest.raises(CheckpointError, match="not an OM's; refused"):
            download(url, follower.client_context(), tmp_path / "taken.tar")
        assert not (tmp_path / "taken.tar").exists()
    finally:
        server.shutdown()
        server.server_close()
