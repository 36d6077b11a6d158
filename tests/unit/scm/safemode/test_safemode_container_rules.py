"""RatisContainerSafeModeRule and ECContainerSafeModeRule (Ozone's container rules)."""

from __future__ import annotations

import pytest

from pyozone.config import ConfigError, OzoneConfiguration
from pyozone.hdds.ids import RATIS_ONE, ReplicationConfig
from pyozone.hdds.states import LifeCycleState
from pyozone.scm.events import SCMEvent

RS_3_2 = ReplicationConfig.parse("EC/RS-3-2-1024k")
RS_6_3 = ReplicationConfig.parse("EC/RS-6-3-1024k")


def _report(h, dn, cids):
    h.events.fire(SCMEvent.CONTAINER_REGISTRATION_REPORT, (dn, list(cids)))


def test_ratis_threshold_arithmetic_at_0_99(make_harness):
    h = make_harness()
    for cid in range(1, 101):
        h.add_container(cid)
    h.build()
    rule = h.rule("RatisContainerSafeModeRule")
    assert rule.total == 100 and rule.cutoff_count == 99
    _report(h, "d1", range(1, 99))
    assert rule.with_min_replicas == 98 and not rule.validate()
    _report(h, "d2", range(1, 99))  # the same containers again: no double count
    assert rule.with_min_replicas == 98
    _report(h, "d2", [99])
    assert rule.validate()
    assert h.statuses_by_name()["RatisContainerSafeModeRule"].validated


def test_ratis_counts_any_factor_on_first_report(make_harness):
    h = make_harness()
    h.add_container(1, config=RATIS_ONE)
    h.add_container(2)
    h.build()
    _report(h, "d1", [1])
    _report(h, "d2", [2])
    assert h.rule("RatisContainerSafeModeRule").with_min_replicas == 2


@pytest.mark.parametrize(
    "state",
    [
        LifeCycleState.OPEN,
        LifeCycleState.CLOSING,
        LifeCycleState.DELETING,
        LifeCycleState.DELETED,
        LifeCycleState.RECOVERING,
    ],
)
def test_containers_not_closed_are_ignored(make_harness, state):
    h = make_harness()
    h.add_container(1, state=state)
    h.add_container(2, state=state, config=RS_3_2)
    h.build()
    assert h.rule("RatisContainerSafeModeRule").total == 0
    assert h.rule("ECContainerSafeModeRule").total == 0


def test_empty_containers_are_ignored_and_quasi_closed_count(make_harness):
    h = make_harness()
    h.add_container(1, keys=0)
    h.add_container(2, state=LifeCycleState.QUASI_CLOSED)
    h.add_container(3, config=RS_3_2, keys=0)
    h.build()
    assert h.rule("RatisContainerSafeModeRule").total == 1
    assert h.rule("ECContainerSafeModeRule").total == 0


def test_no_eligible_containers_passes(make_harness):
    h = make_harness()
    h.add_container(1, state=LifeCycleState.OPEN)
    h.build()
    for name in ("RatisContainerSafeModeRule", "ECContainerSafeModeRule"):
        rule = h.rule(name)
        assert rule.total == 0 and rule.current_threshold() == 1.0 and rule.validate()


def test_ec_needs_data_count_distinct_datanodes(make_harness):
    h = make_harness({"hdds.scm.safemode.threshold.pct": "1.0"})
    h.add_container(1, config=RS_3_2)
    h.add_container(2, config=RS_6_3)
    h.build()
    rule = h.rule("ECContainerSafeModeRule")
    _report(h, "d1", [1, 2])
    _report(h, "d1", [1, 2])  # the same datanode twice is still one
    _report(h, "d2", [1, 2])
    assert rule.with_min_replicas == 0
    _report(h, "d3", [1, 2])
    assert rule.with_min_replicas == 1  # RS-3-2 has its 3 data nodes; RS-6-3 needs 6
    for dn in ("d4", "d5"):
        _report(h, dn, [2])
    assert not rule.validate()
    _report(h, "d6", [2])
    assert rule.validate()


def test_each_rule_counts_only_its_own_type(make_harness):
    h = make_harness()
    h.add_container(1)
    h.add_container(2, config=RS_3_2)
    h.build()
    _report(h, "d1", [2, 99])
    assert h.rule("RatisContainerSafeModeRule").with_min_replicas == 0
    for dn in ("d1", "d2", "d3"):
        _report(h, dn, [1])
    assert h.rule("ECContainerSafeModeRule").with_min_replicas == 0


def test_refresh_drops_deleted_containers_from_a_failing_rule(make_harness):
    h = make_harness()
    for cid in range(1, 101):
        h.add_container(cid)
    h.build()
    rule = h.rule("RatisContainerSafeModeRule")
    _report(h, "d1", range(1, 91))
    for cid in range(91, 101):  # deleted while SCM was down, never to be reported
        h.containers.set_state(cid, LifeCycleState.DELETED)
    assert not rule.validate()
    h.manager.refresh()
    assert (rule.with_min_replicas, rule.total) == (90, 90)
    assert h.statuses_by_name()["RatisContainerSafeModeRule"].validated


def test_refresh_does_not_keep_counting_a_deleted_reported_container(make_harness):
    h = make_harness({"hdds.scm.safemode.threshold.pct": "1.0"})
    for cid in range(1, 4):
        h.add_container(cid)
    h.build()
    rule = h.rule("RatisContainerSafeModeRule")
    _report(h, "d1", [1, 2])
    h.containers.set_state(1, LifeCycleState.DELETED)
    h.manager.refresh()
    assert (rule.with_min_replicas, rule.total) == (1, 2)
    _report(h, "d1", [3])
    assert rule.validate()


@pytest.mark.parametrize(
    "key",
    [
        "hdds.scm.safemode.threshold.pct",
        "hdds.scm.safemode.healthy.pipeline.pct",
        "hdds.scm.safemode.atleast.one.node.reported.pipeline.pct",
    ],
)
def test_percent_outside_unit_interval_is_refused(key):
    """Refused when parsed (a fraction key), so SafeModeSettings only ever holds a value in [0, 1]."""
    with pytest.raises(ConfigError, match=key):
        OzoneConfiguration({key: "1.01"})
