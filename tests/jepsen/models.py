"""The sequential specification the checker holds a history to: OM's keys in one bucket, as a map from a key
name to the id of the content last written under it.

One object per key is not enough: a rename reads and writes two keys at once, so the state is the map and
every operation is a step on it that returns its new state and its result. What each step answers is what
pyozone's OM does (pyozone/om/core.py):

- create / put (OM's openKey then commitKey): the key gets the new content whether or not it existed; OM's
  createKey overwrites, so both are a put (create is kept as its own name so a history reads as the workload
  ran it).
- get (lookupKey, then the data): the content's id, or KEY_NOT_FOUND.
- delete (deleteKey): KEY_NOT_FOUND when the key is absent, else it is gone.
- rename(src, dst) (renameKey): KEY_NOT_FOUND when src is absent (checked first); when dst == src, nothing
  changes; KEY_ALREADY_EXISTS when dst exists; else dst takes src's content and src is gone.

A refusal that depends on the keys' state (KEY_NOT_FOUND, KEY_ALREADY_EXISTS) is a result like any other,
not a failed operation: it is an observation of the state ("src was absent") that linearizability must
explain, so a stale follower answering KEY_NOT_FOUND for a committed key is caught. `history.outcome_of`
records those refusals as ok completions with a `Refusal` result; refusals that say nothing about the keys
(an invalid name, a follower's not-leader answer, safe mode) are failed operations, removed from the check.

States are immutable and hashable, as the checker memoizes (linearized set, state) pairs.

SCM's containers (issue 31's Jepsen-style test of SCM HA) have their own model, `ContainerStateModel`: each
container a register of its lifecycle state that moves forward only.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from enum import Enum
from typing import Any, Protocol, TypeVar

Value = Hashable  # the id of a key's content (a JSON scalar: str or int)
S = TypeVar("S", bound=Hashable)


class Refusal(Enum):
    """Refusals that depend on the state: OM's (OMException.ResultCodes names) and SCM's (SCMException
    ResultCodes: a container unknown, or not OPEN when asked to close)."""

    KEY_NOT_FOUND = "KEY_NOT_FOUND"
    KEY_ALREADY_EXISTS = "KEY_ALREADY_EXISTS"
    CONTAINER_NOT_FOUND = "CONTAINER_NOT_FOUND"
    INVALID_CONTAINER_STATE = "INVALID_CONTAINER_STATE"

    def __repr__(self) -> str:
        return self.value


class Op(Enum):
    """The operations of the workloads (Jepsen's :f): OM's keys, then SCM's containers."""

    CREATE = "create"  # (key, value)
    PUT = "put"  # (key, value): an overwrite
    GET = "get"  # (key,)
    DELETE = "delete"  # (key,)
    RENAME = "rename"  # (src, dst)
    ALLOCATE = "allocate"  # allocateScmBlock: () recorded, (container,) once checkable
    CLOSE = "close"  # closeContainer: (container,)
    STATE = "state"  # getContainer: (container,) recorded, (container, state seen) once checkable
    LIST = "list"  # listContainer: () recorded, one STATE per container listed once checkable


class Model(Protocol[S]):
    """A sequential specification: what the checker needs of one."""

    def initial(self, keys: frozenset[str]) -> S:
        """The state before the history, restricted to `keys` (one component of the history)."""
        ...

    def step(self, state: S, f: Op, args: tuple[Any, ...]) -> tuple[S, Any]:
        """Applies the operation: (the state after it, the result it returns)."""
        ...

    def keys(self, f: Op, args: tuple[Any, ...]) -> tuple[str, ...]:
        """The keys the operation reads or writes: operations sharing none are checked apart."""
        ...

    def read_only(self, f: Op) -> bool:
        """True when the operation never changes the state (an indeterminate one is then dropped)."""
        ...

    def writes(self, f: Op, args: tuple[Any, ...]) -> Hashable | None:
        """The value the operation introduces, if any, and if the initial state does not hold it already
        (the checker bounds an indeterminate write whose value no other operation writes and one read)."""
        ...

    def observed(self, f: Op, args: tuple[Any, ...], result: Any) -> Hashable | None:
        """The value a completed operation saw, if any."""
        ...

    def replaces(self, state: S, f: Op, args: tuple[Any, ...]) -> bool:
        """True when the operation, a write, only replaces the value of a key that exists in `state`."""
        ...

    def show(self, state: S, keys: Iterable[str]) -> str:
        """The state's `keys`, for a report."""
        ...


class KeyMap:
    """An immutable map key -> value with its hash computed once (the checker hashes states often)."""

    __slots__ = ("_hash", "_items")

    def __init__(self, items: Mapping[str, Value] | Iterable[tuple[str, Value]] = ()) -> None:
        self._items: dict[str, Value] = dict(items)
        self._hash = hash(frozenset(self._items.items()))

    def get(self, key: str) -> Value | None:
        return self._items.get(key)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def set(self, key: str, value: Value) -> KeyMap:
        if self._items.get(key, _ABSENT) == value:
            return self
        return KeyMap({**self._items, key: value})

    def without(self, *keys: str) -> KeyMap:
        return KeyMap({k: v for k, v in self._items.items() if k not in keys})

    def items(self) -> dict[str, Value]:
        return dict(self._items)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KeyMap) and self._hash == other._hash and self._items == other._items

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{k}: {v!r}" for k, v in sorted(self._items.items())) + "}"


_ABSENT = object()


class KeyValueModel:
    """OM's keys in one bucket (the module docstring gives each operation's rule). `initial_keys`: keys that
    exist before the history starts, with their content ids."""

    def __init__(self, initial_keys: Mapping[str, Value] | None = None) -> None:
        self._initial = dict(initial_keys or {})
        self._initial_values = frozenset(self._initial.values())

    def initial(self, keys: frozenset[str]) -> KeyMap:
        return KeyMap({k: v for k, v in self._initial.items() if k in keys})

    def keys(self, f: Op, args: tuple[Any, ...]) -> tuple[str, ...]:
        return (args[0], args[1]) if f is Op.RENAME else (args[0],)

    def read_only(self, f: Op) -> bool:
        return f is Op.GET

    def writes(self, f: Op, args: tuple[Any, ...]) -> Value | None:
        value = args[1] if f is Op.CREATE or f is Op.PUT else None
        return None if value in self._initial_values else value

    def observed(self, f: Op, args: tuple[Any, ...], result: Any) -> Value | None:
        return result if f is Op.GET and not isinstance(result, Refusal) else None

    def replaces(self, state: KeyMap, f: Op, args: tuple[Any, ...]) -> bool:
        return (f is Op.CREATE or f is Op.PUT) and args[0] in state

    def show(self, state: KeyMap, keys: Iterable[str]) -> str:
        return (
            "{"
            + ", ".join(f"{k}: {state.get(k)!r}" if k in state else f"{k}: -" for k in sorted(set(keys)))
            + "}"
        )

    def step(self, state: KeyMap, f: Op, args: tuple[Any, ...]) -> tuple[KeyMap, Any]:
        if f is Op.CREATE or f is Op.PUT:
            key, value = args
            return state.set(key, value), None
        if f is Op.GET:
            value = state.get(args[0])
            return state, Refusal.KEY_NOT_FOUND if value is None else value
        if f is Op.DELETE:
            if args[0] not in state:
                return state, Refusal.KEY_NOT_FOUND
            return state.without(args[0]), None
        if f is Op.RENAME:
            src, dst = args
            if src not in state:
                return state, Refusal.KEY_NOT_FOUND
            if dst == src:
                return state, None
            if dst in state:
                return state, Refusal.KEY_ALREADY_EXISTS
            return state.without(src).set(dst, state.get(src)), None  # type: ignore[arg-type]
        raise ValueError(f"unknown operation {f}")


CONTAINER_STATES = ("CONTAINER_NOT_FOUND", "OPEN", "CLOSING", "QUASI_CLOSED", "CLOSED", "DELETING", "DELETED")
"""A container's states in the only order SCM moves it (Ozone's container state machine; RECOVERING, EC's,
is left out), led by "not created yet": a read may never see one older than a read or change before it."""
_RANK = {state: rank for rank, state in enumerate(CONTAINER_STATES)}


class ContainerStateModel:
    """SCM's containers, each a register of its state that moves forward only. SCM also moves it by itself
    (a datanode's report takes CLOSING to CLOSED, a full container is closed), never seen by the clients,
    so the model keeps the oldest state each container may still be in, and a read carries the state it
    saw in its args (tests/jepsen/containers.py makes it so): it fits when that state is not older, and
    becomes the new bound.

    - allocate(c): an acknowledged block in c: c was OPEN then (SCM allocates in OPEN containers only).
    - close(c): c is CLOSING or later after it. A close refused INVALID_CONTAINER_STATE is the same
      observation: the client retries a close that timed out on another SCM, and its own first attempt
      may be what closed c, so neither answer says c was OPEN just before.
    - state(c, seen): a getContainer or a listContainer entry saw `seen` (CONTAINER_NOT_FOUND: SCM knew
      no such container); the model answers `seen` when it fits, else the state c must have."""

    def initial(self, keys: frozenset[str]) -> KeyMap:
        return KeyMap()

    def keys(self, f: Op, args: tuple[Any, ...]) -> tuple[str, ...]:
        return (str(args[0]),)

    def read_only(self, f: Op) -> bool:
        return f is not Op.CLOSE

    def writes(self, f: Op, args: tuple[Any, ...]) -> Value | None:
        return None

    def observed(self, f: Op, args: tuple[Any, ...], result: Any) -> Value | None:
        return None

    def replaces(self, state: KeyMap, f: Op, args: tuple[Any, ...]) -> bool:
        return False

    def show(self, state: KeyMap, keys: Iterable[str]) -> str:
        return "{" + ", ".join(f"{k}: {state.get(k) or CONTAINER_STATES[0]}" for k in sorted(set(keys))) + "}"

    def step(self, state: KeyMap, f: Op, args: tuple[Any, ...]) -> tuple[KeyMap, Any]:
        key = str(args[0])
        bound = str(state.get(key) or CONTAINER_STATES[0])
        if f is Op.ALLOCATE:
            seen = "OPEN"
        elif f is Op.STATE:
            seen = args[1]
        elif f is Op.CLOSE:
            return state.set(key, max(bound, "CLOSING", key=_RANK.__getitem__)), None
        else:
            raise ValueError(f"{f} is no operation on SCM's containers")
        if _RANK[seen] < _RANK[bound]:
            return state, bound
        return state.set(key, seen), seen
