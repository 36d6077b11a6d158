"""The balancer's run on SCM's ticks: start and stop with their refusals, iterations with their results,
the limits that end a run (threshold reached, iterations done, nothing to move), move timeouts, and the
persisted state across a step-down, a new leader and a restart."""

from __future__ import annotations

import pytest

from pyozone.config import OzoneConfiguration
from pyozone.hdds.balancer import IterationResult, IterationStatus
from pyozone.hdds.clock import ManualClock
from pyozone.hdds.commands import ReplicationCommandPriority
from pyozone.hdds.container_health import ContainerHealthState
from pyozone.hdds.limits import MAX_ADMIN_MESSAGE_BYTES
from pyozone.protocol import admin_balancer as wire
from pyozone.scm.balancer.balancer import (
    HISTORY_LIMIT,
    ContainerBalancerStatus,
    IllegalContainerBalancerStateError,
)
from pyozone.scm.balancer.config import (
    ContainerBalancerConfiguration,
    InvalidContainerBalancerConfigurationError,
)
from pyozone.scm.ha.context import ScmContext
from pyozone.scm.scm import StorageContainerManager
from pyozone.scm.settings import ScmSettings
from pyozone.scm.store import SCMMetadataStore
from tests.unit.scm.balancer.balancer_harness import CB, LOOSE, BalancerHarness

MINUTE = 60_000
RUNNING, STOPPED = ContainerBalancerStatus.RUNNING, ContainerBalancerStatus.STOPPED
NORMAL = ReplicationCommandPriority.NORMAL


def skewed(h: BalancerHarness, containers: int = 3) -> list[int]:
    """dn0 80% used, dn5 empty, the others at 40%; `containers` movable ones on dn0, dn1, dn2."""
    for i in range(len(h.dns)):
        h.set_used(i, 40)
    h.set_used(0, 80)
    h.set_used(len(h.dns) - 1, 0)
    return [h.container(h.dns[0:3]) for _ in range(containers)]


def balanced(h: BalancerHarness) -> None:
    for i in range(len(h.dns)):
        h.set_used(i, 40)


def complete_moves(h: BalancerHarness) -> None:
    """Every queued replicate lands on its target, then every queued delete runs."""
    for _, command in h.replicates():
        h.report_copy(command.container_id, command.target.uuid, command.replica_index)
    for dn, command in h.deletes():
        h.remove_replica(command.container_id, dn)
    h.drain()


def test_start_refused_in_safe_mode() -> None:
    scm = StorageContainerManager(ScmSettings(), ManualClock(), SCMMetadataStore.in_memory())
    with pytest.raises(IllegalContainerBalancerStateError, match="SCM is in safe mode"):
        scm.balancer.start()
    assert scm.balancer.persisted() is None


def test_start_refused_on_a_follower() -> None:
    h = BalancerHarness(context=ScmContext.ha_leader(1))
    h.replication.step_down(2, "scm2", None, "test")
    with pytest.raises(IllegalContainerBalancerStateError, match="not leader ready"):
        h.balancer.start()


def test_start_refuses_a_bad_configuration_and_persists_nothing() -> None:
    h = BalancerHarness()
    config = h.balancer.default_config.with_options(max_size_entering_target=1 << 30)
    with pytest.raises(InvalidContainerBalancerConfigurationError, match=r"size\.entering\.target\.max"):
        h.balancer.start(config)
    assert h.balancer.status is STOPPED and h.balancer.persisted() is None


def test_start_twice_is_refused() -> None:
    h = BalancerHarness()
    h.balancer.start()
    with pytest.raises(IllegalContainerBalancerStateError, match="actually RUNNING"):
        h.balancer.start()


def test_an_iteration_moves_then_the_run_stops_once_balanced() -> None:
    h = BalancerHarness()
    cids = skewed(h)
    h.balancer.start()
    assert h.balancer.persisted()["shouldRun"] is True
    h.scm.tick()
    assert len(h.replicates()) == 3
    assert h.balancer.iteration_statuses()[0].result is None  # under way
    complete_moves(h)
    h.scm.tick()
    [first] = h.balancer.iteration_statuses()
    assert first.result is IterationResult.ITERATION_COMPLETED
    assert (first.moves_scheduled, first.moves_completed, first.moves_failed, first.moves_timed_out) == (
        3,
        3,
        0,
        0,
    )
    assert first.size_moved == 3 * (1 << 30) and first.datanodes_involved == 2
    assert h.balancer.persisted()["nextIterationIndex"] == 1
    for cid in cids:
        assert h.dns[0] not in {r.datanode for r in h.scm.containers.replicas(cid)}
        assert h.rm.check_container_status(cid) is ContainerHealthState.HEALTHY
    balanced(h)  # the node reports now show the moved bytes
    h.clock.advance(10 * MINUTE)
    h.scm.tick()
    assert h.balancer.status is STOPPED
    assert h.balancer.stop_reason == "Could not initialize ContainerBalancer's iteration number 1"
    assert h.balancer.persisted()["shouldRun"] is False


def test_a_second_run_counts_only_its_own_moves() -> None:
    """Reread A5: `run_metrics` (the simulator's rows) restart with each run; `metrics` (/prom) keep
    counting since SCM started."""
    h = BalancerHarness()
    skewed(h, containers=6)
    h.balancer.start(h.balancer.default_config.with_options(max_size_entering_target=3 << 30))
    h.scm.tick()
    complete_moves(h)
    h.scm.tick()
    h.balancer.stop()
    assert (h.balancer.run_metrics.num_container_moves_completed, h.balancer.metrics.num_iterations) == (3, 1)
    h.balancer.start()
    assert h.balancer.run_metrics.num_container_moves_completed == 0
    h.scm.tick()
    h.balancer.stop()
    assert h.balancer.run_metrics.num_container_moves_failed == 0
    assert (h.balancer.run_metrics.num_iterations, h.balancer.metrics.num_iterations) == (1, 2)
    assert h.balancer.metrics.num_container_moves_completed == 3


def test_the_next_iteration_waits_the_interval() -> None:
    h = BalancerHarness()
    skewed(h, containers=6)
    h.balancer.start(h.balancer.default_config.with_options(max_size_entering_target=3 << 30))
    h.scm.tick()
    complete_moves(h)
    h.scm.tick()
    h.clock.advance(10 * MINUTE - 1)
    h.scm.tick()
    assert h.replicates() == [] and len(h.balancer.iteration_statuses()) == 1
    h.clock.advance(1)
    h.scm.tick()
    assert len(h.replicates()) == 3 and len(h.balancer.iteration_statuses()) == 2


def test_the_run_stops_after_its_iterations() -> None:
    h = BalancerHarness()
    skewed(h)
    h.balancer.start(h.balancer.default_config.with_options(iterations=1))
    h.scm.tick()
    complete_moves(h)
    h.scm.tick()
    assert h.balancer.status is STOPPED and h.balancer.stop_reason == "Completed all iterations."
    assert h.balancer.persisted()["shouldRun"] is False
    info = h.balancer.status_info()  # what `status -v` shows of the run that stopped
    assert (info.running, info.stop_reason) == (False, "Completed all iterations.")
    assert info.stopped_at_s is not None and info.stopped_at_s >= info.started_at_s
    assert [s.result for s in info.iterations] == [IterationResult.ITERATION_COMPLETED]
    assert info.iterations[0].moves_completed > 0


def test_nothing_movable_stops_the_run() -> None:
    h = BalancerHarness()
    skewed(h, containers=0)
    h.balancer.start()
    h.scm.tick()
    assert h.balancer.status is STOPPED
    assert h.balancer.stop_reason == "CAN_NOT_BALANCE_ANY_MORE"
    assert h.balancer.iteration_statuses()[-1].result is IterationResult.CAN_NOT_BALANCE_ANY_MORE


def test_moves_whose_copies_never_land_end_at_the_replication_timeout() -> None:
    h = BalancerHarness()
    skewed(h)
    h.balancer.start()
    h.scm.tick()
    h.clock.advance(65 * MINUTE)
    h.scm.tick()
    [first] = h.balancer.iteration_statuses()
    assert first.moves_timed_out == 3 and first.moves_completed == 0
    assert h.moves.pending == {}


def test_moves_stuck_in_their_delete_count_as_timed_out_at_the_move_timeout() -> None:
    """The copies land but the sources' deletes are never carried out: only move.timeout (65 min) ends
    the moves, not the replication's 50 min."""
    h = BalancerHarness()
    skewed(h)
    h.balancer.start()
    h.scm.tick()
    for _, command in h.replicates():
        h.report_copy(command.container_id, command.target.uuid, command.replica_index)
    h.drain()  # the deletes are sent and never carried out
    h.clock.advance(65 * MINUTE)
    for dn in h.dns:
        h.scm.nodes.process_heartbeat(dn)
    h.scm.tick()
    [first] = h.balancer.iteration_statuses()
    assert first.moves_timed_out == 3 and first.moves_completed == 0
    assert h.moves.pending == {}


def test_stop_persists_should_run_false_and_ends_the_iteration() -> None:
    h = BalancerHarness()
    skewed(h)
    h.balancer.start()
    h.scm.tick()
    h.balancer.stop()
    assert h.balancer.status is STOPPED
    assert h.balancer.persisted()["shouldRun"] is False
    assert h.balancer.iteration_statuses()[-1].result is IterationResult.ITERATION_INTERRUPTED
    h.clock.advance(MINUTE)
    h.scm.tick()
    assert h.balancer.status is STOPPED


def test_stop_leaves_no_pending_add_behind() -> None:
    """R24 D11: the LOW replicates' ADDs of forgotten moves no longer count for the RM."""
    h = BalancerHarness()
    skewed(h)
    h.balancer.start()
    h.scm.tick()
    assert h.rm.pending_ops.pending_add_count() == 3
    h.balancer.stop()
    assert h.rm.pending_ops.pending_add_count() == 0


def test_balancer_moves_beyond_the_inflight_cap_do_not_delay_a_normal_repair() -> None:
    """R24 D10: more LOW replicates than the RM's cluster in-flight cap; a container that becomes
    under-replicated is still repaired NORMAL at the RM's next pass, the cap never hit."""
    sizes = {CB + k: "100GB" for k in ("size.entering.target.max", "size.leaving.source.max")}
    h = BalancerHarness(overrides={**sizes, CB + "size.moved.max.per.iteration": "500GB"})
    for i, used in enumerate((95, 95, 40, 40, 0, 0)):
        h.set_used(i, used)
    for k in range(120):
        h.container([h.dns[0], h.dns[1], h.dns[2 + k % 2]])
    under = h.container(h.dns[2:5])
    h.balancer.start()
    h.scm.tick()
    assert h.rm.pending_ops.pending_add_count() > h.rm.inflight_limit()
    h.drain()
    h.remove_replica(under, h.dns[4])
    h.rm.check_containers([under])
    h.clock.advance(MINUTE)
    for dn in h.dns:
        h.scm.nodes.process_heartbeat(dn)
    h.scm.tick()
    assert [c.priority for _, c in h.replicates() if c.container_id == under] == [NORMAL]
    assert h.rm.metrics.pending_replication_limit_reached_total == 0


@pytest.mark.parametrize("option", ["include_datanodes", "exclude_datanodes"])
def test_start_refuses_a_datanode_scm_does_not_know(option: str) -> None:
    """R24 D4: Ozone's validateNodeList; a known hostname or IP is taken."""
    h = BalancerHarness()
    skewed(h)
    unknown = h.balancer.default_config.with_options(
        **{option: frozenset({"dn0.test", "no-such-host.example"})}
    )
    with pytest.raises(
        InvalidContainerBalancerConfigurationError, match=r"'no-such-host\.example' does not exist"
    ):
        h.balancer.start(unknown)
    assert h.balancer.persisted() is None
    h.balancer.start(h.balancer.default_config.with_options(**{option: frozenset({"dn0.test", "10.0.0.2"})}))
    assert h.balancer.status is RUNNING


def test_selection_is_spread_over_ticks() -> None:
    """R24 D5: a tick lists or checks at most selection_step containers, and the iteration does not end
    while it selects."""
    h = BalancerHarness()
    skewed(h)
    h.balancer.selection_step = 1
    h.balancer.start()
    ticks = 0
    while h.balancer.iteration is None or h.balancer.iteration.selecting:
        h.scm.tick()
        ticks += 1
        assert len(h.replicates()) <= ticks  # at most one container per tick was looked at
    assert ticks > 1
    assert len(h.replicates()) == 3
    assert h.balancer.iteration.status(h.clock.now_ms()).moves_scheduled == 3


def test_step_down_stops_it_and_the_next_leader_resumes() -> None:
    h = BalancerHarness(context=ScmContext.ha_leader(1))
    skewed(h, containers=6)
    h.balancer.start(h.balancer.default_config.with_options(max_size_entering_target=3 << 30))
    h.scm.tick()
    complete_moves(h)
    h.scm.tick()  # iteration 1 done: nextIterationIndex 1 persisted
    h.commit()
    h.clock.advance(10 * MINUTE)
    h.scm.tick()
    assert h.balancer.iteration is not None and h.moves.pending
    h.replication.step_down(2, "scm2", None, "test")
    assert h.balancer.status is STOPPED and h.moves.pending == {}
    assert h.balancer.persisted()["shouldRun"] is True  # the committed record stays
    h.scm.tick()
    assert h.balancer.status is STOPPED  # a follower does not balance

    h.replication.step_up(3)
    h.scm.tick()
    assert h.balancer.status is STOPPED  # not before the services' wait
    h.wait_for_services()
    h.scm.tick()
    assert h.balancer.status is RUNNING and h.balancer.next_index == 1
    h.scm.tick()
    assert h.balancer.iteration is not None and h.balancer.iteration.number == 2


def test_a_restarted_scm_resumes_a_running_balancer_and_not_a_stopped_one() -> None:
    h = BalancerHarness()
    skewed(h)
    h.balancer.start()
    restarted = BalancerHarness(store=h.store)
    restarted.scm.tick()
    assert restarted.balancer.status is RUNNING
    restarted.balancer.stop()
    again = BalancerHarness(store=h.store)
    again.scm.tick()
    assert again.balancer.status is STOPPED


def test_persisted_record_round_trips() -> None:
    config = ScmSettings.from_conf(OzoneConfiguration(LOOSE)).balancer.with_options(
        exclude_containers=frozenset({4, 1}), include_datanodes=frozenset({"dn1"})
    )
    record = config.to_record(should_run=True, next_iteration_index=3)
    assert record["excludeContainers"] == "1,4" and record["nextIterationIndex"] == 3
    assert ContainerBalancerConfiguration.from_record(record) == config


def test_a_persisted_run_that_no_longer_validates_is_not_resumed(caplog: pytest.LogCaptureFixture) -> None:
    """A restarted SCM whose ozone.scm.container.size grew past the persisted size limits keeps the run
    stopped, and says why once."""
    h = BalancerHarness()
    h.balancer.start()
    restarted = BalancerHarness(store=h.store, overrides={"ozone.scm.container.size": "20GB"})
    for _ in range(3):
        restarted.scm.tick()
    assert restarted.balancer.status is STOPPED
    assert caplog.text.count("Could not resume ContainerBalancer") == 1


def test_another_scm_leading_next_resumes_the_run_from_the_log() -> None:
    """The leader's balancer record reaches a follower through the log (ScmReplication.apply); when that
    follower leads, it resumes the run at the persisted next iteration."""
    leader = BalancerHarness(context=ScmContext.ha_leader(1))
    follower = BalancerHarness(context=ScmContext.ha_follower(1, "scm1"))
    cids = skewed(leader, containers=6)
    leader.balancer.start(leader.balancer.default_config.with_options(max_size_entering_target=3 << 30))
    leader.scm.tick()
    complete_moves(leader)
    leader.scm.tick()  # iteration 1 done, nextIterationIndex 1 written
    for index, transaction in enumerate(leader.replication.seal(), start=1):
        follower.replication.apply(transaction.ops, 1, index)
    assert follower.balancer.persisted() == leader.balancer.persisted()
    for cid in cids:  # the containers (loaded as the harness loads them) and the replicas reported
        follower.scm.containers.bulk_load([leader.scm.containers.get(cid)], [])
        for replica in leader.scm.containers.replicas(cid):
            follower.report_copy(cid, replica.datanode)
    for i in range(len(follower.dns)):
        follower.set_used(i, 40)
    follower.set_used(0, 80)
    follower.set_used(5, 0)
    follower.scm.tick()
    assert follower.balancer.status is STOPPED  # a follower does not balance

    follower.replication.step_up(2)
    follower.wait_for_services()
    follower.scm.tick()
    assert follower.balancer.status is RUNNING and follower.balancer.next_index == 1
    follower.scm.tick()
    assert follower.balancer.iteration is not None and follower.balancer.iteration.number == 2


def test_a_long_runs_status_stays_within_the_admin_channels_answer() -> None:
    """R25 D4: a run that never ends (`-i -1`) with 2,000 datanodes involved an iteration: SCM keeps its
    latest iterations and answers `status` with the newest that fit the admin channel's 4 MiB."""
    h = BalancerHarness()
    skewed(h)
    h.balancer.start(h.balancer.default_config.with_options(iterations=-1))
    transfers = {f"{i:08d}-0000-4000-8000-000000000000": 5 << 30 for i in range(1000)}
    done = IterationResult.ITERATION_COMPLETED
    for number in range(1, 501):
        status = IterationStatus(number, done, 60, 9, 9, 0, 0, 1, 1, 2000, transfers, transfers)
        h.balancer.history.append(status)
    assert len(h.balancer.history) == HISTORY_LIMIT
    info = h.balancer.status_info()
    answer = wire.status_info_response(info).SerializeToString()
    assert len(answer) < MAX_ADMIN_MESSAGE_BYTES
    numbers = [s.number for s in info.iterations]
    assert numbers == list(range(numbers[0], 501)) and len(numbers) > 10  # the newest, in order
