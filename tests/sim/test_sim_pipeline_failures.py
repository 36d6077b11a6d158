"""The simulator's pipeline-failure model (issue 30): a pipeline member that dies, pauses or is cut off
makes the leader (for a dead leader without a majority left, the others) ask SCM to close the pipeline after
`hdds.ratis.raft.server.rpc.slowness.timeout` / `hdds.ratis.raft.server.Notification.no-leader.timeout`, as
the daemon's Raft core does; SCM's stale-node handler closes it too, whichever comes first. Virtual time."""

from __future__ import annotations

import pytest

from pyozone.config import OzoneConfiguration
from pyozone.datanode.pipeline_raft import NO_LEADER_REASON, slow_member_reason
from pyozone.hdds.ids import RATIS_THREE
from pyozone.hdds.states import NodeState, PipelineState
from pyozone.sim.cluster import SimCluster

SECOND = 1_000
MINUTE = 60 * SECOND
HEARTBEAT = 30 * SECOND
STALE = 5 * MINUTE
ELECTION = 5 * SECOND  # hdds.ratis.leader.election.minimum.timeout.duration
TICK = SECOND  # the model looks at a troubled pipeline at each SCM tick
SLACK = TICK + HEARTBEAT + 3 * SECOND  # the reporter's next heartbeat, SCM's node check


def _cluster(slowness: str, no_leader: str) -> tuple[SimCluster, list[tuple[str, str, str]]]:
    """Three datanodes, one RATIS/THREE pipeline OPEN; every pipeline action SCM gets is recorded."""
    c = SimCluster(
        3,
        conf=OzoneConfiguration(
            {
                "hdds.ratis.raft.server.rpc.slowness.timeout": slowness,
                "hdds.ratis.raft.server.Notification.no-leader.timeout": no_leader,
                "ozone.scm.datanode.pipeline.limit": "1",
            }
        ),
        seed=7,
    )
    assert c.run_until(lambda: len(_open(c)) == 1 and _open(c)[0].leader is not None, 10 * MINUTE)
    actions: list[tuple[str, str, str]] = []
    handle = c.scm.pipelines.process_pipeline_action

    def record(dn: str, pid: str, reason: str) -> None:
        actions.append((dn, pid, reason))
        handle(dn, pid, reason)

    c.scm.pipelines.process_pipeline_action = record  # type: ignore[method-assign]
    return c, actions


def _open(c: SimCluster):
    return c.scm.pipelines.pipelines(RATIS_THREE, PipelineState.OPEN)


def _state(c: SimCluster, pid: str) -> PipelineState | None:
    pipeline = c.scm.pipelines.find(pid)
    return None if pipeline is None else pipeline.state


def _closed_at(c: SimCluster, pid: str, within_ms: int) -> int:
    """Runs second by second until SCM closed the pipeline; the virtual instant it saw so."""
    assert c.run_until(lambda: _state(c, pid) is not PipelineState.OPEN, within_ms, step_ms=SECOND)
    return c.clock.now_ms()


def _roles(c: SimCluster) -> tuple[str, str, str, str]:
    pipeline = _open(c)[0]
    leader = pipeline.leader
    assert leader is not None and pipeline.id in c.datanodes[leader].leader_of
    followers = [dn for dn in pipeline.nodes if dn != leader]
    return pipeline.id, leader, followers[0], followers[1]


def _health(c: SimCluster, dn: str) -> NodeState:
    return c.scm.nodes.node(dn).status.health


@pytest.mark.parametrize(("slowness", "by_action"), [("60s", True), ("10m", False)])
def test_a_killed_followers_pipeline_closes_after_the_slowness_timeout_or_on_stale(slowness, by_action):
    c, actions = _cluster(slowness, "20m")
    pid, leader, follower, _ = _roles(c)
    killed = c.clock.now_ms()
    c.kill(follower)
    closed = _closed_at(c, pid, STALE + 2 * SLACK)
    if by_action:
        assert killed + MINUTE <= closed <= killed + MINUTE + SLACK
        assert _health(c, follower) is NodeState.HEALTHY, "closed by the leader's action, before STALE"
        assert actions == [(leader, pid, slow_member_reason(follower))]
    else:
        assert _health(c, follower) is NodeState.STALE, "closed by the stale-node handler"
        assert actions == []
        assert killed + STALE - HEARTBEAT <= closed <= killed + STALE + SLACK


@pytest.mark.parametrize(("slowness", "by_action"), [("60s", True), ("10m", False)])
def test_a_killed_leaders_pipeline_elects_another_then_closes_after_the_slowness_timeout_or_on_stale(
    slowness, by_action
):
    """A majority left: the two others elect a leader within an election timeout and report it; the new
    leader then finds the old one silent."""
    c, actions = _cluster(slowness, "20m")
    pid, leader, first, second = _roles(c)
    killed = c.clock.now_ms()
    c.kill(leader)
    c.advance(ELECTION + TICK)
    new = [dn for dn in (first, second) if pid in c.datanodes[dn].leader_of]
    assert len(new) == 1, "one of the survivors leads after an election timeout"
    assert c.run_until(lambda: c.scm.pipelines.get(pid).leader == new[0], HEARTBEAT + TICK)
    closed = _closed_at(c, pid, STALE + 2 * SLACK)
    if by_action:
        assert killed + ELECTION + MINUTE <= closed <= killed + ELECTION + MINUTE + SLACK
        assert _health(c, leader) is NodeState.HEALTHY
        assert actions == [(new[0], pid, slow_member_reason(leader))]
    else:
        assert _health(c, leader) is NodeState.STALE
        assert actions == []


@pytest.mark.parametrize(("no_leader", "by_action"), [("60s", True), ("10m", False)])
def test_a_pipeline_without_a_majority_closes_after_the_no_leader_timeout_or_on_stale(no_leader, by_action):
    """The leader and a follower die: the survivor cannot elect, and asks SCM to close the pipeline after
    the no-leader timeout (the slowness timeout is the default 5 min, longer)."""
    c, actions = _cluster("300s", no_leader)
    pid, leader, follower, survivor = _roles(c)
    killed = c.clock.now_ms()
    c.kill(leader)
    c.kill(follower)
    closed = _closed_at(c, pid, STALE + 2 * SLACK)
    assert not any(pid in c.datanodes[dn].leader_of for dn in (follower, survivor))
    if by_action:
        assert killed + MINUTE <= closed <= killed + MINUTE + SLACK
        assert _health(c, leader) is NodeState.HEALTHY
        assert actions == [(survivor, pid, NO_LEADER_REASON)]
    else:
        assert _health(c, leader) is NodeState.STALE
        assert actions == []


@pytest.mark.parametrize("role", ["follower", "leader"])
def test_a_pause_shorter_than_both_timeouts_leaves_the_pipeline_open(role):
    """A paused follower is heard again before the slowness timeout; a paused leader is replaced after an
    election timeout and steps down when it resumes: no action, the pipeline stays OPEN with one leader."""
    c, actions = _cluster("60s", "60s")
    pid, leader, follower, _ = _roles(c)
    victim = leader if role == "leader" else follower
    c.pause(victim)
    c.advance(50 * SECOND)
    c.resume(victim)
    c.advance(3 * MINUTE)
    assert _state(c, pid) is PipelineState.OPEN
    assert actions == []
    leaders = [dn for dn in c.datanodes if pid in c.datanodes[dn].leader_of]
    assert len(leaders) == 1
    assert (leaders[0] != leader) is (role == "leader")
    assert c.scm.pipelines.get(pid).leader == leaders[0]
    assert _health(c, victim) is NodeState.HEALTHY


def test_a_pause_longer_than_the_slowness_timeout_closes_the_pipeline():
    c, actions = _cluster("60s", "20m")
    pid, leader, follower, _ = _roles(c)
    paused = c.clock.now_ms()
    c.pause(follower)
    closed = _closed_at(c, pid, 2 * MINUTE + SLACK)
    assert paused + MINUTE <= closed <= paused + MINUTE + SLACK
    assert actions == [(leader, pid, slow_member_reason(follower))]


def test_a_cut_off_follower_is_reported_by_the_leader():
    """Cut off, the follower hears no leader either: its own no-leader action waits in its lost heartbeats;
    the leader's slowness action closes the pipeline."""
    c, actions = _cluster("60s", "60s")
    pid, leader, follower, _ = _roles(c)
    cut = c.clock.now_ms()
    c.partition(follower)
    closed = _closed_at(c, pid, 2 * MINUTE + SLACK)
    assert cut + MINUTE <= closed <= cut + MINUTE + SLACK
    assert actions == [(leader, pid, slow_member_reason(follower))]
    assert c.datanodes[follower].pipeline_actions, "the cut-off follower's own action is still unsent"
