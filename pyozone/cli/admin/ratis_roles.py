"""The members of an HA service and their Raft roles, read from each member's web endpoint (/api/v1/ratis;
https with the user's certificate when hdds.grpc.tls.enabled): what `admin om roles` and `admin scm roles`
share before each prints them in its own Ozone shape. A member that does not answer is UNREACHABLE; one the
group does not count (a learner being added, a member removed) NOT_A_MEMBER."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pyozone.common.net import HostPort
from pyozone.common.tls_mode import client_tls
from pyozone.config import OzoneConfiguration

UNREACHABLE = "UNREACHABLE"
NOT_A_MEMBER = "NOT_A_MEMBER"
TIMEOUT_S = 5


@dataclass(frozen=True, slots=True)
class MemberRole:
    """One member of the service as its own /api/v1/ratis shows it (None where it did not answer)."""

    node_id: str
    role: str
    term: int | None
    commit_index: int | None
    applied_index: int | None


def raft_view(http: HostPort, conf: OzoneConfiguration) -> dict[str, Any] | None:
    """The member's /api/v1/ratis at its web address `http`, None when it does not answer."""
    tls = client_tls(conf)
    context = tls.client_context() if tls is not None else None
    scheme = "https" if context is not None else "http"
    try:
        with urllib.request.urlopen(
            f"{scheme}://{http.host}:{http.port}/api/v1/ratis", timeout=TIMEOUT_S, context=context
        ) as answer:
            return json.loads(answer.read())
    except (OSError, urllib.error.URLError, ValueError):
        return None


def members_in_force(views: Mapping[str, dict[str, Any] | None]) -> set[str] | None:
    """The group's members in force, as the leader's log has them (else any member's that answers), None
    when no member names them."""
    answering = [v for v in views.values() if v and v.get("ha") and "members" in v]
    leading = [v for v in answering if v.get("role") == "LEADER"]
    chosen = max(leading or answering, key=lambda v: v.get("term") or 0, default=None)
    return {member["nodeId"] for member in chosen["members"]} if chosen is not None else None


def member_roles(http_addresses: Mapping[str, HostPort], conf: OzoneConfiguration) -> list[MemberRole]:
    """Each member of `http_addresses` (node id: web address, in the service's order) and its role."""
    views = {node: raft_view(address, conf) for node, address in http_addresses.items()}
    members = members_in_force(views)
    roles = []
    for node, view in views.items():
        role = view.get("role", "UNKNOWN") if view and view.get("ha") else UNREACHABLE
        if members is not None and node not in members:
            role = NOT_A_MEMBER
        answered = view or {}
        roles.append(
            MemberRole(
                node, role, answered.get("term"), answered.get("commitIndex"), answered.get("appliedIndex")
            )
        )
    return roles
