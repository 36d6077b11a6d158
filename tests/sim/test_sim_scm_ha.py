"""Three SCM cores of one service on virtual time (issue 31): seeded runs with leader kills,
restarts, isolations and partitions beside datanode faults, every invariant checked after every event
(`tests/scm_ha_sim.py`; `python -m tests.scm_ha_sim --seeds N` for long runs)."""

from __future__ import annotations

import contextlib
import functools

import pytest

from pyozone.config import OzoneConfiguration
from pyozone.hdds.exceptions import SCMException
from pyozone.hdds.safemode_status import SafeModeStatus
from pyozone.hdds.states import LifeCycleState
from pyozone.scm.block.deleted_block_log import DeletedBlockLog
from pyozone.scm.events import SCMEvent
from pyozone.scm.safemode.container_rules import RatisContainerSafeModeRule
from pyozone.sim.scm_ha import ELECTION_MS, SimHaCluster
from tests.scm_ha_sim import CONF, Checker, InvariantViolation, run_seed

MB = 1 << 20
_run = functools.cache(run_seed)  # the seeds' counts, shared by the tests that read them


@pytest.mark.parametrize("seed", range(20))
def test_failovers_keep_ids_unique_acknowledged_blocks_and_equal_tables(seed: int) -> None:
    counts = _run(seed)
    assert counts["blocks acknowledged"] > 0


SLOW_SEEDS = range(20, 420)
"""`pytest -m slow`: 400 more seeds, about 2.5 s each on a quiet core (15-20 minutes); `python -m
tests.scm_ha_sim --seeds N --first F` runs any others."""


@pytest.mark.slow
@pytest.mark.parametrize("seed", SLOW_SEEDS)
def test_hundreds_more_seeds_hold_every_invariant(seed: int) -> None:
    counts = run_seed(seed)
    assert counts["blocks acknowledged"] > 0


def test_the_seeds_reach_every_fault_and_failover() -> None:
    total: dict[str, int] = {}
    for seed in range(6):
        for key, value in _run(seed).items():
            total[key] = total.get(key, 0) + value
    for fault in ("kill-leader", "restart-scm", "isolate-leader", "partition"):
        assert total.get(fault), f"no {fault} in the first seeds: {total}"
    assert total["commands sent"] and total["entries applied"]
    assert total["delete transactions acknowledged"] and total["safe mode exits checked"]


def test_the_memory_invariant_catches_a_deleted_block_log_that_ignores_the_leaders_records(
    monkeypatch,
) -> None:
    """Review R17 D4: with no block deleted in the workload and no check of memory against records, a
    follower whose deletedBlocks listener did nothing went unnoticed in every seed."""
    monkeypatch.setattr(DeletedBlockLog, "record_changed", lambda self, key, value: None)
    with pytest.raises(InvariantViolation, match="delete transactions: records"):
        run_seed(0)


def _cluster(seed: int = 3) -> SimHaCluster:
    c = SimHaCluster(6, conf=OzoneConfiguration(CONF), seed=seed, observer=Checker(seed))
    assert c.run_until(lambda: c.leader() is not None and not c.scm.safe_mode.in_safe_mode(), 120_000)
    return c


def _write(c: SimHaCluster, n: int) -> None:
    for _ in range(n):
        c.write_block(MB)
        c.advance(200)


def test_a_killed_leader_is_replaced_within_two_election_timeouts_and_ids_keep_growing() -> None:
    c = _cluster()
    _write(c, 20)
    acked = {b.block_id.local_id for b in c.acked}
    old = c.leader()
    assert old is not None
    c.kill_scm(old.name)
    killed = c.clock.now_ms()
    while c.leader() is None or c.leader() is old:
        c.advance(20)
        assert c.clock.now_ms() - killed < 2 * ELECTION_MS + 400  # election timeout max = min + 200 ms
    new = c.leader()
    assert new is not None and new.core.context.known_term > old.core.context.known_term
    _write(c, 20)
    fresh = {b.block_id.local_id for b in c.acked} - acked
    assert fresh and min(fresh) > max(acked)
    c.restart_scm_node(old.name)
    assert c.run_until(lambda: old.server.applied_index == new.server.applied_index, 30_000, 100)
    assert old.digest() == new.digest()


def test_an_isolated_leader_acknowledges_nothing_and_steps_down() -> None:
    c = _cluster(5)
    old = c.leader()
    assert old is not None
    c.isolate_scm(old.name)
    before = len(c.acked)
    for _ in range(5):
        with contextlib.suppress(SCMException):
            c.write_block(MB)
        c.advance(100)
    assert len(c.acked) == before  # its writes cannot commit: never acknowledged
    c.advance(3 * ELECTION_MS)
    assert not old.core.context.is_leader()
    assert c.leader() is not None and c.leader() is not old
    c.heal_scms()
    _write(c, 5)
    assert len(c.acked) == before + 5


def test_an_answer_staged_by_a_deposed_leader_is_never_released() -> None:
    """Review R17 D3: the block an isolated leader allocated never committed; after its step-down, and
    after it leads again, `released` of its epoch stays False (a glue parking answers on it would
    acknowledge ids the next leader hands out again)."""
    c = _cluster(5)
    old = c.leader()
    assert old is not None
    c.isolate_scm(old.name)
    block = c.write_block(MB)
    epoch = old.replication.epoch
    assert not old.replication.released(epoch)
    c.advance(5_000)
    assert not old.core.context.is_leader()
    assert old.core.store.sequence_id.get("localId") is None  # its reservation never committed
    assert not old.replication.released(epoch) and block not in c.acked
    c.heal_scms()
    _write(c, 5)
    for _ in range(10):  # cut off each other leader until the deposed one leads again
        leader = c.leader()
        assert leader is not None
        if leader is old:
            break
        c.isolate_scm(leader.name)
        c.advance(3 * ELECTION_MS)
        c.heal_scms()
        c.advance(ELECTION_MS)
    assert c.leader() is old
    _write(c, 5)
    assert old.replication.epoch > epoch and old.replication.released(old.replication.epoch)
    assert not old.replication.released(epoch)


def test_a_follower_restarted_behind_the_log_waits_for_replicas_of_what_it_caught_up_on() -> None:
    """Review R17 D1: its container rules read an scm.db without the containers closed while it was
    down; the rules re-read the records once it caught up (Ozone refreshes them when the state machine is
    ready), so it leaves safe mode only once a replica of each of them was reported to it."""
    c = _cluster(5)
    leader = c.leader()
    assert leader is not None
    victim = next(s for s in c.scms.values() if s is not leader)
    c.kill_scm(victim.name)
    for _ in range(120):
        with contextlib.suppress(SCMException):
            c.write_block(MB)
        c.advance(500)
    c.advance(60_000)
    closed = {
        i.container_id
        for i in leader.core.containers.containers()
        if i.state in (LifeCycleState.CLOSED, LifeCycleState.QUASI_CLOSED) and i.number_of_keys > 0
    }
    assert closed
    c.restart_scm_node(victim.name)
    core = victim.core
    (rule,) = [r for r in core.safe_mode.rules() if isinstance(r, RatisContainerSafeModeRule)]
    assert rule.total == 0  # its scm.db at start holds none of them
    exits: list[tuple[frozenset[int], int]] = []
    core.events.add_handler(
        SCMEvent.SAFE_MODE_STATUS,
        lambda status: (
            status is SafeModeStatus.OUT_OF_SAFE_MODE
            and exits.append((rule.eligible, rule.with_min_replicas))
        ),
    )
    assert c.run_until(lambda: not core.safe_mode.in_safe_mode(), 60_000)
    assert victim.server.applied_index >= leader.server.applied_index - 2
    (eligible, reported) = exits[0]
    assert closed <= eligible and reported >= rule.cutoff * len(eligible)


def _replicate_through_a_failover(wait: str, fail_over: bool = True) -> Checker:
    """Invariant 8's case: a datanode dies holding dozens of containers; the leader's first replication
    commands are running when it is killed; the new leader's Replication Manager is due the moment its
    wait after becoming ready ends (the worst phase of its 30 s schedule)."""
    checker = Checker(3)
    conf = OzoneConfiguration({**CONF, "hdds.scm.wait.time.after.safemode.exit": wait})
    c = SimHaCluster(6, conf=conf, seed=3, observer=checker)
    assert c.run_until(lambda: c.leader() is not None and not c.scm.safe_mode.in_safe_mode(), 120_000)
    _write(c, 400)
    c.advance(60_000)
    c.kill(next(iter(c.datanodes)))
    assert c.run_until(lambda: checker.counts["replication commands sent"] > 0, 300_000, 200)
    old = c.leader()
    assert old is not None and any(n.replications() for n in c.datanodes.values())
    if fail_over:
        c.kill_scm(old.name)
        assert c.run_until(lambda: c.leader() not in (None, old), 10_000, 20)
        new = c.leader()
        assert new is not None
        for task in new.core.replication.tasks:
            task.next_due_ms = new.core.leader_ready_at_ms + conf.get(
                "hdds.scm.wait.time.after.safemode.exit"
            )
    c.advance(120_000)
    return checker


def test_a_new_leader_repairing_at_once_copies_again_what_is_being_copied() -> None:
    """Without the wait its pending replica operations are empty while the deposed leader's pushes run."""
    with pytest.raises(InvariantViolation, match="replication storm"):
        _replicate_through_a_failover("0s")


def test_a_new_leader_waiting_after_it_became_ready_sends_what_a_lone_scm_sends() -> None:
    checker = _replicate_through_a_failover("10s")
    assert checker.counts["failovers"] == 1 and checker.counts["replication commands in flight at failovers"]
    lone = _replicate_through_a_failover("10s", fail_over=False)
    assert checker.counts["replication commands sent"] == lone.counts["replication commands sent"]


def test_the_cli_kills_and_cuts_off_the_scm_leader_and_a_new_one_takes_over(cli) -> None:
    result = cli(
        "sim", "--scm-ha", "--datanodes", "6", "--minutes", "6", "--kill-scm-leader", "2",
        "--partition-scm-leader", "4",
    )  # fmt: skip
    assert result.code == 0
    lines = result.out.splitlines()
    takeovers = [line for line in lines if " is the ready leader of term " in line]
    told = [line for line in lines if line.startswith("-- ") and line not in takeovers][:-1]
    assert [line.split(" at ")[0] for line in told] == [
        "-- kill scm leader", "-- restart scms", "-- isolate scm leader", "-- heal scms",
    ]  # fmt: skip
    killed, after = told[0].split("leader: ")[1], told[1].split("leader: ")[1]
    assert killed.split(",")[0] != after.split(",")[0]  # another SCM leads a later term
    assert _term(told[3]) > _term(told[2])
    # the operator reads each new leader, how long after the fault, and the run's failovers and commands
    assert len(takeovers) == 2 and all(line.endswith(" s after the fault") for line in takeovers)
    assert [line.split()[1] for line in takeovers] == [
        after.split(",")[0],
        told[3].split("leader: ")[1].split(",")[0],
    ]
    seconds = [float(line.split(", ")[-1].split()[0]) for line in takeovers]
    assert all(0 < s < 2 * ELECTION_MS / 1000 + 0.4 for s in seconds)
    assert lines[-1].startswith("-- SCM HA: 2 failovers, at most ") and "commands sent by scm" in lines[-1]
    assert lines[-2].split()[1] == "OUT_OF_SAFE_MODE"


def test_the_cli_refuses_scm_leader_faults_without_scm_ha(cli) -> None:
    result = cli("sim", "--kill-scm-leader", "2")
    assert result.code != 0 and "--scm-ha" in result.err


def _term(told: str) -> int:
    return int(told.split("term ")[1].rstrip(")"))
