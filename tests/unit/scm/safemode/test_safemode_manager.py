"""SafeModeManager: the one-way status progression and exit once every rule is validated (Ozone's
SCMSafeModeManager)."""

from __future__ import annotations

import pytest

from pyozone.hdds.exceptions import ResultCode, SCMException
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.safemode_status import SafeModeStatus
from pyozone.scm.events import SCMEvent
from pyozone.scm.safemode.manager import SafeModeManager, check_not_in_safe_mode
from pyozone.scm.settings import ScmSettings

RS_3_2 = ReplicationConfig.parse("EC/RS-3-2-1024k")
ALL_RULES = {
    "DataNodeSafeModeRule",
    "ECMinDataNodeSafeModeRule",
    "RatisContainerSafeModeRule",
    "ECContainerSafeModeRule",
    "HealthyPipelineSafeModeRule",
    "OneReplicaPipelineSafeModeRule",
}
# EC default, so that ECMinDataNodeSafeModeRule matters (needs 5 DNs); RATIS/THREE creation stays on, so
# the pipeline rules are registered too.
EC_DEFAULT = {"ozone.replication.type": "EC", "ozone.replication": "rs-3-2-1024k"}

# The knob that makes exactly one rule fail in `_scenario`.
HOLD_BACK = {
    "DataNodeSafeModeRule": {"conf": {"hdds.scm.safemode.min.datanode": "6"}},
    "ECMinDataNodeSafeModeRule": {"conf": {"ozone.replication": "rs-6-3-1024k"}},
    "RatisContainerSafeModeRule": {"unreported_container": None},
    "ECContainerSafeModeRule": {"unreported_container": RS_3_2},
    "HealthyPipelineSafeModeRule": {"skip": "open"},
    "OneReplicaPipelineSafeModeRule": {"skip": "report"},
}


def _scenario(make_harness, conf=None, unreported_container=False, skip=None):
    """5 datanodes, a Ratis and an EC container, two RATIS/THREE pipelines; every rule can pass."""
    h = make_harness({**EC_DEFAULT, **(conf or {})})
    h.add_container(1)
    h.add_container(2, config=RS_3_2)
    if unreported_container is not False:
        h.add_container(3, **({"config": unreported_container} if unreported_container else {}))
    h.add_pipeline("p1", ("d1", "d2", "d3"))
    h.add_pipeline("p2", ("d3", "d4", "d5"))
    h.build()
    for dn, cids in [("d1", [1, 2]), ("d2", [2]), ("d3", [2]), ("d4", []), ("d5", [])]:
        h.register(dn, cids)
    for pid in ("p1", "p2"):
        if skip != "open":
            h.open_pipeline(pid)
        if skip != "report":
            h.report_pipelines("d3", [pid])
    return h


def test_all_rules_passing_exits_safe_mode(make_harness):
    h = _scenario(make_harness)
    assert {s.name for s in h.manager.rule_statuses()} == ALL_RULES
    assert h.failing() == set()
    assert h.manager.status is SafeModeStatus.OUT_OF_SAFE_MODE
    assert not h.manager.in_safe_mode()
    assert h.manager.exited_at_ms == h.clock.now_ms()
    assert h.statuses == [SafeModeStatus.PRE_CHECKS_PASSED, SafeModeStatus.OUT_OF_SAFE_MODE]


@pytest.mark.parametrize("rule", sorted(HOLD_BACK))
def test_each_rule_alone_keeps_scm_in_safe_mode(make_harness, rule):
    h = _scenario(make_harness, **HOLD_BACK[rule])
    h.manager.refresh()
    assert h.failing() == {rule}
    assert h.manager.in_safe_mode()
    assert h.manager.exited_at_ms is None
    expected = SafeModeStatus.INITIAL if rule == "DataNodeSafeModeRule" else SafeModeStatus.PRE_CHECKS_PASSED
    assert h.manager.status is expected


def test_pre_check_comes_first_then_exit(make_harness):
    h = make_harness({"hdds.scm.safemode.min.datanode": "3"})
    h.add_container(1)
    h.add_pipeline("p1")
    h.build()
    h.register("d1", [1])  # the container rule passes before enough datanodes registered
    assert h.statuses_by_name()["RatisContainerSafeModeRule"].validated
    assert h.manager.status is SafeModeStatus.INITIAL
    assert not h.manager.precheck_passed()
    h.register("d2")
    h.register("d3")
    assert h.manager.status is SafeModeStatus.PRE_CHECKS_PASSED
    assert h.manager.precheck_passed() and h.manager.in_safe_mode()
    h.open_pipeline("p1")
    h.report_pipelines("d1", ["p1"])
    assert h.manager.status is SafeModeStatus.OUT_OF_SAFE_MODE
    assert h.statuses == [SafeModeStatus.PRE_CHECKS_PASSED, SafeModeStatus.OUT_OF_SAFE_MODE]


def test_pre_check_passing_last_moves_through_both_steps_in_order(make_harness):
    h = make_harness({"hdds.scm.safemode.min.datanode": "1"})
    h.add_pipeline("p1")
    h.build()
    h.open_pipeline("p1")
    h.report_pipelines("d1", ["p1"])
    h.events.fire(SCMEvent.CONTAINER_REGISTRATION_REPORT, ("d1", []))
    assert h.failing() == {"DataNodeSafeModeRule"}
    assert h.manager.status is SafeModeStatus.INITIAL  # everything else passed, yet no exit
    h.register("d1")
    assert h.statuses == [SafeModeStatus.PRE_CHECKS_PASSED, SafeModeStatus.OUT_OF_SAFE_MODE]
    assert h.prechecks_completed == 1


def test_pre_check_completed_fires_exactly_once(make_harness):
    h = make_harness({"hdds.scm.safemode.min.datanode": "2"})
    h.add_container(1)
    h.build()
    for dn in ("d1", "d2", "d3", "d1", "d4"):
        h.register(dn)
    h.manager.refresh()
    assert h.manager.status is SafeModeStatus.PRE_CHECKS_PASSED
    assert h.prechecks_completed == 1


def test_force_exit_skips_the_rules(make_harness):
    h = make_harness()
    h.build()
    h.clock.advance(500)
    h.manager.force_exit()
    assert h.manager.status is SafeModeStatus.OUT_OF_SAFE_MODE
    assert h.manager.precheck_passed()
    assert h.manager.exited_at_ms == 1_500
    assert h.statuses == [SafeModeStatus.OUT_OF_SAFE_MODE]
    assert h.prechecks_completed == 0
    h.clock.advance(500)
    h.manager.force_exit()  # already out: no new status, exit time kept
    assert h.statuses == [SafeModeStatus.OUT_OF_SAFE_MODE]
    assert h.manager.exited_at_ms == 1_500


def test_events_after_exit_are_ignored(make_harness):
    h = make_harness()
    h.build()
    h.manager.force_exit()
    h.register("d1", [1])
    assert h.rule("DataNodeSafeModeRule").registered_dns == 0


def test_disabled_safe_mode_is_out_from_construction(make_harness):
    h = make_harness({"hdds.scm.safemode.enabled": "false"})
    h.add_container(1)
    manager = h.build()
    assert manager.status is SafeModeStatus.OUT_OF_SAFE_MODE
    assert not manager.in_safe_mode() and manager.precheck_passed()
    assert manager.exited_at_ms == h.clock.now_ms()
    assert h.statuses == []  # no change happened; start() announces the status to late listeners
    manager.start()
    assert h.statuses == [SafeModeStatus.OUT_OF_SAFE_MODE]


def test_refresh_revalidates_rules_without_events(make_harness):
    h = make_harness({"hdds.scm.safemode.min.datanode": "0"})
    h.build()
    assert h.manager.status is SafeModeStatus.INITIAL  # nothing validated until an event or a refresh
    h.manager.refresh()
    # No pipelines and min.datanode 0: every threshold is 0.
    assert h.manager.status is SafeModeStatus.OUT_OF_SAFE_MODE


def test_refresh_only_reinitialises_failing_rules(make_harness):
    h = make_harness({"hdds.scm.safemode.min.datanode": "3"})
    h.add_pipeline("p1")
    h.build()
    h.open_pipeline("p1")
    assert h.statuses_by_name()["HealthyPipelineSafeModeRule"].validated
    for i in range(2, 40):
        h.add_pipeline(f"p{i}")
    h.manager.refresh()
    assert h.rule("HealthyPipelineSafeModeRule").threshold == 1  # validated: not re-read
    # OneReplica still failed (p1 never reported), so it re-read the open pipelines: ceil(0.9 x 39).
    assert h.rule("OneReplicaPipelineSafeModeRule").threshold == 36


def test_pipeline_rules_skipped_when_ec_default_without_ratis_three(make_harness):
    h = make_harness({**EC_DEFAULT, "ozone.scm.pipeline.creation.ratis.three": "false"})
    h.build()
    assert {s.name for s in h.manager.rule_statuses()} == ALL_RULES - {
        "HealthyPipelineSafeModeRule",
        "OneReplicaPipelineSafeModeRule",
    }


def test_rule_statuses_texts(make_harness):
    h = make_harness()
    h.add_container(7)
    h.add_pipeline("p1")
    h.build()
    h.register("d1")
    h.register("d2")
    rows = h.statuses_by_name()
    assert [r.name for r in rows.values() if r.pre_check] == ["DataNodeSafeModeRule"]
    assert rows["DataNodeSafeModeRule"].status_text == (
        "registered datanodes (=2) >= required datanodes (=3)"
    )
    assert not rows["DataNodeSafeModeRule"].validated
    assert rows["ECMinDataNodeSafeModeRule"].status_text == (
        "ECMinDataNodeSafeModeRule is not applicable (default replication is not EC)"
    )
    assert rows["ECMinDataNodeSafeModeRule"].validated
    assert rows["RatisContainerSafeModeRule"].status_text == (
        "0.00% of [RATIS] Containers(0 / 1) with at least N reported replica (=0.00) >= safeModeCutoff "
        "(=0.99);\nSample RATIS Containers not satisfying the criteria : [7];"
    )
    assert rows["ECContainerSafeModeRule"].status_text.startswith(
        "100.00% of [EC] Containers(0 / 0) with at least N reported replica (=1.00)"
    )
    assert rows["HealthyPipelineSafeModeRule"].status_text == (
        "healthy RATIS/THREE pipelines (=0) >= healthyPipelineThresholdCount (=1)\n"
        "Sample pipelines not satisfying the criteria : ['p1']"
    )
    assert rows["OneReplicaPipelineSafeModeRule"].status_text == (
        "reported Ratis/THREE pipelines with at least one datanode (=0) >= threshold (=1)\n"
        "Sample pipelines not satisfying the criteria : ['p1']"
    )


def test_check_not_in_safe_mode(make_harness):
    h = make_harness()
    h.build()
    with pytest.raises(SCMException) as err:
        check_not_in_safe_mode(h.manager, "Allocate block")
    assert err.value.code is ResultCode.SAFE_MODE_EXCEPTION
    assert str(err.value) == "SAFE_MODE_EXCEPTION: Allocate block is not allowed in safe mode"
    h.manager.force_exit()
    check_not_in_safe_mode(h.manager, "Allocate block")


def test_no_pipeline_rules_without_a_pipeline_manager(make_harness):
    h = make_harness()
    manager = SafeModeManager(ScmSettings.from_conf(h.conf), h.clock, h.events, h.nodes, None, h.containers)
    assert {s.name for s in manager.rule_statuses()} == ALL_RULES - {
        "HealthyPipelineSafeModeRule",
        "OneReplicaPipelineSafeModeRule",
    }


def test_ha_rules_validated_on_stale_records_are_judged_again_once_ready(make_harness):
    """Review R17 D1: an HA SCM restarted behind the log read an scm.db without the containers closed
    while it was down (0 eligible: the container rule passes at once). Once it caught up, the rules
    re-read the records (SafeModeManager.reinitialize, as Ozone refreshes them when the state machine is
    ready), counting the replicas already reported to it, and safe mode waits for the others."""
    ready = [False]
    h = make_harness({"hdds.scm.safemode.min.datanode": "1"})
    h.build(lambda: ready[0])
    h.register("d1")
    assert h.failing() == {"StateMachineReadyRule"}  # the container rules passed on 0 containers
    h.add_container(1)  # applied from the log
    h.add_container(2)
    h.containers.replica_dns[1] = ("d1",)
    ready[0] = True
    h.manager.reinitialize()
    h.events.fire(SCMEvent.STATEMACHINE_READY, True)
    assert h.manager.in_safe_mode() and h.failing() == {"RatisContainerSafeModeRule"}
    assert (
        h.rule("RatisContainerSafeModeRule").total,
        h.rule("RatisContainerSafeModeRule").with_min_replicas,
    ) == (2, 1)
    h.register("d2", [2])
    assert h.manager.status is SafeModeStatus.OUT_OF_SAFE_MODE


def test_ha_exit_is_judged_on_the_records_of_the_moment(make_harness):
    """Records applied after a rule passed (a container closed since): the exit re-reads them first."""
    ready = [False]
    h = make_harness({"hdds.scm.safemode.min.datanode": "1"})
    h.build(lambda: ready[0])
    h.register("d1")
    h.manager.refresh()
    assert h.failing() == {"StateMachineReadyRule"}
    h.add_container(1)
    ready[0] = True
    h.events.fire(SCMEvent.STATEMACHINE_READY, True)  # the last rule passes: the exit finds 1 unreported
    assert h.manager.in_safe_mode() and h.failing() == {"RatisContainerSafeModeRule"}
    h.register("d2", [1])
    assert h.manager.status is SafeModeStatus.OUT_OF_SAFE_MODE
