"""DataNodeSafeModeRule (the pre-check) and ECMinDataNodeSafeModeRule."""

from __future__ import annotations

import pytest

from pyozone.config import ConfigError
from pyozone.hdds.safemode_status import SafeModeStatus


def test_datanode_rule_counts_distinct_datanodes(make_harness):
    h = make_harness({"hdds.scm.safemode.min.datanode": "3"})
    h.build()
    rule = h.rule("DataNodeSafeModeRule")
    for dn in ("d1", "d2", "d1", "d2", "d2"):  # re-registrations after restarts
        h.register(dn)
    assert rule.registered_dns == 2
    assert not rule.validate()
    assert h.manager.status is SafeModeStatus.INITIAL
    h.register("d3")
    assert rule.validate()
    assert h.manager.status is SafeModeStatus.PRE_CHECKS_PASSED


def test_datanode_rule_is_the_only_pre_check(make_harness):
    h = make_harness()
    h.build()
    assert [s.name for s in h.manager.rule_statuses() if s.pre_check] == ["DataNodeSafeModeRule"]


def test_ec_min_datanode_rule_needs_data_plus_parity_when_ec_is_default(make_harness):
    h = make_harness(
        {
            "hdds.scm.safemode.min.datanode": "1",
            "ozone.replication.type": "EC",
            "ozone.replication": "rs-6-3-1024k",
        }
    )
    h.build()
    rule = h.rule("ECMinDataNodeSafeModeRule")
    assert rule.required_dns == 9
    for i in range(1, 9):
        h.register(f"d{i}")
        h.register(f"d{i}")
    assert rule.registered_dns == 8 and not rule.validate()
    assert h.statuses_by_name()["ECMinDataNodeSafeModeRule"].status_text == (
        "EC (EC/RS-6-3-1024k) safemode: registered datanodes (=8) >= required datanodes (=9)"
    )
    h.register("d9")
    assert rule.validate()


def test_ec_min_datanode_rule_always_passes_without_ec_default(make_harness):
    h = make_harness({"ozone.replication": "rs-6-3-1024k"})  # type stays RATIS
    h.build()
    rule = h.rule("ECMinDataNodeSafeModeRule")
    assert rule.validate()
    h.register("d1")
    assert rule.registered_dns == 0


def test_ec_default_with_a_non_ec_replication_is_a_config_error(make_harness):
    h = make_harness({"ozone.replication.type": "EC", "ozone.replication": "3"})
    with pytest.raises(ConfigError, match=r"ozone\.replication"):
        h.build()
