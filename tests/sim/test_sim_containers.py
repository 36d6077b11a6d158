"""Container lifecycle through the whole core: full -> CLOSE_CONTAINER -> lease -> close commands -> ICRs
-> CLOSED (CloseContainerEventHandler); a lost pipeline member -> CLOSED (Ratis close) or QUASI_CLOSED (no
Ratis group)."""

from __future__ import annotations

from collections import Counter

import pytest

from pyozone.hdds.exceptions import ResultCode, SCMException
from pyozone.hdds.ids import RATIS_THREE
from pyozone.hdds.states import LifeCycleState, NodeState, PipelineState, ReplicaState, SCMCommandType
from pyozone.scm.events import SCMEvent

CLOSE = SCMCommandType.closeContainerCommand
SMALL = {
    "ozone.scm.container.size": "10MB",
    "ozone.scm.block.size": "1MB",
}


def _replica_states(scm, cid) -> dict[str, ReplicaState]:
    return {r.datanode: r.state for r in scm.containers.replicas(cid)}


def test_full_container_closes_after_the_lease(sim):
    c = sim.cluster(5, {**SMALL, "ozone.scm.close.container.wait.duration": "30s"})
    scm = c.scm
    sim.leave_safe_mode(c)
    block_size = scm.settings.container.block_size_bytes
    container_size = scm.settings.container.size_bytes
    wait = scm.settings.container.close_wait_ms
    assert (block_size, container_size, wait) == (sim.MB, 10 * sim.MB, 30 * sim.SECOND)

    # SCM counts no allocation (as Ozone): a container closes when its datanodes report it past
    # hdds.container.close.threshold (0.9) with their next heartbeat (a CONTAINER_FULL action).
    fired = scm.events.fired[SCMEvent.CLOSE_CONTAINER]
    blocks = []
    while not any(c.datanodes[dn].container_actions for dn in c.datanodes):
        blocks.append(c.write_block(block_size))
        assert len(blocks) <= 100
    full = blocks[-1].container_id
    assert c.run_until(lambda: scm.events.fired[SCMEvent.CLOSE_CONTAINER] != fired, sim.HEARTBEAT, 100)
    fired_at = c.clock.now_ms()
    info = scm.containers.get(full)
    assert info.state is LifeCycleState.CLOSING
    keys = sum(1 for b in blocks if b.container_id == full)
    assert keys == 9 * container_size // 10 // block_size
    assert full in scm.close_containers.pending()
    members = scm.pipelines.get(info.pipeline_id).nodes
    # Other containers are untouched and still take blocks.
    assert all(
        scm.containers.get(b.container_id).state is LifeCycleState.OPEN
        for b in blocks
        if b.container_id != full
    )

    # No close command before the lease expires.
    sim.advance_to(c, fired_at + wait - sim.SECOND)
    assert all(c.datanodes[dn].executed.get(CLOSE, 0) == 0 for dn in c.datanodes)
    assert scm.containers.get(full).state is LifeCycleState.CLOSING

    # After it, the members get the command with their next heartbeat and close through Ratis. (Other
    # containers past hdds.container.close.threshold are closed too, on the datanodes' CONTAINER_FULL.)
    assert c.run_until(
        lambda: all(c.datanodes[dn].replicas[full].state is ReplicaState.CLOSED for dn in members),
        sim.HEARTBEAT + 2 * sim.SECOND,
    )
    assert all(c.datanodes[dn].executed.get(CLOSE, 0) >= 1 for dn in members)
    assert all(full not in c.datanodes[dn].replicas for dn in c.datanodes if dn not in members)
    # The replicas report CLOSED through ICRs; the first CLOSED replica with the container's BCSID closes it.
    assert c.run_until(
        lambda: set(_replica_states(scm, full).values()) == {ReplicaState.CLOSED}, sim.HEARTBEAT + sim.SECOND
    )
    info = scm.containers.get(full)
    assert info.state is LifeCycleState.CLOSED
    assert set(_replica_states(scm, full)) == set(members)
    assert info.sequence_id == info.number_of_keys == keys
    assert full not in scm.close_containers.pending()
    assert full not in scm.pipelines.containers(info.pipeline_id)
    # The pipeline itself stays OPEN and keeps taking blocks in other containers.
    assert scm.pipelines.get(info.pipeline_id).state is PipelineState.OPEN
    assert c.write_block(block_size).container_id != full


def _open_container_with_a_killed_member(sim, overrides):
    c = sim.cluster(
        5,
        {
            **SMALL,
            "ozone.scm.stale.node.interval": "90s",
            "ozone.scm.dead.node.interval": "180s",
            **overrides,
        },
    )
    scm = c.scm
    sim.leave_safe_mode(c)
    block = c.write_block(sim.MB)
    cid = block.container_id
    c.advance(sim.MINUTE)
    members = block.pipeline.nodes
    assert _replica_states(scm, cid) == dict.fromkeys(members, ReplicaState.OPEN)
    victim = members[0]
    c.kill(victim)
    return c, cid, block.pipeline.id, victim, [dn for dn in members if dn != victim]


def test_killed_member_closes_pipeline_and_container_closes_through_ratis(sim):
    """Lease (30s) ends while the pipeline still exists: the live members are in the Ratis group -> CLOSED."""
    c, cid, pid, victim, live = _open_container_with_a_killed_member(
        sim, {"ozone.scm.close.container.wait.duration": "30s"}
    )
    scm = c.scm
    assert c.run_until(lambda: sim.health(c, victim) is NodeState.STALE, 3 * sim.MINUTE)
    assert scm.pipelines.get(pid).state is PipelineState.CLOSED
    assert scm.containers.get(cid).state is LifeCycleState.CLOSING

    assert c.run_until(lambda: scm.containers.get(cid).state is not LifeCycleState.CLOSING, 2 * sim.MINUTE)
    assert sim.health(c, victim) is NodeState.STALE, "expected the close before the node is DEAD"
    assert scm.containers.get(cid).state is LifeCycleState.CLOSED
    assert c.run_until(lambda: sim.health(c, victim) is NodeState.DEAD, 3 * sim.MINUTE)
    c.advance(sim.MINUTE)
    # DEAD: its replica is forgotten, the pipeline is gone; the live replicas are CLOSED.
    assert _replica_states(scm, cid) == dict.fromkeys(live, ReplicaState.CLOSED)
    assert scm.pipelines.find(pid) is None
    assert scm.containers.get(cid).state is LifeCycleState.CLOSED


def test_killed_member_pipeline_gone_before_the_lease_quasi_closes(sim):
    """Default lease (150s) outlasts the dead interval: the pipeline is removed when the node is DEAD, the
    live members drop the Ratis group, and a non-forced close outside the group quasi-closes
    (CloseContainerCommandHandler)."""
    c, cid, pid, victim, live = _open_container_with_a_killed_member(sim, {})
    scm = c.scm
    assert scm.settings.container.close_wait_ms == 150 * sim.SECOND
    assert c.run_until(lambda: sim.health(c, victim) is NodeState.STALE, 3 * sim.MINUTE)
    assert scm.containers.get(cid).state is LifeCycleState.CLOSING
    assert c.run_until(lambda: sim.health(c, victim) is NodeState.DEAD, 3 * sim.MINUTE)
    assert scm.pipelines.find(pid) is None
    assert scm.containers.get(cid).state is LifeCycleState.CLOSING

    assert c.run_until(lambda: scm.containers.get(cid).state is not LifeCycleState.CLOSING, 3 * sim.MINUTE)
    assert scm.containers.get(cid).state is LifeCycleState.QUASI_CLOSED
    assert c.run_until(
        lambda: _replica_states(scm, cid) == dict.fromkeys(live, ReplicaState.QUASI_CLOSED), sim.MINUTE
    )
    for dn in live:
        assert pid not in c.datanodes[dn].pipelines
        assert c.datanodes[dn].executed.get(CLOSE, 0) == 1
    assert c.datanodes[victim].executed.get(CLOSE, 0) == 0


def test_a_failed_pipeline_quasi_closes_its_replicas_at_once_not_at_the_scrub(sim):
    """Issue 28, defect 17: after a pipeline failed, its replicas stayed CLOSING for about 5 minutes: the
    close-container commands (sent when the lease ends) wait for a log that can no longer commit, and SCM
    told the members of the pipeline's close only with its deletion (66 s destroy timeout, then the
    scrub). Now the members leave the group at once, so the close-container commands quasi-close the
    replicas, the Replication Manager closes the container, and the scrubber still removes the pipeline."""
    c = sim.cluster(5, {**SMALL, "ozone.scm.pipeline.scrub.interval": "10m"})
    scm = c.scm
    sim.leave_safe_mode(c)
    block = c.write_block(sim.MB)
    cid, pid, members = block.container_id, block.pipeline.id, block.pipeline.nodes
    c.advance(sim.MINUTE)
    c.fail_pipeline(pid, members[0], "the leader's log failed")
    assert c.run_until(lambda: scm.pipelines.get(pid).state is PipelineState.CLOSED, 2 * sim.HEARTBEAT)
    assert c.run_until(lambda: all(pid not in c.datanodes[dn].pipelines for dn in members), 2 * sim.HEARTBEAT)

    lease = scm.settings.container.close_wait_ms
    assert c.run_until(
        lambda: _replica_states(scm, cid) == dict.fromkeys(members, ReplicaState.QUASI_CLOSED),
        lease + 3 * sim.HEARTBEAT,
    )
    assert scm.pipelines.find(pid) is not None, "quasi-closed before the scrubber deleted the pipeline"
    assert c.run_until(lambda: scm.containers.get(cid).state is LifeCycleState.CLOSED, 10 * sim.MINUTE)
    assert c.run_until(lambda: scm.pipelines.find(pid) is None, 10 * sim.MINUTE)


def test_writes_skip_closed_pipelines_and_recover_once_a_new_one_opens(sim):
    """WritableRatisContainerProvider: only OPEN pipelines take blocks; with none, SCM creates one and the
    caller retries."""
    c = sim.cluster(5)
    scm = c.scm
    sim.leave_safe_mode(c)
    c.advance(sim.MINUTE)
    victim = sim.live(scm)[0].nodes[0]
    assert all(victim in p.nodes for p in sim.live(scm)), "expected the victim in every RATIS/THREE pipeline"
    c.kill(victim)
    assert c.run_until(lambda: sim.health(c, victim) is NodeState.STALE, 6 * sim.MINUTE)
    assert scm.pipelines.pipelines(RATIS_THREE, PipelineState.OPEN) == []

    with pytest.raises(SCMException) as e:
        c.write_block(sim.MB)
    assert e.value.code is ResultCode.FAILED_TO_FIND_ACTIVE_PIPELINE
    created = scm.pipelines.pipelines(RATIS_THREE, PipelineState.ALLOCATED)
    assert created and all(victim not in p.nodes for p in created)

    def allocates() -> bool:
        try:
            block = c.write_block(sim.MB)
        except SCMException as err:
            assert err.code is ResultCode.FAILED_TO_FIND_ACTIVE_PIPELINE, err
            return False
        assert block.pipeline.state is PipelineState.OPEN and victim not in block.pipeline.nodes
        return True

    assert c.run_until(allocates, 2 * sim.HEARTBEAT + 5 * sim.SECOND)


def test_open_containers_per_owner_and_pipeline_stay_within_the_open_container_limit(sim):
    c = sim.cluster(9, SMALL)
    scm = c.scm
    sim.leave_safe_mode(c)
    c.advance(5 * sim.MINUTE)
    for i in range(300):
        c.write_block(sim.MB, owner=f"owner{i % 3}")
    per = Counter((info.pipeline_id, info.owner) for info in scm.containers.containers(LifeCycleState.OPEN))
    assert per
    for (pid, owner), n in per.items():
        # 1 + (3 x 1 healthy volume - 1) div 2 = 2 with the default owner.container.count 3 and limit 2
        assert n <= scm.nodes.open_container_limit(scm.pipelines.get(pid).nodes) == 2, (pid, owner, n)
