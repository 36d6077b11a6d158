"""ScmSecurity on a ManualClock: a current secret key from the start, rotation and expired-certificate
cleanup on its periodic tasks, and the access policy in front of every read."""

from __future__ import annotations

import datetime as dt
import time

import pytest

from pyozone.hdds.clock import ManualClock
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.errors import SecurityError, SecurityResult
from pyozone.hdds.security.users import Administrators, UserGroups
from pyozone.hdds.security.x509 import CertRole, Identity
from pyozone.scm.security.authority import CaMaterial, CertificateAuthority
from pyozone.scm.security.certificates import CertificateStore
from pyozone.scm.security.join_tokens import JoinTokens
from pyozone.scm.security.manager import ScmSecurity
from pyozone.scm.security.policy import AccessPolicy
from pyozone.scm.store import SCMMetadataStore
from tests.unit.scm.security.test_secret_key_manager import OM, SETTINGS, Saved, manager

H = 3_600_000


KNOWN_DATANODES: set[str] = set()
"""Whom the SCM of `security()` saw (the core's nodes and pipelines)."""
SERVICE_HOSTS = {CertRole.OM: frozenset({"h", "127.0.0.1"}), CertRole.S3G: frozenset({"h", "127.0.0.1"})}
"""The hosts the configuration of `security()` names for OM and the S3 gateway."""


def security(clock: ManualClock, om_nodes: dict[str, str] | None = None) -> tuple[ScmSecurity, Saved]:
    """`om_nodes`: the HA OMs the configuration names ("SERVICE/NODE" -> host)."""
    store = SCMMetadataStore.in_memory()
    certs = CertificateStore(store)
    key = X.generate_private_key()
    start = dt.datetime.fromtimestamp(clock.wall_ms() / 1000, dt.UTC)
    root = X.self_signed_root(key, "CID-1", "SCM-1", "h", dt.timedelta(days=3), certs.next_serial(), start)
    certs.add(root)
    ca = CertificateAuthority(CaMaterial(key, root), certs, clock, "CID-1", "SCM-1", H)
    keys, saved = manager(clock)
    policy = AccessPolicy(Administrators(frozenset({"admin"}), frozenset()), UserGroups({}))
    tokens = JoinTokens(store, certs, SERVICE_HOSTS, KNOWN_DATANODES.__contains__, om_nodes)
    return ScmSecurity(SETTINGS, ca, keys, policy, tokens), saved


def join_token(s: ScmSecurity, role: CertRole, name: str = "") -> tuple[Identity, int]:
    """An administrator mints a JOIN credential for `role`: (the identity it presents, its serial)."""
    csr = X.build_csr(X.generate_private_key(), Identity(CertRole.JOIN, "join", role.value))
    pem, _ = s.mint_join(Identity(CertRole.USER, "admin"), role, name, X.csr_to_pem(csr))
    cert = X.cert_from_pem(pem)
    return X.identity_of(cert), cert.serial_number


def run_due(s: ScmSecurity, clock: ManualClock) -> None:
    for task in s.tasks:
        task.run_if_due(clock.now_ms())


def test_scm_security_has_a_current_key_from_the_start_and_rotates_on_its_tasks() -> None:
    clock = ManualClock(epoch_ms=time.time_ns() // 1_000_000)
    s, saved = security(clock)
    first = s.current_secret_key(OM)
    run_due(s, clock)
    for _ in range(6):  # an hour in 10-minute checks
        clock.advance(10 * 60_000)
        run_due(s, clock)
    assert s.current_secret_key(OM) != first and len(s.all_secret_keys(OM)) == 2
    assert len(saved.versions) == 2 and saved.versions[-1] == tuple(s.all_secret_keys(OM))
    assert [t.name for t in s.tasks] == ["SecretKeyRotation", "ExpiredCertificateCleanup"]


def test_scm_security_drops_expired_certificates_on_its_task() -> None:
    clock = ManualClock(epoch_ms=time.time_ns() // 1_000_000)
    s, _ = security(clock)
    join, token = join_token(s, CertRole.OM)
    cert_pem, ca_pem = s.sign(join, X.csr_to_pem(X.build_csr(X.generate_private_key(), OM)), None, token)
    serial = X.cert_from_pem(cert_pem).serial_number
    admin = Identity(CertRole.USER, "admin")
    assert s.certificate(admin, serial) == cert_pem and ca_pem == s.ca_certificate()
    run_due(s, clock)
    clock.advance(H)  # the certificate's lifetime, and the cleanup interval
    run_due(s, clock)
    with pytest.raises(SecurityError) as e:
        s.certificate(admin, serial)
    assert e.value.code == SecurityResult.CERTIFICATE_NOT_FOUND
    assert [X.cert_from_pem(p).serial_number for p in s.certificates(admin, None, 0, 10)] == [1, token]


def test_secret_keys_are_refused_to_users() -> None:
    s, _ = security(ManualClock())
    with pytest.raises(SecurityError) as e:
        s.all_secret_keys(Identity(CertRole.USER, "admin"))
    assert e.value.code == SecurityResult.PERMISSION_DENIED
