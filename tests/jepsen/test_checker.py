"""The linearizability checker: hand-written histories that are linearizable and that are not, its report,
its budget; properties: every history made by a random schedule consistent with the model is linearizable,
one read changed to a value nobody wrote is not and is named, and on small histories the checker agrees with
a brute-force search of every order; and the time a 2,000-operation history takes."""

from __future__ import annotations

import random
import time
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.jepsen.checker import Budget, Verdict, check, components, main
from tests.jepsen.generate import Workload, generate
from tests.jepsen.history import EventType, History, Operation
from tests.jepsen.models import KeyValueModel, Op, Refusal

MODEL = KeyValueModel()


class Script:
    """A history written by hand: `call` invokes, `ok` / `info` / `fail` complete, in the order written."""

    def __init__(self) -> None:
        self.history = History()
        self._open: dict[int, object] = {}

    def call(self, process: int, f: Op, *args: object) -> Script:
        self._open[process] = self.history.invoke(process, f, *args)
        return self

    def ok(self, process: int, value: object = None) -> Script:
        self.history.ok(self._open.pop(process), value)  # type: ignore[arg-type]
        return self

    def info(self, process: int) -> Script:
        self.history.info(self._open.pop(process), "timed out")  # type: ignore[arg-type]
        return self

    def fail(self, process: int) -> Script:
        self.history.fail(self._open.pop(process), "refused")  # type: ignore[arg-type]
        return self

    def done(self, process: int, f: Op, *args: object, value: object = None) -> Script:
        """An operation that completes before the next one starts."""
        return self.call(process, f, *args).ok(process, value)

    def verdict(self) -> Verdict:
        return check(self.history).verdict


def test_a_sequential_history_that_follows_the_model() -> None:
    s = Script().done(1, Op.CREATE, "a", "v1").done(2, Op.GET, "a", value="v1").done(1, Op.RENAME, "a", "b")
    s.done(2, Op.GET, "a", value=Refusal.KEY_NOT_FOUND).done(2, Op.GET, "b", value="v1")
    s.done(1, Op.DELETE, "b").done(1, Op.DELETE, "b", value=Refusal.KEY_NOT_FOUND)
    assert s.verdict() is Verdict.LINEARIZABLE


def test_a_stale_read_after_a_completed_write() -> None:
    s = Script().done(1, Op.PUT, "a", "v1").done(1, Op.PUT, "a", "v2").done(2, Op.GET, "a", value="v1")
    result = check(s.history)
    assert result.verdict is Verdict.NOT_LINEARIZABLE
    report = result.report()
    assert "get('a') -> 'v1'" in report and "the model answers 'v2'" in report, report
    assert "then: {a: 'v2'}" in report, report


def test_a_lost_acknowledged_write() -> None:
    s = Script().done(1, Op.CREATE, "a", "v1").done(2, Op.GET, "a", value=Refusal.KEY_NOT_FOUND)
    assert s.verdict() is Verdict.NOT_LINEARIZABLE


def test_a_read_of_a_value_never_written() -> None:
    s = Script().done(1, Op.PUT, "a", "v1").done(2, Op.GET, "a", value="v9")
    assert s.verdict() is Verdict.NOT_LINEARIZABLE


def test_a_rename_seen_half_done() -> None:
    """While the rename runs, one reader finds the source gone and then the target not there yet."""
    s = Script().done(1, Op.PUT, "a", "v1").call(1, Op.RENAME, "a", "b")
    s.done(2, Op.GET, "a", value=Refusal.KEY_NOT_FOUND).done(2, Op.GET, "b", value=Refusal.KEY_NOT_FOUND)
    s.ok(1)
    assert s.verdict() is Verdict.NOT_LINEARIZABLE
    # either read alone is fine: the rename may take effect before or after it
    s = Script().done(1, Op.PUT, "a", "v1").call(1, Op.RENAME, "a", "b")
    s.done(2, Op.GET, "b", value=Refusal.KEY_NOT_FOUND).done(2, Op.GET, "a", value=Refusal.KEY_NOT_FOUND)
    s.ok(1)
    assert s.verdict() is Verdict.LINEARIZABLE


def test_a_refusal_that_the_state_does_not_explain() -> None:
    s = Script().done(1, Op.CREATE, "a", "v1").done(2, Op.RENAME, "a", "b", value=Refusal.KEY_NOT_FOUND)
    assert s.verdict() is Verdict.NOT_LINEARIZABLE
    s = Script().done(1, Op.CREATE, "a", "v1").done(2, Op.RENAME, "a", "b", value=Refusal.KEY_ALREADY_EXISTS)
    assert s.verdict() is Verdict.NOT_LINEARIZABLE


@pytest.mark.parametrize("seen", ["v1", "v2"])
def test_concurrent_writes_in_either_order(seen: str) -> None:
    s = Script().call(1, Op.PUT, "a", "v1").call(2, Op.PUT, "a", "v2").ok(2).ok(1)
    assert s.done(3, Op.GET, "a", value=seen).verdict() is Verdict.LINEARIZABLE


def test_concurrent_writes_take_effect_once() -> None:
    s = Script().call(1, Op.PUT, "a", "v1").call(2, Op.PUT, "a", "v2")
    s.done(3, Op.GET, "a", value="v1").done(3, Op.GET, "a", value="v2").done(3, Op.GET, "a", value="v1")
    assert s.ok(1).ok(2).verdict() is Verdict.NOT_LINEARIZABLE


@pytest.mark.parametrize("seen", ["v1", Refusal.KEY_NOT_FOUND])
def test_an_indeterminate_write_that_did_or_did_not_happen(seen: object) -> None:
    s = Script().call(1, Op.CREATE, "a", "v1").info(1).done(2, Op.GET, "a", value=seen)
    assert s.verdict() is Verdict.LINEARIZABLE


def test_an_indeterminate_write_seen_only_by_its_key_existing() -> None:
    """Nobody reads its value, but a delete finds the key, and a rename moves it where a read finds none."""
    s = Script().call(1, Op.CREATE, "a", "v1").info(1).done(2, Op.DELETE, "a")
    assert s.verdict() is Verdict.LINEARIZABLE
    s = Script().done(3, Op.PUT, "a", "v0").call(1, Op.PUT, "a", "v1").info(1)
    s.done(2, Op.RENAME, "a", "b").done(2, Op.GET, "b", value="v0")
    assert s.verdict() is Verdict.LINEARIZABLE
    s.done(2, Op.GET, "b", value="v1")  # v1 could have reached b only by a rename after it
    assert s.verdict() is Verdict.NOT_LINEARIZABLE


def test_an_indeterminate_write_stays_open_to_the_end() -> None:
    """It may take effect long after its client gave up, but once only and not before it was invoked."""
    s = Script().done(2, Op.GET, "a", value=Refusal.KEY_NOT_FOUND).call(1, Op.CREATE, "a", "v1").info(1)
    s.done(2, Op.GET, "a", value=Refusal.KEY_NOT_FOUND).done(2, Op.GET, "a", value="v1")
    assert s.verdict() is Verdict.LINEARIZABLE
    s.done(2, Op.DELETE, "a").done(2, Op.GET, "a", value="v1")
    assert s.verdict() is Verdict.NOT_LINEARIZABLE
    s = Script().done(2, Op.GET, "a", value="v1").call(1, Op.CREATE, "a", "v1").info(1)
    assert s.verdict() is Verdict.NOT_LINEARIZABLE


def test_keys_that_exist_before_the_history() -> None:
    s = Script().call(1, Op.PUT, "b", "v0").info(1).done(2, Op.GET, "a", value="v0")
    s.done(2, Op.GET, "b", value=Refusal.KEY_NOT_FOUND)
    assert check(s.history, KeyValueModel({"a": "v0"})).verdict is Verdict.LINEARIZABLE
    assert check(s.history).verdict is Verdict.NOT_LINEARIZABLE


def test_a_failed_write_never_happened() -> None:
    s = Script().call(1, Op.PUT, "a", "v1").fail(1).done(2, Op.GET, "a", value="v1")
    assert s.verdict() is Verdict.NOT_LINEARIZABLE


def test_renames_join_keys_into_one_component() -> None:
    s = Script().done(1, Op.PUT, "a", 1).done(1, Op.PUT, "b", 2).done(1, Op.PUT, "c", 3)
    s.done(1, Op.RENAME, "a", "b", value=Refusal.KEY_ALREADY_EXISTS)
    parts = components(s.history.operations(), MODEL)
    assert [(sorted(keys), len(ops)) for keys, ops in parts] == [(["a", "b"], 3), (["c"], 1)]


def test_the_budget_ends_a_search_with_unknown() -> None:
    g = generate(random.Random(1), Workload(ops=300, clients=6, keys=4, info=0.1))
    result = check(g.history, budget=Budget(steps=50))
    assert result.verdict is Verdict.UNKNOWN and result.steps <= 50
    assert "unknown" in result.report()
    assert check(g.history, budget=Budget(seconds=0.0)).verdict is Verdict.UNKNOWN


def test_a_saved_history_replays_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "history.jsonl"
    Script().done(1, Op.PUT, "a", "v1").done(2, Op.GET, "a", value="v0").history.dump(path)
    assert main([str(path)]) == 1
    assert "not linearizable" in capsys.readouterr().out
    Script().done(1, Op.PUT, "a", "v1").done(2, Op.GET, "a", value="v1").history.dump(path)
    assert main([str(path)]) == 0


workloads = st.builds(
    Workload,
    ops=st.integers(1, 60),
    clients=st.integers(1, 6),
    keys=st.integers(1, 4),
    info=st.sampled_from([0.0, 0.05, 0.2]),
    fail=st.sampled_from([0.0, 0.05]),
)


@given(seed=st.integers(0, 2**32), workload=workloads)
def test_every_history_of_a_schedule_consistent_with_the_model_is_linearizable(
    seed: int, workload: Workload
) -> None:
    history = generate(random.Random(seed), workload).history
    result = check(history, budget=Budget(steps=200_000))
    assert result.verdict is Verdict.LINEARIZABLE, result.report()


@given(seed=st.integers(0, 2**32), workload=workloads, pick=st.randoms(use_true_random=False))
def test_a_read_of_a_value_nobody_wrote_is_found(seed: int, workload: Workload, pick: random.Random) -> None:
    ops = generate(random.Random(seed), workload).history.operations()
    reads = [op for op in ops if op.f is Op.GET and op.type is EventType.OK]
    if not reads:
        return
    victim = pick.choice(reads)
    mutated = [replace(op, result="never-written") if op is victim else op for op in ops]
    result = check(mutated, budget=Budget(steps=200_000))
    assert result.verdict is Verdict.NOT_LINEARIZABLE
    (stuck,) = [c for c in result.components if c.verdict is Verdict.NOT_LINEARIZABLE]
    assert stuck.dead_end is not None
    named = [c.op for c in stuck.dead_end.candidates] + [stuck.dead_end.blocking]
    assert victim.id in {op.id for op in named if op is not None}, result.report()


def brute_force(ops: list[Operation]) -> bool:
    """Linearizable by trying every order of the operations that real time allows (tiny histories only)."""
    ops = [op for op in ops if op.type is not EventType.FAIL]

    def search(left: frozenset[Operation], state: object) -> bool:
        returns = [op.ret for op in left if op.ret is not None]
        if not returns:
            return True  # what is left is indeterminate: it need not have happened
        for op in left:
            if op.call < min(returns):
                after, result = MODEL.step(state, op.f, op.args)  # type: ignore[arg-type]
                if (op.type is EventType.INFO or result == op.result) and search(left - {op}, after):
                    return True
        return False

    return search(frozenset(ops), MODEL.initial(frozenset()))


@given(
    seed=st.integers(0, 2**32),
    workload=st.builds(
        Workload, ops=st.integers(1, 8), clients=st.integers(1, 4), keys=st.integers(1, 3), info=st.just(0.3)
    ),
    mutation=st.none() | st.tuples(st.integers(0, 100), st.sampled_from([None, *Refusal, "v1", "v2", "v3"])),
)
def test_the_checker_agrees_with_a_brute_force_search(
    seed: int, workload: Workload, mutation: tuple[int, object] | None
) -> None:
    ops = generate(random.Random(seed), workload).history.operations()
    completed = [op for op in ops if op.type is EventType.OK]
    if mutation is not None and completed:
        victim = completed[mutation[0] % len(completed)]
        ops = [replace(op, result=mutation[1]) if op is victim else op for op in ops]
    assert (check(ops).verdict is Verdict.LINEARIZABLE) == brute_force(ops)


def test_two_thousand_operations_over_fifty_keys() -> None:
    """8 clients, 5% indeterminate, renames within families of 5 keys (as the OM test's workload keeps
    them): the time is printed, the assertion is on the step budget."""
    workload = Workload(ops=2000, clients=8, keys=50, info=0.05, family=5)
    history = generate(random.Random(7), workload).history
    start = time.monotonic()
    result = check(history, budget=Budget(steps=500_000))
    elapsed = time.monotonic() - start
    print(f"2,000 operations, 50 keys: {result.verdict.value} in {elapsed:.2f} s, {result.steps} steps")
    assert result.verdict is Verdict.LINEARIZABLE
