"""Issue 28 defect 6 in SCM's CA: an administrator revokes certificates (they move from validCerts to
revokedCerts and into the CRL, numbered and signed by the CA); a revoked certificate renews nothing, not
even with a new key; nobody else revokes, and SCM's own certificates are not revoked this way."""

from __future__ import annotations

import time

import pytest
from cryptography import x509

from pyozone.hdds.clock import ManualClock
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.errors import SecurityError, SecurityResult
from pyozone.hdds.security.x509 import CertRole, Identity
from pyozone.scm.security.certificates import RevocationReason
from pyozone.scm.security.manager import ScmSecurity
from tests.unit.scm.security.test_manager import security

ADMIN, BOB = Identity(CertRole.USER, "admin"), Identity(CertRole.USER, "bob")


@pytest.fixture
def scm() -> ScmSecurity:
    return security(ManualClock(epoch_ms=time.time_ns() // 1_000_000))[0]


def user_csr(name: str) -> bytes:
    return X.csr_to_pem(X.build_csr(X.generate_private_key(), Identity(CertRole.USER, name)))


def error(call: object) -> SecurityError:
    with pytest.raises(SecurityError) as e:
        call()  # type: ignore[operator]
    return e.value


def test_a_revoked_user_certificate_is_listed_in_the_crl_and_renews_nothing(scm: ScmSecurity) -> None:
    bob = X.cert_from_pem(scm.sign(ADMIN, user_csr("bob"))[0]).serial_number
    renewed = scm.sign(BOB, user_csr("bob"), None, bob)  # before: bob renews with a new key
    assert X.common_name(X.cert_from_pem(renewed[0])) == "bob"
    number, empty = scm.crl()
    assert number == 0 and X.crl_serials(empty, scm.ca.material.cert) == frozenset()

    published: list[int] = []
    scm.on_crl = lambda n, pem: published.append(n)
    [record] = scm.revoke(ADMIN, [bob], RevocationReason.KEY_COMPROMISE)
    assert record.cert.serial == bob and record.reason is RevocationReason.KEY_COMPROMISE
    number, pem = scm.crl()
    assert number == 1 and published == [1]
    assert X.crl_serials(pem, scm.ca.material.cert) == {bob}

    refusal = error(lambda: scm.sign(BOB, user_csr("bob"), None, bob))
    assert refusal.code == SecurityResult.PERMISSION_DENIED and f"certificate {bob} of bob was revoked" in (
        refusal.message
    )
    assert [X.cert_from_pem(p).serial_number for p in scm.certificates(ADMIN, None, 0, 100, True)] == [bob]
    assert bob not in [X.cert_from_pem(p).serial_number for p in scm.certificates(ADMIN, None, 0, 100)]
    again = error(lambda: scm.revoke(ADMIN, [bob], RevocationReason.UNSPECIFIED))
    assert again.code == SecurityResult.CERTIFICATE_NOT_FOUND and "already revoked" in again.message


def test_each_crl_is_later_than_the_one_before(scm: ScmSecurity) -> None:
    """OpenSSL takes the CRL of the latest lastUpdate: two revocations in one second still order, and
    neither is dated in the future."""
    serials = [X.cert_from_pem(scm.sign(ADMIN, user_csr(n))[0]).serial_number for n in ("c", "d")]
    updates = []
    for s in serials:
        scm.revoke(ADMIN, [s], RevocationReason.UNSPECIFIED)
        pem = scm.crl()[1]
        updates.append(x509.load_pem_x509_crl(pem).last_update_utc)
    assert updates[1] > updates[0]
    # never dated in a daemon's future (a CRL not yet valid would fail every handshake)
    assert updates[1].timestamp() * 1000 <= scm.ca.clock.wall_ms()


def test_only_an_administrator_revokes_and_never_scms_own(scm: ScmSecurity) -> None:
    bob = X.cert_from_pem(scm.sign(ADMIN, user_csr("bob"))[0]).serial_number
    for caller in (BOB, Identity(CertRole.OM, "om", "h")):
        assert error(lambda c=caller: scm.revoke(c, [bob], RevocationReason.UNSPECIFIED)).code == (
            SecurityResult.PERMISSION_DENIED
        )
    root = scm.ca.material.cert.serial_number
    refusal = error(lambda: scm.revoke(ADMIN, [bob, root], RevocationReason.UNSPECIFIED))
    assert (
        refusal.code == SecurityResult.PERMISSION_DENIED and "SCM's own or the root CA's" in refusal.message
    )
    assert scm.ca.certs.revoked(bob) is None  # all or none
    assert error(lambda: scm.revoke(ADMIN, [12345], RevocationReason.UNSPECIFIED)).code == (
        SecurityResult.CERTIFICATE_NOT_FOUND
    )


def serial_of(pem: bytes) -> int:
    return X.cert_from_pem(pem).serial_number


def valid_serials_of(scm: ScmSecurity, name: str) -> set[int]:
    pems = scm.certificates(ADMIN, CertRole.USER, 0, 1000)
    return {X.cert_from_pem(p).serial_number for p in pems if X.common_name(X.cert_from_pem(p)) == name}


def test_revoking_a_certificate_cuts_off_its_identity_until_an_administrator_issues_again(
    scm: ScmSecurity,
) -> None:
    """Issue 28 review: bob minted a spare before his certificate was revoked; the spare renews nothing
    and reads nothing on the security port, until an administrator issues bob a certificate again."""
    first = serial_of(scm.sign(ADMIN, user_csr("bob"))[0])
    spare = serial_of(scm.sign(BOB, user_csr("bob"), None, first)[0])
    scm.revoke(ADMIN, [first], RevocationReason.KEY_COMPROMISE)
    refusal = error(lambda: scm.sign(BOB, user_csr("bob"), None, spare))
    assert refusal.code == SecurityResult.PERMISSION_DENIED and "bob was revoked" in refusal.message
    assert error(lambda: scm.check_caller(BOB, spare)).code == SecurityResult.PERMISSION_DENIED

    again = serial_of(scm.sign(ADMIN, user_csr("bob"))[0])  # the administrator brings bob back
    renewed = serial_of(scm.sign(BOB, user_csr("bob"), None, again)[0])
    assert renewed > again


def test_revoking_by_name_revokes_every_valid_certificate_of_the_identity(scm: ScmSecurity) -> None:
    first = serial_of(scm.sign(ADMIN, user_csr("bob"))[0])
    spare = serial_of(scm.sign(BOB, user_csr("bob"), None, first)[0])
    carol = serial_of(scm.sign(ADMIN, user_csr("carol"))[0])
    done = scm.revoke(ADMIN, [], RevocationReason.KEY_COMPROMISE, ["bob"])
    assert {r.cert.serial for r in done} == {first, spare}
    assert X.crl_serials(scm.crl()[1], scm.ca.material.cert) == {first, spare}
    assert valid_serials_of(scm, "bob") == set() and valid_serials_of(scm, "carol") == {carol}
    nobody = error(lambda: scm.revoke(ADMIN, [], RevocationReason.UNSPECIFIED, ["bob"]))
    assert nobody.code == SecurityResult.CERTIFICATE_NOT_FOUND and "bob" in nobody.message


def test_a_renewal_supersedes_so_an_identity_holds_at_most_two_valid_certificates(scm: ScmSecurity) -> None:
    """A renewal revokes (superseded) every other certificate of the identity but the caller's own and
    the new one: spares do not pile up. A superseded certificate does not cut the identity off."""
    first = serial_of(scm.sign(ADMIN, user_csr("bob"))[0])
    spares = [serial_of(scm.sign(BOB, user_csr("bob"), None, first)[0]) for _ in range(3)]
    assert valid_serials_of(scm, "bob") == {first, spares[-1]}
    assert {r.reason for r in scm.ca.certs.all_revoked()} == {RevocationReason.SUPERSEDED}
    assert X.crl_serials(scm.crl()[1], scm.ca.material.cert) == set(spares[:-1])
    latest = serial_of(scm.sign(BOB, user_csr("bob"), None, spares[-1])[0])  # the newest renews on
    assert valid_serials_of(scm, "bob") == {spares[-1], latest}


def test_a_renewal_may_not_add_names(scm: ScmSecurity) -> None:
    """Issue 28 review: a datanode renewed its certificate naming SCM's host."""
    from tests.unit.scm.security.test_manager import join_token

    join, token = join_token(scm, CertRole.DATANODE)
    key, dn = X.generate_private_key(), "7d0d5b1e-57a2-4a0e-8f43-1c2b3d4e5f60"
    ident = Identity(CertRole.DATANODE, "dn", "newdn")
    own = serial_of(
        scm.sign(join, X.csr_to_pem(X.build_csr(key, ident, ("newdn", "10.0.0.9"), dn)), None, token)[0]
    )
    forged = X.csr_to_pem(X.build_csr(key, ident, ("newdn", "scm.example.com"), dn))
    refusal = error(lambda: scm.sign(ident, forged, dn, own))
    assert refusal.code == SecurityResult.PERMISSION_DENIED and "scm.example.com" in refusal.message
    same = X.csr_to_pem(X.build_csr(key, ident, ("10.0.0.9", "newdn"), dn))
    assert X.common_name(X.cert_from_pem(scm.sign(ident, same, dn, own)[0])) == "dn@newdn"


def test_a_bulk_revocation_on_a_young_ca_dates_no_crl_in_the_future(scm: ScmSecurity) -> None:
    """Issue 28 review: 120 serials revoked at once dated the CRL 120 s after the CA's start, in SCM's
    future, and every handshake failed "CRL is not yet valid"."""
    serials = [serial_of(scm.sign(ADMIN, user_csr(f"u{i}"))[0]) for i in range(120)]
    scm.revoke(ADMIN, serials, RevocationReason.UNSPECIFIED)
    first = x509.load_pem_x509_crl(scm.crl()[1]).last_update_utc
    assert first.timestamp() * 1000 <= scm.ca.clock.wall_ms()
    scm.ca.clock.advance(1000)
    scm.revoke(ADMIN, [serial_of(scm.sign(ADMIN, user_csr("late"))[0])], RevocationReason.UNSPECIFIED)
    second = x509.load_pem_x509_crl(scm.crl()[1]).last_update_utc
    assert first < second and second.timestamp() * 1000 <= scm.ca.clock.wall_ms()


def test_a_record_revoked_before_holders_were_recorded_still_reads(scm: ScmSecurity) -> None:
    first = serial_of(scm.sign(ADMIN, user_csr("bob"))[0])
    [record] = scm.revoke(ADMIN, [first], RevocationReason.KEY_COMPROMISE)
    old = {k: v for k, v in record.to_json().items() if k not in ("holder", "datanode", "cutoff")}
    again = type(record).from_json(first, old)
    assert again.holder == ("bob", None) and again.cutoff == first + 1
