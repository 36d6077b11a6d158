"""Each member of a Raft group as one member sees it: the rule OM's and SCM's /api/v1/ratis `members` share
(Ozone's OzoneManagerRatisServer.getRatisRoles and SCMRatisServerImpl.getRatisRoles, which name every peer
with the role the answering server knows it in)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pyozone.ratis_server.member_api import RaftStatus
from pyozone.ratis_server.transport import RaftPeer


def member_roles(
    status: RaftStatus, peers: Iterable[RaftPeer], rpc_addresses: Mapping[str, str]
) -> list[dict[str, Any]]:
    """Each of `peers` with its role as the member of `status` knows it: its own role for itself, LEADER for
    the leader it knows, FOLLOWER for the others (UNKNOWN while it knows no leader); `rpc_addresses` maps a
    node id to its client-facing address, shown beside its Ratis address."""
    me = status.me.id
    leader = status.leader.id if status.leader is not None else None
    views = []
    for peer in peers:
        node = peer.id.id
        if node == me:
            role = status.role.name
        elif leader is not None:
            role = "LEADER" if node == leader else "FOLLOWER"
        else:
            role = "UNKNOWN"
        views.append(
            {
                "nodeId": node,
                "rpcAddress": rpc_addresses.get(node),
                "ratisAddress": str(peer.address),
                "role": role,
            }
        )
    return views
