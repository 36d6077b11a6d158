"""Random histories that are linearizable by construction, for the checker's own tests and its timing.

Clients run operations against the model (models.py) on a shared clock: at each tick one thing happens, at
random: an idle client invokes an operation, an invoked one takes effect (its linearization point: the
model runs it there), or one completes: ok with the model's result once it took effect; fail only before it
took effect (it then never does); info either way, and an info operation that had not taken effect may
still take effect later, or never (a request lost in flight, or one that OM applies after the client gave
up). Every history so made has a linearization: the order of the effects.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from tests.jepsen.history import Event, EventType, History
from tests.jepsen.models import KeyMap, KeyValueModel, Op


@dataclass(frozen=True)
class Workload:
    ops: int = 200
    clients: int = 4
    keys: int = 5
    info: float = 0.05  # the share of operations that complete as info
    fail: float = 0.02  # ... and as fail
    family: int = 0  # a rename stays among this many keys (k0-k4, k5-k9, ...); 0: any two keys
    mix: tuple[tuple[Op, int], ...] = (
        (Op.CREATE, 2),
        (Op.PUT, 2),
        (Op.GET, 4),
        (Op.DELETE, 1),
        (Op.RENAME, 1),
    )


@dataclass
class _InFlight:
    invocation: Event
    applied: bool = False
    result: Any = None
    outcome: EventType = EventType.OK  # how it will complete


@dataclass
class Generated:
    history: History
    linearization: list[int] = field(default_factory=list)  # invoke indices, in effect order


def generate(rng: random.Random, w: Workload) -> Generated:
    model = KeyValueModel()
    state: KeyMap = model.initial(frozenset())
    events: list[Event] = []
    in_flight: dict[int, _InFlight] = {}
    limbo: list[_InFlight] = []  # info operations completed before their effect: they may still apply
    linearization: list[int] = []
    invoked = 0
    values = 0
    keys = [f"k{i}" for i in range(w.keys)]
    kinds, weights = zip(*w.mix, strict=True)

    def emit(kind: EventType, inv: Event, value: Any = None, error: str = "") -> Event:
        event = Event(len(events), kind, inv.process, inv.f, inv.args, value, error, len(events))
        events.append(event)
        return event

    def apply(flight: _InFlight) -> None:
        nonlocal state
        state, flight.result = model.step(state, flight.invocation.f, flight.invocation.args)
        flight.applied = True
        linearization.append(flight.invocation.index)

    while invoked < w.ops or in_flight:
        idle = [c for c in range(w.clients) if c not in in_flight] if invoked < w.ops else []
        choice = rng.random()
        if idle and (choice < 0.4 or not in_flight):
            client = rng.choice(idle)
            f = rng.choices(kinds, weights)[0]
            if f in (Op.CREATE, Op.PUT):
                values += 1
                args: tuple[Any, ...] = (rng.choice(keys), f"v{values}")
            elif f is Op.RENAME:
                src = rng.randrange(w.keys)
                if w.family:
                    low = src - src % w.family
                    dst = rng.randrange(low, min(low + w.family, w.keys))
                else:
                    dst = rng.randrange(w.keys)
                args = (keys[src], keys[dst])
            else:
                args = (rng.choice(keys),)
            invocation = Event(len(events), EventType.INVOKE, client, f, args, time_ns=len(events))
            events.append(invocation)
            roll = rng.random()
            outcome = (
                EventType.INFO
                if roll < w.info
                else EventType.FAIL
                if roll < w.info + w.fail
                else EventType.OK
            )
            in_flight[client] = _InFlight(invocation, outcome=outcome)
            invoked += 1
        elif limbo and choice < 0.45:
            flight = limbo.pop(rng.randrange(len(limbo)))
            if rng.random() < 0.5:
                apply(flight)
        elif in_flight:
            client = rng.choice(list(in_flight))
            flight = in_flight[client]
            if not flight.applied and flight.outcome is not EventType.FAIL and rng.random() < 0.6:
                apply(flight)
                continue
            if flight.outcome is EventType.OK and not flight.applied:
                continue
            del in_flight[client]
            if flight.outcome is EventType.OK:
                emit(EventType.OK, flight.invocation, flight.result)
            elif flight.outcome is EventType.FAIL:
                emit(EventType.FAIL, flight.invocation, error="refused")
            else:
                emit(EventType.INFO, flight.invocation, error="timed out")
                if not flight.applied:
                    limbo.append(flight)
    return Generated(History(events), linearization)
