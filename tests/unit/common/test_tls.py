"""Mutual TLS through `common/tls`: both sides present CA-signed certificates, anyone else fails the
handshake, the caller's identity comes from its certificate, and a renewed certificate is used by the next
connection without a restart, and by a channel kept for the process's life (AioRenewing, SyncRenewing)."""

from __future__ import annotations

import asyncio
import ssl
import threading
from pathlib import Path

import grpc
import pytest

from pyozone.common.tls import (
    SyncRenewing,
    TlsPaths,
    TlsStore,
    aio_channel,
    peer_identity,
    renewing_aio_channel,
    secure_port,
    ssl_peer_identity,
)
from pyozone.config import OzoneConfiguration
from pyozone.hdds.security import x509 as X
from tests.tls_certs import CertAuthority, self_signed

OM = X.Identity(X.CertRole.OM, "om", "127.0.0.1")
ALICE = X.Identity(X.CertRole.USER, "alice")


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> CertAuthority:
    return CertAuthority(tmp_path_factory.mktemp("ca"))


async def _serve(server_tls: TlsStore, release: asyncio.Event | None = None):
    """A server answering `whoami` (the caller's identity) and `serial` (the serial of the certificate the
    caller's connection presented, after `release` is set when given)."""
    server = grpc.aio.server()

    def whoami(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        return repr(peer_identity(context)).encode()

    async def serial(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        if release is not None:
            await release.wait()
        [pem] = context.auth_context()["x509_pem_cert"]
        return str(X.cert_from_pem(pem).serial_number).encode()

    handler = grpc.method_handlers_generic_handler(
        "t.S",
        {
            "whoami": grpc.unary_unary_rpc_method_handler(whoami),
            "serial": grpc.unary_unary_rpc_method_handler(serial),
        },
    )
    server.add_generic_rpc_handlers((handler,))
    port = secure_port(server, "127.0.0.1:0", server_tls)
    await server.start()
    return server, port


async def _whoami(port: int, client_tls: TlsStore | None) -> bytes:
    async with aio_channel(f"127.0.0.1:{port}", [], client_tls) as channel:
        return await channel.unary_unary("/t.S/whoami")(b"", timeout=5)


def test_grpc_mutual_tls_names_the_caller_and_refuses_strangers(ca: CertAuthority, tmp_path: Path) -> None:
    server_tls = ca.store("om", OM)
    other = CertAuthority(tmp_path / "other")

    async def scenario() -> None:
        server, port = await _serve(server_tls)
        try:
            assert b"'alice'" in await _whoami(port, ca.store("alice", ALICE))
            strangers = {
                "plaintext": None,
                "self-made": self_signed(tmp_path, "self", ALICE, trust=ca.cert),
                "other CA": other.store("mallory", ALICE, trust=ca.cert),
            }
            for what, tls in strangers.items():
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await _whoami(port, tls)
                assert refused.value.code() is grpc.StatusCode.UNAVAILABLE, what
        finally:
            await server.stop(None)

    asyncio.run(scenario())


def test_a_renewed_certificate_is_served_to_the_next_connection(ca: CertAuthority, tmp_path: Path) -> None:
    paths = ca.issue("om-renew", OM)
    server_tls = TlsStore(paths)

    def serial_seen() -> int:
        context = ca.store("alice-r", ALICE).client_context()
        with context.wrap_socket(
            __import__("socket").create_connection(("127.0.0.1", port)), server_hostname="127.0.0.1"
        ) as sock:
            return X.cert_from_pem(ssl.DER_cert_to_PEM_cert(sock.getpeercert(True)).encode()).serial_number

    async def scenario() -> None:
        nonlocal port
        server, port = await _serve(server_tls)
        try:
            first = await asyncio.to_thread(serial_seen)
            renewed = ca.issue("om-renew", OM)  # same files, new certificate
            assert renewed == paths
            second = await asyncio.to_thread(serial_seen)
            assert second != first
        finally:
            await server.stop(None)

    port = 0
    asyncio.run(scenario())


def _serial_of(paths: TlsPaths) -> int:
    return X.cert_from_pem(paths.cert.read_bytes()).serial_number


def test_a_kept_channel_presents_the_renewed_certificate(ca: CertAuthority) -> None:
    """A holder that keeps its channel for the process (a datanode's to SCM, a client pool's) calls with
    the renewed certificate once the store reloaded it; a call in flight on the replaced channel still
    finishes."""
    paths = ca.issue("dn-renew", X.Identity(X.CertRole.DATANODE, "dn", "127.0.0.1"))
    store = TlsStore(paths)

    async def scenario() -> None:
        release = asyncio.Event()
        server, port = await _serve(ca.store("scm", OM), release)
        kept = renewing_aio_channel(f"127.0.0.1:{port}", [], store)
        try:
            release.set()
            first = int(await kept.get().unary_unary("/t.S/serial")(b"", timeout=5))
            assert first == _serial_of(paths)
            release.clear()
            in_flight = asyncio.ensure_future(kept.get().unary_unary("/t.S/serial")(b"", timeout=5))
            await asyncio.sleep(0.1)
            ca.issue("dn-renew", X.Identity(X.CertRole.DATANODE, "dn", "127.0.0.1"))
            store.reload()
            renewed = kept.get().unary_unary("/t.S/serial")(b"", timeout=5)
            release.set()
            assert int(await renewed) == _serial_of(paths) != first
            assert int(await in_flight) == first  # the retired channel closed only after its call ended
        finally:
            await kept.close()
            await server.stop(None)

    asyncio.run(scenario())


def test_a_kept_channel_reads_no_file_until_the_store_moves(ca: CertAuthority, monkeypatch) -> None:
    """The check per call is the store's generation: no stat() per call, one new channel per renewal."""
    paths = ca.issue("dn-gen", X.Identity(X.CertRole.DATANODE, "dn", "127.0.0.1"))
    store = TlsStore(paths)
    dialled: list[_Closable] = []

    def dial() -> _Closable:
        dialled.append(_Closable())
        return dialled[-1]

    kept = SyncRenewing(dial, store)
    monkeypatch.setattr("pyozone.common.tls.os.stat", _no_stat)
    assert kept.get() is kept.get() is dialled[0]
    monkeypatch.undo()
    ca.issue("dn-gen", X.Identity(X.CertRole.DATANODE, "dn", "127.0.0.1"))
    store.reload()
    assert kept.get() is dialled[1] and not dialled[0].closed  # closed at the next renewal, or by close()
    ca.issue("dn-gen", X.Identity(X.CertRole.DATANODE, "dn", "127.0.0.1"))
    store.reload()
    assert kept.get() is dialled[2] and dialled[0].closed and not dialled[1].closed
    kept.close()
    assert all(c.closed for c in dialled)
    plain = SyncRenewing(dial, None)
    assert plain.get() is plain.get() is dialled[3]


class _Closable:
    closed = False

    def close(self) -> None:
        self.closed = True


def _no_stat(*args: object) -> None:
    raise AssertionError("a TLS file was read for a call")


def test_ssl_contexts_do_mutual_tls_and_name_the_peer(ca: CertAuthority, tmp_path: Path) -> None:
    import socket

    server_ctx = ca.store("dn", X.Identity(X.CertRole.DATANODE, "dn", "127.0.0.1")).server_context()
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    seen: list[object] = []

    def accept(n: int) -> None:
        for _ in range(n):
            conn, _ = listener.accept()
            conn.settimeout(5)
            try:
                with server_ctx.wrap_socket(conn, server_side=True) as tls:
                    seen.append(ssl_peer_identity(tls))
                    tls.sendall(b"ok")
            except (ssl.SSLError, OSError) as e:
                seen.append(type(e).__name__)

    thread = threading.Thread(target=accept, args=(2,), daemon=True)
    thread.start()
    client_ctx = ca.store("alice-s", ALICE).client_context()
    with client_ctx.wrap_socket(
        socket.create_connection(("127.0.0.1", port)), server_hostname="127.0.0.1"
    ) as s:
        assert s.recv(2) == b"ok"
    stranger = CertAuthority(tmp_path / "other2").store("m", ALICE, trust=ca.cert).client_context()
    with (
        pytest.raises((ssl.SSLError, ConnectionResetError, BrokenPipeError)),
        stranger.wrap_socket(socket.create_connection(("127.0.0.1", port)), server_hostname="127.0.0.1") as s,
    ):
        s.recv(2)
    thread.join(10)
    listener.close()
    assert seen[0] == ALICE
    assert seen[1] in ("SSLError", "SSLCertVerificationError")


def test_client_files_from_conf_or_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("OZONE_CLIENT_CERT", "OZONE_CLIENT_KEY", "OZONE_CA_CERT"):
        monkeypatch.delenv(name, raising=False)
    assert TlsPaths.for_client(OzoneConfiguration()) is None
    monkeypatch.setenv("OZONE_CLIENT_CERT", "/c.crt")
    monkeypatch.setenv("OZONE_CLIENT_KEY", "/c.key")
    monkeypatch.setenv("OZONE_CA_CERT", "/ca.crt")
    assert TlsPaths.for_client(OzoneConfiguration()) == TlsPaths(
        Path("/c.key"), Path("/c.crt"), Path("/ca.crt")
    )
    monkeypatch.delenv("OZONE_CA_CERT")
    with pytest.raises(ValueError, match="missing: CA certificate"):
        TlsPaths.for_client(OzoneConfiguration())
    conf = OzoneConfiguration({"ozone.client.tls.ca.file": "/x/ca.crt"})
    assert TlsPaths.for_client(conf).ca == Path("/x/ca.crt")


def test_missing_files_are_named(tmp_path: Path) -> None:
    store = TlsStore(TlsPaths(tmp_path / "k", tmp_path / "c", tmp_path / "a"))
    with pytest.raises(FileNotFoundError, match="TLS file missing"):
        store.material()


def test_paths_under_a_component_follow_ozone_names(tmp_path: Path) -> None:
    paths = TlsPaths.under(tmp_path, OzoneConfiguration())
    assert paths == TlsPaths(
        tmp_path / "keys" / "private.pem",
        tmp_path / "certs" / "certificate.crt",
        tmp_path / "certs" / "ca.crt",
    )
