"""Issue 31, review R15 D1: a party's CRL bundle never makes a certificate a trust anchor (ca.crt, the root,
is the only one: OpenSSL gets the CRLs alone and checks each with the issuer the peer sends), and a bundle
signed by a renewed or re-made sub-CA is taken although the revocation count did not move. Before, the
sub-CA of the kept crl.pem was trusted, so once it expired every leaf the renewed sub-CA issued failed
the handshake ("certificate has expired"), and a re-made sub-CA's leaves failed it on the old key's CRL."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

import pytest

from pyozone.common.tls import CRL_FILE, TlsPaths, TlsStore
from pyozone.hdds.clock import ManualClock
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.users import Administrators, UserGroups
from pyozone.hdds.security.x509 import CertRole, Identity
from pyozone.scm.security.authority import CaMaterial, CertificateAuthority
from pyozone.scm.security.certificates import CertificateStore
from pyozone.scm.security.join_tokens import JoinTokens
from pyozone.scm.security.manager import ScmSecurity
from pyozone.scm.security.policy import AccessPolicy
from pyozone.scm.server import ScmDaemon
from pyozone.scm.server.ca_files import init_security, renew_scm_certificate
from pyozone.scm.store import SCMMetadataStore
from pyozone.scm.store.version import init_scm, open_scm_store
from tests.unit.common.test_tls_revocation import handshake
from tests.unit.scm.security.test_manager import SERVICE_HOSTS
from tests.unit.scm.security.test_secret_key_manager import SETTINGS, manager
from tests.unit.scm.security.test_sub_ca import OM, SCM_HOSTS, issue, now_clock, scm_store, security, store_of
from tests.unit.scm.server.scm_server_helpers import scm_conf
from tests.unit.scm.server.secure_scm_helpers import SECURE

H = 3_600_000


def _security_started_2h_ago() -> ScmSecurity:
    """SCM whose clock runs two hours behind real time, with a 90-minute sub-CA: by real time (the
    handshakes') that sub-CA has expired."""
    clock = ManualClock(epoch_ms=time.time_ns() // 1_000_000 - 2 * H)
    start = dt.datetime.fromtimestamp(clock.wall_ms() / 1000, dt.UTC)
    store = SCMMetadataStore.in_memory()
    certs = CertificateStore(store)
    root_key = X.generate_private_key()
    root = X.self_signed_root(
        root_key, "CID-1", "SCM-1", "root-ca", dt.timedelta(days=3), certs.next_serial(), start
    )
    certs.add(root)
    key = X.generate_private_key()
    sub = X.sub_ca_certificate(
        key, root_key, root, Identity(CertRole.SCM, "scm", SCM_HOSTS[0]), SCM_HOSTS, "CID-1", "SCM-1",
        dt.timedelta(minutes=90), certs.next_serial(), start,
    )  # fmt: skip
    certs.add(sub)
    ca = CertificateAuthority(CaMaterial(key, sub, root, root_key), certs, clock, "CID-1", "SCM-1", 24 * H)
    keys, _ = manager(clock)
    policy = AccessPolicy(Administrators(frozenset({"admin"}), frozenset()), UserGroups({}))
    return ScmSecurity(SETTINGS, ca, keys, policy, JoinTokens(store, certs, SERVICE_HOSTS, lambda _: False))


def test_after_the_sub_ca_renews_and_the_old_one_expires_its_leaves_still_pass(tmp_path: Path) -> None:
    s = _security_started_2h_ago()
    scm = scm_store(tmp_path, s)
    om_key, om_cert, om_ca = issue(s, OM, ("127.0.0.1",))
    om = store_of(tmp_path, "om", om_key, om_cert, om_ca)
    stale = s.crl()
    assert om.update_crl(*stale) and scm.update_crl(*stale)  # fetched before the renewal
    s.ca.clock.advance(H)  # type: ignore[attr-defined]
    old = s.ca.material.cert
    assert renew_scm_certificate(s.ca, scm.paths, SCM_HOSTS, 45 * 60_000, 24 * H) is not None
    k = X.key_from_pem(om_key_pem := om.paths.key.read_bytes())  # OM renews its leaf, as CertRenewer does
    csr = X.csr_to_pem(X.build_csr(k, OM, ("127.0.0.1",)))
    om = store_of(tmp_path, "om", k, *s.sign(OM, csr, None, X.cert_from_pem(om_cert).serial_number))
    assert om.paths.key.read_bytes() == om_key_pem
    number, bundle = s.crl()
    assert number == om.crl_number  # no revocation: the number did not move
    assert om.update_crl(number, bundle) and scm.update_crl(number, bundle)
    assert not om.update_crl(number, bundle) and not om.update_crl(*stale)  # taken once, never undone
    alice = store_of(tmp_path, "alice", *issue(s, Identity(CertRole.USER, "alice")))
    assert old.not_valid_after_utc < dt.datetime.now(dt.UTC)  # real time: the old sub-CA expired
    assert handshake(om, alice) == "ok"
    assert handshake(scm, om) == "ok"
    assert handshake(om, scm) == "ok"
    assert TlsStore(om.paths).crl_signers == om.crl_signers  # the kept bundle is the renewed one


def test_a_stale_kept_bundle_holding_an_expired_sub_ca_is_no_trust_anchor(tmp_path: Path) -> None:
    """A party restarted with the crl.pem of before the renewal (it had not fetched since) still accepts
    the renewed sub-CA's leaves: the old sub-CA in it is not trusted."""
    s = _security_started_2h_ago()
    scm = scm_store(tmp_path, s)
    om = store_of(tmp_path, "om", *issue(s, OM, ("127.0.0.1",)))
    assert om.update_crl(*s.crl())
    s.ca.clock.advance(H)  # type: ignore[attr-defined]
    renew_scm_certificate(s.ca, scm.paths, SCM_HOSTS, 45 * 60_000, 24 * H)
    k = X.key_from_pem(om.paths.key.read_bytes())  # OM renews its leaf, but has not fetched the CRL since
    old_serial = X.cert_from_pem(om.paths.cert.read_bytes()).serial_number
    om = store_of(
        tmp_path, "om", k, *s.sign(OM, X.csr_to_pem(X.build_csr(k, OM, ("127.0.0.1",))), None, old_serial)
    )
    alice = store_of(tmp_path, "alice", *issue(s, Identity(CertRole.USER, "alice")))
    assert handshake(TlsStore(om.paths), alice) == "ok"


def test_a_re_made_sub_ca_with_a_new_key_has_its_bundle_taken_at_the_same_number(tmp_path: Path) -> None:
    """scm --init again on an unusable SCM certificate: a new key under the same subject."""
    s = security(now_clock())
    m = s.ca.material
    om = store_of(tmp_path, "om", *issue(s, OM, ("127.0.0.1",)))
    assert om.update_crl(*s.crl())
    key = X.generate_private_key()
    cert = X.sub_ca_certificate(
        key, m.root_key, m.root, X.identity_of(m.cert), SCM_HOSTS, "CID-1", "SCM-1",  # type: ignore[arg-type]
        s.ca.lifetime, s.ca.certs.next_serial(),
    )  # fmt: skip
    s.ca.certs.add(cert)
    s.ca.material = CaMaterial(key, cert, m.root, m.root_key)
    alice = store_of(tmp_path, "alice", *issue(s, Identity(CertRole.USER, "alice")))
    number, bundle = s.crl()
    assert number == om.crl_number and om.update_crl(number, bundle)
    assert handshake(om, alice) == "ok"


def test_a_leaf_without_its_sub_ca_fails_although_the_bundle_holds_the_sub_ca(tmp_path: Path) -> None:
    """The sub-CA a bundle carries signs its CRL; it never stands in for the chain a peer must send."""
    s = security(now_clock())
    om = store_of(tmp_path, "om", *issue(s, OM, ("127.0.0.1",)))
    assert om.update_crl(*s.crl())
    key, cert_pem, ca_pem = issue(s, Identity(CertRole.USER, "alice"))
    bare = store_of(tmp_path, "alice", key, X.cert_to_pem(X.cert_from_pem(cert_pem)), ca_pem)
    assert "unable to get local issuer certificate" in handshake(om, bare)


def test_a_bundle_carrying_a_certificate_the_ca_did_not_issue_is_refused(tmp_path: Path) -> None:
    s = security(now_clock())
    om = store_of(tmp_path, "om", *issue(s, OM, ("127.0.0.1",)))
    number, bundle = s.crl()
    rogue = X.self_signed_root(X.generate_private_key(), "X", "Y", "rogue", dt.timedelta(days=1), 4242)
    with pytest.raises(ValueError, match="a certificate the CA did not issue"):
        om.update_crl(number + 1, bundle + X.cert_to_pem(rogue))
    assert om.crl_number == -1 and not om.paths.ca.with_name(CRL_FILE).exists()


def test_scm_publishes_the_renewed_sub_cas_bundle_to_its_own_ports_at_once(tmp_path: Path) -> None:
    """The daemon's renewal task hands SCM's TlsStore the bundle the renewed sub-CA signs, and keeps it
    (a restart takes it too: same number, another signer)."""
    conf = scm_conf(tmp_path / "scm", SECURE)
    storage, _ = init_scm(conf)
    init_security(conf, storage)
    before = X.cert_from_pem(TlsPaths.under(tmp_path / "scm", conf).cert.read_bytes())
    clock = ManualClock(epoch_ms=time.time_ns() // 1_000_000)
    daemon = ScmDaemon(conf, *open_scm_store(conf), clock=clock)
    try:
        assert daemon.secure is not None
        tls = daemon.secure.tls
        expiry_ms = int(before.not_valid_after_utc.timestamp() * 1000)
        clock.advance(expiry_ms - conf.get("hdds.x509.renew.grace.duration") - clock.wall_ms() + 1)
        renewal = next(t for t in daemon.core.tasks if t.name == "ScmCertificateRenewal")
        renewal.action()
        renewed = X.cert_from_pem(tls.paths.cert.read_bytes())
        assert renewed.serial_number != before.serial_number
        kept = X.certs_from_pem(tls.paths.ca.with_name(CRL_FILE).read_bytes())
        assert [c.serial_number for c in kept] == [renewed.serial_number]
    finally:
        daemon.store.close()


def test_a_running_partys_contexts_take_the_re_made_sub_cas_crl_over_the_old_keys(tmp_path: Path) -> None:
    """OpenSSL keeps the CRLs a context was given: the old key's CRL (same issuer name) is passed over
    for the new one, as each CRL names its signer's key (AuthorityKeyIdentifier, RFC 5280 5.2.1)."""
    s = security(now_clock())
    m = s.ca.material
    om = store_of(tmp_path, "om", *issue(s, OM, ("127.0.0.1",)))
    assert om.update_crl(*s.crl())
    running = om.server_context()  # opened before scm --init makes the new sub-CA
    key = X.generate_private_key()
    cert = X.sub_ca_certificate(
        key, m.root_key, m.root, X.identity_of(m.cert), SCM_HOSTS, "CID-1", "SCM-1",  # type: ignore[arg-type]
        s.ca.lifetime, s.ca.certs.next_serial(),
    )  # fmt: skip
    s.ca.certs.add(cert)
    s.ca.material = CaMaterial(key, cert, m.root, m.root_key)
    alice = store_of(tmp_path, "alice", *issue(s, Identity(CertRole.USER, "alice")))
    assert om.update_crl(*s.crl())
    om.server_context = lambda: running  # type: ignore[method-assign]
    assert handshake(om, alice) == "ok"
