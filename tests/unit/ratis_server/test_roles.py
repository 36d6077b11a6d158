"""`member_roles`, the rule OM's and SCM's /api/v1/ratis share: a member names itself with its own role, the
leader it knows LEADER, the others FOLLOWER, and every other member UNKNOWN while it knows no leader."""

from __future__ import annotations

from pyozone.common.net import HostPort
from pyozone.ratis.messages import RaftPeerId
from pyozone.ratis.roles import RaftPeerRole
from pyozone.ratis_server.member_api import RaftStatus
from pyozone.ratis_server.roles import member_roles
from pyozone.ratis_server.transport import RaftPeer

PEERS = tuple(RaftPeer(RaftPeerId(f"n{i}"), HostPort("127.0.0.1", 9894 + i)) for i in range(1, 4))
ADDRESSES = {"n1": "127.0.0.1:9860", "n2": "127.0.0.1:9861"}


def status(me: str, role: RaftPeerRole, leader: str | None) -> RaftStatus:
    return RaftStatus("g", RaftPeerId(me), role, 2, RaftPeerId(leader) if leader else None, 5, 5, 5, ())


def test_a_follower_names_itself_the_leader_it_knows_and_the_other_followers() -> None:
    views = member_roles(status("n2", RaftPeerRole.FOLLOWER, "n1"), PEERS, ADDRESSES)
    assert [(v["nodeId"], v["role"]) for v in views] == [
        ("n1", "LEADER"),
        ("n2", "FOLLOWER"),
        ("n3", "FOLLOWER"),
    ]
    assert [v["rpcAddress"] for v in views] == ["127.0.0.1:9860", "127.0.0.1:9861", None]
    assert views[2]["ratisAddress"] == "127.0.0.1:9897"


def test_a_candidate_knowing_no_leader_shows_the_others_unknown() -> None:
    views = member_roles(status("n3", RaftPeerRole.CANDIDATE, None), PEERS, ADDRESSES)
    assert [v["role"] for v in views] == ["UNKNOWN", "UNKNOWN", "CANDIDATE"]
