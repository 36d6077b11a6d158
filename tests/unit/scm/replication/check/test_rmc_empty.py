"""(5) EmptyContainerHandler: branches A (CLOSED, empty replicas), B (QUASI_CLOSED, empty replicas) and
C (CLOSED, no keys, no replicas)."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import pytest

from pyozone.hdds.commands import DeleteContainerCommand
from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.ids import RATIS_THREE
from pyozone.hdds.states import LifeCycleEvent, LifeCycleState, ReplicaState
from pyozone.hdds.store.codec import RecordCodec
from pyozone.scm.node.commands import CommandQueue
from pyozone.scm.replication.check.empty import EmptyContainerHandler
from pyozone.scm.store import SCMMetadataStore
from tests.builders import dn_id
from tests.unit.scm.replication.check.rmc_fakes import (
    CID,
    SEQ,
    S,
    check,
    container,
    ec_container,
    handle,
    replica,
)

H = EmptyContainerHandler()
DELETE = ("event", CID, LifeCycleEvent.DELETE)


def empty(dn: str, state: str = "CLOSED", seq: int = SEQ, index: int = 0) -> object:
    return replica(dn, state, index=index, seq=seq, empty=True)


def test_a_ratis_moves_the_container_to_deleting_then_deletes_replicas() -> None:
    out = handle(H, container("CLOSED"), [empty("a"), empty("b"), empty("c")])
    assert out.stopped is True
    out.assert_only(S.EMPTY)
    assert out.calls == [DELETE, ("delete", "a", False), ("delete", "b", False), ("delete", "c", False)]


def test_a_does_not_look_at_the_container_key_count() -> None:
    out = handle(H, container("CLOSED", keys=5), [empty("a")])
    out.assert_only(S.EMPTY)
    assert out.calls == [DELETE, ("delete", "a", False)]


def test_a_ratis_without_a_replica_at_the_container_bcsid_keeps_the_container_state() -> None:
    out = handle(H, container("CLOSED"), [empty("a", seq=SEQ - 1), empty("b", seq=SEQ - 2)])
    assert out.stopped is True
    out.assert_only(S.EMPTY)
    assert out.calls == [("delete", "a", False), ("delete", "b", False)]


def test_a_ec_always_moves_to_deleting() -> None:
    replicas = [empty(f"dn{i}", seq=1, index=i) for i in range(1, 6)]
    out = handle(H, ec_container("CLOSED"), replicas)
    out.assert_only(S.EMPTY)
    assert out.calls == [DELETE, *[("delete", f"dn{i}", False) for i in range(1, 6)]]


@pytest.mark.parametrize(
    "replicas",
    [
        [empty("a"), replica("b", "CLOSED")],  # one replica still has data
        [empty("a"), empty("b", "QUASI_CLOSED")],  # every replica must be CLOSED
        [empty("a"), empty("b", "UNHEALTHY")],
    ],
)
def test_a_needs_every_replica_closed_and_empty(replicas: list) -> None:
    out = handle(H, container("CLOSED"), replicas)
    assert out.stopped is False and out.recorded() == {} and out.calls == []


def test_b_quasi_closed_raises_bcsid_deletes_container_then_deletable_replicas() -> None:
    replicas = [
        empty("qc", "QUASI_CLOSED", seq=12),
        empty("bad", "UNHEALTHY", seq=13),
        empty("c", "CLOSED", seq=9),
    ]
    out = handle(H, container("QUASI_CLOSED"), replicas)
    assert out.stopped is True
    out.assert_only(S.EMPTY)
    assert out.calls == [("sequence_id", CID, 13), DELETE, ("delete", "qc", False), ("delete", "c", False)]


def test_b_keeps_a_higher_container_bcsid() -> None:
    out = handle(
        H, container("QUASI_CLOSED", seq=20), [empty("a", "QUASI_CLOSED", seq=12), empty("b", "OPEN")]
    )
    out.assert_only(S.EMPTY)
    assert out.calls == [DELETE, ("delete", "a", False)]


def test_b_needs_every_replica_empty() -> None:
    replicas = [empty("a", "QUASI_CLOSED"), replica("b", "QUASI_CLOSED")]
    out = handle(H, container("QUASI_CLOSED"), replicas)
    assert out.stopped is False and out.recorded() == {} and out.calls == []


def test_c_closed_without_keys_or_replicas_is_only_reported() -> None:
    out = handle(H, container("CLOSED", keys=0), [])
    assert out.stopped is True
    out.assert_only(S.EMPTY)
    assert out.calls == []


def test_c_in_the_chain_prevents_missing() -> None:
    out = check(container("CLOSED", keys=0))
    out.assert_only(S.EMPTY)
    assert out.health is S.EMPTY and out.under == [] and out.calls == []
    with_keys = check(container("CLOSED", keys=1))
    with_keys.assert_only(S.MISSING)


@pytest.mark.parametrize(
    ("info", "replicas"),
    [
        (container("CLOSED"), [empty("a"), empty("b"), empty("c")]),
        (container("QUASI_CLOSED"), [empty("a", "QUASI_CLOSED", seq=30)]),
        (container("CLOSED", keys=0), []),
    ],
)
def test_read_only_reports_empty_and_acts_not(info: object, replicas: list) -> None:
    out = handle(H, info, replicas, read_only=True)
    assert out.stopped is True
    out.assert_only(S.EMPTY)
    assert out.calls == []


@pytest.mark.parametrize("state", ["OPEN", "CLOSING", "DELETING", "DELETED"])
def test_other_states_pass_through(state: str) -> None:
    out = handle(H, container(state, keys=0), [empty("a", "CLOSED")])
    assert out.stopped is False and out.recorded() == {} and out.calls == []


def test_empty_replicas_in_the_chain() -> None:
    out = check(container("CLOSED"), [empty("a"), empty("b"), empty("c")])
    out.assert_only(S.EMPTY)
    assert out.health is S.EMPTY
    assert out.calls == [DELETE, ("delete", "a", False), ("delete", "b", False), ("delete", "c", False)]
    out = check(container("QUASI_CLOSED"), [empty("a", "QUASI_CLOSED"), empty("b", "QUASI_CLOSED")])
    # Two origins and not force-closable: the QC handler reports it stuck before the empty branch runs.
    out.assert_only(S.QUASI_CLOSED_STUCK, S.EMPTY)
    assert out.health is S.EMPTY
    assert out.calls == [DELETE, ("delete", "a", False), ("delete", "b", False)]


def test_a_no_delete_command_leaves_before_the_deleting_record_commits() -> None:
    """HA (review R17 D2): the command barrier stamps a command with the store's epoch when it
    is queued; the DELETING record is staged first, so no DeleteContainer leaves while a step-down could
    still undo that record."""
    store = SCMMetadataStore.in_memory()
    store.stage()
    table = store.int_table("containers", RecordCodec(ContainerInfo))
    info = ContainerInfo(CID, LifeCycleState.CLOSED, 0, "p1", RATIS_THREE, "om", sequence_id=SEQ)
    table.put(CID, info)
    store.seal()
    store.own_applied(store.epoch)
    queue = CommandQueue(store)

    class Services:
        def send_delete(self, container: ContainerInfo, replica: ContainerReplica, force: bool) -> None:
            queue.add(replica.datanode, DeleteContainerCommand(container_id=CID, force=force))

        def update_container_state(self, container_id: int, event: LifeCycleEvent) -> None:
            table.put(container_id, replace(info, state=LifeCycleState.DELETING))

    dns = [dn_id(i) for i in range(3)]
    replicas = tuple(ContainerReplica(CID, dn, ReplicaState.CLOSED, dn, SEQ, is_empty=True) for dn in dns)
    request = SimpleNamespace(container=info, replicas=replicas, read_only=False, record=lambda state: None)
    assert H.handle(request, Services()) is True  # type: ignore[arg-type]

    assert store.epoch > store.applied_epoch  # the DELETING record is staged, not committed
    assert [queue.drain(dn) for dn in dns] == [[], [], []]
    store.seal()
    store.own_applied(store.epoch)
    assert all(len(queue.drain(dn)) == 1 for dn in dns)
