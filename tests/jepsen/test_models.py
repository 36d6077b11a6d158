"""The model of OM's keys: each operation's rule, and that pyozone's OM answers a random sequence of
operations exactly as the model does (so a history the checker rejects is OM's fault, not the model's)."""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyozone.hdds.om_records import KeyBlock
from pyozone.om.core import OzoneManager
from pyozone.om.exceptions import OMException, OMResultCode
from tests.jepsen.models import KeyMap, KeyValueModel, Op, Refusal
from tests.unit.om.om_fakes import FakeScm, make_om

MODEL = KeyValueModel()


def run(*steps: tuple[Op, tuple[object, ...]]) -> tuple[KeyMap, list[object]]:
    state, results = MODEL.initial(frozenset()), []
    for f, args in steps:
        state, result = MODEL.step(state, f, args)
        results.append(result)
    return state, results


def test_create_and_put_overwrite() -> None:
    state, results = run((Op.CREATE, ("a", 1)), (Op.PUT, ("a", 2)), (Op.CREATE, ("a", 3)), (Op.GET, ("a",)))
    assert results == [None, None, None, 3]
    assert state == KeyMap({"a": 3})


def test_a_missing_key_is_refused_by_get_and_delete() -> None:
    _, results = run((Op.GET, ("a",)), (Op.DELETE, ("a",)), (Op.PUT, ("a", 1)), (Op.DELETE, ("a",)))
    assert results == [Refusal.KEY_NOT_FOUND, Refusal.KEY_NOT_FOUND, None, None]


def test_rename_rules_in_om_order() -> None:
    # a missing source is refused first, even when the target exists
    _, results = run((Op.PUT, ("b", 2)), (Op.RENAME, ("a", "b")))
    assert results[1] is Refusal.KEY_NOT_FOUND
    # an existing target is refused
    state, results = run((Op.PUT, ("a", 1)), (Op.PUT, ("b", 2)), (Op.RENAME, ("a", "b")))
    assert results[2] is Refusal.KEY_ALREADY_EXISTS and state == KeyMap({"a": 1, "b": 2})
    # a rename onto itself changes nothing
    state, results = run((Op.PUT, ("a", 1)), (Op.RENAME, ("a", "a")))
    assert results[1] is None and state == KeyMap({"a": 1})
    # else the content moves
    state, results = run((Op.PUT, ("a", 1)), (Op.RENAME, ("a", "b")))
    assert results[1] is None and state == KeyMap({"b": 1})


def test_states_are_values() -> None:
    one, other = KeyMap({"a": 1, "b": 2}), KeyMap([("b", 2), ("a", 1)])
    assert one == other and hash(one) == hash(other) and len({one, other}) == 1
    assert one.set("a", 1) is one and one.set("a", 3) != one


def test_keys_name_what_each_operation_touches() -> None:
    assert MODEL.keys(Op.RENAME, ("a", "b")) == ("a", "b")
    assert MODEL.keys(Op.PUT, ("a", 1)) == ("a",)
    assert MODEL.show(KeyMap({"a": 1}), ["b", "a"]) == "{a: 1, b: -}"


KEYS = ["a", "b", "c"]
BUCKETS = itertools.count()
operations = st.one_of(
    st.tuples(st.sampled_from([Op.CREATE, Op.PUT]), st.tuples(st.sampled_from(KEYS), st.integers(1, 9))),
    st.tuples(st.sampled_from([Op.GET, Op.DELETE]), st.tuples(st.sampled_from(KEYS))),
    st.tuples(st.just(Op.RENAME), st.tuples(st.sampled_from(KEYS), st.sampled_from(KEYS))),
)


def om_step(om: OzoneManager, bucket: str, f: Op, args: tuple[object, ...]) -> object:
    """The operation on pyozone's OM; a content id is the key's length (a key of n bytes has content n,
    n below the tests' block size)."""
    try:
        if f in (Op.CREATE, Op.PUT):
            key, size = args
            session = om.keys.open("vol1", bucket, key, size)  # type: ignore[arg-type]
            block = KeyBlock(session.key.blocks[0].block_id, 0, size, bcsid=1)  # type: ignore[arg-type]
            om.keys.commit("vol1", bucket, key, session.client_id, size, [block])  # type: ignore[arg-type]
            return None
        if f is Op.GET:
            return om.keys.record("vol1", bucket, args[0]).data_size  # type: ignore[arg-type]
        if f is Op.DELETE:
            om.keys.delete("vol1", bucket, args[0])  # type: ignore[arg-type]
            return None
        om.keys.rename("vol1", bucket, args[0], args[1])  # type: ignore[arg-type]
        return None
    except OMException as e:
        assert e.code in (OMResultCode.KEY_NOT_FOUND, OMResultCode.KEY_ALREADY_EXISTS), e
        return Refusal[e.code.name]


@pytest.fixture(scope="module")
def om() -> Iterator[OzoneManager]:
    with tempfile.TemporaryDirectory() as tmp:
        om = make_om(Path(tmp), FakeScm())
        om.volumes.create("vol1")
        yield om
        om.store.close()


@given(steps=st.lists(operations, max_size=25))
def test_pyozone_om_answers_as_the_model(
    om: OzoneManager, steps: list[tuple[Op, tuple[object, ...]]]
) -> None:
    bucket = f"bkt{next(BUCKETS)}"  # each example on its own empty bucket
    om.buckets.create("vol1", bucket)
    state = MODEL.initial(frozenset())
    for f, args in steps:
        state, expected = MODEL.step(state, f, args)
        assert om_step(om, bucket, f, args) == expected, (f, args)
