"""Issue 28 defect 6 in `common/tls`: once a party holds its CA's CRL (TlsStore.update_crl), an `ssl`
server refuses a revoked client in the handshake (OpenSSL's CRL check; the datastream and HTTP ports) and a
gRPC server with RevocationInterceptor ends its calls with PERMISSION_DENIED; a newer CRL replaces an older
one, and a CRL another key signed is refused."""

from __future__ import annotations

import asyncio
import socket
import ssl
import threading
import time
from pathlib import Path
from typing import Any

import grpc
import pytest

from pyozone.common.tls import TlsStore, aio_channel, revocation_interceptors, secure_port
from pyozone.hdds.security import x509 as X
from tests.tls_certs import CertAuthority

OM = X.Identity(X.CertRole.OM, "om", "127.0.0.1")
ALICE, BOB = X.Identity(X.CertRole.USER, "alice"), X.Identity(X.CertRole.USER, "bob")


def crl(ca: CertAuthority, revoked: list[int], number: int) -> bytes:
    """The CA's CRL number `number`, its lastUpdate a second later than the one before."""
    start = int(time.time() * 1000) - 60_000
    listed = [(s, start, "KEY_COMPROMISE") for s in revoked]
    return X.build_crl(ca.key, ca.cert, listed, number, start + 1000 * number, start + 86_400_000)


def serial(store: TlsStore) -> int:
    return X.cert_from_pem(store.paths.cert.read_bytes()).serial_number


def handshake(server: TlsStore, client: TlsStore) -> str:
    """'ok' when the ssl server took the client's certificate, else its error."""
    context = server.server_context()
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        outcome: list[str] = []

        def serve() -> None:
            conn, _ = listener.accept()
            try:
                with context.wrap_socket(conn, server_side=True) as tls:
                    tls.sendall(b"k")
                    outcome.append("ok")
            except ssl.SSLError as e:
                outcome.append(str(e))

        thread = threading.Thread(target=serve)
        thread.start()
        try:
            with (
                socket.create_connection(listener.getsockname(), 5) as raw,
                client.client_context().wrap_socket(raw, server_hostname="127.0.0.1") as tls,
            ):
                tls.recv(1)
        except (ssl.SSLError, ConnectionError):
            pass
        thread.join(5)
    return outcome[0]


def test_an_ssl_server_refuses_a_revoked_client_once_it_holds_the_crl(tmp_path: Path) -> None:
    ca = CertAuthority(tmp_path)
    server, alice, bob = ca.store("om", OM), ca.store("alice", ALICE), ca.store("bob", BOB)
    server.server_context()  # a context made before the CRL arrives takes it too
    assert handshake(server, bob) == "ok"
    assert server.update_crl(0, crl(ca, [], 0)) and handshake(server, bob) == "ok"
    assert server.update_crl(1, crl(ca, [serial(bob)], 1))
    assert "certificate revoked" in handshake(server, bob)
    assert handshake(server, alice) == "ok"
    assert not server.update_crl(0, crl(ca, [], 0))  # an older list changes nothing
    assert server.revoked == {serial(bob)} and "certificate revoked" in handshake(server, bob)


def test_a_crl_of_another_ca_is_refused(tmp_path: Path) -> None:
    ca, other = CertAuthority(tmp_path / "ca"), CertAuthority(tmp_path / "other")
    server = ca.store("om", OM)
    with pytest.raises(ValueError, match="not signed by the CA"):
        server.update_crl(5, crl(other, [1], 5))
    assert server.revoked == frozenset() and server.crl_number == -1


def test_a_restarted_party_enforces_the_crl_it_kept_before_any_port_opens(tmp_path: Path) -> None:
    """Issue 28 review: a daemon restarted while SCM is down started with no revoked serial (fail-open);
    it reads the crl.pem it kept when its TlsStore is made."""
    ca = CertAuthority(tmp_path)
    server, bob = ca.store("om", OM), ca.store("bob", BOB)
    assert server.update_crl(3, crl(ca, [serial(bob)], 3))
    restarted = TlsStore(server.paths)
    assert restarted.crl_number == 3 and restarted.revoked == {serial(bob)}
    assert "certificate revoked" in handshake(restarted, bob)
    assert not restarted.update_crl(2, crl(ca, [], 2))  # an older list still changes nothing


def test_a_kept_crl_that_does_not_verify_stops_the_party(tmp_path: Path) -> None:
    ca, other = CertAuthority(tmp_path / "ca"), CertAuthority(tmp_path / "other")
    server = ca.store("om", OM)
    kept = server.paths.ca.with_name("crl.pem")
    kept.write_bytes(crl(other, [1], 5))
    with pytest.raises(ValueError, match=f"{kept}: the revocation list is not signed by the CA"):
        TlsStore(server.paths)


def test_a_grpc_server_ends_the_calls_of_a_revoked_client(tmp_path: Path) -> None:
    ca = CertAuthority(tmp_path)
    server_tls, alice, bob = ca.store("om", OM), ca.store("alice", ALICE), ca.store("bob", BOB)

    async def call(port: int, client: TlsStore) -> bytes:
        async with aio_channel(f"127.0.0.1:{port}", [], client) as channel:
            return await channel.unary_unary("/t.S/ping")(b"", timeout=5)

    async def scenario() -> None:
        server = grpc.aio.server(interceptors=revocation_interceptors(server_tls))
        handler = grpc.unary_unary_rpc_method_handler(lambda request, context: b"pong")
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("t.S", {"ping": handler}),))
        port = secure_port(server, "127.0.0.1:0", server_tls)
        await server.start()
        try:
            assert await call(port, bob) == b"pong"
            server_tls.update_crl(1, crl(ca, [serial(bob)], 1))
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await call(port, bob)
            assert refused.value.code() is grpc.StatusCode.PERMISSION_DENIED
            assert f"certificate {serial(bob)} was revoked" in (refused.value.details() or "")
            assert await call(port, alice) == b"pong"
        finally:
            await server.stop(None)

    asyncio.run(scenario())


def test_a_grpc_stream_opened_before_the_revocation_ends_at_its_next_message(tmp_path: Path) -> None:
    """Issue 28 review: a stream opened before the revocation kept working (checked at its start only)."""
    ca = CertAuthority(tmp_path)
    server_tls, bob = ca.store("om", OM), ca.store("bob", BOB)

    async def echo(requests: Any, context: grpc.aio.ServicerContext) -> Any:
        async for request in requests:
            yield request

    async def scenario() -> None:
        server = grpc.aio.server(interceptors=revocation_interceptors(server_tls))
        handler = grpc.stream_stream_rpc_method_handler(echo)
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("t.S", {"echo": handler}),))
        port = secure_port(server, "127.0.0.1:0", server_tls)
        await server.start()
        try:
            async with aio_channel(f"127.0.0.1:{port}", [], bob) as channel:
                call = channel.stream_stream("/t.S/echo")(timeout=5)
                await call.write(b"one")
                assert await call.read() == b"one"
                server_tls.update_crl(1, crl(ca, [serial(bob)], 1))
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await call.write(b"two")
                    await call.read()
                    await call.read()
                assert refused.value.code() is grpc.StatusCode.PERMISSION_DENIED
        finally:
            await server.stop(None)

    asyncio.run(scenario())
