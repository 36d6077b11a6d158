"""(6) DeletingContainerHandler: DELETING and DELETED containers end the chain."""

from __future__ import annotations

import pytest

from pyozone.hdds.states import LifeCycleEvent
from pyozone.scm.replication.check.deleting import DeletingContainerHandler
from tests.unit.scm.replication.check.rmc_fakes import (
    CID,
    add,
    check,
    container,
    delete,
    ec_container,
    handle,
    replica,
)

H = DeletingContainerHandler()


def test_deleted_needs_nothing() -> None:
    out = handle(H, container("DELETED"), [replica("a", empty=True)])
    assert out.stopped is True and out.recorded() == {} and out.calls == []


def test_deleting_without_replicas_is_cleaned_up() -> None:
    out = handle(H, container("DELETING"), [])
    assert out.stopped is True and out.recorded() == {}
    assert out.calls == [("event", CID, LifeCycleEvent.CLEANUP)]


def test_delete_is_resent_to_empty_replicas_without_a_pending_delete() -> None:
    replicas = [
        replica("a", empty=True),
        replica("b", empty=True),
        replica("full"),
        replica("c", "UNHEALTHY", empty=True),
    ]
    out = handle(H, container("DELETING"), replicas, pending=[delete("b")])
    assert out.stopped is True and out.recorded() == {}
    assert out.calls == [("delete", "a", False), ("delete", "c", False)]


def test_only_a_pending_delete_on_the_replicas_own_datanode_holds_it_back() -> None:
    pending = [add("a", 1), delete("x", 1)]
    out = handle(H, ec_container("DELETING"), [replica("a", index=1, empty=True)], pending=pending)
    assert out.calls == [("delete", "a", False)]


@pytest.mark.parametrize("replicas", [[], [replica("a", empty=True)]])
def test_read_only_stops_and_does_nothing(replicas: list) -> None:
    out = handle(H, container("DELETING"), replicas, read_only=True)
    assert out.stopped is True and out.recorded() == {} and out.calls == []


@pytest.mark.parametrize("state", ["OPEN", "CLOSING", "QUASI_CLOSED", "CLOSED"])
def test_other_states_pass_through(state: str) -> None:
    out = handle(H, container(state), [])
    assert out.stopped is False and out.calls == []


def test_deleting_in_the_chain_is_never_reported_missing_or_under_replicated() -> None:
    out = check(container("DELETING"))
    assert out.recorded() == {} and out.under == []
    assert out.calls == [("event", CID, LifeCycleEvent.CLEANUP)]
    out = check(container("DELETING"), [replica("a", empty=True)])
    assert out.recorded() == {} and out.under == [] and out.calls == [("delete", "a", False)]
