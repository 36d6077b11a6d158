"""Leadership transfer (the Raft thesis's section 3.10, TimeoutNow; Ratis's TransferLeadership and
StartLeaderElectionRequest)."""

import pytest

from pyozone.ratis.messages import ClientCall, StartLeaderElectionRequest
from pyozone.ratis.outputs import NotLeader, TransferDone, TransferRefused
from pyozone.ratis.roles import RaftPeerRole
from tests.unit.ratis.group import A, B, C, Group

TRANSFER = ClientCall("admin", 1, b"")
WRITE = ClientCall("c", 2, b"w")


def leader_group() -> Group:
    group = Group(A, B, C)
    group.elect(A)
    return group


def test_the_target_stands_at_once_wins_the_next_term_and_the_old_leader_reports_it():
    group = leader_group()
    group.take(A, group.servers[A].transfer_leadership(TRANSFER, B))
    assert group.sent(A, B) == [StartLeaderElectionRequest(A, 1, 1)]  # B holds the whole log already
    group.deliver(A, B, StartLeaderElectionRequest(A, 1, 1))
    assert group.servers[B].current_term == 2  # no timeout, no pre-vote
    group.settle()
    assert (group.servers[B].role, group.servers[A].role) == (RaftPeerRole.LEADER, RaftPeerRole.FOLLOWER)
    assert group.transfers == [TransferDone(TRANSFER, stepped_down=True)]


def test_a_lagging_target_is_caught_up_first_and_writes_are_refused_meanwhile():
    group = leader_group()
    group.take(A, group.servers[A].submit(ClientCall("c", 1, b"x")))
    group.sync(A)
    group.sent(A, C)  # C misses the write
    group.deliver(A, B, group.sent(A, B)[0])  # B gets it, its answer is not back yet
    group.take(A, group.servers[A].transfer_leadership(TRANSFER, C))
    assert group.sent(A, C) == []
    assert group.servers[A].submit(WRITE) == [NotLeader(WRITE, C)]
    group.tick(A, 75)
    group.settle()  # the heartbeat finds C behind; the leader catches it up, then tells it to stand
    assert group.servers[C].role is RaftPeerRole.LEADER and group.servers[C].current_term == 2
    assert group.transfers == [TransferDone(TRANSFER, stepped_down=True)]


def test_a_transfer_that_does_not_complete_in_time_gives_up_and_writes_resume():
    group = leader_group()
    group.take(A, group.servers[A].transfer_leadership(TRANSFER, B))
    group.sent(A)  # StartLeaderElection lost
    assert group.servers[A].deadline_ms() <= group.clock.now_ms() + 300
    group.tick(A, 300)  # raft.server.rpc.timeout.max
    assert group.transfers == [TransferDone(TRANSFER, stepped_down=False)]
    assert group.servers[A].role is RaftPeerRole.LEADER
    assert not any(isinstance(o, NotLeader) for o in group.take(A, group.servers[A].submit(WRITE)))


def test_only_a_leader_transfers_and_only_to_another_member():
    group = leader_group()
    assert group.servers[B].transfer_leadership(TRANSFER, C) == [NotLeader(TRANSFER, A)]
    with pytest.raises(ValueError, match="not another member"):
        group.servers[A].transfer_leadership(TRANSFER, A)


def test_a_follower_ignores_a_stand_request_from_a_stale_leader_or_when_behind():
    group = leader_group()
    group.deliver(A, B, StartLeaderElectionRequest(A, 0, 1))  # an old term
    group.deliver(A, B, StartLeaderElectionRequest(A, 1, 5))  # B lacks index 5
    assert (group.servers[B].role, group.servers[B].current_term) == (RaftPeerRole.FOLLOWER, 1)


def test_a_second_transfer_to_the_same_target_shares_the_outcome_and_one_to_another_is_refused():
    group = leader_group()
    again, elsewhere = ClientCall("admin", 3, b""), ClientCall("admin", 4, b"")
    group.take(A, group.servers[A].transfer_leadership(TRANSFER, B))
    group.sent(A)  # StartLeaderElection lost: the transfer is still running
    assert group.take(A, group.servers[A].transfer_leadership(again, B)) == []
    assert group.servers[A].transfer_leadership(elsewhere, C) == [TransferRefused(elsewhere, B)]
    group.tick(A, 300)
    assert group.transfers == [TransferDone(TRANSFER, False), TransferDone(again, False)]
