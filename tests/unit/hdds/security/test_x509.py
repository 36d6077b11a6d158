"""Certificates as SCM's CA issues them, and the identities their common names carry."""

from __future__ import annotations

import datetime as dt

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes

from pyozone.hdds.security import x509 as X

CA_KEY = X.generate_private_key()
CA = X.self_signed_root(CA_KEY, "CID-1", "SCM-1", "127.0.0.1", dt.timedelta(days=30), serial=1)


def _issue(identity: X.Identity, hosts: tuple[str, ...] = (), lifetime: dt.timedelta = dt.timedelta(days=1)):
    key = X.generate_private_key()
    csr = X.csr_from_pem(X.csr_to_pem(X.build_csr(key, identity, hosts)))
    return key, X.sign_csr(csr, CA_KEY, CA, "CID-1", "SCM-1", lifetime, serial=7)


@pytest.mark.parametrize(
    ("common_name", "identity"),
    [
        ("alice", X.Identity(X.CertRole.USER, "alice")),
        ("om@127.0.0.1", X.Identity(X.CertRole.OM, "om", "127.0.0.1")),
        ("dn@host-7", X.Identity(X.CertRole.DATANODE, "dn", "host-7")),
        ("s3g@h", X.Identity(X.CertRole.S3G, "s3g", "h")),
        ("join@h", X.Identity(X.CertRole.JOIN, "join", "h")),
    ],
)
def test_common_name_round_trips_to_identity(common_name: str, identity: X.Identity) -> None:
    assert X.Identity.from_common_name(common_name) == identity
    assert identity.common_name == common_name


@pytest.mark.parametrize("common_name", ["", "root@h", "user@h", "@h"])
def test_common_names_no_peer_could_have_are_refused(common_name: str) -> None:
    with pytest.raises(ValueError):
        X.Identity.from_common_name(common_name)


@pytest.mark.parametrize("name", ["", "a@b", "a,b", "a/b", "a b", "x" * 65, "tab\t"])
def test_bad_user_names_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="not a valid user name"):
        X.check_user_name(name)


def test_root_is_a_ca_named_after_scm_with_cluster_and_scm_ids() -> None:
    constraints = CA.extensions.get_extension_for_class(x509.BasicConstraints).value
    assert constraints.ca
    assert X.common_name(CA) == "scm@127.0.0.1"
    assert CA.subject == CA.issuer
    assert "O=CID-1" in CA.subject.rfc4514_string() and "OU=SCM-1" in CA.subject.rfc4514_string()


def test_signed_leaf_keeps_name_and_hosts_and_serves_both_tls_sides() -> None:
    _, cert = _issue(X.Identity(X.CertRole.OM, "om", "127.0.0.1"), ("127.0.0.1", "localhost"))
    assert X.identity_of(cert) == X.Identity(X.CertRole.OM, "om", "127.0.0.1")
    assert X.is_signed_by(cert, CA)
    alt = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    # and the role-qualified name of each host, which only the CA adds (a client checks role and host)
    assert alt.get_values_for_type(x509.DNSName) == [
        "localhost",
        "127.0.0.1.om.role.invalid",
        "localhost.om.role.invalid",
    ]
    assert [str(ip) for ip in alt.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]
    usage = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert {u._name for u in usage} == {"serverAuth", "clientAuth"}
    assert not cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca


def test_a_leaf_never_outlives_its_ca() -> None:
    _, cert = _issue(X.Identity(X.CertRole.USER, "alice"), lifetime=dt.timedelta(days=3650))
    assert cert.not_valid_after_utc <= CA.not_valid_after_utc


def test_a_certificate_from_another_ca_is_not_signed_by_ours() -> None:
    other_key = X.generate_private_key()
    other = X.self_signed_root(other_key, "CID-2", "SCM-2", "h", dt.timedelta(days=1), serial=1)
    csr = X.build_csr(X.generate_private_key(), X.Identity(X.CertRole.USER, "mallory"))
    cert = X.sign_csr(csr, other_key, other, "CID-2", "SCM-2", dt.timedelta(days=1), serial=2)
    assert not X.is_signed_by(cert, CA)


def test_pem_codecs_round_trip_and_name_bad_input() -> None:
    key, cert = _issue(X.Identity(X.CertRole.USER, "bob"))
    assert X.cert_from_pem(X.cert_to_pem(cert)) == cert
    assert X.key_from_pem(X.key_to_pem(key)).private_numbers() == key.private_numbers()
    for parse, what in (
        (X.cert_from_pem, "certificate"),
        (X.csr_from_pem, "signing request"),
        (X.key_from_pem, "key"),
    ):
        with pytest.raises(ValueError, match=what):
            parse(b"-----BEGIN NOTHING-----\nxx\n-----END NOTHING-----\n")


def test_short_keys_are_refused() -> None:
    with pytest.raises(ValueError, match="at least 2048"):
        X.generate_private_key(1024)


def test_a_users_certificate_names_no_host_and_only_authenticates_a_client() -> None:
    _, cert = _issue(X.Identity(X.CertRole.USER, "bob"))
    with pytest.raises(x509.ExtensionNotFound):
        cert.extensions.get_extension_for_class(x509.SubjectAlternativeName)
    usage = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert {u._name for u in usage} == {"clientAuth"}
    with pytest.raises(ValueError, match="a user's certificate names no host"):
        _issue(X.Identity(X.CertRole.USER, "bob"), ("127.0.0.1", "localhost"))


def test_a_datanodes_certificate_names_its_uuid_beside_its_hosts() -> None:
    uuid = "0b8e5a4e-3f7c-4a8e-9d55-1c1f5a7e2b01"
    key = X.generate_private_key()
    dn = X.Identity(X.CertRole.DATANODE, "dn", "127.0.0.1")
    csr = X.build_csr(key, dn, ("127.0.0.1",), uuid)
    assert X.datanode_id(csr) == uuid
    cert = X.sign_csr(csr, CA_KEY, CA, "CID-1", "SCM-1", dt.timedelta(days=1), serial=8)
    assert X.datanode_id(cert) == uuid
    alt = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert [str(ip) for ip in alt.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]
    assert X.datanode_id(_issue(dn, ("127.0.0.1",))[1]) is None


def test_only_a_datanode_names_a_uuid_and_only_in_canonical_form() -> None:
    key = X.generate_private_key()
    om = X.Identity(X.CertRole.OM, "om", "h")
    with pytest.raises(ValueError, match="only a datanode's certificate names a datanode UUID"):
        X.sign_csr(X.build_csr(key, om, ("h",), "0b8e5a4e-3f7c-4a8e-9d55-1c1f5a7e2b01"), CA_KEY, CA, "C", "S",
                   dt.timedelta(days=1), serial=9)  # fmt: skip
    with pytest.raises(ValueError, match="is not a datanode UUID"):
        X.build_csr(
            key, X.Identity(X.CertRole.DATANODE, "dn", "h"), ("h",), "0B8E5A4E3F7C4A8E9D551C1F5A7E2B01"
        )
    odd = (
        x509.CertificateSigningRequestBuilder()
        .subject_name(x509.Name([x509.NameAttribute(x509.oid.NameOID.COMMON_NAME, "dn@h")]))
        .add_extension(x509.SubjectAlternativeName([x509.UniformResourceIdentifier("https://h/")]), False)
        .sign(key, hashes.SHA256())
    )
    with pytest.raises(ValueError, match="is not a datanode UUID"):
        X.sign_csr(odd, CA_KEY, CA, "C", "S", dt.timedelta(days=1), serial=10)
