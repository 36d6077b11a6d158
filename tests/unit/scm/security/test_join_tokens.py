"""Issue 28 defect 4: a JOIN credential is no master key. It obtains one certificate, for the role it was
minted for, for an identity that does not exist yet, before it expires, unless revoked; the probe's steps
(`s3g@evil`, the UUID of an existing datanode, a second use, an expired credential) are refused, as
getCert answers them (ScmSecurity.sign with the caller's JOIN certificate and serial)."""

from __future__ import annotations

import time
import uuid

import pytest

from pyozone.hdds.clock import ManualClock
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.errors import SecurityError, SecurityResult
from pyozone.hdds.security.x509 import CertRole, Identity
from pyozone.scm.security.certificates import RevocationReason
from pyozone.scm.security.manager import ScmSecurity
from tests.unit.scm.security.test_manager import KNOWN_DATANODES, join_token, security

ADMIN = Identity(CertRole.USER, "admin")
DAY = 24 * 3_600_000


def csr(identity: Identity, datanode: str | None = None) -> bytes:
    hosts = (identity.host,) if identity.role.is_service else ()
    return X.csr_to_pem(X.build_csr(X.generate_private_key(), identity, hosts, datanode))


def refused(call: object) -> str:
    with pytest.raises(SecurityError) as e:
        call()  # type: ignore[operator]
    assert e.value.code == SecurityResult.PERMISSION_DENIED, e.value
    return e.value.message


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(epoch_ms=time.time_ns() // 1_000_000)


@pytest.fixture
def scm(clock: ManualClock) -> ScmSecurity:
    return security(clock)[0]


def test_a_join_credential_obtains_one_certificate_for_its_role(scm: ScmSecurity) -> None:
    join, serial = join_token(scm, CertRole.S3G)
    pem, _ = scm.sign(join, csr(Identity(CertRole.S3G, "s3g", "h")), None, serial)
    assert X.common_name(X.cert_from_pem(pem)) == "s3g@h"


def test_s3g_at_evil_is_refused_a_host_the_configuration_does_not_name(scm: ScmSecurity) -> None:
    join, serial = join_token(scm, CertRole.S3G)
    why = refused(lambda: scm.sign(join, csr(Identity(CertRole.S3G, "s3g", "evil")), None, serial))
    assert "names no S3G on 'evil'" in why
    # the refusal did not use the credential up
    scm.sign(join, csr(Identity(CertRole.S3G, "s3g", "127.0.0.1")), None, serial)


def test_a_second_use_of_a_used_credential_is_refused(scm: ScmSecurity) -> None:
    join, serial = join_token(scm, CertRole.DATANODE)
    scm.sign(join, csr(Identity(CertRole.DATANODE, "dn", "h"), str(uuid.uuid4())), None, serial)
    why = refused(
        lambda: scm.sign(join, csr(Identity(CertRole.DATANODE, "dn", "h"), str(uuid.uuid4())), None, serial)
    )
    assert f"JOIN credential {serial} was already used" in why


def test_an_expired_credential_is_refused(scm: ScmSecurity, clock: ManualClock) -> None:
    join, serial = join_token(scm, CertRole.OM)
    clock.advance(DAY)  # hdds.x509.join.token.expiry's default
    why = refused(lambda: scm.sign(join, csr(Identity(CertRole.OM, "om", "h")), None, serial))
    assert "expired (hdds.x509.join.token.expiry)" in why


def test_a_datanode_certificate_for_an_existing_datanode_is_refused(scm: ScmSecurity) -> None:
    seen, certified = str(uuid.uuid4()), str(uuid.uuid4())
    KNOWN_DATANODES.add(seen)
    try:
        join, serial = join_token(scm, CertRole.DATANODE)
        dn = Identity(CertRole.DATANODE, "dn", "h")
        assert "is known to SCM" in refused(lambda: scm.sign(join, csr(dn, seen), None, serial))
    finally:
        KNOWN_DATANODES.discard(seen)
    first, first_serial = join_token(scm, CertRole.DATANODE)
    scm.sign(first, csr(dn, certified), None, first_serial)  # SCM has not seen it register yet
    assert "already had a certificate" in refused(lambda: scm.sign(join, csr(dn, certified), None, serial))


def test_a_second_om_certificate_while_one_is_valid_is_refused(scm: ScmSecurity) -> None:
    first, first_serial = join_token(scm, CertRole.OM)
    scm.sign(first, csr(Identity(CertRole.OM, "om", "h")), None, first_serial)
    join, serial = join_token(scm, CertRole.OM)
    why = refused(lambda: scm.sign(join, csr(Identity(CertRole.OM, "om", "h")), None, serial))
    assert "om@h already has a valid certificate" in why


def test_a_credential_obtains_only_its_role_and_bound_host(scm: ScmSecurity) -> None:
    join, serial = join_token(scm, CertRole.DATANODE)
    why = refused(lambda: scm.sign(join, csr(Identity(CertRole.OM, "om", "h")), None, serial))
    assert "is for a DATANODE certificate, not OM" in why
    bound, bound_serial = join_token(scm, CertRole.OM, "127.0.0.1")
    why = refused(lambda: scm.sign(bound, csr(Identity(CertRole.OM, "om", "h")), None, bound_serial))
    assert "is for om@127.0.0.1 only" in why


def test_a_revoked_or_unknown_credential_is_refused(scm: ScmSecurity) -> None:
    join, serial = join_token(scm, CertRole.S3G)
    scm.revoke(ADMIN, [serial], RevocationReason.KEY_COMPROMISE)
    why = refused(lambda: scm.sign(join, csr(Identity(CertRole.S3G, "s3g", "h")), None, serial))
    assert f"certificate {serial} of join@s3g was revoked" in why
    # a JOIN certificate SCM keeps no token for (the master join.pem of an earlier init)
    assert "is not one SCM minted" in refused(
        lambda: scm.sign(join, csr(Identity(CertRole.S3G, "s3g", "h")), None, 999)
    )


def test_only_an_administrator_mints_join_credentials(scm: ScmSecurity) -> None:
    request = csr(Identity(CertRole.JOIN, "join", "dn"))
    for caller in (Identity(CertRole.USER, "bob"), Identity(CertRole.OM, "om", "h")):
        assert "administrators only" in refused(
            lambda c=caller: scm.mint_join(c, CertRole.DATANODE, "", request)
        )
    with pytest.raises(SecurityError) as e:
        scm.mint_join(ADMIN, CertRole.OM, "", request)  # the CSR names another role's credential
    assert e.value.code == SecurityResult.INVALID_CSR


def rejoin_token(scm: ScmSecurity, datanode: str) -> tuple[Identity, int]:
    key_csr = X.build_csr(X.generate_private_key(), Identity(CertRole.JOIN, "join", "dn"))
    pem, _ = scm.mint_join(ADMIN, CertRole.DATANODE, "", X.csr_to_pem(key_csr), datanode)
    cert = X.cert_from_pem(pem)
    return X.identity_of(cert), cert.serial_number


def test_a_datanode_whose_certificates_are_all_revoked_rejoins_with_a_credential_naming_it(
    scm: ScmSecurity,
) -> None:
    """Issue 28 review: a datanode that lost its key could never rejoin with its data (its UUID was named
    in a certificate). An administrator mints a JOIN credential naming the UUID once every certificate of
    it is revoked; it obtains that datanode's certificate only, once."""
    lost = str(uuid.uuid4())
    dn = Identity(CertRole.DATANODE, "dn", "h")
    join, serial = join_token(scm, CertRole.DATANODE)
    old = X.cert_from_pem(scm.sign(join, csr(dn, lost), None, serial)[0]).serial_number
    KNOWN_DATANODES.add(lost)  # it registered
    try:
        with pytest.raises(SecurityError) as e:
            rejoin_token(scm, lost)
        assert e.value.code == SecurityResult.PERMISSION_DENIED and "revoke" in e.value.message
        scm.revoke(ADMIN, [old], RevocationReason.KEY_COMPROMISE)
        again, again_serial = rejoin_token(scm, lost)
        other = str(uuid.uuid4())
        assert f"for datanode {lost} only" in refused(
            lambda: scm.sign(again, csr(dn, other), None, again_serial)
        )
        back = X.cert_from_pem(scm.sign(again, csr(dn, lost), None, again_serial)[0])
        assert X.datanode_id(back) == lost
        assert "already used" in refused(lambda: scm.sign(again, csr(dn, lost), None, again_serial))
    finally:
        KNOWN_DATANODES.discard(lost)
