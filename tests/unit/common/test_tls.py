"""Mutual TLS through `common/tls`: both sides present CA-signed certificates, anyone else fails the
handshake, the caller's identity comes from its certificate, and a renewed certificate is used by the next
connection without a restart, and by an RPC channel kept for the process's life (it follows the store's
generation, reading no file per call). The RPC layer's refusals: tests/unit/rpc/test_tls.py."""

from __future__ import annotations

import asyncio
import socket
import ssl
import threading
from pathlib import Path

import pytest

from pyozone import rpc
from pyozone.common.tls import TlsPaths, TlsStore, ssl_peer_identity
from pyozone.config import OzoneConfiguration
from pyozone.hdds.security import x509 as X
from pyozone.proto.OmClientProtocol_pb2 import EchoRPCRequest, EchoRPCResponse
from tests.tls_certs import CertAuthority
from tests.unit.rpc.rpc_support import SPEC, Echo, channel, request, scenario, serve

OM = X.Identity(X.CertRole.OM, "om", "127.0.0.1")
DN = X.Identity(X.CertRole.DATANODE, "dn", "127.0.0.1")
ALICE = X.Identity(X.CertRole.USER, "alice")


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> CertAuthority:
    return CertAuthority(tmp_path_factory.mktemp("ca"))


class Serial(Echo):
    """`echo` answers the serial of the certificate the caller's connection presented, once `release` is
    set; `arrived` is set when a call reached it."""

    def __init__(self) -> None:
        super().__init__()
        self.release = asyncio.Event()
        self.release.set()
        self.arrived = asyncio.Event()

    async def echo(self, req: EchoRPCRequest, context: rpc.CallContext) -> EchoRPCResponse:
        self.arrived.set()
        await self.release.wait()
        [pem] = context.auth_context()["x509_pem_cert"]
        return EchoRPCResponse(payload=str(X.cert_from_pem(pem).serial_number).encode())


def test_a_renewed_certificate_is_served_to_the_next_connection(ca: CertAuthority) -> None:
    paths = ca.issue("om-renew", OM)
    server_tls = TlsStore(paths)

    def serial_seen(port: int) -> int:
        context = ca.store("alice-r", ALICE).client_context()
        with context.wrap_socket(
            socket.create_connection(("127.0.0.1", port)), server_hostname="127.0.0.1"
        ) as sock:
            return X.cert_from_pem(ssl.DER_cert_to_PEM_cert(sock.getpeercert(True)).encode()).serial_number

    async def test() -> None:
        server, port = await serve(tls=server_tls)
        try:
            first = await asyncio.to_thread(serial_seen, port)
            renewed = ca.issue("om-renew", OM)  # same files, new certificate
            assert renewed == paths
            server_tls.reload()  # what the renewer does (security/cert_client.py)
            second = await asyncio.to_thread(serial_seen, port)
            assert second != first
        finally:
            await server.stop(None)

    scenario(test)


def _serial_of(paths: TlsPaths) -> int:
    return X.cert_from_pem(paths.cert.read_bytes()).serial_number


def test_a_kept_channel_presents_the_renewed_certificate(
    ca: CertAuthority, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A holder that keeps its channel for the process (a datanode's to SCM, a client pool's) calls with
    the renewed certificate once the store reloaded it, reading no file per call meanwhile; a call in
    flight on the replaced connection still finishes."""
    paths = ca.issue("dn-renew", DN)
    store = TlsStore(paths)
    servicer = Serial()

    async def serial(ch: rpc.Channel) -> int:
        return int((await rpc.Stub(ch, SPEC).echo(request(), timeout=5)).payload)

    async def test() -> None:
        server, port = await serve(servicer=servicer, tls=ca.store("scm", OM))
        try:
            async with channel(port, tls=store, peer=X.CertRole.OM) as kept:
                first = await serial(kept)
                assert first == _serial_of(paths)
                monkeypatch.setattr("pyozone.common.tls.os.stat", _no_stat)
                assert await serial(kept) == first
                monkeypatch.undo()
                servicer.release.clear()
                servicer.arrived.clear()
                in_flight = asyncio.ensure_future(serial(kept))
                await servicer.arrived.wait()
                ca.issue("dn-renew", DN)
                store.reload()
                servicer.arrived.clear()
                renewed = asyncio.ensure_future(serial(kept))
                await servicer.arrived.wait()
                servicer.release.set()
                assert await renewed == _serial_of(paths) != first
                assert await in_flight == first  # the replaced connection served the call it carried
        finally:
            await server.stop(None)

    scenario(test)


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
