"""The CA's pieces for an SCM HA service (issue 31 item 4), sans-IO: the primordial's root signs another SCM's
sub-CA for a JOIN credential minted for that node only (getSCMCertificate), with a serial the replicated
CertificateId sequence never reaches; an SCM without the root's key signs none; the secret keys are a
replicated record every SCM reads; each SCM's CRL bundle carries the other SCMs' lists, the newest of each."""

from __future__ import annotations

import datetime as dt

import pytest

from pyozone.common.fsutil import write_file
from pyozone.common.tls import TlsPaths, TlsStore
from pyozone.hdds.clock import ManualClock
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.errors import SecurityError, SecurityResult
from pyozone.hdds.security.users import Administrators, UserGroups
from pyozone.hdds.security.x509 import CertRole, Identity
from pyozone.scm.security.authority import CaMaterial, CertificateAuthority
from pyozone.scm.security.certificates import OUT_OF_LOG_SERIALS, CertificateStore, RevocationReason
from pyozone.scm.security.join_tokens import JoinTokens
from pyozone.scm.security.manager import ScmSecurity, mint_join
from pyozone.scm.security.policy import AccessPolicy
from pyozone.scm.security.secret_key_manager import ReplicatedSecretKeys, SecretKeyManager
from pyozone.scm.store import SCMMetadataStore
from tests.unit.scm.security.test_secret_key_manager import SETTINGS

H = 3_600_000
DAY = dt.timedelta(days=1)
ADMIN = Identity(CertRole.USER, "admin")


def _start(clock: ManualClock) -> dt.datetime:
    return dt.datetime.fromtimestamp(clock.wall_ms() / 1000, dt.UTC)


def scm(
    clock: ManualClock,
    store: SCMMetadataStore,
    root: tuple[X.PrivateKey, X.Certificate],
    root_key_held: bool,
    scm_id: str,
    leads: bool = True,
) -> ScmSecurity:
    """One SCM of the service over `store` (its scm.db), its own sub-CA signed by `root`; `root_key_held`:
    the primordial."""
    certs = CertificateStore(store)
    key = X.generate_private_key()
    identity = Identity(CertRole.SCM, "scm", "h")
    sub = X.sub_ca_certificate(
        key,
        root[0],
        root[1],
        identity,
        ("h",),
        "CID-1",
        scm_id,
        3 * DAY,
        certs.out_of_log_serial(),
        _start(clock),
    )
    material = CaMaterial(key, sub, root[1], root[0] if root_key_held else None)
    ca = CertificateAuthority(material, certs, clock, "CID-1", scm_id, H)
    replicated = ReplicatedSecretKeys(store)
    keys = SecretKeyManager(SETTINGS, clock, (), replicated.save, replicated.load)
    policy = AccessPolicy(Administrators(frozenset({"admin"}), frozenset()), UserGroups({}))
    tokens = JoinTokens(
        store, certs, {}, lambda _: False, scm_nodes={"scm1": "h", "scm2": "h2", "scm3": "h3"}
    )
    return ScmSecurity(SETTINGS, ca, keys, policy, tokens, lambda: leads)


def root_ca(clock: ManualClock) -> tuple[X.PrivateKey, X.Certificate]:
    key = X.generate_private_key()
    return key, X.self_signed_root(key, "CID-1", "SCM-1", "root-ca", 3 * DAY, 1, _start(clock))


def scm_join(s: ScmSecurity, node: str) -> tuple[Identity, int]:
    """`scm --init --join-token scm:NODE=FILE`: the identity the credential presents and its serial."""
    csr = X.build_csr(X.generate_private_key(), Identity(CertRole.JOIN, "join", "scm"))
    cert = mint_join(s.ca, s.join_tokens, CertRole.SCM, "", csr, DAY, scm_node=node)
    return X.identity_of(cert), cert.serial_number


def scm_csr() -> tuple[X.PrivateKey, bytes]:
    key = X.generate_private_key()
    return key, X.csr_to_pem(X.build_csr(key, Identity(CertRole.SCM, "scm", "h2"), ("h2",)))


def test_the_primordial_signs_another_scms_sub_ca_for_its_nodes_join_credential_only() -> None:
    clock = ManualClock()
    primordial = scm(clock, SCMMetadataStore.in_memory(), root_ca(clock), True, "SCM-1")
    caller, serial = scm_join(primordial, "scm2")
    key, csr = scm_csr()
    pem, root_pem = primordial.sign_scm(caller, serial, csr, "scm2", "SCM-2", "CID-1")
    cert = X.cert_from_pem(pem)
    assert X.cert_from_pem(root_pem) == primordial.ca.material.root
    assert X.is_ca(cert) and X.verifies_to(cert, (), primordial.ca.material.root)  # type: ignore[arg-type]
    assert cert.public_key().public_numbers() == key.public_key().public_numbers()  # type: ignore[union-attr]
    assert X.cluster_of(cert) == "CID-1" and X.common_name(cert) == "scm@h2"
    assert cert.serial_number >= OUT_OF_LOG_SERIALS  # never one the CertificateId sequence hands out
    assert primordial.ca.certs.get(cert.serial_number) is None  # recorded by that SCM when it leads

    refusals = [
        (
            lambda: primordial.sign_scm(caller, serial, csr, "scm3", "SCM-2", "CID-1"),
            "for SCM node scm2 only",
        ),
        (lambda: primordial.sign_scm(caller, serial, csr, "scm2", "SCM-2", "CID-2"), "is of cluster CID-2"),
        (lambda: primordial.sign_scm(ADMIN, None, csr, "scm2", "SCM-2", "CID-1"), "bootstraps with a JOIN"),
    ]
    caller4, serial4 = scm_join(primordial, "scm4")
    refusals.append(
        (lambda: primordial.sign_scm(caller4, serial4, csr, "scm4", "SCM-4", "CID-1"), "names no SCM scm4")
    )
    caller3, serial3 = scm_join(primordial, "scm3")
    refusals.append(
        (lambda: primordial.sign_scm(caller3, serial3, csr, "scm3", "SCM-3", "CID-1"), "SCM scm3 is on 'h3'")
    )
    for call, why in refusals:
        with pytest.raises(SecurityError, match=why) as refused:
            call()
        assert refused.value.code == SecurityResult.PERMISSION_DENIED
    clock.advance(DAY.total_seconds() * 1000)
    with pytest.raises(SecurityError, match="expired"):
        primordial.sign_scm(caller, serial, csr, "scm2", "SCM-2", "CID-1")


def test_an_scm_without_the_roots_key_signs_no_scm_certificate_and_mints_no_scm_credential() -> None:
    clock = ManualClock()
    root = root_ca(clock)
    store = SCMMetadataStore.in_memory()
    other = scm(clock, store, root, False, "SCM-2")
    caller, serial = scm_join(scm(clock, store, root, True, "SCM-1"), "scm3")
    with pytest.raises(SecurityError, match="holds no root CA key: the primordial SCM"):
        other.sign_scm(caller, serial, scm_csr()[1], "scm3", "SCM-3", "CID-1")
    csr = X.csr_to_pem(X.build_csr(X.generate_private_key(), Identity(CertRole.JOIN, "join", "scm")))
    with pytest.raises(SecurityError, match="minted by scm --init --join-token scm:NODE=FILE"):
        other.mint_join(ADMIN, CertRole.SCM, "", csr)


def test_the_leaders_secret_keys_are_the_record_every_scm_reads() -> None:
    clock = ManualClock()
    root = root_ca(clock)
    store = SCMMetadataStore.in_memory()  # the leader's writes, as every SCM applies them
    leader = scm(clock, store, root, True, "SCM-1")
    follower = scm(clock, store, root, False, "SCM-2", leads=False)
    assert leader.secret_keys.current() is None  # an SCM of a service makes none before it leads
    leader.step_up()
    key = leader.secret_keys.current()
    assert key is not None and follower.secret_keys.current() == key
    assert leader.ca.certs.get(leader.ca.material.cert.serial_number) is not None  # its own sub-CA recorded
    assert all(not task.enabled() for task in follower.tasks)  # a follower rotates and drops nothing
    clock.advance(SETTINGS.secret_key_rotate_ms)
    leader.secret_keys.check_and_rotate()
    assert follower.secret_keys.get(key.id) == key and follower.secret_keys.current() != key


def test_each_scms_bundle_carries_the_other_scms_newest_lists() -> None:
    clock = ManualClock()
    root = root_ca(clock)
    store = SCMMetadataStore.in_memory()
    first = scm(clock, store, root, True, "SCM-1")
    second = scm(clock, store, root, False, "SCM-2")
    user = X.build_csr(X.generate_private_key(), Identity(CertRole.USER, "bob"))
    bob = first.ca.issue(user)
    first.step_up()  # records its lists (its sub-CA's and the root's)
    issuers = X.crl_issuers(second.crl()[1], root[1])
    assert issuers == {
        c.subject.rfc4514_string() for c in (root[1], first.ca.material.cert, second.ca.material.cert)
    }
    clock.advance(10_000)
    second.revoke(ADMIN, [bob.serial_number], RevocationReason.KEY_COMPROMISE)  # the next leader revokes
    assert bob.serial_number not in X.crl_serials(second.crl()[1], root[1])  # first's sub-CA must sign it
    assert first.take_peer_crls(second.crl()[1])  # first fetches second's bundle: nothing newer of its own
    assert bob.serial_number in X.crl_serials(first.crl()[1], root[1])  # its own list names bob
    assert second.take_peer_crls(first.crl()[1])
    assert bob.serial_number in X.crl_serials(second.crl()[1], root[1])
    assert not second.take_peer_crls(first.crl(with_peers=False)[1])  # the same lists again: nothing new


def test_a_party_takes_a_bundle_of_the_same_number_listing_more_but_never_one_listing_less(tmp_path) -> None:  # type: ignore[no-untyped-def]
    clock = ManualClock()
    root = root_ca(clock)
    store = SCMMetadataStore.in_memory()
    first = scm(clock, store, root, True, "SCM-1")
    second = scm(clock, store, root, False, "SCM-2")
    bob = first.ca.issue(X.build_csr(X.generate_private_key(), Identity(CertRole.USER, "bob")))
    first.step_up()
    clock.advance(10_000)
    second.revoke(ADMIN, [bob.serial_number], RevocationReason.KEY_COMPROMISE)
    paths = TlsPaths(tmp_path / "k.pem", tmp_path / "c.crt", tmp_path / "ca.crt")
    key = X.generate_private_key()
    leaf = first.ca.issue(X.build_csr(key, Identity(CertRole.USER, "carol")))
    write_file(paths.key, X.key_to_pem(key), private=True)
    write_file(paths.cert, first.ca.file_pem(leaf))
    write_file(paths.ca, X.cert_to_pem(root[1]))
    party = TlsStore(paths)
    stale = second.crl()
    assert party.update_crl(*stale) and bob.serial_number not in party.revoked
    second.take_peer_crls(first.crl(with_peers=False)[1])
    fresh = second.crl()
    assert fresh[0] == stale[0]  # one revocation: the same number
    assert party.update_crl(*fresh) and bob.serial_number in party.revoked
    assert not party.update_crl(*stale) and bob.serial_number in party.revoked
