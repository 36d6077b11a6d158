"""Issue 28 defect 6 in `common/tls`: once a party holds its CA's CRL (TlsStore.update_crl), an `ssl`
server refuses a revoked client in the handshake (OpenSSL's CRL check; the RPC, datastream and HTTP ports),
and an RPC server ends the calls of a connection opened before with PERMISSION_DENIED; a newer CRL replaces
an older one, and a CRL another key signed is refused."""

from __future__ import annotations

import socket
import ssl
import threading
from pathlib import Path

import pytest

from pyozone import rpc
from pyozone.common.tls import TlsStore
from pyozone.hdds.security import x509 as X
from tests.tls_certs import CertAuthority, crl, serial
from tests.unit.rpc.rpc_support import SPEC, channel, request, scenario, serve

OM = X.Identity(X.CertRole.OM, "om", "127.0.0.1")
ALICE, BOB = X.Identity(X.CertRole.USER, "alice"), X.Identity(X.CertRole.USER, "bob")


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


def test_an_rpc_server_refuses_a_revoked_client(tmp_path: Path) -> None:
    """A connection opened before the revocation has each call refused PERMISSION_DENIED; a new one fails
    the handshake (the server's ssl context holds the CRL)."""
    ca = CertAuthority(tmp_path)
    server_tls, alice, bob = ca.store("om", OM), ca.store("alice", ALICE), ca.store("bob", BOB)

    async def call(ch: rpc.Channel) -> bytes:
        return (await rpc.Stub(ch, SPEC).echo(request(b"pong"), timeout=5)).payload

    async def test() -> None:
        server, port = await serve(tls=server_tls)
        try:
            async with channel(port, tls=bob) as opened:
                assert await call(opened) == b"pong"
                server_tls.update_crl(1, crl(ca, [serial(bob)], 1))
                with pytest.raises(rpc.RpcError) as refused:
                    await call(opened)
                assert refused.value.code() is rpc.StatusCode.PERMISSION_DENIED
                assert f"certificate {serial(bob)} was revoked" in (refused.value.details() or "")
            async with channel(port, tls=bob) as new:
                with pytest.raises(rpc.RpcError) as refused:
                    await call(new)
                assert refused.value.code() is rpc.StatusCode.UNAVAILABLE
            async with channel(port, tls=alice) as other:
                assert await call(other) == b"pong"
        finally:
            await server.stop(None)

    scenario(test)


def test_an_rpc_stream_opened_before_the_revocation_ends_at_its_next_message(tmp_path: Path) -> None:
    """Issue 28 review: a stream opened before the revocation kept working (checked at its start only)."""
    ca = CertAuthority(tmp_path)
    server_tls, bob = ca.store("om", OM), ca.store("bob", BOB)

    async def test() -> None:
        server, port = await serve(tls=server_tls)
        try:
            async with channel(port, tls=bob) as ch:
                chat = rpc.Stub(ch, SPEC).chat(timeout=5)
                await chat.write(request(b"one"))
                assert (await chat.read()).payload == b"ONE"
                server_tls.update_crl(1, crl(ca, [serial(bob)], 1))
                with pytest.raises(rpc.RpcError) as refused:
                    await chat.write(request(b"two"))
                    await chat.read()
                    await chat.read()
                assert refused.value.code() is rpc.StatusCode.PERMISSION_DENIED
        finally:
            await server.stop(None)

    scenario(test)
