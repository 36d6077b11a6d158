"""Groups from Hadoop's static mapping, and who is an administrator."""

from __future__ import annotations

import pytest

from pyozone.config import OzoneConfiguration
from pyozone.hdds.security.users import (
    Administrators,
    AdminRight,
    AdminRule,
    UserGroups,
    login_user,
    parse_group_mapping,
)
from pyozone.hdds.security.x509 import CertRole


def test_static_mapping_parses_users_and_empty_groups() -> None:
    assert parse_group_mapping("alice=staff,dev;bob=; ") == {"alice": ("dev", "staff"), "bob": ()}
    with pytest.raises(ValueError, match="user=group1,group2"):
        parse_group_mapping("alice")


def test_groups_from_conf() -> None:
    conf = OzoneConfiguration({"hadoop.user.group.static.mapping.overrides": "alice=staff"})
    groups = UserGroups.from_conf(conf)
    assert groups.groups("alice") == ("staff",)
    assert groups.groups("carol") == ()


def test_administrators_by_name_group_or_star() -> None:
    conf = OzoneConfiguration({"ozone.administrators": "root, ops", "ozone.administrators.groups": "wheel"})
    admins = Administrators.from_conf(conf)
    assert admins.permits("ops") and admins.permits("eve", ("wheel",))
    assert not admins.permits("eve", ("staff",))
    assert Administrators.from_conf(OzoneConfiguration({"ozone.administrators": "*"})).permits("anyone")


def test_without_administrators_the_daemon_user_is_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HADOOP_USER_NAME", "hdfs")
    assert login_user() == "hdfs"
    admins = Administrators.from_conf(OzoneConfiguration())
    assert admins.permits("hdfs") and not admins.permits("alice")


def test_read_only_administrators_have_no_default() -> None:
    nobody = Administrators.read_only_from_conf(OzoneConfiguration())
    assert not nobody.users and not nobody.groups
    conf = OzoneConfiguration(
        {"ozone.readonly.administrators": "rita", "ozone.readonly.administrators.groups": "audit"}
    )
    readers = Administrators.read_only_from_conf(conf)
    assert readers.permits("rita") and readers.permits("eve", ("audit",)) and not readers.permits("eve")


def test_a_service_certificate_is_an_administrator_only_when_named() -> None:
    """Issue 28 defect 8 review (one rule for SCM's admin protocol, its CA and the web APIs): a user is an
    administrator by name, group or "*"; a service's certificate only when the list names its principal;
    the JOIN credential never."""
    groups = UserGroups.from_conf(
        OzoneConfiguration({"hadoop.user.group.static.mapping.overrides": "dn=ops"})
    )
    everyone = Administrators.from_conf(
        OzoneConfiguration({"ozone.administrators": "*", "ozone.administrators.groups": "ops"})
    )
    assert everyone.admits("bob", CertRole.USER, groups) and everyone.admits("bob", None, groups)
    for role in (CertRole.OM, CertRole.DATANODE, CertRole.S3G, CertRole.SCM):
        assert not everyone.admits(role.value, role, groups), role
    named = Administrators.from_conf(OzoneConfiguration({"ozone.administrators": "root,om,join"}))
    assert named.admits("om", CertRole.OM, groups) and named.admits("root", CertRole.USER, groups)
    assert not named.admits("s3g", CertRole.S3G, groups) and not named.admits("join", CertRole.JOIN, groups)


def test_the_admin_rule_reads_for_read_only_administrators_and_services_that_read_containers() -> None:
    conf = OzoneConfiguration({"ozone.administrators": "root", "ozone.readonly.administrators": "rita,s3g"})
    rule = AdminRule.from_conf(conf)
    for right in AdminRight:
        assert rule.permits("root", right, CertRole.USER) and rule.permits("root", right)
        assert not rule.permits("bob", right, CertRole.USER)
    assert rule.permits("rita", AdminRight.READ, CertRole.USER)
    assert not rule.permits("rita", AdminRight.WRITE, CertRole.USER)
    assert rule.permits("om", AdminRight.READ, CertRole.OM) and rule.permits(
        "dn", AdminRight.READ, CertRole.DATANODE
    )
    assert not rule.permits("om", AdminRight.WRITE, CertRole.OM)
    assert rule.permits("s3g", AdminRight.READ, CertRole.S3G)  # named
    assert not rule.permits("scm", AdminRight.READ, CertRole.SCM)
