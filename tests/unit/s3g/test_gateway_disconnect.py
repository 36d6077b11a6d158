"""A client that goes away while the gateway sends it an object (issue 28 defect 14), before its head is
written, or stops reading past ozone.s3g.http.body.idle.timeout (the review of defect 14): one log line,
not aiohttp's "Error handling request" traceback. The key is a stand-in stream of zeros (no datanodes)."""

from __future__ import annotations

import asyncio
import logging
import socket
from pathlib import Path
from typing import Any

import pytest

from pyozone.hdds.ids import RATIS_THREE
from pyozone.hdds.om_views import KeyInfo
from tests.polling import wait_for
from tests.unit.s3g.gateway_thread import GatewayOnThread, gateway_on_thread

SIZE = 1 << 30


class Zeros:
    """What GetObject reads: a KeyInputStream's info, seek and read, of a 1 GiB key of zeros."""

    def __init__(self) -> None:
        self.info = KeyInfo("s3v", "gone", "big", SIZE, 0, 0, RATIS_THREE, metadata={"ETag": "0" * 32})

    async def __aenter__(self) -> Zeros:
        return self

    async def __aexit__(self, *_: Any) -> None:
        pass

    def seek(self, _: int) -> None:
        pass

    async def read(self, n: int) -> bytes:
        return bytes(n)


def test_a_reader_that_disconnects_leaves_one_log_line(
    gateway: GatewayOnThread, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    gateway.boto3().create_bucket(Bucket="gone")
    assert gateway.gateway.client is not None

    async def read_key(*_: Any, **__: Any) -> Zeros:
        return Zeros()

    monkeypatch.setattr(gateway.gateway.client, "read_key", read_key)
    caplog.set_level(logging.INFO)
    headers = gateway.signed_headers("GET", "/gone/big")
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    with socket.create_connection(("127.0.0.1", gateway.gateway.port), timeout=10) as sock:
        sock.sendall(
            f"GET /gone/big HTTP/1.1\r\nHost: 127.0.0.1:{gateway.gateway.port}\r\n{head}\r\n".encode()
        )
        assert sock.recv(65536).startswith(b"HTTP/1.1 200 OK")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")  # RST

    def gone() -> list[logging.LogRecord]:
        return [r for r in caplog.records if "disconnected" in r.getMessage()]

    [line] = wait_for(gone, 10, "the gateway noticed the client left", interval_s=0.05)
    assert "/gone/big" in line.getMessage() and line.exc_info is None
    assert not [r for r in caplog.records if r.exc_info or "Error handling request" in r.getMessage()]


def _request(gateway: GatewayOnThread, target: str) -> bytes:
    headers = gateway.signed_headers("GET", target)
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    return f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{gateway.gateway.port}\r\n{head}\r\n".encode()


def _no_traceback(caplog: pytest.LogCaptureFixture) -> None:
    assert not [r for r in caplog.records if r.exc_info or "Error handling request" in r.getMessage()]


def test_a_reader_that_disconnects_before_the_head_leaves_one_log_line(
    gateway: GatewayOnThread, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """OM (or a datanode) answers after the client gave up: the head meets a closed connection."""
    gateway.boto3().create_bucket(Bucket="early")
    assert gateway.gateway.client is not None and gateway.gateway.server is not None
    client_gone = gateway.call(_event())

    async def read_key(*_: Any, **__: Any) -> Zeros:
        await client_gone.wait()
        return Zeros()

    monkeypatch.setattr(gateway.gateway.client, "read_key", read_key)
    caplog.set_level(logging.INFO)
    server = gateway.gateway.server._runner.server  # type: ignore[union-attr]
    with socket.create_connection(("127.0.0.1", gateway.gateway.port), timeout=10) as sock:
        sock.sendall(_request(gateway, "/early/big"))
        [handler] = wait_for(
            lambda: server.connections, 10, "the gateway took the connection", interval_s=0.02
        )
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")  # RST
    wait_for(lambda: handler.transport is None, 10, "the gateway saw the client leave", interval_s=0.02)
    gateway.loop.call_soon_threadsafe(client_gone.set)

    def gone() -> list[logging.LogRecord]:
        return [r for r in caplog.records if "disconnected after 0 of" in r.getMessage()]

    [line] = wait_for(gone, 10, "the gateway noticed the client left", interval_s=0.05)
    assert "/early/big" in line.getMessage() and line.exc_info is None
    _no_traceback(caplog)


async def _event() -> asyncio.Event:
    return asyncio.Event()


def test_a_reader_that_stops_reading_is_cut_off_with_one_log_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    with gateway_on_thread(tmp_path, **{"ozone.s3g.http.body.idle.timeout": "0.2s"}) as gateway:
        gateway.boto3().create_bucket(Bucket="stalled")
        assert gateway.gateway.client is not None

        async def read_key(*_: Any, **__: Any) -> Zeros:
            return Zeros()

        monkeypatch.setattr(gateway.gateway.client, "read_key", read_key)
        caplog.set_level(logging.INFO)
        with socket.create_connection(("127.0.0.1", gateway.gateway.port), timeout=10) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.sendall(_request(gateway, "/stalled/big"))  # and never reads

            def cut_off() -> list[logging.LogRecord]:
                return [r for r in caplog.records if "the client read nothing for 0.2 s" in r.getMessage()]

            [line] = wait_for(cut_off, 10, "the gateway gave up on the reader", interval_s=0.05)
        assert "/stalled/big" in line.getMessage() and line.exc_info is None
        _no_traceback(caplog)
