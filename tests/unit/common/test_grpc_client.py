"""GrpcClient: a plaintext client claims the login user in `x-ozone-user` on every call; a TLS client
presents its certificate instead (and claims nothing), is refused by a server of another CA, and presents
a renewed certificate without being made again."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import pytest

from pyozone.common.grpc_client import USER_METADATA, GrpcClient
from pyozone.common.net import HostPort
from pyozone.common.tls import TlsStore, secure_port
from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.security import x509 as X
from pyozone.rpc.metadata import peer_identity
from tests.tls_certs import CertAuthority

OM = X.Identity(X.CertRole.OM, "om", "127.0.0.1")
ALICE = X.Identity(X.CertRole.USER, "alice")


class _Stub:
    def __init__(self, channel: grpc.Channel) -> None:
        self.whoami = channel.unary_unary("/t.S/whoami")
        self.serial = channel.unary_unary("/t.S/serial")


class _Client(GrpcClient):
    def __init__(self, port: int, tls: TlsStore | None) -> None:
        super().__init__(HostPort("127.0.0.1", port), _Stub, 1 << 20, 5.0, tls)

    def whoami(self) -> str:
        return self._call(self._stub.whoami, b"", bytes.decode)

    def serial(self) -> int:
        return self._call(self._stub.serial, b"", int)

    def _error(self, e: grpc.RpcError) -> Exception:
        return RuntimeError(e.code().name)

    def _malformed(self, e: ProtocolError) -> Exception:
        return e


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> CertAuthority:
    return CertAuthority(tmp_path_factory.mktemp("ca"))


def _whoami(request: bytes, context: grpc.ServicerContext) -> bytes:
    claimed = dict(context.invocation_metadata()).get(USER_METADATA)
    return f"{peer_identity(context)} {claimed}".encode()


def _serial(request: bytes, context: grpc.ServicerContext) -> bytes:
    """The serial of the certificate the caller's connection presented."""
    [pem] = context.auth_context()["x509_pem_cert"]
    return str(X.cert_from_pem(pem).serial_number).encode()


@pytest.fixture
def serve() -> Iterator:
    servers: list[grpc.Server] = []

    def start(tls: TlsStore | None) -> int:
        server = grpc.server(ThreadPoolExecutor(2))
        handler = grpc.method_handlers_generic_handler(
            "t.S",
            {
                "whoami": grpc.unary_unary_rpc_method_handler(_whoami),
                "serial": grpc.unary_unary_rpc_method_handler(_serial),
            },
        )
        server.add_generic_rpc_handlers((handler,))
        port = secure_port(server, "127.0.0.1:0", tls)
        server.start()
        servers.append(server)
        return port

    yield start
    for server in servers:
        server.stop(0)


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
