"""Groups from Hadoop's static mapping, and who is an administrator."""

from __future__ import annotations

import pytest

from pyozone.config import OzoneConfiguration
from pyozone.hdds.security.users import Administrators, UserGroups, login_user, parse_group_mapping


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
