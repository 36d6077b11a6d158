"""The JOIN credential bundle: one PEM file with the join key, its certificate and the CA's, checked
block by block so a wrong file fails at the daemon's start with a message naming it."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from pyozone.hdds.security import x509 as X
from pyozone.security.join import JoinCredential
from tests.tls_certs import CertAuthority

JOIN = X.Identity(X.CertRole.JOIN, "join", "127.0.0.1")


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> CertAuthority:
    return CertAuthority(tmp_path_factory.mktemp("ca"))


def bundle(ca: CertAuthority, identity: X.Identity = JOIN) -> tuple[bytes, bytes, bytes]:
    paths = ca.issue(identity.common_name, identity)
    return paths.key.read_bytes(), paths.cert.read_bytes(), paths.ca.read_bytes()


def test_written_bundle_reads_back_and_is_private(ca: CertAuthority, tmp_path: Path) -> None:
    key, cert, ca_pem = bundle(ca)
    JoinCredential(key, cert, ca_pem).write(tmp_path / "join.pem")
    assert stat.S_IMODE((tmp_path / "join.pem").stat().st_mode) == 0o600
    assert JoinCredential.read(tmp_path / "join.pem") == JoinCredential(key, cert, ca_pem)


def test_block_order_does_not_matter(ca: CertAuthority) -> None:
    key, cert, ca_pem = bundle(ca)
    assert JoinCredential.from_pem(ca_pem + key + cert) == JoinCredential(key, cert, ca_pem)


@pytest.mark.parametrize(
    ("parts", "message"),
    [
        ("key,cert", "found 1 key(s) and 1 certificate(s)"),
        ("cert,ca", "found 0 key(s) and 2 certificate(s)"),
        ("key,key,cert,ca", "found 2 key(s)"),
        ("other_key,cert,ca", "no certificate of the bundle belongs to its private key"),
    ],
)
def test_a_malformed_bundle_is_named(ca: CertAuthority, parts: str, message: str) -> None:
    key, cert, ca_pem = bundle(ca)
    blocks = {"key": key, "cert": cert, "ca": ca_pem, "other_key": X.key_to_pem(X.generate_private_key())}
    with pytest.raises(ValueError, match=r"^/etc/join\.pem: ") as e:
        JoinCredential.from_pem(b"".join(blocks[p] for p in parts.split(",")), "/etc/join.pem")
    assert message in str(e.value)


def test_a_service_certificate_is_not_a_join_credential(ca: CertAuthority) -> None:
    key, cert, ca_pem = bundle(ca, X.Identity(X.CertRole.OM, "om", "h"))
    with pytest.raises(ValueError, match="'om@h' is not a JOIN certificate"):
        JoinCredential.from_pem(key + cert + ca_pem)


def test_the_ca_must_have_signed_the_join_certificate(ca: CertAuthority, tmp_path: Path) -> None:
    key, cert, _ = bundle(ca)
    other = CertAuthority(tmp_path / "other")
    with pytest.raises(ValueError, match="not signed by the bundle's CA certificate"):
        JoinCredential.from_pem(key + cert + X.cert_to_pem(other.cert))


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=f"cannot read the JOIN credential {tmp_path}/nope.pem"):
        JoinCredential.read(tmp_path / "nope.pem")
