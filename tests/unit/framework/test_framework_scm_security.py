"""How the client reads SCM's refusals: the code the message starts with, or the call's status; a channel
that cannot reach SCM is UNAVAILABLE naming the key that sets the address."""

from __future__ import annotations

import pytest

from pyozone import rpc
from pyozone.common.net import HostPort
from pyozone.framework.scm_security import SCMSecurityClient, split_code
from pyozone.hdds.security.errors import SecurityError, SecurityResult
from pyozone.hdds.security.x509 import CertRole, Identity
from tests.tls_certs import CertAuthority


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
        (rpc.StatusCode.PERMISSION_DENIED, "PERMISSION_DENIED: no", "PERMISSION_DENIED"),
        (rpc.StatusCode.NOT_FOUND, "CERTIFICATE_NOT_FOUND: 9", "CERTIFICATE_NOT_FOUND"),
        (rpc.StatusCode.INTERNAL, "boom", "INTERNAL"),
        (rpc.StatusCode.UNAVAILABLE, "connection refused", SecurityResult.UNAVAILABLE),
        (rpc.StatusCode.DEADLINE_EXCEEDED, "", SecurityResult.UNAVAILABLE),
    ],
)
def test_refusals_become_security_errors(
    client: SCMSecurityClient, status: rpc.StatusCode, details: str, code: str
) -> None:
    error = client._error(rpc.RpcError(status, details))
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
