"""A damaged write-ahead log: a torn last record is a crash and is tolerated; damage anywhere else stops
the database from opening with one line that says what to do, and `pyozone repair db` salvages it."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyozone.hdds.store.rocksdb import RocksDBBackend, StoreError
from pyozone.om.metadata import TABLE_NAMES as OM_TABLES
from pyozone.om.metadata import OMMetadataStore, OMStoreError
from tests.crash_support import crash_after_writes, damage_middle, tear_tail

KEYS = 4000


def keys(path: Path, table: str) -> list[bytes]:
    backend = RocksDBBackend(path, tables=(table,))
    try:
        return [k for k, _ in backend.items(table)]
    finally:
        backend.close()


def test_a_torn_tail_is_tolerated_and_every_earlier_write_kept(tmp_path: Path) -> None:
    db = tmp_path / "scm.db"
    tear_tail(crash_after_writes(db, "meta", KEYS))
    found = keys(db, "meta")
    assert KEYS - 1 <= len(found) <= KEYS  # only the torn last record may go: it was never acknowledged
    assert found == [b"key%06d" % i for i in range(len(found))]


def test_damage_in_the_middle_refuses_to_open_with_one_line(tmp_path: Path) -> None:
    db = tmp_path / "scm.db"
    log = crash_after_writes(db, "meta", KEYS)
    damage_middle(log)
    with pytest.raises(StoreError) as refused:
        RocksDBBackend(db, tables=("meta",), owner="an SCM")
    message = str(refused.value)
    assert "\n" not in message and "corrupt RocksDB data" in message and log.name in message
    assert message.endswith(f"stop the daemon and run `pyozone repair db --db {db}`")


def test_om_refuses_a_damaged_om_db(tmp_path: Path) -> None:
    db = tmp_path / "om.db"
    OMMetadataStore(db).close()
    damage_middle(crash_after_writes(db, OM_TABLES[0], KEYS))
    with pytest.raises(OMStoreError, match=r"corrupt RocksDB data.*pyozone repair db"):
        OMMetadataStore(db)


def test_repair_salvages_up_to_the_damage_then_the_db_opens(tmp_path: Path, cli) -> None:
    db = tmp_path / "scm.db"
    damage_middle(crash_after_writes(db, "meta", KEYS))
    result = cli("repair", "db", "--db", str(db))
    assert result.code == 0, result.err
    assert "opens normally again" in result.out
    salvaged = keys(db, "meta")  # opens with the strict mode again
    assert 0 < len(salvaged) < KEYS
    assert salvaged == [b"key%06d" % i for i in range(len(salvaged))]  # a consistent prefix


def test_repair_refuses_what_is_not_a_database(tmp_path: Path, cli) -> None:
    result = cli("repair", "db", "--db", str(tmp_path / "nothing"))
    assert result.code == 1 and "not a RocksDB database" in result.err
    assert not (tmp_path / "nothing").exists()
