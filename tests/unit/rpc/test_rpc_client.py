"""RpcClient (a blocking client of one service): a plaintext client claims the login user in `x-ozone-user`
on every call; a TLS client presents its certificate instead (and claims nothing), is refused by a server
of another CA, and presents a renewed certificate without being made again."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pyozone import rpc
from pyozone.common.net import HostPort
from pyozone.common.tls import TlsStore
from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.security import x509 as X
from pyozone.proto.OmClientProtocol_pb2 import EchoRPCRequest, EchoRPCResponse
from pyozone.rpc.metadata import USER_METADATA, peer_identity
from pyozone.rpc.rpc_client import RpcClient
from tests.rpc_threads import ThreadedRpcServer
from tests.tls_certs import CertAuthority
from tests.unit.rpc.rpc_support import MB, SPEC, request

OM = X.Identity(X.CertRole.OM, "om", "127.0.0.1")
ALICE = X.Identity(X.CertRole.USER, "alice")


class _Client(RpcClient):
    def __init__(self, port: int, tls: TlsStore | None) -> None:
        super().__init__(HostPort("127.0.0.1", port), SPEC, MB, 5.0, tls)

    def whoami(self) -> str:
        return self._call(self._stub.metadata, request(), lambda r: r.payload.decode())

    def serial(self) -> int:
        return self._call(self._stub.echo, request(), lambda r: int(r.payload))

    def _error(self, e: rpc.RpcError) -> Exception:
        return RuntimeError(e.code().name)

    def _malformed(self, e: ProtocolError) -> Exception:
        return e


class _Servicer:
    def metadata(self, req: EchoRPCRequest, context: rpc.CallContext) -> EchoRPCResponse:
        """The caller's certificate identity and the user it claims."""
        claimed = dict(context.invocation_metadata()).get(USER_METADATA)
        return EchoRPCResponse(payload=f"{peer_identity(context)} {claimed}".encode())

    def echo(self, req: EchoRPCRequest, context: rpc.CallContext) -> EchoRPCResponse:
        """The serial of the certificate the caller's connection presented."""
        [pem] = context.auth_context()["x509_pem_cert"]
        return EchoRPCResponse(payload=str(X.cert_from_pem(pem).serial_number).encode())


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> CertAuthority:
    return CertAuthority(tmp_path_factory.mktemp("ca"))


@pytest.fixture
def serve() -> Iterator:
    servers: list[ThreadedRpcServer] = []

    def start(tls: TlsStore | None) -> int:
        servers.append(ThreadedRpcServer(SPEC, _Servicer(), rpc.ServerSettings(MB), workers=2, tls=tls))
        return servers[-1].port

    yield start
    for server in servers:
        server.stop()


def test_a_plaintext_client_claims_the_login_user(serve, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HADOOP_USER_NAME", "bob")
    with _Client(serve(None), None) as client:
        assert client.whoami() == "None bob"


def test_a_tls_client_is_named_by_its_certificate_and_claims_nobody(
    serve, ca: CertAuthority, tmp_path: Path
) -> None:
    port = serve(ca.store("om", OM))
    with _Client(port, ca.store("alice", ALICE)) as client:
        assert client.whoami() == f"{ALICE} None"
    stranger = CertAuthority(tmp_path / "other").store("alice", ALICE)
    with _Client(port, stranger) as client, pytest.raises(RuntimeError, match="UNAVAILABLE"):
        client.whoami()


def test_a_client_kept_across_a_renewal_presents_the_renewed_certificate(serve, ca: CertAuthority) -> None:
    """A daemon keeps its SCM clients for its life: after the renewer replaced the files and reloaded the
    store, calls go out on a new connection with the new certificate (the first connection, still up,
    would keep showing the old one; once it expired, a reconnect with it fails)."""
    port = serve(ca.store("om", OM))
    paths = ca.issue("om-client", OM)
    store = TlsStore(paths)
    with _Client(port, store) as client:
        first = client.serial()
        assert first == X.cert_from_pem(paths.cert.read_bytes()).serial_number
        assert client.serial() == first
        ca.issue("om-client", OM)  # the renewal: same files, a new certificate
        store.reload()
        renewed = X.cert_from_pem(paths.cert.read_bytes()).serial_number
        assert renewed != first
        assert client.serial() == renewed
