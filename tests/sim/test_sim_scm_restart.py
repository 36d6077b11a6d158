"""SCM restart over the same store (SCMSafeModeManager, SequenceIdGenerator): state reloads, safe mode again,
datanodes re-register, ids keep growing."""

from __future__ import annotations

from pyozone.hdds.ids import RATIS_THREE
from pyozone.hdds.safemode_status import SafeModeStatus
from pyozone.hdds.states import LifeCycleState, NodeState, PipelineState, ReplicaState, SCMCommandType
from pyozone.scm.events import SCMEvent

OVERRIDES = {
    "ozone.scm.container.size": "10MB",
    "ozone.scm.block.size": "1MB",
    "ozone.scm.close.container.wait.duration": "20s",
}


def _rule(scm, name):
    return next(r for r in scm.safe_mode.rules() if r.name == name)


def _close(c, sim, cid) -> None:
    c.scm.events.fire(SCMEvent.CLOSE_CONTAINER, cid)
    assert c.run_until(lambda: c.scm.containers.get(cid).state is LifeCycleState.CLOSED, 3 * sim.MINUTE)


def test_restart_reloads_state_reenters_safe_mode_and_ids_keep_growing(sim):
    c = sim.cluster(6, OVERRIDES)
    old = c.scm
    sim.leave_safe_mode(c)
    c.advance(3 * sim.MINUTE)
    blocks = [c.write_block(sim.MB) for _ in range(20)]
    containers = sorted({b.container_id for b in blocks})
    assert len(containers) >= 3
    _close(c, sim, containers[0])
    # A CLOSING container (lease pending) and a CLOSED pipeline (not yet scrubbed) must come back as such.
    old.events.fire(SCMEvent.CLOSE_CONTAINER, containers[1])
    closed_pipeline = next(p for p in sim.live(old) if p.id != old.containers.get(containers[2]).pipeline_id)
    old.pipelines.close_pipeline(closed_pipeline.id)
    c.advance(5 * sim.SECOND)

    pipelines_before = {p.id: (p.state, p.nodes, p.replication_config) for p in old.pipelines.pipelines()}
    containers_before = {i.container_id: (i.state, i.pipeline_id) for i in old.containers.containers()}
    states = {s for s, _ in containers_before.values()}
    assert {LifeCycleState.OPEN, LifeCycleState.CLOSING, LifeCycleState.CLOSED} <= states
    assert PipelineState.CLOSED in {s for s, _, _ in pipelines_before.values()}
    max_container = max(containers_before)
    max_local = max(b.block_id.local_id for b in blocks)
    # A delete transaction of an OPEN container is never sent, so it is still in the log at restart.
    open_cid = next(cid for cid in containers if old.containers.get(cid).state is LifeCycleState.OPEN)
    (old_tx,) = old.deleted_blocks.add_transactions({open_cid: [blocks[-1].block_id.local_id]})
    keys = old.containers.get(containers[0]).number_of_keys
    assert keys > 0

    c.restart_scm()
    scm = c.scm
    assert scm is not old
    assert scm.safe_mode.status is SafeModeStatus.INITIAL
    assert scm.nodes.nodes() == []
    assert {
        p.id: (p.state, p.nodes, p.replication_config) for p in scm.pipelines.pipelines()
    } == pipelines_before
    assert {
        i.container_id: (i.state, i.pipeline_id) for i in scm.containers.containers()
    } == containers_before
    assert scm.containers.get(containers[0]).number_of_keys == keys
    assert scm.deleted_blocks.transaction_ids() == [old_tx]
    assert scm.deleted_blocks.get(old_tx).container_id == open_cid
    # The container rule counts the CLOSED container with keys: it needs a reported replica.
    container_rule = _rule(scm, "RatisContainerSafeModeRule")
    assert container_rule.total == 1 and not container_rule.validate()

    # Datanodes heartbeat into an SCM that does not know them: reregisterCommand, then register.
    restarted = c.clock.now_ms()
    exited = sim.leave_safe_mode(c, 5 * sim.MINUTE)
    assert exited <= restarted + 2 * sim.HEARTBEAT + 2 * sim.SECOND
    assert len(scm.nodes.nodes()) >= 3
    c.advance(sim.HEARTBEAT)
    assert len(scm.nodes.nodes()) == 6
    for dn, node in c.datanodes.items():
        assert node.executed.get(SCMCommandType.reregisterCommand, 0) == 1, dn
        assert sim.health(c, dn) is NodeState.HEALTHY
    assert container_rule.with_min_replicas == 1
    assert all(r.validated for r in scm.safe_mode.rule_statuses())
    # Replicas are known again from the registration container reports.
    assert {r.state for r in scm.containers.replicas(containers[0])} == {ReplicaState.CLOSED}
    assert len(scm.containers.replicas(containers[0])) == 3

    # New ids are above every id handed out before the restart.
    after = [c.write_block(sim.MB, owner="after-restart") for _ in range(10)]
    new_containers = {b.container_id for b in after} - set(containers_before)
    assert new_containers, "no container was allocated after the restart"
    assert min(new_containers) > max_container
    assert min(b.block_id.local_id for b in after) > max_local
    (new_tx,) = scm.deleted_blocks.add_transactions({min(new_containers): [after[0].block_id.local_id]})
    assert new_tx > old_tx
    assert all(b.pipeline.replication_config == RATIS_THREE for b in after)


def test_container_rule_holds_safe_mode_until_a_replica_is_reported(sim):
    """9 nodes, L=1: three disjoint pipelines. The replicas of the only CLOSED container are on P1's nodes;
    while those cannot re-register, every other rule passes but RatisContainerSafeModeRule does not."""
    c = sim.cluster(
        9,
        {
            **OVERRIDES,
            "ozone.scm.datanode.pipeline.limit": "1",
            "hdds.scm.safemode.atleast.one.node.reported.pipeline.pct": "0.5",
        },
    )
    sim.leave_safe_mode(c)
    c.advance(3 * sim.MINUTE)
    block = c.write_block(sim.MB)
    _close(c, sim, block.container_id)
    holders = block.pipeline.nodes

    c.restart_scm()
    scm = c.scm
    for dn in holders:
        c.partition(dn)
    c.advance(4 * sim.MINUTE)
    assert len(scm.nodes.nodes()) == 6
    assert scm.safe_mode.status is SafeModeStatus.PRE_CHECKS_PASSED
    unvalidated = {r.name for r in scm.safe_mode.rule_statuses() if not r.validated}
    assert unvalidated == {"RatisContainerSafeModeRule"}

    c.heal(holders[0])
    assert c.run_until(lambda: not scm.safe_mode.in_safe_mode(), 2 * sim.MINUTE)
    assert holders[0] in {i.uuid for i in scm.nodes.nodes()}
    assert _rule(scm, "RatisContainerSafeModeRule").with_min_replicas == 1


def test_pipelines_of_a_node_that_never_returns_are_closed_by_the_scrubber(sim):
    """After a restart SCM never hears of a dead node, so no STALE/DEAD handling: the scrubber closes OPEN
    pipelines with an unregistered member (PipelineManagerImpl.scrubPipelines) and removes them after the
    destroy timeout."""
    c = sim.cluster(
        6,
        {
            **OVERRIDES,
            "ozone.scm.pipeline.scrub.interval": "20s",
            "hdds.scm.wait.time.after.safemode.exit": "1m",
        },
    )
    sim.leave_safe_mode(c)
    c.advance(3 * sim.MINUTE)
    gone = sim.live(c.scm)[0].nodes[0]
    its = [p.id for p in c.scm.pipelines.pipelines_of_node(gone)]
    c.kill(gone)
    c.restart_scm()
    scm = c.scm
    exited = sim.leave_safe_mode(c, 5 * sim.MINUTE)
    assert scm.nodes.get(gone) is None
    assert all(scm.pipelines.get(pid).state is PipelineState.OPEN for pid in its)

    ready = exited + scm.settings.safe_mode.wait_after_exit_ms
    assert c.run_until(
        lambda: all(scm.pipelines.get(pid).state is PipelineState.CLOSED for pid in its),
        ready - c.clock.now_ms() + 21 * sim.SECOND,
    )
    assert c.clock.now_ms() >= ready
    destroy = scm.settings.pipeline.destroy_timeout_ms
    assert c.run_until(lambda: all(scm.pipelines.find(pid) is None for pid in its), destroy + 21 * sim.SECOND)
    c.advance(scm.settings.pipeline.creation_interval_ms)
    sim.assert_three_invariants(scm)
    assert all(gone not in p.nodes for p in scm.pipelines.pipelines())
