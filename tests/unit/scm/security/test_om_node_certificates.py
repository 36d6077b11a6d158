"""Issue 30: each OM of an HA service holds a certificate of its own from SCM's CA, the OMs of one host
included (Ozone's OMCertificateClient, one per OM). Its CSR names its host and "SERVICE/NODE"; a JOIN
credential obtains it for a node the configuration names, on that node's host, once; an OM renews its own
node's certificate only, and a renewal or a revocation touches no other OM of the host."""

from __future__ import annotations

import datetime as dt
import time

import pytest

from pyozone.hdds.clock import ManualClock
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.x509 import CertRole, Identity
from pyozone.scm.security.certificates import RevocationReason
from pyozone.scm.security.manager import ScmSecurity
from tests.unit.scm.security.test_join_tokens import refused
from tests.unit.scm.security.test_manager import join_token, security

OM_AT_H = Identity(CertRole.OM, "om", "h")
NODES = {"svc/om1": "h", "svc/om2": "h", "svc/om3": "h"}
ADMIN = Identity(CertRole.USER, "admin")


def om_csr(node: str | None, identity: Identity = OM_AT_H, key: X.PrivateKey | None = None) -> bytes:
    return X.csr_to_pem(X.build_csr(key or X.generate_private_key(), identity, (identity.host,), None, node))


@pytest.fixture
def scm() -> ScmSecurity:
    return security(ManualClock(epoch_ms=time.time_ns() // 1_000_000), NODES)[0]


def joined(scm: ScmSecurity, node: str) -> tuple[X.Certificate, X.PrivateKey]:
    """OM `node`'s first certificate, obtained with a JOIN credential of its own."""
    join, serial = join_token(scm, CertRole.OM)
    key = X.generate_private_key()
    pem, _ = scm.sign(join, om_csr(node, key=key), None, serial)
    return X.cert_from_pem(pem), key


def test_each_om_of_a_service_on_one_host_obtains_a_certificate_of_its_own(scm: ScmSecurity) -> None:
    certs = [joined(scm, node)[0] for node in NODES]
    assert [X.om_node(c) for c in certs] == list(NODES)
    assert {X.common_name(c) for c in certs} == {"om@h"}
    assert "h.om.role.invalid" in X.dns_names(certs[0])  # still verifies as OM on h


def test_a_second_certificate_for_one_om_node_is_refused(scm: ScmSecurity) -> None:
    first, _ = joined(scm, "svc/om1")
    join, serial = join_token(scm, CertRole.OM)
    why = refused(lambda: scm.sign(join, om_csr("svc/om1"), None, serial))
    assert f"OM svc/om1 already has a valid certificate ({first.serial_number})" in why


@pytest.mark.parametrize(
    ("node", "identity", "why"),
    [
        ("svc/om9", OM_AT_H, "the configuration names no such OM"),
        ("other/om1", OM_AT_H, "the configuration names no such OM"),
        ("svc/om1", Identity(CertRole.OM, "om", "127.0.0.1"), "OM svc/om1 is on 'h'"),
        (None, OM_AT_H, "an OM's certificate names its node (SERVICE/NODE)"),
    ],
    ids=["unknown-node", "other-service", "other-host", "no-node"],
)
def test_a_join_credential_obtains_a_configured_om_node_on_its_host_only(
    scm: ScmSecurity, node: str | None, identity: Identity, why: str
) -> None:
    join, serial = join_token(scm, CertRole.OM)
    assert why in refused(lambda: scm.sign(join, om_csr(node, identity), None, serial))
    scm.sign(join, om_csr("svc/om1"), None, serial)  # the refusal did not use the credential up


def test_an_om_renews_its_own_node_only_and_leaves_the_others_of_its_host_alone(scm: ScmSecurity) -> None:
    om1, key1 = joined(scm, "svc/om1")
    om2, _ = joined(scm, "svc/om2")
    why = refused(lambda: scm.sign(OM_AT_H, om_csr("svc/om2"), "svc/om1", om1.serial_number))
    assert "om@h of node svc/om1 may not obtain a certificate for node svc/om2: an OM renews its own" in why
    renewed = X.cert_from_pem(scm.sign(OM_AT_H, om_csr("svc/om1", key=key1), "svc/om1", om1.serial_number)[0])
    again = X.cert_from_pem(
        scm.sign(OM_AT_H, om_csr("svc/om1", key=key1), "svc/om1", renewed.serial_number)[0]
    )
    assert X.om_node(again) == "svc/om1"
    assert scm.ca.certs.revoked(om1.serial_number) is not None  # om1's oldest was superseded
    assert scm.ca.certs.get(om2.serial_number) is not None  # om2's was not: another holder


def test_a_revoked_om_cuts_off_its_own_node_not_the_others_of_its_host(scm: ScmSecurity) -> None:
    om1, _ = joined(scm, "svc/om1")
    om2, key2 = joined(scm, "svc/om2")
    scm.revoke(ADMIN, [om1.serial_number], RevocationReason.KEY_COMPROMISE)
    scm.check_caller(OM_AT_H, om2.serial_number, "svc/om2")
    scm.sign(OM_AT_H, om_csr("svc/om2", key=key2), "svc/om2", om2.serial_number)
    assert "was revoked" in refused(lambda: scm.check_caller(OM_AT_H, om1.serial_number, "svc/om1"))


def test_only_an_om_certificate_names_an_om_node() -> None:
    key = X.generate_private_key()
    s3g = X.build_csr(key, Identity(CertRole.S3G, "s3g", "h"), ("h",), None, "svc/om1")
    root = X.self_signed_root(key, "CID", "SCM", "h", dt.timedelta(days=1), 1)
    with pytest.raises(ValueError, match="only an OM's certificate names an OM node"):
        X.sign_csr(s3g, key, root, "CID", "SCM", dt.timedelta(hours=1), 2)
    for bad in ("svc", "svc/", "/om1", "s/v/c", "svc/om:1"):
        with pytest.raises(ValueError, match="OM"):
            X.build_csr(key, OM_AT_H, ("h",), None, bad)
