"""An iteration's choices over a real core: which datanodes are sources and targets, which containers
may move (each refusal of ContainerBalancerSelectionCriteria), targets that keep the placement policy, and
the per-iteration limits."""

from __future__ import annotations

from pyozone.config import OzoneConfiguration
from pyozone.hdds.balancer import IterationResult
from pyozone.hdds.datanode import NodeReport, StorageReport
from pyozone.hdds.states import NodeOperationalState
from pyozone.scm.balancer.iteration import BalancerIteration
from pyozone.scm.settings import ScmSettings
from tests.builders import node_report
from tests.unit.scm.balancer.balancer_harness import CB, LOOSE, BalancerHarness


def iteration(h: BalancerHarness, **overrides: str) -> BalancerIteration:
    conf = OzoneConfiguration({**LOOSE, **{CB + k: v for k, v in overrides.items()}})
    config = ScmSettings.from_conf(conf).balancer
    h.moves.set_timeouts(config.move_timeout_ms, config.move_replication_timeout_ms)
    return BalancerIteration(1, config, h.scm.nodes, h.scm.containers, h.rm, h.moves, h.clock.now_ms())


def skewed(datanodes: int = 6, racks: int = 1, **overrides: str) -> BalancerHarness:
    """dn0 80% used, dn5 empty, the others at 40% (average 40%)."""
    h = BalancerHarness(datanodes, racks, overrides)
    for i in range(datanodes):
        h.set_used(i, 40)
    h.set_used(0, 80)
    h.set_used(datanodes - 1, 0)
    return h


def test_over_and_under_utilized_datanodes() -> None:
    h = skewed()
    it = iteration(h)
    assert it.over == [h.dns[0]] and it.under == [h.dns[5]]
    assert round(it.average, 3) == 0.4 and round(it.upper_limit, 3) == 0.5


def test_excluded_and_not_included_datanodes_are_left_out() -> None:
    """exclude.datanodes by hostname or IP; include.datanodes, when set, the only ones weighed."""
    h = skewed()
    d = h.dns
    excluded = iteration(h, **{"exclude.datanodes": "dn0.test,10.0.0.6"})
    assert d[0] not in excluded.usages and d[5] not in excluded.usages and excluded.over == []
    included = iteration(h, **{"include.datanodes": "dn0.test,dn1.test,dn5.test"})
    assert set(included.usages) == {d[0], d[1], d[5]}


def test_a_datanode_reporting_no_capacity_is_not_a_target() -> None:
    """R24 D6: every data volume failed; utilization 0 must not make it the first target."""
    h = BalancerHarness()
    for i in range(6):
        h.set_used(i, 40)
    h.set_used(0, 80)
    failed = StorageReport("d0", "/data/d0", 0, 0, 0, failed=True)
    h.scm.nodes.process_node_report(h.dns[5], NodeReport((failed,), node_report().metadata_storage))
    it = iteration(h)
    assert h.dns[5] not in it.under and h.dns[5] not in it.over


def test_balanced_cluster_is_not_unbalanced() -> None:
    h = BalancerHarness()
    for i in range(6):
        h.set_used(i, 40 + i)  # within 10 points of the average
    assert not iteration(h).unbalanced


def test_moves_go_from_the_over_utilized_to_the_under_utilized() -> None:
    h = skewed()
    d = h.dns
    cids = [h.container([d[0], d[1], d[2]]) for _ in range(3)]
    it = iteration(h)
    it.select()
    assert it.result is None
    assert {(dn, c.target.uuid) for dn, c in h.replicates()} == {(d[0], d[5])}
    assert set(it.container_to_pair) == set(cids)
    assert it.size_scheduled == 3 * (1 << 30)


def test_each_refused_container_stays() -> None:
    h = skewed()
    d = h.dns
    on = [d[0], d[1], d[2]]
    open_ = h.container(on, state="OPEN")
    replica_not_closed = h.container(on, state="CLOSED", replica_state="QUASI_CLOSED")
    under = h.container([d[0], d[1]])
    h.rm.process_all()  # the RM's last check finds it under-replicated
    pending = h.container(on)
    h.rm.sender.send_delete(h.scm.containers.get(pending), d[2], 0, force=False, throttled=False)
    excluded = h.container(on)
    empty = h.container(on)
    h.scm.containers.update_stats(empty, 10, 0, 5)
    movable = h.container(on)
    it = iteration(h, **{"exclude.containers": str(excluded)})
    it.sources.reset([d[0]])
    for cid in (open_, replica_not_closed, under, pending, excluded, empty):
        assert it.criteria.should_be_excluded(cid, d[0], 0), cid
    assert not it.criteria.should_be_excluded(movable, d[0], 0)
    assert it.criteria.should_be_excluded(movable, d[0], 100 << 30)  # past size.moved.max.per.iteration
    it.select()
    assert set(it.container_to_pair) == {movable}


def test_a_container_already_moving_is_not_selected() -> None:
    h = skewed()
    d = h.dns
    cid = h.container([d[0], d[1], d[2]])
    assert h.moves.move(cid, d[1], d[4]) is None
    it = iteration(h)
    it.select()
    assert it.container_to_pair == {}
    assert it.result is IterationResult.CAN_NOT_BALANCE_ANY_MORE


def test_target_keeps_rack_placement() -> None:
    """Racks alternate (dn0, dn2, dn4 on rack1): a container on dn0 (rack1) and dn1, dn3 (rack2) may not
    go from dn0 to dn5 (rack2: all three on one rack), only to a rack1 target."""
    h = BalancerHarness(6, racks=2)
    d = h.dns
    for i in range(6):
        h.set_used(i, 40)
    h.set_used(0, 80)
    h.set_used(5, 0)
    h.set_used(4, 10)
    cid = h.container([d[0], d[1], d[3]])
    it = iteration(h)
    it.select()
    assert it.container_to_pair[cid].target == d[4]


def test_target_already_holding_an_ec_index_is_skipped() -> None:
    h = BalancerHarness(7)
    d = h.dns
    for i in range(7):
        h.set_used(i, 40)
    h.set_used(0, 90)
    h.set_used(1, 0)  # the least used, but it holds index 2
    h.set_used(5, 5)
    cid = h.container(d[0:5], config="EC/rs-3-2-1024k")
    it = iteration(h)
    it.select()
    assert it.container_to_pair[cid].target == d[5]


def test_size_entering_target_limits_an_iteration() -> None:
    h = skewed()
    d = h.dns
    for _ in range(6):
        h.container([d[0], d[1], d[2]])
    it = iteration(h, **{"size.entering.target.max": "3GB"})  # the other limits loose (LOOSE: 10GB)
    it.select()
    assert len(it.container_to_pair) == 3


def test_size_moved_per_iteration_limits_an_iteration() -> None:
    h = skewed()
    d = h.dns
    for _ in range(6):
        h.container([d[0], d[1], d[2]])
    it = iteration(h, **{"size.moved.max.per.iteration": "2GB"})
    it.select()
    assert len(it.container_to_pair) == 2


def test_size_leaving_source_limits_an_iteration() -> None:
    h = skewed()
    d = h.dns
    h.set_used(4, 0)  # a second empty target: no target's entering limit binds first
    for _ in range(6):
        h.container([d[0], d[1], d[2]])
    it = iteration(h, **{"size.leaving.source.max": "2GB"})
    it.select()
    assert len(it.container_to_pair) == 2
    assert {pair.source for pair in it.container_to_pair.values()} == {d[0]}


def two_sources_two_targets() -> BalancerHarness:
    """Ten datanodes at 40 % but dn0 and dn1 at 80 % (each with three containers to give) and dn8 and
    dn9 empty."""
    h = BalancerHarness(10)
    d = h.dns
    for i in range(10):
        h.set_used(i, 40)
    h.set_used(0, 80)
    h.set_used(1, 80)
    h.set_used(8, 0)
    h.set_used(9, 0)
    for _ in range(3):
        h.container([d[0], d[2], d[3]])
        h.container([d[1], d[2], d[3]])
    return h


def test_datanodes_involved_limit() -> None:
    """Two sources, two targets, a limit of 2 datanodes: one source and one target are all it uses."""
    h = two_sources_two_targets()
    it = iteration(h, **{"datanodes.involved.max.percentage.per.iteration": "20"})
    it.select()
    assert it.datanodes_involved == 2
    assert len({p.source for p in it.container_to_pair.values()}) == 1


def test_one_datanode_below_the_involved_limit_only_chosen_targets_take_more() -> None:
    """Ozone's adaptWhenNearingIterationLimits: at the limit less one, the targets are those already
    chosen, so a limit of 3 takes a second source to the first target, never a second target."""
    h = two_sources_two_targets()
    it = iteration(h, **{"datanodes.involved.max.percentage.per.iteration": "30"})
    it.select()
    pairs = it.container_to_pair.values()
    assert it.datanodes_involved == 3
    assert len({p.source for p in pairs}) == 2 and len({p.target for p in pairs}) == 1


def test_decommissioning_datanode_takes_no_part() -> None:
    h = skewed()
    h.set_op_state(h.dns[5], NodeOperationalState.DECOMMISSIONING)
    it = iteration(h)
    assert h.dns[5] not in it.usages and h.dns[5] not in it.under


def test_without_over_utilized_datanodes_those_above_average_give() -> None:
    """pyozone (docs/differences.md): empty datanodes added to an even cluster are filled from the
    datanodes above the average, none of which goes below it."""
    h = BalancerHarness(6)
    d = h.dns
    for i in range(5):
        h.set_used(i, 45)
    h.set_used(5, 0)
    for _ in range(20):
        h.container([d[0], d[1], d[2]])
    it = iteration(h)
    assert it.over == [] and it.under == [d[5]]
    it.select()
    assert it.container_to_pair
    # 7.5 GB may leave each source before it reaches the average (37.5%)
    assert all(size <= 7.5 * (1 << 30) for size in it.sources.size_leaving.values())
