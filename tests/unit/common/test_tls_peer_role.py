"""Issue 28 review (JOIN credentials): a client checks the role of the server it dials besides its host,
so a datanode's certificate naming OM's or SCM's host cannot serve as OM or SCM. gRPC channels and `ssl`
connections (datastream, HTTP) verify the role-qualified name the CA adds for every host a service's
certificate names (x509.role_host_name); a CSR naming such a name itself is refused."""

from __future__ import annotations

import asyncio
import socket
import ssl
import threading
from pathlib import Path

import grpc
import pytest

from pyozone.client.datastream_read import datanode_server_name
from pyozone.common.tls import TlsStore, aio_channel, secure_port
from pyozone.hdds.security import x509 as X
from tests.tls_certs import CertAuthority

OM = X.Identity(X.CertRole.OM, "om", "127.0.0.1")
DN = X.Identity(X.CertRole.DATANODE, "dn", "127.0.0.1")
ALICE = X.Identity(X.CertRole.USER, "alice")
DN_UUID = "0b7c62a4-3c9a-4a35-9a5c-2f6f2f0a9a11"


def grpc_ping(server_tls: TlsStore, client: TlsStore, peer: X.CertRole) -> str:
    """'pong', or the status a client dialling a `peer` got from a server presenting `server_tls`."""

    async def scenario() -> str:
        server = grpc.aio.server()
        handler = grpc.unary_unary_rpc_method_handler(lambda request, context: b"pong")
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("t.S", {"ping": handler}),))
        port = secure_port(server, "127.0.0.1:0", server_tls)
        await server.start()
        try:
            async with aio_channel(f"127.0.0.1:{port}", [], client, peer) as channel:
                return (await channel.unary_unary("/t.S/ping")(b"", timeout=5)).decode()
        except grpc.aio.AioRpcError as e:
            return e.code().name
        finally:
            await server.stop(None)

    return asyncio.run(scenario())


def test_a_grpc_client_dialling_om_refuses_a_datanode_certificate_for_oms_host(tmp_path: Path) -> None:
    ca = CertAuthority(tmp_path)
    om, dn = ca.store("om", OM), ca.store("dn", DN, datanode=DN_UUID)
    alice = ca.store("alice", ALICE)
    assert grpc_ping(om, alice, X.CertRole.OM) == "pong"
    assert grpc_ping(dn, alice, X.CertRole.DATANODE) == "pong"
    assert grpc_ping(dn, alice, X.CertRole.OM) == "UNAVAILABLE"  # the handshake fails: not OM
    assert grpc_ping(om, alice, X.CertRole.SCM) == "UNAVAILABLE"


def ssl_connect(server_tls: TlsStore, client: TlsStore, peer: X.CertRole | str) -> str:
    """'k', or why a client checking for a `peer` (a role at 127.0.0.1, or a server name) refused a server
    presenting `server_tls`."""
    name = peer if isinstance(peer, str) else X.role_host_name(peer, "127.0.0.1")
    context = server_tls.server_context()
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()

        def serve() -> None:
            conn, _ = listener.accept()
            try:
                with context.wrap_socket(conn, server_side=True) as tls:
                    tls.sendall(b"k")
            except (ssl.SSLError, OSError):
                pass

        thread = threading.Thread(target=serve)
        thread.start()
        try:
            with (
                socket.create_connection(listener.getsockname(), 5) as raw,
                client.client_context().wrap_socket(raw, server_hostname=name) as tls,
            ):
                return tls.recv(1).decode()
        except ssl.SSLCertVerificationError as e:
            return e.verify_message
        finally:
            thread.join(5)


def test_an_ssl_client_checks_the_role_with_the_host(tmp_path: Path) -> None:
    ca = CertAuthority(tmp_path)
    dn, alice = ca.store("dn", DN, datanode=DN_UUID), ca.store("alice", ALICE)
    assert ssl_connect(dn, alice, X.CertRole.DATANODE) == "k"
    assert "mismatch" in ssl_connect(dn, alice, X.CertRole.OM)


def test_the_datastream_clients_take_only_a_datanodes_certificate(tmp_path: Path) -> None:
    """Review of issue 28: the V2 writer checked the datanode's bare host, so an OM's or a gateway's
    certificate for that host (every daemon of a local cluster is 127.0.0.1) served as the chain's first
    datanode. Writer and reader check `datanode_server_name`."""
    ca = CertAuthority(tmp_path)
    dn, om, alice = ca.store("dn", DN, datanode=DN_UUID), ca.store("om", OM), ca.store("alice", ALICE)
    assert ssl_connect(dn, alice, datanode_server_name("127.0.0.1")) == "k"
    assert "mismatch" in ssl_connect(om, alice, datanode_server_name("127.0.0.1"))
    assert ssl_connect(om, alice, "127.0.0.1") == "k"  # what the writer checked before: any service's


def test_a_csr_may_not_name_a_role_qualified_name_or_a_wildcard(tmp_path: Path) -> None:
    ca = CertAuthority(tmp_path)
    for forged in (X.role_host_name(X.CertRole.OM, "127.0.0.1"), "*.om.role.invalid", "*.example.com"):
        with pytest.raises(ValueError, match="may not name"):
            ca.issue("dn", DN, hosts=("127.0.0.1", forged), datanode=DN_UUID)
