"""A history of operations as Jepsen records one: each operation is an invoke event when a client sends it
and a completion when the client learns how it ended.

- ok: it happened, with the value it returned (a read's content id, or a `Refusal` that depends on the
  keys' state: models.py says why those are results).
- fail: it certainly did not happen (OM refused it as a whole on a rule that says nothing about the keys:
  an invalid name, a missing bucket, permission, quota, safe mode; or a put whose commit found its open key
  gone; or a read an OM refused as not the leader). A failed operation is left out of the check.
- info: indeterminate (a timeout, a lost connection, an OM that stopped answering, a commit whose answer was
  lost): it may or may not have happened. As in Jepsen, an info operation stays open to the end of the
  history: the checker may place it anywhere after its invocation, or nowhere.

Events are numbered under one lock, so the numbers are a total order consistent with real time: an event
recorded after another one returned has the larger number. That order is what the checker reads; `time_ns`
(monotonic, since the recorder started) is for people. Histories are saved and loaded as JSON lines, so a
failing one can be replayed: `python -m tests.jepsen.checker history.jsonl`.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from pyozone.framework.om_errors import OMException, OMLeaderNotReadyException, OMNotLeaderException
from tests.jepsen.models import Op, Refusal


class EventType(Enum):
    INVOKE = "invoke"
    OK = "ok"
    FAIL = "fail"
    INFO = "info"


@dataclass(frozen=True)
class Event:
    index: int  # the position in the history
    type: EventType
    process: int | str  # the client (Jepsen's :process)
    f: Op
    args: tuple[Any, ...]
    value: Any = None  # an ok completion's result
    error: str = ""  # what a fail or info completion saw
    time_ns: int = 0

    def to_json(self) -> str:
        record: dict[str, Any] = {
            "index": self.index,
            "type": self.type.value,
            "process": self.process,
            "f": self.f.value,
            "args": list(self.args),
            "time_ns": self.time_ns,
        }
        if self.type is EventType.OK:
            record["value"] = _encode(self.value)
        if self.error:
            record["error"] = self.error
        return json.dumps(record, sort_keys=True)

    @classmethod
    def from_json(cls, line: str) -> Event:
        r = json.loads(line)
        return cls(
            r["index"],
            EventType(r["type"]),
            r["process"],
            Op(r["f"]),
            tuple(r["args"]),
            _decode(r.get("value")),
            r.get("error", ""),
            r.get("time_ns", 0),
        )


def _encode(value: Any) -> Any:
    return {"refused": value.value} if isinstance(value, Refusal) else value


def _decode(value: Any) -> Any:
    return Refusal(value["refused"]) if isinstance(value, dict) and "refused" in value else value


@dataclass(frozen=True)
class Operation:
    """An invocation paired with its completion. `ret` is None for an indeterminate operation (info, or
    never completed): it is open to the end of the history."""

    id: int  # the invoke event's index
    process: int | str
    f: Op
    args: tuple[Any, ...]
    call: int
    ret: int | None
    type: EventType  # OK, FAIL or INFO
    result: Any = None
    end: int | None = None  # the completion event's index, an info one's too (None: never completed)

    def __str__(self) -> str:
        args = ", ".join(repr(a) for a in self.args)
        if self.type is EventType.OK:
            outcome = f"-> {self.result!r}"
        else:
            outcome = "(indeterminate)" if self.type is EventType.INFO else "(failed)"
        end = "open" if self.ret is None else str(self.ret)
        return f"#{self.id} p{self.process} {self.f.value}({args}) {outcome} [{self.call}..{end}]"


# OM's refusals of a whole request that say nothing about the keys' state: the request certainly changed
# nothing (OMException.ResultCodes names; pyozone/om/exceptions.py).
DEFINITE_REFUSALS = frozenset(
    {
        "INVALID_KEY_NAME",
        "INVALID_REQUEST",
        "INVALID_VOLUME_NAME",
        "INVALID_BUCKET_NAME",
        "VOLUME_NOT_FOUND",
        "BUCKET_NOT_FOUND",
        "PERMISSION_DENIED",
        "QUOTA_EXCEEDED",
        "SCM_IN_SAFE_MODE",
    }
)

# The refusals each operation returns as its result (models.py). A put's KEY_NOT_FOUND is its commit
# finding the open key gone (expired, cleaned up): the key was not written, so the put failed. The client
# reports a retried commit that finds it gone as CommitOutcomeUnknown, indeterminate.
STATE_RESULTS = {
    Op.GET: frozenset({Refusal.KEY_NOT_FOUND}),
    Op.DELETE: frozenset({Refusal.KEY_NOT_FOUND}),
    Op.RENAME: frozenset({Refusal.KEY_NOT_FOUND, Refusal.KEY_ALREADY_EXISTS}),
}


def outcome_of(f: Op, error: BaseException) -> tuple[EventType, Any]:
    """How an operation that raised `error` completes: ok with a `Refusal` result, fail, or info. Anything
    not known to be definite is info: that is always sound, it only leaves the checker more to try. A read
    an OM refused as not the leader (or not ready) fails: a read changes nothing, and a client pinned to
    one OM gets that refusal from every follower."""
    if f is Op.GET and isinstance(error, (OMNotLeaderException, OMLeaderNotReadyException)):
        return EventType.FAIL, None
    if isinstance(error, OMException):
        refusal = next((r for r in STATE_RESULTS.get(f, ()) if r.value == error.result), None)
        if refusal is not None:
            return EventType.OK, refusal
        put_not_committed = f in (Op.CREATE, Op.PUT) and error.result == Refusal.KEY_NOT_FOUND.value
        if error.result in DEFINITE_REFUSALS or put_not_committed:
            return EventType.FAIL, None
    return EventType.INFO, None


class History:
    """A thread-safe recorder; also what `load` returns. A process has at most one operation in flight."""

    def __init__(self, events: Iterable[Event] = ()) -> None:
        self._lock = threading.Lock()
        self._events: list[Event] = list(events)
        self._pending: dict[int | str, Event] = {}
        for e in self._events:
            if e.type is EventType.INVOKE:
                self._pending[e.process] = e
            else:
                self._pending.pop(e.process, None)
        self._start_ns = time.monotonic_ns()

    @property
    def events(self) -> list[Event]:
        with self._lock:
            return list(self._events)

    def invoke(self, process: int | str, f: Op, *args: Any) -> Event:
        with self._lock:
            if process in self._pending:
                raise ValueError(f"process {process} invoked {f.value} with {self._pending[process]} open")
            event = Event(len(self._events), EventType.INVOKE, process, f, args, time_ns=self._now())
            self._events.append(event)
            self._pending[process] = event
            return event

    def ok(self, invocation: Event, value: Any = None) -> Event:
        return self._complete(invocation, EventType.OK, value, "")

    def fail(self, invocation: Event, error: str) -> Event:
        return self._complete(invocation, EventType.FAIL, None, error)

    def info(self, invocation: Event, error: str) -> Event:
        return self._complete(invocation, EventType.INFO, None, error)

    def record(self, process: int | str, f: Op, args: tuple[Any, ...], call: Callable[[], Any]) -> Event:
        """Invokes, runs `call` and records how it ended (its return value, or `outcome_of` its error)."""
        invocation = self.invoke(process, f, *args)
        try:
            value = call()
        except Exception as e:
            kind, value = outcome_of(f, e)
            return self._complete(invocation, kind, value, "" if kind is EventType.OK else repr(e))
        return self.ok(invocation, value)

    def _complete(self, invocation: Event, kind: EventType, value: Any, error: str) -> Event:
        with self._lock:
            if self._pending.get(invocation.process) is not invocation:
                raise ValueError(f"{invocation} is not the open operation of process {invocation.process}")
            del self._pending[invocation.process]
            event = Event(
                len(self._events),
                kind,
                invocation.process,
                invocation.f,
                invocation.args,
                value,
                error,
                self._now(),
            )
            self._events.append(event)
            return event

    def _now(self) -> int:
        return time.monotonic_ns() - self._start_ns

    def operations(self) -> list[Operation]:
        """Invocations paired with their completions, in invocation order; one never completed is info."""
        ops: dict[int, Operation] = {}
        open_by_process: dict[int | str, Event] = {}
        for e in self.events:
            if e.type is EventType.INVOKE:
                open_by_process[e.process] = e
                ops[e.index] = Operation(e.index, e.process, e.f, e.args, e.index, None, EventType.INFO)
                continue
            invocation = open_by_process.pop(e.process, None)
            if invocation is None or (invocation.f, invocation.args) != (e.f, e.args):
                raise ValueError(
                    f"event {e.index}: a {e.type.value} of process {e.process} matches no invoke"
                )
            ret = None if e.type is EventType.INFO else e.index
            ops[invocation.index] = Operation(
                invocation.index, e.process, e.f, e.args, invocation.index, ret, e.type, e.value, e.index
            )
        return list(ops.values())

    def dump(self, path: Path) -> None:
        path.write_text("".join(e.to_json() + "\n" for e in self.events))

    @classmethod
    def load(cls, path: Path) -> History:
        return cls(Event.from_json(line) for line in path.read_text().splitlines() if line.strip())
