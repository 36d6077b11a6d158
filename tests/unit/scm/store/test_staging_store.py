"""The staging store of an HA leader and the refusing store of a follower (SCM HA): staged writes are
read back through the overlay, each outermost batch is one transaction with the next epoch, a transaction
reaches the backend only when its epoch applies, and a step-down drops what never applied. Seeded loops
check the overlay against a model dict."""

from __future__ import annotations

import random

import pytest

from pyozone.hdds.exceptions import ResultCode, SCMException
from pyozone.scm.store import TABLE_NAMES, MemoryBackend, SCMMetadataStore
from pyozone.scm.store.metadata_store import StoreMode


def committed(store: SCMMetadataStore, cf: str = "meta") -> dict[bytes, bytes]:
    return dict(store.backend.items(cf))


def test_a_lone_scm_writes_at_once_and_waits_for_no_epoch() -> None:
    store = SCMMetadataStore.in_memory()
    store.meta.put("a", 1)
    assert store.mode is StoreMode.DIRECT and committed(store) == {b"a": b"1"}
    assert (store.epoch, store.applied_epoch) == (0, 0) and store.seal() == ()


def test_staged_writes_are_read_back_before_they_reach_the_backend() -> None:
    store = SCMMetadataStore.in_memory()
    store.meta.put("kept", "old")
    store.stage()
    store.meta.put("kept", "new")
    store.meta.put("added", 2)
    store.sequence_id.put("gone", 5)
    store.sequence_id.delete("gone")
    assert store.meta.get("kept") == "new" and store.meta.get("added") == 2
    assert store.sequence_id.get("gone") is None and list(store.sequence_id.items()) == []
    assert list(store.meta.items()) == [("added", 2), ("kept", "new")]
    assert committed(store) == {b"kept": b'"old"'}
    assert store.staged_keys() == 3


def test_an_outermost_batch_is_one_transaction_and_a_bare_write_another() -> None:
    store = SCMMetadataStore.in_memory()
    store.stage()
    with store.batch():
        store.meta.put("a", 1)
        assert store.epoch == 1  # what a command queued inside the batch waits for
        with store.batch():
            store.meta.put("b", 2)
    store.meta.put("c", 3)
    sealed = store.seal()
    assert [t.epoch for t in sealed] == [1, 2]
    assert [[key for _, key, _ in t.ops] for t in sealed] == [[b"a", b"b"], [b"c"]]
    assert store.seal() == ()  # each transaction is handed out once


def test_a_reservation_inside_a_batch_closes_first() -> None:
    """SequenceIdGenerator's write_now: the batch of ids is its own, earlier transaction."""
    store = SCMMetadataStore.in_memory()
    store.stage()
    with store.batch():
        store.meta.put("record", 1)
        store.write_now(("sequenceId", b"localId", b"1000"))
    sealed = store.seal()
    assert [(t.epoch, t.ops[0][0]) for t in sealed] == [(1, "sequenceId"), (2, "meta")]


def test_an_applied_epoch_reaches_the_backend_and_leaves_the_overlay() -> None:
    store = SCMMetadataStore.in_memory()
    store.stage()
    store.meta.put("a", 1)
    store.meta.put("b", 1)
    store.meta.put("a", 2)  # epoch 3 rewrites a
    store.seal()
    store.own_applied(2, (("scmTransactionInfos", b"#TRANSACTIONINFO", b'"1#2"'),))
    assert committed(store) == {b"a": b"1", b"b": b"1"}
    assert committed(store, "scmTransactionInfos") == {b"#TRANSACTIONINFO": b'"1#2"'}
    assert store.meta.get("a") == 2 and store.staged_keys() == 1  # a waits for epoch 3
    assert store.applied_epoch == 2
    store.own_applied(3)
    assert committed(store) == {b"a": b"2", b"b": b"1"} and store.staged_keys() == 0


def test_an_epoch_cannot_apply_before_it_is_sealed() -> None:
    store = SCMMetadataStore.in_memory()
    store.stage()
    store.meta.put("a", 1)
    with pytest.raises(ValueError, match="before it was sealed"):
        store.own_applied(1)


def test_a_follower_refuses_the_cores_writes_and_takes_the_leaders() -> None:
    store = SCMMetadataStore.in_memory()
    store.follow()
    for write in (lambda: store.meta.put("a", 1), lambda: store.write_now(("meta", b"a", b"1"))):
        with pytest.raises(SCMException) as refused:
            write()
        assert refused.value.code is ResultCode.SCM_NOT_LEADER
    with pytest.raises(SCMException) as refused, store.batch():
        store.meta.delete("a")
    assert refused.value.code is ResultCode.SCM_NOT_LEADER
    store.apply_committed([("meta", b"a", b"1")])
    assert store.meta.get("a") == 1


def test_only_a_follower_applies_committed_records() -> None:
    store = SCMMetadataStore.in_memory()
    store.stage()
    with pytest.raises(SCMException):
        store.apply_committed([("meta", b"a", b"1")])


def test_a_step_down_drops_the_unapplied_tail_and_names_its_keys() -> None:
    store = SCMMetadataStore.in_memory()
    store.meta.put("a", 0)
    store.stage()
    store.meta.put("a", 1)
    store.meta.put("b", 1)
    store.seal()
    store.own_applied(2)
    store.meta.put("c", 1)
    store.meta.delete("a")
    assert store.follow() == [("meta", b"c"), ("meta", b"a")]
    assert store.mode is StoreMode.FOLLOWER and store.staged_keys() == 0
    assert dict(store.meta.items()) == {"a": 1, "b": 1}


def test_an_epoch_a_step_down_dropped_is_never_committed() -> None:
    """Review R17 D3: an answer parked on a dropped epoch is never released, not while following and not
    once the next term's epochs apply past it; the command barrier (`applied_epoch`) waits for it no more."""
    store = SCMMetadataStore.in_memory()
    store.stage()
    store.meta.put("a", 1)
    store.seal()
    store.own_applied(1)
    store.meta.put("b", 2)  # epochs 2 and 3: sealed, never applied
    store.meta.put("c", 3)
    store.seal()
    store.follow()
    assert store.applied_epoch == 3
    assert [store.committed(e) for e in (1, 2, 3, 4)] == [True, False, False, False]
    store.stage()  # this SCM leads again: epochs 4, 5 apply; 6 is dropped by a second step-down
    store.meta.put("d", 4)
    store.meta.put("e", 5)
    store.seal()
    store.own_applied(5)
    store.meta.put("f", 6)
    store.follow()
    assert [store.committed(e) for e in range(1, 8)] == [True, False, False, True, True, False, False]


@pytest.mark.parametrize("seed", range(40))
def test_reads_through_the_overlay_match_a_model(seed: int) -> None:
    """Random puts, deletes and batches over two tables, random applies of sealed epochs: every read
    equals the model of all writes, the backend equals the model as of the last applied epoch."""
    rng = random.Random(seed)
    store = SCMMetadataStore(MemoryBackend(TABLE_NAMES))
    store.stage()
    tables = {"meta": store.meta, "sequenceId": store.sequence_id}
    seen: dict[str, dict[str, int]] = {cf: {} for cf in tables}
    at_epoch: dict[int, dict[str, dict[str, int]]] = {0: {cf: {} for cf in tables}}

    def write() -> None:
        cf, key = rng.choice(list(tables)), f"k{rng.randrange(8)}"
        if rng.random() < 0.3:
            tables[cf].delete(key)
            seen[cf].pop(key, None)
        else:
            tables[cf].put(key, value := rng.randrange(100))
            seen[cf][key] = value

    for _ in range(200):
        step = rng.random()
        if step < 0.4:
            with store.batch():
                for _ in range(rng.randint(1, 3)):
                    write()
            at_epoch[store.epoch] = {cf: dict(m) for cf, m in seen.items()}
        elif step < 0.7:
            write()
            at_epoch[store.epoch] = {cf: dict(m) for cf, m in seen.items()}
        else:
            sealed = store.seal()
            if sealed:
                store.own_applied(rng.choice(sealed).epoch)
        for cf, table in tables.items():
            assert dict(table.items()) == seen[cf]
            assert all(table.get(k) == v for k, v in seen[cf].items())
            stored = {
                table.key_codec.decode(k): table.value_codec.decode(v) for k, v in store.backend.items(cf)
            }
            assert stored == at_epoch[store.applied_epoch][cf]
