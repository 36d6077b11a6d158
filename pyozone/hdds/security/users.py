"""Who belongs to which groups, and who is an administrator: one rule for SCM, OM and the S3 gateway.

Groups come from Hadoop's static mapping (`hadoop.user.group.static.mapping.overrides`,
"alice=staff,dev;bob=;"), as Ozone resolves them without an OS or LDAP lookup. Administrators are the users
in `ozone.administrators` and the members of `ozone.administrators.groups`; "*" admits every user. With
neither key set, the user the daemon runs as is the administrator, as in Ozone. Read-only administrators
(`ozone.readonly.administrators`, `ozone.readonly.administrators.groups`; nobody by default) may read what
an administrator reads (SCM's containers, pipelines and datanodes, a datanode's replicas), and change nothing.

A caller named by a service's certificate (om, dn, s3g, scm) is an administrator only when the list names
its principal itself, as Ozone's daemons are administrators only when `ozone.administrators` names the
user they run as: "*" and the groups admit users, never services, and the JOIN credential never is one.
`AdminRule` is that rule for SCM's admin protocol and CA, every daemon's /logLevel and the web APIs that
show where data lives.
"""

from __future__ import annotations

import getpass
import os
from dataclasses import dataclass
from enum import Enum

from pyozone.config import OzoneConfiguration
from pyozone.hdds.security.x509 import CertRole

HADOOP_USER_NAME = "HADOOP_USER_NAME"


def login_user() -> str:
    """The user a process acts as without a certificate: HADOOP_USER_NAME, else the OS user."""
    return os.environ.get(HADOOP_USER_NAME) or getpass.getuser()


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
        """Whether a user (by name, group or "*") is one; `admits` for a caller that may be a service."""
        return (
            "*" in self.users
            or user in self.users
            or "*" in self.groups
            or bool(self.groups.intersection(groups))
        )

    def admits(self, principal: str, role: CertRole | None, groups: UserGroups) -> bool:
        """Whether the caller is one. `role`: its certificate's (None without TLS: a claimed user name). A
        service's certificate only when the list names its principal ("om"); the JOIN credential never."""
        if role is None or role is CertRole.USER:
            return self.permits(principal, groups.groups(principal))
        return role is not CertRole.JOIN and principal in self.users


class AdminRight(Enum):
    """Ozone's isRead argument of checkAdminAccess: read where data lives, or change the cluster."""

    READ = "read"
    WRITE = "write"


SERVICE_READERS = frozenset({CertRole.OM, CertRole.DATANODE})
"""Services whose certificate may read where data lives: OM (a key's replicas, om/scm.py) and a datanode
(whether SCM allocated the container a write names, datanode/xceiver/allocations.py)."""


@dataclass(frozen=True, slots=True)
class AdminRule:
    """Who may change the cluster (administrators) and who may read where its data lives (administrators,
    read-only administrators, SERVICE_READERS), as Ozone's StorageContainerManager.checkAdminAccess."""

    administrators: Administrators
    read_only: Administrators
    groups: UserGroups

    @classmethod
    def from_conf(cls, conf: OzoneConfiguration) -> AdminRule:
        return cls(
            Administrators.from_conf(conf),
            Administrators.read_only_from_conf(conf),
            UserGroups.from_conf(conf),
        )

    def permits(self, principal: str, right: AdminRight, role: CertRole | None = None) -> bool:
        """`role`: the caller's certificate's (None without TLS: a claimed user name)."""
        if self.administrators.admits(principal, role, self.groups):
            return True
        if right is not AdminRight.READ:
            return False
        return role in SERVICE_READERS or self.read_only.admits(principal, role, self.groups)
