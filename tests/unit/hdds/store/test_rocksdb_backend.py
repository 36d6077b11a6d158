"""RocksDBBackend: bytes in and out of column families, atomic batches, reopening, read-only access."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from rocksdict import Options, Rdict

from pyozone.hdds.store import StoreError
from pyozone.hdds.store.rocksdb import RocksDBBackend
from pyozone.scm.store import TABLE_NAMES, JsonCodec
from pyozone.scm.store.scm_db import open_scm_db

Snapshot = Callable[[Path], dict[str, bytes | None]]


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "scm.db"


def test_creates_every_table_column_family(db_path: Path) -> None:
    backend = RocksDBBackend(db_path, tables=TABLE_NAMES)
    backend.close()
    assert set(Rdict.list_cf(str(db_path))) == {"default", *TABLE_NAMES}


def test_put_get_delete_and_key_order_per_column_family(db_path: Path) -> None:
    backend = RocksDBBackend(db_path, tables=TABLE_NAMES)
    backend.write([("meta", b"b", b"2"), ("meta", b"a", b"1"), ("pipelines", b"a", b"p")])
    backend.write([("containers", (n).to_bytes(8, "big"), b"c") for n in (300, 2, 70000)])
    assert backend.get("meta", b"a") == b"1"
    assert backend.get("pipelines", b"a") == b"p"
    assert backend.get("pipelines", b"b") is None
    assert list(backend.items("meta")) == [(b"a", b"1"), (b"b", b"2")]
    assert [int.from_bytes(k, "big") for k, _ in backend.items("containers")] == [2, 300, 70000]
    backend.write([("meta", b"a", None), ("meta", b"missing", None)])
    assert list(backend.items("meta")) == [(b"b", b"2")]
    assert list(backend.items("pipelines")) == [(b"a", b"p")]
    backend.close()


def test_unknown_column_family_is_a_key_error(db_path: Path) -> None:
    backend = RocksDBBackend(db_path, tables=TABLE_NAMES)
    with pytest.raises(KeyError, match="nosuch"):
        backend.get("nosuch", b"k")
    with pytest.raises(KeyError, match="nosuch"):
        backend.write([("meta", b"k", b"v"), ("nosuch", b"k", b"v")])
    assert backend.get("meta", b"k") is None  # the batch was refused as a whole
    backend.close()


def test_data_survives_reopen(tmp_path: Path) -> None:
    store = open_scm_db(tmp_path)
    store.int_table("containers", JsonCodec()).put(7, {"state": "OPEN"})
    store.meta.put("clusterState", {"safeMode": True})
    store.close()
    store = open_scm_db(tmp_path)
    assert store.int_table("containers", JsonCodec()).get(7) == {"state": "OPEN"}
    assert store.meta.get("clusterState") == {"safeMode": True}
    store.close()
    assert (tmp_path / "scm.db" / "CURRENT").is_file()


def test_a_batch_is_all_or_nothing_across_column_families(tmp_path: Path) -> None:
    store = open_scm_db(tmp_path)
    containers = store.int_table("containers", JsonCodec())
    with store.batch():
        containers.put(1, {"id": 1})
        store.sequence_id.put("containerId", 1)
    with pytest.raises(RuntimeError), store.batch():
        containers.put(2, {"id": 2})
        store.sequence_id.put("containerId", 2)
        raise RuntimeError("manager failed half-way")
    store.close()
    store = open_scm_db(tmp_path)
    assert list(store.int_table("containers", JsonCodec()).items()) == [(1, {"id": 1})]
    assert store.sequence_id.get("containerId") == 1
    store.close()


def test_close_releases_the_lock(db_path: Path) -> None:
    RocksDBBackend(db_path, tables=TABLE_NAMES).close()
    backend = RocksDBBackend(db_path, tables=TABLE_NAMES)
    backend.close()
    backend.close()  # idempotent
    with pytest.raises(StoreError, match="closed"):
        backend.get("meta", b"k")


def test_second_writer_gets_a_one_line_lock_error(db_path: Path) -> None:
    store = open_scm_db(db_path.parent)
    with pytest.raises(StoreError) as info:
        open_scm_db(db_path.parent)
    assert str(info.value) == f"{db_path}: locked by another process (is an SCM running on it?)"
    with pytest.raises(StoreError) as info:
        RocksDBBackend(db_path, tables=TABLE_NAMES, owner="an OM")
    assert str(info.value).endswith("(is an OM running on it?)")
    store.close()


def test_read_only_sees_data_while_a_writer_holds_the_db(db_path: Path) -> None:
    writer = RocksDBBackend(db_path, tables=TABLE_NAMES)
    writer.write([("meta", b"k", b"v1")])  # still only in the WAL and memtable
    reader = RocksDBBackend(db_path, read_only=True, tables=TABLE_NAMES)
    assert reader.get("meta", b"k") == b"v1"
    assert set(reader.column_families) == {"default", *TABLE_NAMES}
    with pytest.raises(StoreError, match="read-only"):
        reader.write([("meta", b"k", b"v2")])
    reader.close()
    writer.write([("meta", b"k", b"v2")])
    assert writer.get("meta", b"k") == b"v2"
    writer.close()


def test_unknown_column_families_of_an_existing_db_are_kept(db_path: Path) -> None:
    opts = Options(raw_mode=True)
    opts.create_if_missing(True)
    opts.create_missing_column_families(True)
    db = Rdict(str(db_path), opts, {"fromTheFuture": Options(raw_mode=True)})
    db.close()
    backend = RocksDBBackend(db_path, tables=TABLE_NAMES)
    assert set(backend.column_families) == {"default", "fromTheFuture", *TABLE_NAMES}
    backend.close()


@pytest.mark.parametrize("read_only", [False, True])
@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p.write_text("not a db"), "not a directory"),
        (lambda p: (p.mkdir(), (p / "notes.txt").write_text("x")), "not a RocksDB database"),
    ],
    ids=["file", "non-empty-dir"],
)
def test_what_is_not_a_rocksdb_is_refused_untouched(
    tmp_path: Path, snapshot: Snapshot, make: Callable[[Path], object], message: str, read_only: bool
) -> None:
    path = tmp_path / "scm.db"
    make(path)
    before = snapshot(tmp_path)
    with pytest.raises(StoreError, match=message) as info:
        RocksDBBackend(path, read_only=read_only)
    assert str(path) in str(info.value) and "\n" not in str(info.value)
    assert snapshot(tmp_path) == before


def test_read_only_open_of_a_missing_db_creates_nothing(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no such RocksDB database"):
        RocksDBBackend(tmp_path / "scm.db", read_only=True)
    assert list(tmp_path.iterdir()) == []
