"""The history of the Jepsen-style test of SCM HA (issue 31) made checkable, and its id checks.

The clients record what they sent: an allocation names no container before SCM answers, a listing names
none either. `checkable` rewrites the history for ContainerStateModel (models.py), keeping every event's
place, so real time is kept:

- an acknowledged allocation becomes allocate(container): an observation that the container was OPEN; one
  not acknowledged is dropped (it changes no container's state; a block it may have taken is checked by
  `reused_ids` only if acknowledged).
- a state read answered becomes state(container, state seen), CONTAINER_NOT_FOUND included; one not
  answered is dropped.
- a listing answered becomes one state read per container listed, each a process of its own
  ("PROCESS/CONTAINER"), all invoked where the listing was and completed where it was: a weaker check than
  the listing's single point (sound: a listing that fits implies its entries do).
- a close keeps its outcome; refused as INVALID_CONTAINER_STATE it completes ok (the model says why).

`reused_ids` checks what linearizability does not: no block acknowledged twice (container id and local id),
no local id in two containers (SCM's local ids come from one sequence, Ozone's SequenceIdGenerator), and
no container seen on two pipelines (an id handed out twice)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from tests.jepsen.history import Event, EventType, History, Operation
from tests.jepsen.models import Op, Refusal


def _state(result: Any) -> str:
    return result.value if isinstance(result, Refusal) else str(result)


def _rewritten(op: Operation) -> list[tuple[str, Op, tuple[Any, ...], Any]]:
    """What `op` becomes: (process, f, args, ok result) each; nothing when it is dropped."""
    answered = op.type is EventType.OK
    if op.f is Op.ALLOCATE:
        return [(str(op.process), Op.ALLOCATE, (op.result[0],), "OPEN")] if answered else []
    if op.f is Op.STATE:
        seen = _state(op.result)
        return [(str(op.process), Op.STATE, (op.args[0], seen), seen)] if answered else []
    if op.f is Op.LIST:
        if not answered:
            return []
        return [(f"{op.process}/{c}", Op.STATE, (c, _state(s)), _state(s)) for c, s in op.result]
    if op.f is Op.CLOSE:
        return [(str(op.process), Op.CLOSE, op.args, None)]
    raise ValueError(f"{op.f} is no operation of SCM's workload")


def checkable(history: History) -> History:
    """The history for ContainerStateModel (the module docstring says how)."""
    by_end = {op.end: op for op in history.operations() if op.end is not None}
    by_call = {op.call: op for op in history.operations()}
    events: list[Event] = []

    def add(e: Event, process: str, f: Op, args: tuple[Any, ...], kind: EventType, value: Any) -> None:
        events.append(Event(len(events), kind, process, f, args, value, e.error, e.time_ns))

    for e in history.events:
        op = by_call.get(e.index) if e.type is EventType.INVOKE else by_end.get(e.index)
        if op is None:
            continue
        for process, f, args, result in _rewritten(op):
            if e.type is EventType.INVOKE:
                add(e, process, f, args, EventType.INVOKE, None)
            else:
                add(e, process, f, args, e.type, result if e.type is EventType.OK else None)
    return History(events)


def acknowledged_blocks(history: History) -> Iterator[tuple[int, int]]:
    """(container id, local id) of every acknowledged allocation."""
    for op in history.operations():
        if op.f is Op.ALLOCATE and op.type is EventType.OK:
            yield int(op.result[0]), int(op.result[1])


def reused_ids(history: History, pipelines: dict[int, set[str]]) -> list[str]:
    """Every id handed out twice (the module docstring says which); `pipelines`: the pipelines each
    container was seen on."""
    blocks = list(acknowledged_blocks(history))
    problems = [f"block {c}:{lid} acknowledged {n} times" for (c, lid), n in Counter(blocks).items() if n > 1]
    containers_of: dict[int, set[int]] = {}
    for c, lid in set(blocks):
        containers_of.setdefault(lid, set()).add(c)
    problems += [
        f"local id {lid} in containers {sorted(cs)}" for lid, cs in containers_of.items() if len(cs) > 1
    ]
    problems += [f"container {c} on pipelines {sorted(ps)}" for c, ps in pipelines.items() if len(ps) > 1]
    return problems
