"""How the client reads SCM's refusals: the code the message starts with, or the gRPC status; a channel
that cannot reach SCM is UNAVAILABLE naming the key that sets the address."""

from __future__ import annotations

import grpc
import pytest

from pyozone.common.net import HostPort
from pyozone.hdds.security.x509 import CertRole, Identity
from pyozone.security.errors import SecurityError, SecurityResult
from pyozone.security.scm_security_client import SCMSecurityClient, split_code
from tests.tls_certs import CertAuthority


class FakeRpcError(grpc.RpcError):
    def __init__(self, status: grpc.StatusCode, details: str) -> None:
        self._status, self._details = status, details

    def code(self) -> grpc.StatusCode:
        return self._status

    def details(self) -> str:
        return self._details


@pytest.mark.parametrize(
    ("details", "expected"),
    [
        ("INVALID_CSR: bad", ("INVALID_CSR", "bad")),
        ("PERMISSION_DENIED: alice may not", ("PERMISSION_DENIED", "alice may not")),
        ("no code here", (None, "no code here")),
        ("lower: case", (None, "lower: case")),
        ("TWO WORDS: x", (None, "TWO WORDS: x")),
    ],
)
def test_split_code(details: str, expected: tuple[str | None, str]) -> None:
    assert split_code(details) == expected


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> SCMSecurityClient:
    ca = CertAuthority(tmp_path_factory.mktemp("ca"))
    return SCMSecurityClient(
        HostPort("127.0.0.1", 1), ca.store("om", Identity(CertRole.OM, "om", "127.0.0.1"))
    )


@pytest.mark.parametrize(
    ("status", "details", "code"),
    [
        (grpc.StatusCode.PERMISSION_DENIED, "PERMISSION_DENIED: no", "PERMISSION_DENIED"),
        (grpc.StatusCode.NOT_FOUND, "CERTIFICATE_NOT_FOUND: 9", "CERTIFICATE_NOT_FOUND"),
        (grpc.StatusCode.INTERNAL, "boom", "INTERNAL"),
        (grpc.StatusCode.UNAVAILABLE, "connection refused", SecurityResult.UNAVAILABLE),
        (grpc.StatusCode.DEADLINE_EXCEEDED, "", SecurityResult.UNAVAILABLE),
    ],
)
def test_refusals_become_security_errors(
    client: SCMSecurityClient, status: grpc.StatusCode, details: str, code: str
) -> None:
    error = client._error(FakeRpcError(status, details))
    assert error.code == code
    if code == SecurityResult.UNAVAILABLE:
        assert "127.0.0.1:1 (ozone.scm.security.service.address)" in error.message


def test_nobody_listening_is_unavailable(client: SCMSecurityClient) -> None:
    with pytest.raises(SecurityError) as e:
        client.get_ca_certificate()
    assert e.value.code == SecurityResult.UNAVAILABLE


def test_a_csr_that_is_not_text_is_refused_before_sending(client: SCMSecurityClient) -> None:
    with pytest.raises(SecurityError) as e:
        client.sign_csr(b"\xff\xfe")
    assert e.value.code == SecurityResult.INVALID_CSR
