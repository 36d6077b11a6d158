"""A linearizability checker: Wing & Gong's search with Lowe's improvements ("Testing for Linearizability",
Gavin Lowe, 2016), as Knossos and Porcupine implement it, since no Python package does.

A history is linearizable when its operations can be put in one order, each taking effect at a single point
between its invocation and its completion, such that the model (models.py) run in that order returns what
every completed operation returned. Failed operations did not happen and are left out; an indeterminate
(info) one may take effect anywhere after its invocation, or not at all, and its result is not checked.

The search (Wing & Gong): the invocation and completion events, in order, are a doubly linked list. An
operation may be linearized next if its invocation comes before the first completion still in the list
(it is "minimal"); linearizing it runs the model and, if the result matches, removes its two events and
recurses; a dead end pops the last choice and tries the next candidate. Lowe's improvement memoizes the
(set of linearized operations, model state) pairs already reached: a pair seen once is never explored
again, which turns the search from factorial to, in practice, close to linear on histories that are
linearizable. Indeterminate operations are tried after the completed ones at each step, so one is placed
only when something needs it.

P-compositionality (Herlihy & Wing's locality): a history is linearizable if and only if each object's
sub-history is, so operations are split by the keys they touch and each part checked on its own. A rename
touches two keys and couples them: the parts are the connected components of keys operated on together.

The search stays exponential at worst, in the indeterminate operations open in one component: a wrong
placement can show only hundreds of operations later, and the search backtracks over everything between.
So a workload keeps its components small (renames within families of a few keys, as Jepsen keeps keys
independent). A budget (model steps and seconds) ends a search that runs too long with UNKNOWN rather than
hanging. A
history that is not linearizable is reported as Knossos reports its final paths: the longest linearizable
prefix found, the state it leaves, and the operations none of which could come next, with what the model
would have answered.

Replay a saved history: `python -m tests.jepsen.checker history.jsonl [--steps N] [--seconds S]` (`--model
containers` for one of SCM's test, tests/jepsen/containers.py).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path
from typing import Any

from tests.jepsen.history import EventType, History, Operation
from tests.jepsen.models import ContainerStateModel, KeyValueModel, Model


class Verdict(Enum):
    LINEARIZABLE = "linearizable"
    NOT_LINEARIZABLE = "not linearizable"
    UNKNOWN = "unknown"  # the budget ran out first


@dataclass(frozen=True)
class Budget:
    """How long a check may search: model steps (deterministic) and seconds (None: no limit)."""

    steps: int | None = 5_000_000
    seconds: float | None = None


@dataclass(frozen=True)
class Candidate:
    """An operation that could have come next at the dead end, and what the model answers for it there."""

    op: Operation
    model_result: Any

    def __str__(self) -> str:
        if self.op.type is EventType.INFO or self.model_result == self.op.result:
            return f"{self.op}: it fits here, but every continuation after it was already tried"
        return f"{self.op}: the model answers {self.model_result!r}"


@dataclass(frozen=True)
class DeadEnd:
    """The furthest point the search reached in a component that is not linearizable."""

    prefix: tuple[tuple[Operation, Hashable], ...]  # the linearized operations, each with the state after it
    state: Hashable
    candidates: tuple[Candidate, ...]
    blocking: Operation | None  # the first operation to complete that is not linearized


@dataclass(frozen=True)
class ComponentResult:
    keys: frozenset[str]
    verdict: Verdict
    operations: int
    steps: int
    dead_end: DeadEnd | None = None


@dataclass
class CheckResult:
    verdict: Verdict
    model: Model[Any]
    components: list[ComponentResult] = field(default_factory=list)
    operations: int = 0  # operations checked (failed ones and indeterminate reads are left out)

    @property
    def steps(self) -> int:
        return sum(c.steps for c in self.components)

    def report(self, shown: int = 10) -> str:
        """What a person reads: the verdict and, for each component that is not linearizable (or whose
        budget ran out), the dead end: the last `shown` operations of the longest prefix, each with the keys
        it touched after it, then the operations that could not come next and the keys they touch."""
        show, keys_of = self.model.show, self.model.keys
        lines = [
            f"{self.verdict.value}: {self.operations} operations in {len(self.components)} components, "
            f"{self.steps} model steps"
        ]
        for c in self.components:
            if c.verdict is Verdict.LINEARIZABLE:
                continue
            keys = ", ".join(sorted(c.keys))
            lines.append(f"component of keys {{{keys}}}: {c.verdict.value} ({c.operations} operations)")
            if c.dead_end is None:
                continue
            d = c.dead_end
            lines.append(
                f"  the longest linearizable prefix places {len(d.prefix)} operations"
                + (f" (the last {shown} shown)" if len(d.prefix) > shown else "")
                + ":"
            )
            lines.extend(
                f"    {op}   => {show(state, keys_of(op.f, op.args))}" for op, state in d.prefix[-shown:]
            )
            stuck = [c.op for c in d.candidates] + ([d.blocking] if d.blocking else [])
            lines.append(f"  then: {show(d.state, (k for op in stuck for k in keys_of(op.f, op.args)))}")
            lines.append("  and none of these can come next:")
            lines.extend(f"    {candidate}" for candidate in d.candidates)
            if d.blocking is not None and d.blocking not in stuck[:-1]:
                lines.append(f"  while {d.blocking} must take effect before it completes")
        return "\n".join(lines)


def check(
    history: History | Iterable[Operation], model: Model[Any] | None = None, budget: Budget | None = None
) -> CheckResult:
    """Checks the history against `model` (default: OM's keys, empty at the start)."""
    model = model if model is not None else KeyValueModel()
    budget = budget or Budget()
    ops = history.operations() if isinstance(history, History) else list(history)
    kept = bound_observed_writes(
        [
            op
            for op in ops
            if op.type is EventType.OK or (op.type is EventType.INFO and not model.read_only(op.f))
        ],
        model,
    )
    observed = {model.observed(op.f, op.args, op.result) for op in kept if op.type is EventType.OK}
    unread = {
        op.id
        for op in kept
        if op.ret is None
        and model.writes(op.f, op.args) is not None
        and model.writes(op.f, op.args) not in observed
    }
    deadline = None if budget.seconds is None else time.monotonic() + budget.seconds
    steps_left = budget.steps
    result = CheckResult(Verdict.LINEARIZABLE, model, operations=len(kept))
    for keys, part in components(kept, model):
        out_of_steps = steps_left is not None and steps_left <= 0
        if out_of_steps or (deadline is not None and time.monotonic() > deadline):
            result.components.append(ComponentResult(keys, Verdict.UNKNOWN, len(part), 0))
            continue
        search = _Search(part, model, model.initial(keys), unread, steps_left, deadline)
        verdict = search.run()
        if steps_left is not None:
            steps_left -= search.steps
        dead_end = search.dead_end() if verdict is not Verdict.LINEARIZABLE else None
        result.components.append(ComponentResult(keys, verdict, len(part), search.steps, dead_end))
    verdicts = {c.verdict for c in result.components}
    if Verdict.NOT_LINEARIZABLE in verdicts:
        result.verdict = Verdict.NOT_LINEARIZABLE
    elif Verdict.UNKNOWN in verdicts:
        result.verdict = Verdict.UNKNOWN
    return result


def bound_observed_writes(ops: list[Operation], model: Model[Any]) -> list[Operation]:
    """An indeterminate write of a value that only it writes, and that a completed operation observed,
    certainly happened, before the first such observation completed: it gets that completion as its own,
    so the search must place it by then (its result is still not checked). This loses no linearization and
    spares the search its worst case: a write left out early, its effect masked by an older value of the
    key, found missing only hundreds of operations later."""
    writers: dict[Hashable, list[Operation]] = {}
    for op in ops:
        value = model.writes(op.f, op.args)
        if value is not None:
            writers.setdefault(value, []).append(op)
    seen_by: dict[Hashable, int] = {}
    for op in ops:
        value = model.observed(op.f, op.args, op.result) if op.type is EventType.OK else None
        if value is not None and op.ret is not None:
            seen_by[value] = min(seen_by.get(value, op.ret), op.ret)
    bounded = {}
    for value, ops_writing in writers.items():
        (writer,) = ops_writing if len(ops_writing) == 1 else (None,)
        if writer is not None and writer.ret is None and value in seen_by:
            bounded[writer.id] = replace(writer, ret=max(seen_by[value], writer.call + 1))
    return [bounded.get(op.id, op) for op in ops]


def components(ops: list[Operation], model: Model[Any]) -> list[tuple[frozenset[str], list[Operation]]]:
    """The operations split by connected components of the keys they touch together (union-find)."""
    parent: dict[str, str] = {}

    def root(k: str) -> str:
        parent.setdefault(k, k)
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    for op in ops:
        first, *rest = model.keys(op.f, op.args)
        for k in rest:
            parent[root(k)] = root(first)
        root(first)
    keys_by_root: dict[str, set[str]] = {}
    for k in parent:
        keys_by_root.setdefault(root(k), set()).add(k)
    ops_by_root: dict[str, list[Operation]] = {}
    for op in ops:
        ops_by_root.setdefault(root(model.keys(op.f, op.args)[0]), []).append(op)
    return [(frozenset(keys_by_root[r]), part) for r, part in sorted(ops_by_root.items())]


class _Entry:
    """An invocation (`match`: its completion, None for an indeterminate operation) or a completion."""

    __slots__ = ("bit", "is_call", "keys", "match", "next", "op", "prev", "unread")

    def __init__(self, op: Operation | None, is_call: bool, bit: int, keys: frozenset[str]) -> None:
        self.op = op
        self.is_call = is_call
        self.bit = bit
        self.keys = keys
        self.unread = False  # an indeterminate write of a value no completed operation observed
        self.match: _Entry | None = None
        self.prev: _Entry | None = None
        self.next: _Entry | None = None


class _Search:
    """Wing & Gong's search over one component, with Lowe's memo of (linearized set, state).

    Indeterminate operations are placed in a canonical order, which loses no linearization: one that shares
    no key with the operation after it commutes with that operation and can move after it (it never
    completes, so no real-time order stops it), until it meets one that shares a key, or the end, where it
    is dropped. So an indeterminate operation X is placed only in a run of indeterminate ones ending in a
    definite one D, and only if a later operation of the run or D shares a key with X: `pending` holds the
    run's operations no later one shared a key with yet, and D must share a key with each. Placing X does
    not change which definite operations are minimal, so X is tried only if a chain of keys through other
    indeterminate candidates links it to one of them. Without this, each open indeterminate operation
    doubles the states a dead end must rule out.

    An indeterminate write of a value that no completed operation read (`unread`) is not placed where it
    would only replace an existing key's value: a linearization with it there stays one without it, the old
    value taking its place wherever it moves (a value nobody reads is never where a read looks, and the
    other operations see only whether the key exists). Only a write that makes a key exist can matter."""

    def __init__(
        self,
        ops: list[Operation],
        model: Model[Any],
        initial: Hashable,
        unread: set[int],
        steps: int | None,
        deadline: float | None,
    ) -> None:
        self.model = model
        self.initial = initial
        self.max_steps = steps
        self.deadline = deadline
        self.steps = 0
        self.definite = sum(1 for op in ops if op.ret is not None)
        events: list[tuple[int, int, _Entry]] = []
        for i, op in enumerate(ops):
            keys = frozenset(model.keys(op.f, op.args))
            call = _Entry(op, True, 1 << i, keys)
            call.unread = op.id in unread
            events.append((op.call, 0, call))  # at a tie, invocations first: the operations overlap
            if op.ret is not None:
                call.match = _Entry(op, False, 1 << i, keys)
                events.append((op.ret, 1, call.match))
        self.head = _Entry(None, False, 0, frozenset())
        last = self.head
        for _, _, entry in sorted(events, key=lambda e: (e[0], e[1])):
            last.next, entry.prev, last = entry, last, entry
        # the furthest dead end: (definite operations placed, the (call entry, state after) pairs placed,
        # the state, the candidates)
        self._deepest: tuple[int, list[tuple[_Entry, Hashable]], Hashable, list[_Entry]] | None = None

    def _candidates(self, pending: tuple[_Entry, ...]) -> list[_Entry]:
        """The operations that may take effect next, definite first: the minimal ones (invoked before the
        first completion still in the list), in the canonical order of the class docstring."""
        definite, indeterminate = [], []
        entry = self.head.next
        while entry is not None and entry.is_call:
            (indeterminate if entry.match is None else definite).append(entry)
            entry = entry.next
        if indeterminate:
            reach: set[str] = set().union(*(d.keys for d in definite))
            linked, unlinked, grew = [], indeterminate, True
            while grew:
                grew, rest = False, []
                for x in unlinked:
                    if x.keys & reach:
                        reach |= x.keys
                        linked.append(x)
                        grew = True
                    else:
                        rest.append(x)
                unlinked = rest
            indeterminate = sorted(linked, key=lambda x: x.bit)
        if pending:
            definite = [d for d in definite if all(d.keys & p.keys for p in pending)]
        return definite + indeterminate

    @staticmethod
    def _lift(entry: _Entry) -> None:
        for e in (entry, entry.match):
            if e is not None:
                e.prev.next = e.next  # type: ignore[union-attr]
                if e.next is not None:
                    e.next.prev = e.prev

    @staticmethod
    def _unlift(entry: _Entry) -> None:
        for e in (entry.match, entry):
            if e is not None:
                e.prev.next = e  # type: ignore[union-attr]
                if e.next is not None:
                    e.next.prev = e

    def run(self) -> Verdict:
        model = self.model
        # Lowe's memo, with subsumption: the configurations explored, as (definite operations linearized,
        # state) -> [(indeterminate operations placed, pending run)]. One reached again with a superset of
        # both is skipped: every continuation it has, the explored one had (an indeterminate operation is
        # never required), and more pending operations only restrict.
        seen: dict[tuple[int, Hashable], list[tuple[int, int]]] = {}
        state, definite, indeterminate, remaining = self.initial, 0, 0, self.definite
        pending: tuple[_Entry, ...] = ()
        # each level: (the entry placed, the state and pending run before it, that level's candidates, the
        # next candidate to try)
        stack: list[tuple[_Entry, Hashable, tuple[_Entry, ...], list[_Entry], int]] = []
        candidates, i = self._candidates(pending), 0
        while remaining:
            placed = False
            while i < len(candidates):
                entry = candidates[i]
                i += 1
                if self.max_steps is not None and self.steps >= self.max_steps:
                    return Verdict.UNKNOWN
                self.steps += 1
                if self.deadline is not None and self.steps % 1024 == 0 and time.monotonic() > self.deadline:
                    return Verdict.UNKNOWN
                op = entry.op
                assert op is not None
                if entry.unread and model.replaces(state, op.f, op.args):
                    continue  # it can be left out: see the class docstring
                after, result = model.step(state, op.f, op.args)
                if entry.match is not None:
                    if op.type is EventType.OK and result != op.result:
                        continue
                    now_pending: tuple[_Entry, ...] = ()
                    now_definite, now_indeterminate = definite | entry.bit, indeterminate
                else:
                    now_pending = (*(p for p in pending if not p.keys & entry.keys), entry)
                    now_definite, now_indeterminate = definite, indeterminate | entry.bit
                pending_bits = sum(p.bit for p in now_pending)
                explored = seen.setdefault((now_definite, after), [])
                if any(d & ~now_indeterminate == 0 and p & ~pending_bits == 0 for d, p in explored):
                    continue
                explored.append((now_indeterminate, pending_bits))
                stack.append((entry, state, pending, candidates, i))
                self._lift(entry)
                state, definite, indeterminate, pending = after, now_definite, now_indeterminate, now_pending
                remaining -= entry.match is not None
                candidates, i = self._candidates(pending), 0
                placed = True
                break
            if placed:
                continue
            self._note_dead_end(self.definite - remaining, stack, state, candidates)
            if not stack:
                return Verdict.NOT_LINEARIZABLE
            entry, state, pending, candidates, i = stack.pop()
            self._unlift(entry)
            if entry.match is not None:
                definite &= ~entry.bit
                remaining += 1
            else:
                indeterminate &= ~entry.bit
        return Verdict.LINEARIZABLE

    def _note_dead_end(
        self,
        placed: int,
        stack: list[tuple[_Entry, Hashable, Any, Any, int]],
        state: Hashable,
        candidates: list[_Entry],
    ) -> None:
        """Keeps the dead end that placed the most definite operations (the first of those)."""
        if self._deepest is not None and self._deepest[0] >= placed:
            return
        after = [level[1] for level in stack[1:]] + ([state] if stack else [])
        prefix = [(level[0], a) for level, a in zip(stack, after, strict=True)]
        self._deepest = (placed, prefix, state, candidates)

    def dead_end(self) -> DeadEnd | None:
        if self._deepest is None:
            return None
        _, prefix, state, candidates = self._deepest
        # the first completion left once the prefix is linearized: the operation that could not wait
        done = {e.bit for e, _ in prefix}
        blocking = next(
            (entry.op for entry in self._entries() if not entry.is_call and entry.bit not in done),
            None,
        )
        return DeadEnd(
            tuple((e.op, s) for e, s in prefix),  # type: ignore[misc]
            state,
            tuple(Candidate(e.op, self.model.step(state, e.op.f, e.op.args)[1]) for e in candidates),  # type: ignore[union-attr]
            blocking,
        )

    def _entries(self) -> Iterable[_Entry]:
        entry = self.head.next
        while entry is not None:
            yield entry
            entry = entry.next


MODELS: dict[str, type[KeyValueModel] | type[ContainerStateModel]] = {
    "keys": KeyValueModel,
    "containers": ContainerStateModel,
}
"""The models a saved history may be replayed against."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("history", type=Path, help="a history saved as JSON lines (History.dump)")
    parser.add_argument("--steps", type=int, default=Budget.steps)
    parser.add_argument("--seconds", type=float, default=None)
    parser.add_argument(
        "--model", choices=sorted(MODELS), default="keys", help="OM's keys (default) or SCM's containers"
    )
    args = parser.parse_args(argv)
    result = check(History.load(args.history), MODELS[args.model](), Budget(args.steps, args.seconds))
    print(result.report())
    return 0 if result.verdict is Verdict.LINEARIZABLE else 1


if __name__ == "__main__":
    sys.exit(main())
