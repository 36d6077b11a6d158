"""Issue 28 review (JOIN credentials): a client checks the role of the server it dials besides its host,
so a datanode's certificate naming OM's or SCM's host cannot serve as OM or SCM. RPC channels and `ssl`
connections (datastream, HTTP) verify the role-qualified name the CA adds for every host a service's
certificate names (x509.role_host_name); a CSR naming such a name itself is refused."""

from __future__ import annotations

import socket
import ssl
import threading
from pathlib import Path

import pytest

from pyozone import rpc
from pyozone.client.datastream_read import datanode_server_name
from pyozone.common.tls import TlsStore
from pyozone.hdds.security import x509 as X
from tests.tls_certs import CertAuthority
from tests.unit.rpc.rpc_support import MB, SPEC, channel, request, scenario, serve

OM = X.Identity(X.CertRole.OM, "om", "127.0.0.1")
DN = X.Identity(X.CertRole.DATANODE, "dn", "127.0.0.1")
ALICE = X.Identity(X.CertRole.USER, "alice")
DN_UUID = "0b7c62a4-3c9a-4a35-9a5c-2f6f2f0a9a11"
FAST = rpc.ChannelSettings(4 * MB, connect_timeout_s=3, backoff_initial_s=0.01, backoff_max_s=0.01)


def rpc_ping(server_tls: TlsStore, client: TlsStore, peer: X.CertRole) -> str:
    """The echo, or the status a client dialling a `peer` got from a server presenting `server_tls`."""

    async def test() -> str:
        server, port = await serve(tls=server_tls)
        try:
            async with channel(port, FAST, tls=client, peer=peer) as ch:
                return (await rpc.Stub(ch, SPEC).echo(request(b"pong"), timeout=5)).payload.decode()
        except rpc.RpcError as e:
            return e.code().name
        finally:
            await server.stop(None)

    return scenario(test)


def test_an_rpc_client_dialling_om_refuses_a_datanode_certificate_for_oms_host(tmp_path: Path) -> None:
    ca = CertAuthority(tmp_path)
    om, dn = ca.store("om", OM), ca.store("dn", DN, datanode=DN_UUID)
    alice = ca.store("alice", ALICE)
    assert rpc_ping(om, alice, X.CertRole.OM) == "pong"
    assert rpc_ping(dn, alice, X.CertRole.DATANODE) == "pong"
    assert rpc_ping(dn, alice, X.CertRole.OM) == "UNAVAILABLE"  # the handshake fails: not OM
    assert rpc_ping(om, alice, X.CertRole.SCM) == "UNAVAILABLE"


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
