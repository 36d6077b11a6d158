"""Safe mode through the whole core (SCMSafeModeManager; its gating of admin commands and of pipeline
creation)."""

from __future__ import annotations

import math

import pytest

from pyozone.hdds.exceptions import ResultCode, SCMException
from pyozone.hdds.ids import RATIS_ONE, RATIS_THREE, BlockID
from pyozone.hdds.safemode_status import SafeModeStatus
from pyozone.hdds.states import LifeCycleEvent, LifeCycleState, NodeState, PipelineState, SCMCommandType
from pyozone.scm.events import SCMEvent


def _refused_in_safe_mode(call) -> None:
    with pytest.raises(SCMException) as e:
        call()
    assert e.value.code is ResultCode.SAFE_MODE_EXCEPTION, e.value


def _healthy_open_three(scm) -> int:
    """OPEN RATIS/THREE pipelines with every member IN_SERVICE and HEALTHY (HealthyPipelineSafeModeRule)."""
    healthy = {i.uuid for i in scm.nodes.healthy_in_service()}
    return sum(1 for p in scm.pipelines.pipelines(RATIS_THREE, PipelineState.OPEN) if set(p.nodes) <= healthy)


def test_fresh_cluster_goes_initial_precheck_then_out_with_gating(sim):
    c = sim.cluster(5)
    scm = c.scm
    assert scm.safe_mode.status is SafeModeStatus.INITIAL
    assert scm.settings.safe_mode.min_datanodes == 3

    checked_initial = checked_precheck = False
    precheck_at = exit_at = None
    last_unvalidated: set[str] = set()
    while scm.safe_mode.in_safe_mode():
        assert c.clock.now_ms() < 5 * sim.MINUTE, "no safe-mode exit within 5 minutes"
        c.advance(sim.SECOND)
        registered = len(scm.nodes.nodes())
        status = scm.safe_mode.status
        # The pre-check is exactly "3 datanodes registered" (DataNodeSafeModeRule, the only pre-check rule).
        if registered < 3:
            assert status is SafeModeStatus.INITIAL
        else:
            assert status is not SafeModeStatus.INITIAL
        if status is SafeModeStatus.INITIAL and registered >= 1:
            # No RATIS/THREE pipeline may exist before the pre-check; RATIS/ONE are made in safe mode.
            assert sim.live(scm) == []
            if scm.pipelines.pipelines(RATIS_ONE) and not checked_initial:
                checked_initial = True
                _refused_in_safe_mode(lambda: scm.blocks.allocate_block(sim.MB, RATIS_THREE, "om"))
                _refused_in_safe_mode(lambda: scm.blocks.delete_blocks([BlockID(1, 1)]))
                _refused_in_safe_mode(lambda: scm.pipelines.create_pipeline(RATIS_THREE))
                one = scm.pipelines.pipelines(RATIS_ONE)[0]
                assert scm.pipelines.get(one.id) is one
                assert scm.pipelines.find(one.id) is one
        if status is SafeModeStatus.PRE_CHECKS_PASSED:
            if precheck_at is None:
                precheck_at = c.clock.now_ms()
                # PRE_CHECK_COMPLETED triggers a one-shot creator run: RATIS/THREE pipelines appear at once.
                assert sim.live(scm), "no RATIS/THREE pipeline created on PRE_CHECK_COMPLETED"
                sim.assert_three_invariants(scm)
            if not checked_precheck:
                checked_precheck = True
                _refused_in_safe_mode(lambda: scm.blocks.allocate_block(sim.MB, RATIS_THREE, "om"))
                # The creation gate is open now: refusal, if any, is for the limits, not for safe mode.
                try:
                    scm.pipelines.create_pipeline(RATIS_THREE)
                except SCMException as e:
                    assert e.code is not ResultCode.SAFE_MODE_EXCEPTION, e
        if scm.safe_mode.in_safe_mode():
            last_unvalidated = {r.name for r in scm.safe_mode.rule_statuses() if not r.validated}
    exit_at = c.clock.now_ms()

    assert checked_initial and checked_precheck
    assert precheck_at is not None and precheck_at < exit_at
    # What held SCM in safe mode last were the pipeline rules, and they hold at exit.
    assert last_unvalidated == {"HealthyPipelineSafeModeRule"}
    open_three = len(scm.pipelines.pipelines(RATIS_THREE, PipelineState.OPEN))
    threshold = max(3 // 3, math.ceil(0.10 * open_three))
    assert _healthy_open_three(scm) >= threshold >= 1
    assert all(r.validated for r in scm.safe_mode.rule_statuses())

    block = c.write_block(sim.MB)
    assert block.pipeline.replication_config == RATIS_THREE
    assert block.pipeline.state is PipelineState.OPEN
    assert scm.containers.get(block.container_id).state is LifeCycleState.OPEN


def test_ratis_one_creation_is_not_gated_by_the_precheck(sim):
    c = sim.cluster(5, {"ozone.scm.pipeline.creation.auto.factor.one": "false"})
    scm = c.scm
    assert c.run_until(lambda: len(scm.nodes.nodes()) == 1, sim.MINUTE)
    assert scm.safe_mode.status is SafeModeStatus.INITIAL
    assert scm.pipelines.pipelines() == []

    _refused_in_safe_mode(lambda: scm.pipelines.create_pipeline(RATIS_THREE))
    one = scm.pipelines.create_pipeline(RATIS_ONE)
    assert one.state is PipelineState.ALLOCATED
    assert one.nodes == (scm.nodes.nodes()[0].uuid,)
    assert scm.pipelines.get(one.id).id == one.id

    # The member creates it and reports it: it opens, in safe mode or not.
    assert c.run_until(lambda: scm.pipelines.get(one.id).state is PipelineState.OPEN, 2 * sim.MINUTE)


def test_in_safe_mode_after_restart_get_pipeline_and_close_container_are_allowed(sim):
    c = sim.cluster(
        5,
        {
            "ozone.scm.container.size": "10MB",
            "ozone.scm.block.size": "1MB",  # never above the container size (validated at startup)
            "ozone.scm.close.container.wait.duration": "30s",
        },
    )
    sim.leave_safe_mode(c)
    blocks = [c.write_block(sim.MB) for _ in range(12)]
    containers = sorted({b.container_id for b in blocks})
    assert len(containers) >= 2
    c.advance(sim.MINUTE)
    assert all(c.scm.containers.get(cid).state is LifeCycleState.OPEN for cid in containers)

    c.restart_scm()
    scm = c.scm
    assert scm.safe_mode.status is SafeModeStatus.INITIAL
    pipeline = blocks[0].pipeline
    assert scm.pipelines.get(pipeline.id).state is PipelineState.OPEN
    assert scm.pipelines.find(pipeline.id).nodes == pipeline.nodes
    _refused_in_safe_mode(lambda: scm.blocks.allocate_block(sim.MB, RATIS_THREE, "om"))
    _refused_in_safe_mode(lambda: scm.pipelines.create_pipeline(RATIS_THREE))

    # Ozone's safe mode lets an admin close a container: it moves to CLOSING.
    first, second = containers[0], containers[1]
    scm.events.fire(SCMEvent.CLOSE_CONTAINER, first)
    assert scm.containers.get(first).state is LifeCycleState.CLOSING
    assert first in scm.close_containers.pending()
    assert scm.containers.update_state(second, LifeCycleEvent.FINALIZE).state is LifeCycleState.CLOSING
    assert scm.safe_mode.in_safe_mode()

    # The close started in safe mode completes: commands after the lease, CLOSED replicas, CLOSED container.
    assert c.run_until(lambda: scm.containers.get(first).state is LifeCycleState.CLOSED, 5 * sim.MINUTE)
    members = scm.containers.get(first).pipeline_id
    for dn in scm.pipelines.get(members).nodes:
        assert c.datanodes[dn].executed.get(SCMCommandType.closeContainerCommand, 0) >= 1


def test_force_exit_when_the_rules_cannot_pass(sim):
    c = sim.cluster(5, {"hdds.scm.safemode.min.datanode": "10"})
    scm = c.scm
    c.advance(10 * sim.MINUTE)
    assert len(scm.nodes.nodes()) == 5
    assert all(sim.health(c, dn) is NodeState.HEALTHY for dn in c.datanodes)
    assert scm.safe_mode.status is SafeModeStatus.INITIAL
    assert sim.live(scm) == [], "RATIS/THREE pipelines created before the pre-check"
    _refused_in_safe_mode(lambda: scm.blocks.allocate_block(sim.MB, RATIS_THREE, "om"))

    scm.safe_mode.force_exit()
    assert scm.safe_mode.status is SafeModeStatus.OUT_OF_SAFE_MODE
    assert not scm.safe_mode.in_safe_mode() and scm.safe_mode.precheck_passed()
    assert not {r.name for r in scm.safe_mode.rule_statuses() if r.validated} >= {"DataNodeSafeModeRule"}

    # The background creator (every 120s) may now place RATIS/THREE; once they open, blocks allocate.
    creation_interval = scm.settings.pipeline.creation_interval_ms
    assert c.run_until(lambda: sim.live(scm), creation_interval + 2 * sim.SECOND)
    sim.assert_three_invariants(scm)
    assert c.run_until(
        lambda: scm.pipelines.pipelines(RATIS_THREE, PipelineState.OPEN), 2 * sim.HEARTBEAT + 5 * sim.SECOND
    )
    block = c.write_block(sim.MB)
    assert block.pipeline.state is PipelineState.OPEN
