"""Who may call a service: the roles a mutual-TLS port takes, plaintext left open; and no TLS client takes a
user's certificate for a server (RPC channels and ssl contexts alike), since a user's certificate may only
authenticate a client."""

from __future__ import annotations

import socket
import ssl
import threading

import pytest

from pyozone import rpc
from pyozone.common.tls import TlsStore
from pyozone.hdds.security.x509 import CertRole, Identity
from pyozone.security.service_access import ServiceAccess, peer_datanode
from tests.tls_certs import CertAuthority
from tests.unit.rpc.rpc_support import MB, SPEC, channel, request, scenario, serve

BOB = Identity(CertRole.USER, "bob")
OM = Identity(CertRole.OM, "om", "127.0.0.1")
UUID = "00000000-0000-4000-8000-000000000001"
FAST = rpc.ChannelSettings(4 * MB, connect_timeout_s=3, backoff_initial_s=0.01, backoff_max_s=0.01)
ACCESS = ServiceAccess("the block protocol", frozenset({CertRole.OM, CertRole.SCM}), tls=True)


class Context:
    """What a servicer context shows of its caller: the auth context of a verified certificate."""

    def __init__(self, ca: CertAuthority | None = None, identity: Identity | None = None, **kw) -> None:
        self._auth: dict[str, list[bytes]] = {}
        if ca is not None and identity is not None:
            paths = ca.issue(f"{identity.principal}-{kw.get('datanode')}", identity, **kw)
            self._auth = {
                "x509_common_name": [identity.common_name.encode()],
                "x509_pem_cert": [paths.cert.read_bytes()],
            }

    def auth_context(self) -> dict[str, list[bytes]]:
        return self._auth


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> CertAuthority:
    return CertAuthority(tmp_path_factory.mktemp("ca"))


def test_a_tls_port_takes_the_named_roles_only(ca: CertAuthority) -> None:
    assert ACCESS.refusal(Context(ca, OM)) is None
    assert (
        ACCESS.refusal(Context(ca, BOB)) == "bob may not call the block protocol: OM, SCM certificates only"
    )
    assert ACCESS.refusal(Context()) == "the caller presented no certificate"


def test_a_plaintext_port_proves_nobody_and_checks_nothing() -> None:
    assert ServiceAccess("the block protocol", frozenset({CertRole.OM}), tls=False).refusal(Context()) is None


def test_the_datanode_a_certificate_speaks_for(ca: CertAuthority) -> None:
    dn = Identity(CertRole.DATANODE, "dn", "127.0.0.1")
    assert peer_datanode(Context(ca, dn, datanode=UUID)) == UUID
    assert peer_datanode(Context(ca, OM)) is None
    assert peer_datanode(Context()) is None


def test_no_rpc_client_takes_a_user_for_a_server(ca: CertAuthority) -> None:
    async def call(server_tls: TlsStore, client_tls: TlsStore) -> str:
        server, port = await serve(tls=server_tls)
        try:
            async with channel(port, FAST, tls=client_tls) as ch:
                await rpc.Stub(ch, SPEC).echo(request(), timeout=5)
                return "OK"
        except rpc.RpcError as e:
            return e.code().name
        finally:
            await server.stop(None)

    bob, om = ca.store("bob", BOB), ca.store("om", OM)
    assert scenario(lambda: call(om, bob)) == "OK"  # a user calls a service
    assert scenario(lambda: call(bob, om)) == "UNAVAILABLE"  # the handshake fails


def test_no_ssl_client_takes_a_user_for_a_server(ca: CertAuthority) -> None:
    bob, om = ca.store("bob", BOB), ca.store("om", OM)
    listener = socket.create_server(("127.0.0.1", 0))
    server_context = bob.server_context()

    def serve() -> None:
        conn, _ = listener.accept()
        try:
            server_context.wrap_socket(conn, server_side=True).recv(1)
        except (ssl.SSLError, OSError):
            pass
        finally:
            conn.close()

    thread = threading.Thread(target=serve)
    thread.start()
    try:
        with (
            pytest.raises(ssl.SSLCertVerificationError, match="unsuitable certificate purpose"),
            socket.create_connection(listener.getsockname()) as raw,
        ):
            om.client_context().wrap_socket(raw, server_hostname="127.0.0.1")
    finally:
        thread.join(10)
        listener.close()
