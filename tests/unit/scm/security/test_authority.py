"""SCM's CA on virtual time: serials from CertificateId, lifetimes capped by the CA's own, CSRs checked
before signing, every certificate recorded in validCerts and dropped once expired."""

from __future__ import annotations

import datetime as dt
import time

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from pyozone.config import OzoneConfiguration
from pyozone.hdds.clock import ManualClock
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.errors import SecurityError, SecurityResult
from pyozone.hdds.security.users import Administrators, UserGroups
from pyozone.hdds.security.x509 import CertRole, Identity
from pyozone.scm.security.authority import CaMaterial, CertificateAuthority, renewal_due
from pyozone.scm.security.certificates import CERTIFICATE_ID, CertificateStore
from pyozone.scm.security.policy import AccessPolicy
from pyozone.scm.store import SCMMetadataStore

DAY_MS = 86_400_000
CA_KEY = X.generate_private_key()
KEY = X.generate_private_key()  # every CSR here: a key pair costs ~50 ms
POLICY = AccessPolicy(
    Administrators.from_conf(OzoneConfiguration({"ozone.administrators": "admin"})),
    UserGroups.from_conf(OzoneConfiguration()),
)
JOIN = Identity(CertRole.JOIN, "join", "h")
OM = Identity(CertRole.OM, "om", "10.0.0.1")
DN = Identity(CertRole.DATANODE, "dn", "d")
DN1, DN2 = "00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"


def csr(identity: Identity, hosts: tuple[str, ...] = (), datanode: str | None = None) -> bytes:
    if identity.role is CertRole.DATANODE and datanode is None:
        datanode = DN1
    return X.csr_to_pem(X.build_csr(KEY, identity, hosts, datanode))


class Ca:
    """A CA over an in-memory scm.db whose certificate lives `ca_days` from the clock's start."""

    def __init__(self, ca_days: int = 30, lifetime_days: int = 10) -> None:
        self.clock = ManualClock(epoch_ms=time.time_ns() // 1_000_000)
        self.store = SCMMetadataStore.in_memory()
        self.certs = CertificateStore(self.store)
        start = dt.datetime.fromtimestamp(self.clock.wall_ms() / 1000, dt.UTC)
        root = X.self_signed_root(
            CA_KEY, "CID-1", "SCM-1", "h", dt.timedelta(days=ca_days), self.certs.next_serial(), start
        )
        self.certs.add(root)
        self.ca = CertificateAuthority(
            CaMaterial(CA_KEY, root), self.certs, self.clock, "CID-1", "SCM-1", lifetime_days * DAY_MS
        )

    def sign(
        self,
        caller: Identity,
        identity: Identity,
        hosts: tuple[str, ...] = (),
        datanode: str | None = None,
        caller_datanode: str | None = None,
    ) -> X.Certificate:
        return self.ca.sign_request(csr(identity, hosts, datanode), caller, POLICY, caller_datanode)


def test_a_signed_certificate_keeps_the_csr_names_and_is_recorded() -> None:
    c = Ca()
    cert = c.sign(JOIN, OM, ("10.0.0.1", "om-host"))
    assert X.identity_of(cert) == OM and X.is_signed_by(cert, c.ca.material.cert)
    assert cert.serial_number == 2  # the root took 1
    record = c.certs.get(2)
    assert record is not None and record.role is CertRole.OM and record.pem == X.cert_to_pem(cert)
    assert record.expiry_ms == c.clock.wall_ms() // 1000 * 1000 + 10 * DAY_MS


def test_serials_are_never_reused_after_expired_certificates_are_dropped() -> None:
    c = Ca(lifetime_days=1)
    first = c.sign(JOIN, OM).serial_number
    c.clock.advance(2 * DAY_MS)
    assert c.ca.remove_expired() == [first]
    assert c.sign(JOIN, OM).serial_number == first + 1
    assert c.store.sequence_id.get(CERTIFICATE_ID) == first + 1


def test_a_certificate_never_outlives_the_ca() -> None:
    c = Ca(ca_days=5, lifetime_days=10)
    cert = c.sign(JOIN, OM)
    assert cert.not_valid_after_utc == c.ca.material.cert.not_valid_after_utc


def test_an_expired_ca_issues_nothing() -> None:
    c = Ca(ca_days=1)
    c.clock.advance(DAY_MS + 1000)
    with pytest.raises(SecurityError) as e:
        c.sign(JOIN, OM)
    assert e.value.code == SecurityResult.UNABLE_TO_ISSUE_CERTIFICATE


@pytest.mark.parametrize(
    ("pem", "message"),
    [
        (b"", "not a PEM certificate signing request"),
        (b"-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n", "not a PEM"),
        (X.csr_to_pem(X.build_csr(KEY, Identity(CertRole.USER, "a b"))), "is not a valid user name"),
    ],
)
def test_a_bad_csr_is_invalid_csr(pem: bytes, message: str) -> None:
    with pytest.raises(SecurityError) as e:
        Ca().ca.sign_request(pem, Identity(CertRole.USER, "admin"), POLICY)
    assert e.value.code == SecurityResult.INVALID_CSR and message in e.value.message


def test_a_csr_whose_signature_does_not_verify_is_invalid_csr() -> None:
    der = bytearray(X.csr_from_pem(csr(OM)).public_bytes(serialization.Encoding.DER))
    der[-1] ^= 1  # the signature's last bit: still a well-formed CSR
    pem = x509.load_der_x509_csr(bytes(der)).public_bytes(serialization.Encoding.PEM)
    with pytest.raises(SecurityError) as e:
        Ca().ca.sign_request(pem, JOIN, POLICY)
    assert e.value.code == SecurityResult.INVALID_CSR and "signature does not verify" in e.value.message


def test_a_datanodes_certificate_names_its_datanode_and_renews_for_it_alone() -> None:
    c = Ca()
    cert = c.sign(JOIN, DN, ("127.0.0.1",), DN1)
    assert X.datanode_id(cert) == DN1 and X.identity_of(cert) == DN
    assert X.datanode_id(c.sign(DN, DN, ("127.0.0.1",), DN1, caller_datanode=DN1)) == DN1
    with pytest.raises(SecurityError) as e:  # the same common name, another datanode
        c.sign(DN, DN, ("127.0.0.1",), DN2, caller_datanode=DN1)
    assert e.value.code == SecurityResult.PERMISSION_DENIED and "a datanode renews its own" in e.value.message
    pem = X.csr_to_pem(X.build_csr(KEY, DN, ("127.0.0.1",)))
    with pytest.raises(SecurityError) as e:
        c.ca.sign_request(pem, JOIN, POLICY)
    assert e.value.code == SecurityResult.INVALID_CSR and "names its datanode UUID" in e.value.message


def test_a_user_gets_no_host_names_not_even_renewing_its_own() -> None:
    c = Ca()
    bob = Identity(CertRole.USER, "bob")
    with pytest.raises(SecurityError) as e:
        c.sign(bob, bob, ("127.0.0.1", "localhost"))
    assert (
        e.value.code == SecurityResult.INVALID_CSR and "a user's certificate names no host" in e.value.message
    )
    usage = c.sign(bob, bob).extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usage) == [x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH]


def test_the_policy_decides_before_anything_is_signed() -> None:
    c = Ca()
    with pytest.raises(SecurityError) as e:
        c.sign(JOIN, Identity(CertRole.USER, "alice"))
    assert e.value.code == SecurityResult.PERMISSION_DENIED
    assert [r.serial for r in c.certs.list(None, 0, 100)] == [1]


def test_listing_by_role_start_and_count() -> None:
    c = Ca()
    admin = Identity(CertRole.USER, "admin")
    serials = {
        "om": c.sign(JOIN, OM).serial_number,
        "dn": c.sign(JOIN, DN).serial_number,
        "alice": c.sign(admin, Identity(CertRole.USER, "alice")).serial_number,
        "om2": c.sign(JOIN, Identity(CertRole.OM, "om", "o2")).serial_number,
    }
    assert [r.serial for r in c.certs.list(None, 0, 100)] == [1, *serials.values()]
    assert [r.serial for r in c.certs.list(CertRole.OM, 0, 100)] == [serials["om"], serials["om2"]]
    assert [r.serial for r in c.certs.list(CertRole.OM, serials["om"] + 1, 100)] == [serials["om2"]]
    assert [r.serial for r in c.certs.list(None, 0, 2)] == [1, serials["om"]]
    assert [r.role for r in c.certs.list(CertRole.SCM, 0, 100)] == [CertRole.SCM]  # the root
    assert c.certs.get(999) is None and c.certs.get(-1) is None and c.certs.get(1 << 70) is None


def test_expired_certificates_are_removed_at_their_expiry() -> None:
    c = Ca(lifetime_days=1)
    short = c.sign(JOIN, OM)
    c.ca.lifetime = dt.timedelta(days=3)
    longer = c.sign(JOIN, DN)
    c.clock.advance(DAY_MS - 1000)
    assert c.ca.remove_expired() == []
    c.clock.advance(1000)
    assert c.ca.remove_expired() == [short.serial_number]
    assert [r.serial for r in c.certs.list(None, 0, 10)] == [1, longer.serial_number]


def test_renewal_is_due_within_the_grace_period() -> None:
    c = Ca(lifetime_days=10)
    cert = c.sign(JOIN, OM)
    expiry_ms = int(cert.not_valid_after_utc.timestamp() * 1000)
    assert not renewal_due(cert, expiry_ms - 3 * DAY_MS - 1, 3 * DAY_MS)
    assert renewal_due(cert, expiry_ms - 3 * DAY_MS, 3 * DAY_MS)


def test_ca_material_is_checked() -> None:
    other = X.generate_private_key()
    root = X.self_signed_root(CA_KEY, "CID-1", "SCM-1", "h", dt.timedelta(days=1), 1)
    with pytest.raises(ValueError, match="not for the CA private key"):
        CaMaterial(other, root)
    leaf = X.sign_csr(X.build_csr(KEY, OM), CA_KEY, root, "CID-1", "SCM-1", dt.timedelta(hours=1), 2)
    with pytest.raises(ValueError, match="not a CA certificate"):
        CaMaterial(KEY, leaf)
