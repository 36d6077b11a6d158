"""The failover round shared by OM's and SCM's clients: the named leader first, then each other node in
turn, none twice in a round, a new round (the caller waits) once every node was asked."""

from __future__ import annotations

from pyozone.framework.failover_round import next_in_round


def test_a_named_leader_is_asked_next_then_the_others_in_turn_then_a_new_round() -> None:
    tried: set[int] = set()
    assert next_in_round(0, 3, [2], tried) == (2, False)
    assert next_in_round(2, 3, [], tried) == (1, False)
    assert next_in_round(1, 3, [], tried) == (2, True)  # all three asked: wait, then begin again
    assert tried == set()


def test_a_leader_named_again_within_the_round_is_not_asked_twice() -> None:
    tried: set[int] = set()
    assert next_in_round(0, 3, [1], tried) == (1, False)
    assert next_in_round(1, 3, [], tried) == (2, False)
    assert next_in_round(2, 3, [1], tried) == (1, True)  # the new round begins at the named leader


def test_a_lone_node_is_asked_again_after_the_wait() -> None:
    assert next_in_round(0, 1, [], set()) == (0, True)
