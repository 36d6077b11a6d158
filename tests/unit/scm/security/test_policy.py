"""Who may have which certificate and who may read what: JOIN gets service roles only, anyone renews
its own name, administrators issue users' certificates, secret keys go to OM and datanodes only."""

from __future__ import annotations

import pytest

from pyozone.config import OzoneConfiguration
from pyozone.hdds.security.errors import SecurityError, SecurityResult
from pyozone.hdds.security.users import Administrators, UserGroups
from pyozone.hdds.security.x509 import CertRole, Identity
from pyozone.scm.security.policy import AccessPolicy

POLICY = AccessPolicy(
    Administrators.from_conf(
        OzoneConfiguration({"ozone.administrators": "admin", "ozone.administrators.groups": "ops"})
    ),
    UserGroups.from_conf(OzoneConfiguration({"hadoop.user.group.static.mapping.overrides": "carol=ops;"})),
)
JOIN = Identity(CertRole.JOIN, "join", "scm-host")
OM = Identity(CertRole.OM, "om", "h1")
DN = Identity(CertRole.DATANODE, "dn", "h2")
S3G = Identity(CertRole.S3G, "s3g", "h3")
SCM = Identity(CertRole.SCM, "scm", "scm-host")
ADMIN = Identity(CertRole.USER, "admin")
CAROL = Identity(CertRole.USER, "carol")  # an administrator through the group "ops"
ALICE = Identity(CertRole.USER, "alice")
BOB = Identity(CertRole.USER, "bob")


def denied(check, *args) -> str:
    with pytest.raises(SecurityError) as e:
        check(*args)
    assert e.value.code == SecurityResult.PERMISSION_DENIED
    return e.value.message


@pytest.mark.parametrize("requested", [OM, DN, S3G])
def test_join_obtains_service_certificates(requested: Identity) -> None:
    POLICY.check_csr(JOIN, requested)


@pytest.mark.parametrize("requested", [ALICE, ADMIN])
def test_join_may_not_obtain_a_user_certificate(requested: Identity) -> None:
    assert "the JOIN credential may obtain OM, DATANODE or S3G certificates only" in denied(
        POLICY.check_csr, JOIN, requested
    )


@pytest.mark.parametrize("caller", [JOIN, ADMIN, SCM])
@pytest.mark.parametrize("requested", [SCM, JOIN])
def test_scm_and_join_certificates_are_made_by_init_only(caller: Identity, requested: Identity) -> None:
    assert (
        "are made by `pyozone scm --init` (and an SCM's of a service at its scm --bootstrap) only"
        in denied(POLICY.check_csr, caller, requested)
    )


@pytest.mark.parametrize("caller", [OM, DN, S3G, ALICE, ADMIN])
def test_anyone_renews_its_own_name(caller: Identity) -> None:
    POLICY.check_csr(caller, caller)


def test_a_datanode_renews_for_its_own_datanode_only() -> None:
    POLICY.check_csr(DN, DN, "uuid-1", "uuid-1")
    POLICY.check_csr(JOIN, DN, None, "uuid-2")  # a new datanode joins
    assert "a datanode renews its own" in denied(POLICY.check_csr, DN, DN, "uuid-1", "uuid-2")


@pytest.mark.parametrize("caller", [ADMIN, CAROL])
def test_an_administrator_issues_any_users_certificate(caller: Identity) -> None:
    POLICY.check_csr(caller, ALICE)


@pytest.mark.parametrize(
    ("caller", "requested"),
    [
        (ALICE, BOB),  # a user for another user
        (ALICE, ADMIN),  # ... for an administrator
        (ADMIN, OM),  # an administrator for a service
        (OM, Identity(CertRole.OM, "om", "elsewhere")),  # a service for another host
        (OM, DN),  # ... for another role
        (DN, ALICE),  # ... for a user
    ],
)
def test_other_names_are_refused(caller: Identity, requested: Identity) -> None:
    message = denied(POLICY.check_csr, caller, requested)
    assert f"{caller.common_name} may not obtain a certificate for {requested.common_name}" in message


@pytest.mark.parametrize("caller", [ADMIN, CAROL, OM, DN, S3G, SCM])
def test_administrators_and_services_read_certificates(caller: Identity) -> None:
    POLICY.check_read_certificates(caller)


@pytest.mark.parametrize("caller", [ALICE, JOIN])
def test_others_do_not_read_certificates(caller: Identity) -> None:
    assert "administrators and services only" in denied(POLICY.check_read_certificates, caller)


@pytest.mark.parametrize("caller", [OM, DN])
def test_om_and_datanodes_read_secret_keys(caller: Identity) -> None:
    POLICY.check_read_secret_keys(caller)


@pytest.mark.parametrize("caller", [ADMIN, ALICE, S3G, SCM, JOIN])
def test_nobody_else_reads_secret_keys(caller: Identity) -> None:
    assert "OM and datanodes only" in denied(POLICY.check_read_secret_keys, caller)


def test_a_service_named_in_administrators_is_still_no_administrator() -> None:
    policy = AccessPolicy(
        Administrators.from_conf(OzoneConfiguration({"ozone.administrators": "*"})),
        UserGroups.from_conf(OzoneConfiguration()),
    )
    assert policy.is_admin(ALICE) and not policy.is_admin(OM)
    denied(policy.check_csr, OM, ALICE)


def test_a_service_named_in_administrators_is_one_as_on_scms_admin_protocol() -> None:
    """Issue 28 defect 8 review: the CA granted administrators' rights to users only, while SCM's admin
    protocol granted them to any certificate whose principal the list names. One rule now (the kernel's
    Administrators.admits): a service is an administrator when ozone.administrators names it, never by
    "*" or a group, and the JOIN credential never is."""
    conf = OzoneConfiguration({"ozone.administrators": "admin,om,join"})
    policy = AccessPolicy(Administrators.from_conf(conf), UserGroups.from_conf(conf))
    admits = [policy.admins.admits(i.principal, i.role, policy.groups) for i in (OM, ADMIN, S3G, JOIN, BOB)]
    assert admits == [True, True, False, False, False]
    # the CA's administrator operations take users only (issue 28 review, below)
    assert policy.is_admin(ADMIN) and not policy.is_admin(OM)


def test_a_service_named_in_ozone_administrators_is_no_administrator_of_the_ca() -> None:
    """Issue 28 review: with "om" in ozone.administrators, OM's certificate could mint JOIN credentials,
    revoke and issue user certificates. The CA's administrator operations need a user's certificate."""
    policy = AccessPolicy(Administrators(frozenset({"admin", "om"}), frozenset()), UserGroups({}))
    om = Identity(CertRole.OM, "om", "h")
    assert policy.is_admin(Identity(CertRole.USER, "admin")) and not policy.is_admin(om)
    with pytest.raises(SecurityError) as e:
        policy.check_csr(om, Identity(CertRole.USER, "mallory"))
    assert e.value.code == SecurityResult.PERMISSION_DENIED
