"""om.db's double buffer: visible at once, durable in shared synced batches, in order, fatal on failure."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyozone.om.double_buffer import MISSING, BufferFailedError, DoubleBuffer, Op, OwnerDropped
from pyozone.om.metadata import BUCKET_TABLE, KEY_TABLE, VOLUME_TABLE, OMMetadataStore, OMStoreError

TABLES = ("t",)
WAIT_S = 10


class GatedWriter:
    """A flush target that holds each batch until the test opens the gate."""

    def __init__(self) -> None:
        self.batches: list[list[Op]] = []
        self.gate = threading.Event()
        self.entered = threading.Event()
        self.fail: BaseException | None = None

    def __call__(self, ops: list[Op]) -> None:
        self.entered.set()
        assert self.gate.wait(WAIT_S)
        if self.fail is not None:
            raise self.fail
        self.batches.append(ops)


def test_a_write_is_visible_at_once_and_durable_only_after_its_batch() -> None:
    writer = GatedWriter()
    buffer = DoubleBuffer(TABLES, writer)
    epoch = buffer.add([("t", "a", b"1")])
    assert buffer.cache.get("t", "a") == b"1"
    durable = buffer.durable(epoch)
    assert writer.entered.wait(WAIT_S)
    assert not durable.done()
    writer.gate.set()
    durable.result(WAIT_S)
    assert writer.batches == [[("t", "a", b"1")]]
    buffer.close()


def test_transactions_queued_during_a_flush_share_the_next_batch_and_its_sync() -> None:
    writer = GatedWriter()
    buffer = DoubleBuffer(TABLES, writer)
    buffer.add([("t", "first", b"")])
    assert writer.entered.wait(WAIT_S)
    last = 0
    for i in range(50):
        last = buffer.add([("t", f"k{i:02d}", b"v"), ("t", "counter", str(i).encode())])
    writer.gate.set()
    buffer.wait(last)
    assert len(writer.batches) == 2
    assert [k for _, k, _ in writer.batches[1]][:4] == ["k00", "counter", "k01", "counter"]
    stats = buffer.stats()
    assert (stats.flushes, stats.transactions, stats.max_transactions_in_one_flush) == (2, 51, 50)
    assert stats.unflushed == 0
    buffer.close()


def test_a_flushed_entry_leaves_the_cache_unless_a_later_transaction_rewrote_it() -> None:
    writer = GatedWriter()
    buffer = DoubleBuffer(TABLES, writer)
    buffer.add([("t", "a", b"1"), ("t", "b", b"1")])
    assert writer.entered.wait(WAIT_S)  # the first batch is out: a rewrite goes to the next one
    writer.entered.clear()
    buffer.add([("t", "a", b"2")])
    writer.gate.set()
    buffer.wait()
    assert len(buffer.cache) == 0
    assert [op for batch in writer.batches for op in batch][-1] == ("t", "a", b"2")
    buffer.close()


def test_a_writer_waits_while_the_unflushed_limit_is_reached() -> None:
    writer = GatedWriter()
    buffer = DoubleBuffer(TABLES, writer, max_unflushed=2)
    buffer.add([("t", "a", b"")])
    buffer.add([("t", "b", b"")])
    third = threading.Event()
    threading.Thread(target=lambda: (buffer.add([("t", "c", b"")]), third.set()), daemon=True).start()
    assert not third.wait(0.2)
    writer.gate.set()
    assert third.wait(WAIT_S)
    buffer.close()


def test_a_failed_flush_fails_its_waiters_refuses_later_writes_and_reports_once() -> None:
    writer = GatedWriter()
    writer.fail = OSError("disk gone")
    failures: list[BaseException] = []
    buffer = DoubleBuffer(TABLES, writer, on_failure=failures.append)
    durable = buffer.durable(buffer.add([("t", "a", b"")]))
    writer.gate.set()
    with pytest.raises(BufferFailedError, match="disk gone"):
        durable.result(WAIT_S)
    with pytest.raises(BufferFailedError):
        buffer.add([("t", "b", b"")])
    assert [str(e) for e in failures] == ["disk gone"]


def test_an_owner_dropped_during_a_flush_ends_the_flusher_without_a_failure() -> None:
    """The store went (unclosed) between the flusher taking a batch and writing it: nobody can wait for
    that batch, so it is not a failure of om.db (which would stop the OM)."""
    writer = GatedWriter()
    writer.fail = OwnerDropped()
    failures: list[BaseException] = []
    buffer = DoubleBuffer(TABLES, writer, on_failure=failures.append)
    buffer.add([("t", "a", b"")])
    writer.gate.set()
    buffer._flusher.join(WAIT_S)
    assert not buffer._flusher.is_alive() and failures == []


def test_limit_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        DoubleBuffer(TABLES, GatedWriter(), max_unflushed=0)


# ------------------------------------------------------------------ the store over it
def test_store_reads_and_scans_see_pending_writes_over_rocksdb(tmp_path: Path) -> None:
    store = OMMetadataStore(tmp_path / "om.db")
    store.write([(KEY_TABLE, "/v/b/a", b"1"), (KEY_TABLE, "/v/b/c", b"1"), (KEY_TABLE, "/v/b/e", b"1")])
    store.sync()
    store.write([(KEY_TABLE, "/v/b/b", b"2"), (KEY_TABLE, "/v/b/c", None), (KEY_TABLE, "/v/b/e", b"2")])
    assert store.get(KEY_TABLE, "/v/b/c") is None
    assert list(store.scan(KEY_TABLE, "/v/b/")) == [("/v/b/a", b"1"), ("/v/b/b", b"2"), ("/v/b/e", b"2")]
    assert list(store.scan(KEY_TABLE, "/v/b/", start_after="/v/b/b")) == [("/v/b/e", b"2")]
    store.close()


def test_store_close_flushes_what_is_queued(tmp_path: Path) -> None:
    store = OMMetadataStore(tmp_path / "om.db")
    for i in range(100):
        store.write([(VOLUME_TABLE, f"/v{i:03d}", b"x")])
    store.close()
    again = OMMetadataStore(tmp_path / "om.db")
    assert len(list(again.scan(VOLUME_TABLE))) == 100
    again.close()


def test_store_write_after_a_failed_flush_names_the_db(tmp_path: Path) -> None:
    store = OMMetadataStore(tmp_path / "om.db", on_failure=lambda e: None)
    store._backend.close()  # the next flush fails
    store.write([(VOLUME_TABLE, "/v", b"x")])
    with pytest.raises(OMStoreError, match=r"om\.db"):
        store.sync()
    with pytest.raises(OMStoreError, match=r"om\.db"):
        store.write([(VOLUME_TABLE, "/w", b"x")])


keys = st.sampled_from([f"/k{i}" for i in range(8)])
actions = st.lists(
    st.one_of(
        st.tuples(st.just("put"), keys, st.binary(max_size=3)),
        st.tuples(st.just("delete"), keys, st.none()),
        st.tuples(st.just("sync"), st.none(), st.none()),
    ),
    max_size=40,
)


@settings(max_examples=40, deadline=None)
@given(actions=actions, start_after=st.one_of(st.none(), keys))
def test_store_view_is_the_model_whatever_was_flushed(
    tmp_path_factory: pytest.TempPathFactory, actions: list, start_after: str | None
) -> None:
    store = OMMetadataStore(tmp_path_factory.mktemp("db") / "om.db")
    model: dict[str, bytes] = {}
    for action, key, value in actions:
        if action == "sync":
            store.sync()
        elif action == "put":
            store.write([(KEY_TABLE, key, value)])
            model[key] = value
        else:
            store.write([(KEY_TABLE, key, None)])
            model.pop(key, None)
        assert store.get(KEY_TABLE, key or "/k0") == model.get(key or "/k0")
    expected = sorted((k, v) for k, v in model.items() if start_after is None or k > start_after)
    assert list(store.scan(KEY_TABLE, "/k", start_after)) == expected
    store.close()


def test_a_full_table_keeps_its_values_after_their_flush_and_drops_its_deletions() -> None:
    writer = GatedWriter()
    writer.gate.set()
    buffer = DoubleBuffer(("t", "full"), writer, full=("full",))
    buffer.cache.load("full", [("old", b"0")])
    buffer.wait(buffer.add([("t", "a", b"1"), ("full", "b", b"2"), ("full", "old", None)]))
    assert buffer.cache.get("t", "a") is MISSING  # RocksDB has it now
    assert buffer.cache.get("full", "b") == b"2"
    assert buffer.cache.get("full", "old") is None and buffer.cache.get("full", "never") is None
    assert len(buffer.cache) == 1
    buffer.close()


def test_a_full_table_key_deleted_then_set_again_in_one_batch_stays_set() -> None:
    """deleteBucket and createBucket of the same name in one flush batch: after the flush the bucket
    reads as created (the deletion's eviction dropped the set, and a full table's reads never reach
    RocksDB: BUCKET_NOT_FOUND until a restart; R1's D1)."""
    writer = GatedWriter()
    buffer = DoubleBuffer(("full",), writer, full=("full",))
    buffer.cache.load("full", [("/vol/bkt", b"old")])
    buffer.add([("full", "/other", b"x")])  # the flusher takes this batch and waits at the gate
    assert writer.entered.wait(WAIT_S)
    buffer.add([("full", "/vol/bkt", None)])
    last = buffer.add([("full", "/vol/bkt", b"new")])  # both in the next batch
    writer.gate.set()
    buffer.wait(last)
    assert writer.batches[-1] == [("full", "/vol/bkt", None), ("full", "/vol/bkt", b"new")]
    assert buffer.cache.get("full", "/vol/bkt") == b"new"
    buffer.close()


def test_om_db_reads_volumes_and_buckets_from_its_cache_alone_across_a_restart(tmp_path: Path) -> None:
    store = OMMetadataStore(tmp_path / "om.db")
    store.write([(VOLUME_TABLE, "/v", b"volume"), (BUCKET_TABLE, "/v/b", b"bucket")])
    store.close()
    store = OMMetadataStore(tmp_path / "om.db")
    store._backend.get = None  # type: ignore[assignment]  # a read reaching RocksDB fails
    assert store.get(VOLUME_TABLE, "/v") == b"volume" and store.get(BUCKET_TABLE, "/v/b") == b"bucket"
    assert store.get(BUCKET_TABLE, "/v/none") is None
    store.write([(BUCKET_TABLE, "/v/b", None)])
    store.sync()
    assert store.get(BUCKET_TABLE, "/v/b") is None
    assert [k for k, _ in store.scan(VOLUME_TABLE)] == ["/v"]
    store.close()


# ---- OM HA: the buffer split at the Raft log (om/server/ha.py)
class Staging:
    def __init__(self) -> None:
        self.staged: list[tuple[int, list[Op]]] = []

    def __call__(self, epoch: int, ops: list[Op]) -> None:
        self.staged.append((epoch, list(ops)))


def test_replicated_a_staged_transaction_is_visible_but_reaches_rocksdb_only_once_applied(
    tmp_path: Path,
) -> None:
    store = OMMetadataStore(tmp_path / "om.db", sync=False)
    staging = Staging()
    store.buffer.replicate(staging)
    epoch = store.write([(KEY_TABLE, "/v/b/k", b"1")])
    assert store.get(KEY_TABLE, "/v/b/k") == b"1"
    assert staging.staged == [(epoch, [(KEY_TABLE, "/v/b/k", b"1")])]
    assert store.stored_value(KEY_TABLE, "/v/b/k") is None and store.flushed_epoch == 0
    store.buffer.enqueue(epoch, [(KEY_TABLE, "/v/b/k", b"1"), ("meta", "#TRANSACTIONINFO", b"1#2")])
    store.buffer.wait(epoch)
    assert store.stored_value(KEY_TABLE, "/v/b/k") == b"1"
    assert store.stored_value("meta", "#TRANSACTIONINFO") == b"1#2"
    follower = store.buffer.apply([(KEY_TABLE, "/v/b/f", b"2")], [("meta", "#TRANSACTIONINFO", b"1#3")])
    assert follower > epoch and store.get(KEY_TABLE, "/v/b/f") == b"2"
    store.buffer.wait(follower)
    assert store.stored_value("meta", "#TRANSACTIONINFO") == b"1#3"
    store.close()


def test_replicated_a_refused_write_stages_nothing(tmp_path: Path) -> None:
    store = OMMetadataStore(tmp_path / "om.db", sync=False)
    staging = Staging()
    store.buffer.replicate(staging)
    store.buffer.refuse(lambda: RuntimeError("not the leader"))
    with pytest.raises(RuntimeError, match="not the leader"):
        store.write([(KEY_TABLE, "/v/b/k", b"1")])
    assert staging.staged == [] and store.get(KEY_TABLE, "/v/b/k") is None
    store.close()


def test_replicated_a_step_down_drops_what_never_committed_once_the_applied_is_flushed(
    tmp_path: Path,
) -> None:
    store = OMMetadataStore(tmp_path / "om.db", sync=False)
    staging = Staging()
    store.buffer.replicate(staging)
    committed = store.write([(VOLUME_TABLE, "/v", b"committed"), (KEY_TABLE, "/v/b/k", b"committed")])
    store.buffer.enqueue(committed, staging.staged[-1][1])
    lost = store.write(
        [(VOLUME_TABLE, "/v", b"lost"), (KEY_TABLE, "/v/b/k", b"lost"), (KEY_TABLE, "/v/b/n", b"x")]
    )
    waiter = store.buffer.durable(lost)
    store.buffer.drop_after_flush({lost}, store.stored_value, lambda: RuntimeError("not the leader"))
    with pytest.raises(RuntimeError, match="not the leader"):
        waiter.result(WAIT_S)
    store.buffer.wait(committed)
    # the committed values again, the full table's (volumeTable) read back from RocksDB
    assert not store.buffer.dropping
    assert store.get(VOLUME_TABLE, "/v") == b"committed"
    assert store.get(KEY_TABLE, "/v/b/k") == b"committed"
    assert store.get(KEY_TABLE, "/v/b/n") is None
    store.close()
