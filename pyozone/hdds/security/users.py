"""Who belongs to which groups, and who is an administrator: one rule for SCM, OM and the S3 gateway.

Groups come from Hadoop's static mapping (`hadoop.user.group.static.mapping.overrides`,
"alice=staff,dev;bob=;"), as Ozone resolves them without an OS or LDAP lookup. Administrators are the users
in `ozone.administrators` and the members of `ozone.administrators.groups`; "*" admits everyone. With
neither key set, the user the daemon runs as is the administrator, as in Ozone. Read-only administrators
(`ozone.readonly.administrators`, `ozone.readonly.administrators.groups`; nobody by default) may read what
an administrator reads (SCM's containers, pipelines and datanodes), and change nothing.
"""

from __future__ import annotations

import getpass
import os
from dataclasses import dataclass

from pyozone.config import OzoneConfiguration

HADOOP_USER_NAME = "HADOOP_USER_NAME"


def login_user() -> str:
    """The user a process acts as without a certificate: HADOOP_USER_NAME, else the OS user."""
    return os.environ.get(HADOOP_USER_NAME) or getpass.getuser()


def short_user_name(principal: str) -> str:
    """The user a principal names, by Hadoop's DEFAULT auth_to_local rule: `svc/host@REALM` and
    `carol@REALM` are `svc` and `carol`. Ozone's OM names an S3 access id's user so (the owner of what it
    creates, the user ACLs are matched against)."""
    return principal.split("@", 1)[0].split("/", 1)[0]


def _names(raw: str | None) -> frozenset[str]:
    return frozenset(n.strip() for n in (raw or "").split(",") if n.strip())


def parse_group_mapping(raw: str | None) -> dict[str, tuple[str, ...]]:
    """ "u1=g1,g2;u2=;" -> {"u1": ("g1", "g2"), "u2": ()}; a clause without '=' is an error."""
    mapping: dict[str, tuple[str, ...]] = {}
    for clause in (raw or "").split(";"):
        if not clause.strip():
            continue
        user, eq, groups = clause.partition("=")
        if not eq or not user.strip():
            raise ValueError(
                f"hadoop.user.group.static.mapping.overrides: {clause!r} is not 'user=group1,group2'"
            )
        mapping[user.strip()] = tuple(sorted(_names(groups)))
    return mapping


@dataclass(frozen=True, slots=True)
class UserGroups:
    mapping: dict[str, tuple[str, ...]]

    @classmethod
    def from_conf(cls, conf: OzoneConfiguration) -> UserGroups:
        return cls(parse_group_mapping(conf.get("hadoop.user.group.static.mapping.overrides")))

    def groups(self, user: str) -> tuple[str, ...]:
        return self.mapping.get(user, ())


@dataclass(frozen=True, slots=True)
class Administrators:
    users: frozenset[str]
    groups: frozenset[str]

    @classmethod
    def from_conf(cls, conf: OzoneConfiguration, daemon_user: str | None = None) -> Administrators:
        users = _names(conf.get("ozone.administrators"))
        groups = _names(conf.get("ozone.administrators.groups"))
        if not users and not groups:
            users = frozenset({daemon_user or login_user()})
        return cls(users, groups)

    @classmethod
    def read_only_from_conf(cls, conf: OzoneConfiguration) -> Administrators:
        """Ozone's OzoneAdmins.getReadonlyAdmins: no default."""
        return cls(
            _names(conf.get("ozone.readonly.administrators")),
            _names(conf.get("ozone.readonly.administrators.groups")),
        )

    def permits(self, user: str, groups: tuple[str, ...] = ()) -> bool:
        return (
            "*" in self.users
            or user in self.users
            or "*" in self.groups
            or bool(self.groups.intersection(groups))
        )
