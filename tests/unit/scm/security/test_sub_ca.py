"""Issue 31 (item 4, the CA in HA): SCM's own certificate is a sub-CA signed by the root, as Ozone's
(HASecurityUtils, SCMCertificateClient), and it signs every other certificate. A holder's certificate file
holds its leaf and the issuing sub-CA, ca.crt stays the root; every "signed by the CA" check is a chain check
to the root; the CRL SCM serves is signed by the issuer of what it lists, so OpenSSL's leaf check refuses a
revoked certificate in the handshake; the sub-CA renews with the same key and subject."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID

from pyozone.common.fsutil import write_file
from pyozone.common.tls import TlsPaths, TlsStore
from pyozone.hdds.clock import ManualClock
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.users import Administrators, UserGroups
from pyozone.hdds.security.x509 import CertRole, Identity
from pyozone.scm.security.authority import CaMaterial, CertificateAuthority
from pyozone.scm.security.certificates import CertificateStore, RevocationReason
from pyozone.scm.security.join_tokens import JoinTokens
from pyozone.scm.security.manager import ScmSecurity
from pyozone.scm.security.policy import AccessPolicy
from pyozone.scm.server.ca_files import renew_scm_certificate
from pyozone.scm.store import SCMMetadataStore
from pyozone.security.join import JoinCredential
from tests.unit.common.test_tls_revocation import handshake
from tests.unit.scm.security.test_manager import SERVICE_HOSTS, join_token
from tests.unit.scm.security.test_secret_key_manager import SETTINGS, manager

H = 3_600_000
GRACE = 45 * 60_000
"""hdds.x509.renew.grace.duration here: less than the CA's one-hour hdds.x509.default.duration."""
DAY = dt.timedelta(days=1)
ADMIN = Identity(CertRole.USER, "admin")
SCM_HOSTS = ("127.0.0.1", "localhost")
OM = Identity(CertRole.OM, "om", "127.0.0.1")


def sub_ca(
    root_key: X.PrivateKey, root: X.Certificate, serial: int, key: X.PrivateKey | None = None
) -> tuple[X.PrivateKey, X.Certificate]:
    key = key or X.generate_private_key()
    identity = Identity(CertRole.SCM, "scm", SCM_HOSTS[0])
    return key, X.sub_ca_certificate(key, root_key, root, identity, SCM_HOSTS, "CID-1", "SCM-1", DAY, serial)


def security(clock: ManualClock) -> ScmSecurity:
    """An SCM as `scm --init` lays it out: the root (serial 1) signs SCM's sub-CA (serial 2), which issues."""
    store = SCMMetadataStore.in_memory()
    certs = CertificateStore(store)
    root_key = X.generate_private_key()
    start = dt.datetime.fromtimestamp(clock.wall_ms() / 1000, dt.UTC)
    root = X.self_signed_root(root_key, "CID-1", "SCM-1", "root-ca", 3 * DAY, certs.next_serial(), start)
    certs.add(root)
    key, cert = sub_ca(root_key, root, certs.next_serial())
    certs.add(cert)
    ca = CertificateAuthority(CaMaterial(key, cert, root, root_key), certs, clock, "CID-1", "SCM-1", H)
    keys, _ = manager(clock)
    policy = AccessPolicy(Administrators(frozenset({"admin"}), frozenset()), UserGroups({}))
    tokens = JoinTokens(store, certs, SERVICE_HOSTS, lambda _: False)
    return ScmSecurity(SETTINGS, ca, keys, policy, tokens)


def now_clock() -> ManualClock:
    return ManualClock(epoch_ms=time.time_ns() // 1_000_000)


def issue(
    s: ScmSecurity, identity: Identity, hosts: tuple[str, ...] = ()
) -> tuple[X.PrivateKey, bytes, bytes]:
    """(key, certificate file, ca.crt) of a daemon joining with a JOIN credential, or a user an
    administrator issues."""
    key = X.generate_private_key()
    csr = X.csr_to_pem(X.build_csr(key, identity, hosts))
    if identity.role is CertRole.USER:
        cert_pem, ca_pem = s.sign(ADMIN, csr)
    else:
        join, token = join_token(s, identity.role, identity.host)
        cert_pem, ca_pem = s.sign(join, csr, None, token)
    return key, cert_pem, ca_pem


def store_of(tmp: Path, name: str, key: X.PrivateKey, cert_pem: bytes, ca_pem: bytes) -> TlsStore:
    paths = TlsPaths(tmp / name / "private.pem", tmp / name / "certificate.crt", tmp / name / "ca.crt")
    write_file(paths.key, X.key_to_pem(key), private=True)
    write_file(paths.cert, cert_pem)
    write_file(paths.ca, ca_pem)
    return TlsStore(paths)


def scm_store(tmp: Path, s: ScmSecurity) -> TlsStore:
    """SCM's own TLS material: its sub-CA certificate, with the root as ca.crt."""
    m = s.ca.material
    return store_of(tmp, "scm", m.key, X.cert_to_pem(m.cert), m.pem)


def test_the_sub_ca_is_a_ca_for_leaves_only_and_serves_tls_both_ways() -> None:
    s = security(now_clock())
    m = s.ca.material
    sub, root = m.cert, m.trust_anchor
    constraints = sub.extensions.get_extension_for_class(x509.BasicConstraints)
    assert constraints.critical and constraints.value.ca and constraints.value.path_length == 0
    usage = sub.extensions.get_extension_for_class(x509.KeyUsage).value
    assert usage.key_cert_sign and usage.crl_sign and usage.digital_signature and not usage.key_encipherment
    extended = list(sub.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value)
    assert extended == [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
    assert X.common_name(sub) == "scm@127.0.0.1" and X.host_names(sub) == list(SCM_HOSTS)
    assert X.role_host_name(CertRole.SCM, "127.0.0.1") in X.dns_names(sub)
    assert sub.issuer == root.subject != sub.subject and X.is_signed_by(sub, root)
    assert root.extensions.get_extension_for_class(x509.BasicConstraints).value.path_length == 1
    assert m.pem == X.cert_to_pem(root) and m.chain == (sub,)
    with pytest.raises(ValueError, match="only an SCM's certificate"):
        X.sub_ca_certificate(m.key, m.root_key, root, OM, SCM_HOSTS, "C", "S", DAY, 99)  # type: ignore[arg-type]


def test_a_leaf_file_holds_its_chain_and_verifies_through_the_sub_ca_to_the_root() -> None:
    s = security(now_clock())
    m = s.ca.material
    _, cert_pem, ca_pem = issue(s, OM, ("127.0.0.1",))
    leaf, *chain = X.certs_from_pem(cert_pem)
    assert chain == [m.cert] and ca_pem == m.pem
    assert leaf.issuer == m.cert.subject and not X.is_signed_by(leaf, m.trust_anchor)
    assert X.verifies_to(leaf, chain, m.trust_anchor) and X.chain_verifies(cert_pem, m.trust_anchor)
    assert not X.verifies_to(leaf, [], m.trust_anchor)  # the sub-CA is needed on the way
    # A JOIN credential carries the sub-CA too, so its first CSR's handshake chains.
    key = X.generate_private_key()
    csr = X.csr_to_pem(X.build_csr(key, Identity(CertRole.JOIN, "join", "dn")))
    join_pem, root_pem = s.mint_join(ADMIN, CertRole.DATANODE, "", csr)
    credential = JoinCredential.from_pem(X.key_to_pem(key) + join_pem + root_pem)
    assert credential.cert_pem == join_pem and credential.ca_pem == root_pem
    assert JoinCredential.from_pem(root_pem + X.key_to_pem(key) + join_pem) == credential


def test_a_certificate_of_another_root_is_refused() -> None:
    s, other = security(now_clock()), security(now_clock())
    root = s.ca.material.trust_anchor
    _, foreign_pem, _ = issue(other, OM, ("127.0.0.1",))
    assert not X.chain_verifies(foreign_pem, root)
    foreign_leaf = X.cert_from_pem(foreign_pem)
    # Not even with this cluster's sub-CA beside it, nor the other sub-CA alone (same subject, other key).
    assert not X.verifies_to(foreign_leaf, [s.ca.material.cert], root)
    assert not X.verifies_to(other.ca.material.cert, [], root)
    with pytest.raises(ValueError, match="not signed by the root"):
        CaMaterial(other.ca.material.key, other.ca.material.cert, root)
    key = X.generate_private_key()
    csr = X.csr_to_pem(X.build_csr(key, Identity(CertRole.JOIN, "join", "dn")))
    join_pem, _ = other.mint_join(ADMIN, CertRole.DATANODE, "", csr)
    with pytest.raises(ValueError, match="not signed by the bundle's CA"):
        JoinCredential.from_pem(X.key_to_pem(key) + join_pem + s.ca.material.pem)


def test_a_foreign_chain_fails_the_handshake(tmp_path: Path) -> None:
    s, other = security(now_clock()), security(now_clock())
    om = store_of(tmp_path, "om", *issue(s, OM, ("127.0.0.1",)))
    alice = store_of(tmp_path, "alice", *issue(s, Identity(CertRole.USER, "alice")))
    key, foreign_pem, _ = issue(other, Identity(CertRole.USER, "mallory"))
    mallory = store_of(tmp_path, "mallory", key, foreign_pem, s.ca.material.pem)  # trusts our root
    assert handshake(om, alice) == "ok"
    assert handshake(om, mallory) != "ok"


def test_serials_are_unique_across_the_root_the_sub_ca_and_the_leaves() -> None:
    s = security(now_clock())
    issued = [X.cert_from_pem(issue(s, Identity(CertRole.USER, f"u{i}"))[1]) for i in range(3)]
    serials = [s.ca.material.trust_anchor.serial_number, s.ca.material.cert.serial_number]
    serials += [c.serial_number for c in issued]
    assert len(set(serials)) == len(serials) == 5
    assert sorted(r.serial for r in s.ca.certs.records()) == sorted(serials)


def test_the_crl_of_each_issuer_lists_what_it_issued(tmp_path: Path) -> None:
    s = security(now_clock())
    m = s.ca.material
    _, bob_pem, _ = issue(s, Identity(CertRole.USER, "bob"))
    bob = X.cert_from_pem(bob_pem).serial_number
    s.revoke(ADMIN, [bob], RevocationReason.KEY_COMPROMISE)
    number, bundle = s.crl()
    crls = [x509.load_pem_x509_crl(b) for b in X._CRL_BLOCK.findall(bundle)]
    assert [c.issuer for c in crls] == [m.cert.subject, m.trust_anchor.subject]
    assert [[e.serial_number for e in c] for c in crls] == [[bob], []]
    assert X.certs_from_pem(bundle) == [m.cert]  # the sub-CA, to verify its list by the root
    assert number == 1 and X.crl_serials(bundle, m.trust_anchor) == {bob}
    assert X.crl_number(bundle, m.trust_anchor) == 1
    # Verified against the root: a bundle of another cluster is refused.
    with pytest.raises(ValueError, match="the CA did not issue"):
        X.crl_serials(security(now_clock()).crl()[1], m.trust_anchor)


def test_the_sub_cas_crl_refuses_its_revoked_leaves_in_the_handshake_on_both_sides(tmp_path: Path) -> None:
    """OpenSSL's leaf check wants the CRL of the peer's issuer: the sub-CA's for a daemon or user, the
    root's for SCM's own certificate; a party holding SCM's bundle has both."""
    s = security(now_clock())
    om = store_of(tmp_path, "om", *issue(s, OM, ("127.0.0.1",)))
    alice = store_of(tmp_path, "alice", *issue(s, Identity(CertRole.USER, "alice")))
    bob = store_of(tmp_path, "bob", *issue(s, Identity(CertRole.USER, "bob")))
    scm = scm_store(tmp_path, s)
    bob_serial = X.cert_from_pem(bob.paths.cert.read_bytes()).serial_number
    s.revoke(ADMIN, [bob_serial], RevocationReason.KEY_COMPROMISE)
    for party in (om, alice, bob, scm):
        assert party.update_crl(*s.crl())
    assert om.revoked == {bob_serial}
    assert handshake(om, alice) == "ok" and handshake(scm, alice) == "ok"
    assert "revoked" in handshake(om, bob) and "revoked" in handshake(scm, bob)
    # SCM's sub-CA certificate as the server, checked by a client holding the CRLs.
    assert handshake(scm, om) == "ok" and handshake(om, scm) == "ok"  # and as the client of a daemon
    # A restart keeps enforcing the bundle it kept (crl.pem), verified against the root.
    restarted = TlsStore(om.paths)
    assert restarted.revoked == {bob_serial} and "revoked" in handshake(restarted, bob)


def test_the_sub_ca_renews_with_the_same_key_and_subject_so_what_it_issued_still_chains(
    tmp_path: Path,
) -> None:
    clock = now_clock()
    s = security(clock)
    before = s.ca.material
    paths = scm_store(tmp_path, s).paths
    _, om_pem, _ = issue(s, OM, ("127.0.0.1",))
    clock.advance(23 * H + H // 2)  # inside the grace period of the sub-CA's one-day life
    renewed = renew_scm_certificate(s.ca, paths, SCM_HOSTS, GRACE, 24 * H)
    assert renewed is not None and X.is_ca(renewed) and renewed.serial_number != before.cert.serial_number
    assert renewed.subject == before.cert.subject and renewed.public_key() == before.cert.public_key()
    assert s.ca.material.cert == renewed and s.ca.material.key == before.key
    assert X.cert_from_pem(paths.cert.read_bytes()) == renewed and paths.ca.read_bytes() == before.pem
    om_leaf = X.cert_from_pem(om_pem)
    assert X.verifies_to(om_leaf, [renewed], before.trust_anchor)
    assert renewed.not_valid_after_utc > before.cert.not_valid_after_utc  # the lifetime passed on
    # What it issues now carries the renewed sub-CA.
    _, new_pem, _ = issue(s, Identity(CertRole.USER, "carol"))
    assert X.certs_from_pem(new_pem)[1:] == [renewed]
    assert renew_scm_certificate(s.ca, paths, SCM_HOSTS, GRACE, 24 * H) is None  # not due again


def test_a_party_holding_the_roots_crl_alone_takes_the_bundle_of_the_same_number(tmp_path: Path) -> None:
    """A daemon (or SCM) that kept the root's CRL of a directory made before the sub-CA: without the
    sub-CA's CRL OpenSSL refuses every leaf the sub-CA issued, so the first bundle carrying it is taken
    even at the same number."""
    s = security(now_clock())
    m = s.ca.material
    om = store_of(tmp_path, "om", *issue(s, OM, ("127.0.0.1",)))
    alice = store_of(tmp_path, "alice", *issue(s, Identity(CertRole.USER, "alice")))
    start = int(m.trust_anchor.not_valid_before_utc.timestamp() * 1000)
    expiry = int(m.trust_anchor.not_valid_after_utc.timestamp() * 1000)
    root_only = X.build_crl(m.root_key, m.trust_anchor, [], 0, start, expiry)  # type: ignore[arg-type]
    assert om.update_crl(0, root_only) and om.crl_issuers == {m.trust_anchor.subject.rfc4514_string()}
    assert "unable to get certificate CRL" in handshake(om, alice)
    number, bundle = s.crl()
    assert number == 0 and om.update_crl(number, bundle)
    assert handshake(om, alice) == "ok"
    assert not om.update_crl(number, bundle) and not om.update_crl(number, root_only)
    assert TlsStore(om.paths).crl_issuers == om.crl_issuers  # kept
