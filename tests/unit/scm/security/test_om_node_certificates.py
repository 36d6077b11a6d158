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
from pyozone.hdds.security.errors import SecurityError
from pyozone.hdds.security.x509 import CertRole, Identity
from pyozone.scm.security.certificates import RevocationReason
from pyozone.scm.security.manager import ScmSecurity, mint_join
from tests.unit.scm.security.test_join_tokens import refused
from tests.unit.scm.security.test_manager import join_token, security

OM_AT_H = Identity(CertRole.OM, "om", "h")
NODES = {"svc/om1": "h", "svc/om2": "h", "svc/om3": "h"}
ADMIN = Identity(CertRole.USER, "admin")


def om_csr(
    node: str | None,
    identity: Identity = OM_AT_H,
    key: X.PrivateKey | None = None,
    hosts: tuple[str, ...] | None = None,
) -> bytes:
    names = (identity.host,) if hosts is None else hosts
    return X.csr_to_pem(X.build_csr(key or X.generate_private_key(), identity, names, None, node))


def om_join_token(scm: ScmSecurity, node: str, name: str = "") -> tuple[Identity, int]:
    """An administrator mints a JOIN credential for HA OM `node` (admin cert join-token --role om --node)."""
    csr = X.build_csr(X.generate_private_key(), Identity(CertRole.JOIN, "join", CertRole.OM.value))
    pem, _ = scm.mint_join(ADMIN, CertRole.OM, name, X.csr_to_pem(csr), om_node=node)
    cert = X.cert_from_pem(pem)
    return X.identity_of(cert), cert.serial_number


@pytest.fixture
def scm() -> ScmSecurity:
    return security(ManualClock(epoch_ms=time.time_ns() // 1_000_000), NODES)[0]


def joined(scm: ScmSecurity, node: str) -> tuple[X.Certificate, X.PrivateKey]:
    """OM `node`'s first certificate, obtained with a JOIN credential of its own."""
    join, serial = om_join_token(scm, node)
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
    join, serial = om_join_token(scm, "svc/om1")
    why = refused(lambda: scm.sign(join, om_csr("svc/om1"), None, serial))
    assert f"OM svc/om1 already has a valid certificate ({first.serial_number}, om@h)" in why


def test_a_moved_om_node_obtains_no_second_valid_certificate_on_its_new_host() -> None:
    """R12 D5: the rule was per (common name, node), so once SCM's configuration put om1 on h4 a JOIN
    credential obtained om@h4 svc/om1 beside the valid om@h1 svc/om1. One valid certificate per OM node: the
    old one is revoked before the moved OM joins (as a lost daemon's)."""
    scm = security(ManualClock(epoch_ms=time.time_ns() // 1_000_000), {"svc/om1": "h1", "svc/om2": "h2"})[0]
    first, _ = joined_as(scm, "svc/om1", Identity(CertRole.OM, "om", "h1"))
    scm.join_tokens._om_nodes["svc/om1"] = "h4"  # SCM restarted with om1 on h4 (configured_om_nodes)
    join, serial = om_join_token(scm, "svc/om1")
    on_h4 = om_csr("svc/om1", Identity(CertRole.OM, "om", "h4"))
    why = refused(lambda: scm.sign(join, on_h4, None, serial))
    assert f"OM svc/om1 already has a valid certificate ({first.serial_number}, om@h1)" in why
    scm.revoke(ADMIN, [first.serial_number], RevocationReason.CESSATION_OF_OPERATION)
    moved = X.cert_from_pem(scm.sign(join, on_h4, None, serial)[0])
    assert (X.common_name(moved), X.om_node(moved)) == ("om@h4", "svc/om1")


def joined_as(scm: ScmSecurity, node: str, identity: Identity) -> tuple[X.Certificate, X.PrivateKey]:
    join, serial = om_join_token(scm, node)
    key = X.generate_private_key()
    pem, _ = scm.sign(join, om_csr(node, identity, key), None, serial)
    return X.cert_from_pem(pem), key


SPREAD = {"svc/om1": "h1", "svc/om2": "h2", "svc/om3": "h3", "other/om1": "h5"}
OM_AT_H1 = Identity(CertRole.OM, "om", "h1")


@pytest.mark.parametrize("extra", ["h2", "h3", "h5"], ids=["om2s-host", "om3s-host", "other-services-om"])
def test_an_ha_om_certificate_names_no_host_of_another_om(extra: str) -> None:
    """R12 D2: om1's JOIN credential obtained a certificate naming h2 and h3 as well, so it verified as
    the OM of h2 and h3 (h2.om.role.invalid) to whoever dialled om2 or om3."""
    scm = security(ManualClock(epoch_ms=time.time_ns() // 1_000_000), SPREAD)[0]
    join, serial = om_join_token(scm, "svc/om1")
    why = refused(lambda: scm.sign(join, om_csr("svc/om1", OM_AT_H1, hosts=("h1", extra)), None, serial))
    assert f"{extra} is the host of another OM (ozone.om.address)" in why
    # its own host, the loopback names and its machine's own name are its own
    own = ("h1", "127.0.0.1", "localhost", "om1-box", "10.0.0.2")
    cert = X.cert_from_pem(scm.sign(join, om_csr("svc/om1", OM_AT_H1, hosts=own), None, serial)[0])
    assert X.host_names(cert) == list(own)


def test_a_renewal_keeps_an_ha_om_certificate_off_the_other_oms_hosts() -> None:
    """A renewal adds no host, and a certificate naming another OM's host (issued before SCM refused them)
    is not renewed at all: the OM is revoked and joins again."""
    scm = security(ManualClock(epoch_ms=time.time_ns() // 1_000_000), SPREAD)[0]
    key = X.generate_private_key()
    join, serial = om_join_token(scm, "svc/om1")
    om1 = X.cert_from_pem(scm.sign(join, om_csr("svc/om1", OM_AT_H1, key, ("h1",)), None, serial)[0])
    why = refused(
        lambda: scm.sign(
            OM_AT_H1, om_csr("svc/om1", OM_AT_H1, key, ("h1", "h2")), "svc/om1", om1.serial_number
        )
    )
    assert "may not add h2 in a renewal" in why
    scm.join_tokens._om_nodes["svc/om2"] = "h1b"  # an old certificate of om1 names h1b, now om2's host
    spread = scm.ca.issue(X.build_csr(key, OM_AT_H1, ("h1", "h1b"), None, "svc/om1"))
    why = refused(
        lambda: scm.sign(
            OM_AT_H1, om_csr("svc/om1", OM_AT_H1, key, ("h1", "h1b")), "svc/om1", spread.serial_number
        )
    )
    assert "of node svc/om1 is not renewed: h1b is the host of another OM" in why


def test_an_om_join_credential_obtains_the_node_it_was_minted_for_only() -> None:
    """R12 D3: a credential named a role (and a host) only, so the one handed to om1 obtained om2's node
    before om2 started, and om2's own was then refused. A credential is minted for one node; one for no
    node obtains no HA OM's certificate."""
    scm = security(ManualClock(epoch_ms=time.time_ns() // 1_000_000), SPREAD)[0]
    om2 = Identity(CertRole.OM, "om", "h2")
    om1_join, s1 = om_join_token(scm, "svc/om1")
    why = refused(lambda: scm.sign(om1_join, om_csr("svc/om2", om2), None, s1))
    assert f"JOIN credential {s1} is for OM node svc/om1 only, not svc/om2" in why
    unbound, s0 = join_token(scm, CertRole.OM)
    why = refused(lambda: scm.sign(unbound, om_csr("svc/om2", om2), None, s0))
    assert f"JOIN credential {s0} names no OM node" in why and "--node svc/om2" in why
    om2_join, s2 = om_join_token(scm, "svc/om2")
    cert = X.cert_from_pem(scm.sign(om2_join, om_csr("svc/om2", om2), None, s2)[0])
    assert X.om_node(cert) == "svc/om2"
    scm.sign(om1_join, om_csr("svc/om1", OM_AT_H1), None, s1)  # the refusal did not use it up
    # a node the configuration does not name, or a credential of another role, is refused when minted
    assert "names no OM svc/om9" in refused(lambda: om_join_token(scm, "svc/om9"))
    csr = X.csr_to_pem(X.build_csr(X.generate_private_key(), Identity(CertRole.JOIN, "join", "dn")))
    with pytest.raises(SecurityError, match="only an OM's JOIN credential names an OM node"):
        scm.mint_join(ADMIN, CertRole.DATANODE, "", csr, om_node="svc/om1")


@pytest.mark.parametrize(
    ("node", "identity", "why"),
    [
        ("svc/om9", OM_AT_H, "the configuration names no OM svc/om9"),
        ("other/om1", OM_AT_H, "the configuration names no OM other/om1"),
        ("svc/om1", Identity(CertRole.OM, "om", "127.0.0.1"), "OM svc/om1 is on 'h'"),
        (None, OM_AT_H, "an OM's certificate names its node (SERVICE/NODE)"),
    ],
    ids=["unknown-node", "other-service", "other-host", "no-node"],
)
def test_a_join_credential_obtains_a_configured_om_node_on_its_host_only(
    scm: ScmSecurity, node: str | None, identity: Identity, why: str
) -> None:
    # minted as `scm --init --join-token om:NODE=FILE` mints it: before SCM reads the service's nodes
    key = X.generate_private_key()
    csr = X.build_csr(key, Identity(CertRole.JOIN, "join", CertRole.OM.value))
    cert = mint_join(scm.ca, scm.join_tokens, CertRole.OM, "", csr, dt.timedelta(hours=1), om_node=node or "")
    join, serial = X.identity_of(cert), cert.serial_number
    assert why in refused(lambda: scm.sign(join, om_csr(node, identity), None, serial))
    if node == "svc/om1":
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
