"""The durability check: which acknowledged changes may end a key, which keys it leaves out (an
indeterminate change that may come after), and that it finds a lost write that is not the last invoked."""

from __future__ import annotations

from tests.jepsen.durability import lost_writes
from tests.jepsen.models import Op, Refusal
from tests.jepsen.test_checker import Script


def test_a_key_ends_on_any_of_its_concurrent_last_writes() -> None:
    s = Script().call(1, Op.PUT, "k", "a").call(2, Op.PUT, "k", "b").ok(1).ok(2)
    for held in ("a", "b"):
        found = lost_writes(s.history, {"k": held})
        assert (found.keys, found.writes, found.lost) == (1, 2, [])
    assert len(lost_writes(s.history, {"k": None}).lost) == 1


def test_a_write_followed_by_an_acknowledged_change_is_not_required() -> None:
    s = Script().call(1, Op.PUT, "k", "a").ok(1).call(2, Op.DELETE, "k").ok(2)
    assert lost_writes(s.history, {"k": None}).lost == []
    assert len(lost_writes(s.history, {"k": "a"}).lost) == 1  # the delete was acknowledged: "a" came back


def test_a_refused_change_changes_nothing() -> None:
    s = Script().call(1, Op.PUT, "k", "a").ok(1).call(2, Op.DELETE, "j").ok(2, Refusal.KEY_NOT_FOUND)
    s.call(2, Op.RENAME, "j", "k").ok(2, Refusal.KEY_NOT_FOUND)
    found = lost_writes(s.history, {"k": None, "j": None})
    assert found.keys == 1 and len(found.lost) == 1


def test_an_indeterminate_change_after_the_last_write_leaves_the_key_out() -> None:
    invoked_after = Script().call(1, Op.PUT, "k", "a").call(2, Op.DELETE, "k").ok(1).info(2)
    in_flight = Script().call(2, Op.DELETE, "k").call(1, Op.PUT, "k", "a").ok(1).info(2)
    for s in (invoked_after, in_flight):
        assert lost_writes(s.history, {"k": None}).keys == 0


def test_an_indeterminate_change_given_up_before_the_last_write_does_not() -> None:
    """The old check left out every key with an indeterminate change anywhere in the run."""
    s = Script().call(2, Op.DELETE, "k").info(2).call(1, Op.PUT, "k", "a").ok(1)
    assert lost_writes(s.history, {"k": "a"}).keys == 1
    assert len(lost_writes(s.history, {"k": None}).lost) == 1


def test_a_rename_onto_the_key_leaves_it_out_and_one_away_ends_it_empty() -> None:
    s = Script().call(1, Op.PUT, "j", "a").ok(1).call(1, Op.RENAME, "j", "k").ok(1)
    found = lost_writes(s.history, {"j": None, "k": "a"})
    assert (found.keys, found.writes, found.lost) == (1, 0, [])  # j checked (empty), k left out
    assert len(lost_writes(s.history, {"j": "a", "k": "a"}).lost) == 1
