"""pyozone's ops-per-node limit (Ozone's "Replication Manager" doc, "Future Ideas"): its counter, its keys,
and its iteration in the Replication Manager."""

from __future__ import annotations

import pytest

from pyozone.config import ConfigError, OzoneConfiguration
from pyozone.scm.replication.node_ops import NodeOpsCounter
from pyozone.scm.settings import ScmSettings
from tests.unit.scm.replication.rm_harness import RMHarness

ENABLED = "hdds.scm.replication.datanode.ops.limit.enabled"
LIMIT = "hdds.scm.replication.datanode.ops.limit"


def test_off_by_default_counts_and_excludes_nothing() -> None:
    config = ScmSettings().replication
    assert (config.datanode_ops_limit_enabled, config.datanode_ops_limit, config.node_ops_limit) == (
        False,
        10,
        0,
    )
    ops = NodeOpsCounter(config.node_ops_limit)
    ops.charge(["a"] * 50)
    assert not ops.enabled
    assert (ops.count("a"), ops.is_saturated("a"), ops.saturated()) == (0, False, [])


def test_the_keys_turn_it_on_with_their_limit() -> None:
    config = ScmSettings.from_conf(OzoneConfiguration({ENABLED: "true", LIMIT: "4"})).replication
    assert config.node_ops_limit == 4


@pytest.mark.parametrize("value", ["0", "-2"])
def test_a_limit_below_one_is_refused_naming_the_key(value: str) -> None:
    with pytest.raises(ConfigError, match=LIMIT):
        ScmSettings.from_conf(OzoneConfiguration({LIMIT: value}))


def test_a_node_at_the_threshold_is_saturated_until_reset() -> None:
    ops = NodeOpsCounter(2)
    ops.charge(["a", "b"])
    assert ops.saturated() == []
    ops.charge(["a"])
    assert (ops.count("a"), ops.is_saturated("a"), ops.is_saturated("b")) == (2, True, False)
    assert ops.saturated() == ["a"]
    ops.reset()
    assert (ops.count("a"), ops.saturated()) == (0, [])


def test_sources_skip_saturated_copies_and_prefer_the_least_charged_indexes() -> None:
    ops = NodeOpsCounter(2)
    ops.charge(["n1", "n1", "n2", "n5"])  # n1 saturated, n2 and n5 one unit each
    copies = {1: ["n1", "n1b"], 2: ["n2"], 3: ["n3"], 4: ["n4"], 5: ["n5"]}
    # index 1 falls back to its other copy; of n1b, n3, n4 (0 units) and n2, n5 (1), three at 0 win
    assert ops.choose_sources(copies, 3) == [("n1b", 1), ("n3", 3), ("n4", 4)]
    # ties in the charge go to the lower index
    assert ops.choose_sources(copies, 4) == [("n1b", 1), ("n2", 2), ("n3", 3), ("n4", 4)]


def test_too_few_unsaturated_sources_defer() -> None:
    ops = NodeOpsCounter(1)
    ops.charge(["n1", "n2"])
    assert ops.choose_sources({1: ["n1"], 2: ["n2"], 3: ["n3"], 4: ["n4"]}, 3) is None
    assert ops.choose_sources({1: ["n1"], 2: ["n2"], 3: ["n3"], 4: ["n4"]}, 2) == [("n3", 3), ("n4", 4)]


def test_scheduled_iterations_reset_the_counts_node_events_do_not() -> None:
    h = RMHarness(overrides={ENABLED: "true", LIMIT: "3"})
    ops = h.rm.sender.node_ops
    ops.charge([h.dns[0]] * 3)
    h.rm.on_node_notify(h.dns[1])  # a node event's pass belongs to the current iteration
    assert ops.is_saturated(h.dns[0])
    h.rm.process_under_replicated()  # the scheduled pass starts a new one
    assert ops.count(h.dns[0]) == 0
