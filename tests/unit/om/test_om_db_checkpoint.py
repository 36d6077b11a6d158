"""om.db checkpoints (om/db_checkpoint.py over ratis_server/db_checkpoint.py, whose own cases are in
tests/unit/ratis_server/test_db_checkpoint.py): OM's store packs them, installs one with its cache reloaded,
finishes an install a crash interrupted as om.db opens, keeps the old om.db when the new one does not open,
and snapshots only what om.db holds without its write-ahead log."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from pyozone.om.db_checkpoint import TRANSACTION_INFO, download, transaction_info, unpack
from pyozone.om.metadata import KEY_TABLE, META_TABLE, VOLUME_TABLE, OMMetadataStore, OMStoreError
from pyozone.ratis.messages import TermIndex
from pyozone.ratis_server import db_checkpoint
from tests.checkpoint_server import serving_state, tar_of


def store_with(path: Path, volumes: list[str], index: int) -> OMMetadataStore:
    store = OMMetadataStore(path, sync=False)
    for name in volumes:
        store.write([(VOLUME_TABLE, f"/{name}", name.encode()), (KEY_TABLE, f"/{name}/b/k", b"key")])
    store.write([(META_TABLE, TRANSACTION_INFO, f"3#{index}".encode())])
    store.sync()
    return store


@pytest.fixture
def served() -> Iterator[tuple[str, dict[str, bytes | str]]]:
    with serving_state() as served:
        yield served


def test_a_packed_checkpoint_downloads_unpacks_and_replaces_om_db_with_its_cache(
    tmp_path: Path, served: tuple[str, dict[str, bytes | str]]
) -> None:
    leader = store_with(tmp_path / "leader" / "om.db", ["a", "b"], 40)
    packed = leader.pack_checkpoint()
    assert packed.transaction == TermIndex(3, 40)
    url, state = served
    state["body"], state["checksum"] = b"".join(packed.chunks()), packed.sha256
    # streamed from the checkpoint's hard links, the same bytes each time: no tar copy on the OM's disk
    assert len(state["body"]) == packed.size and b"".join(packed.chunks()) == state["body"]
    assert hashlib.sha256(state["body"]).hexdigest() == packed.sha256  # type: ignore[arg-type]
    assert [p.name for p in packed.directory.parent.iterdir()] == ["om.db"]
    tables = [p for p in packed.directory.iterdir() if p.suffix == ".sst"]
    assert tables and all(p.stat().st_nlink == 2 for p in tables)
    packed.remove()
    assert not packed.directory.exists()
    follower = store_with(tmp_path / "follower" / "om.db", ["old"], 7)
    staging = db_checkpoint.staging_dir(follower.path)
    staging.mkdir(parents=True)
    assert download(url, None, staging / "om.db.tar") == state["checksum"]
    assert unpack(staging / "om.db.tar", staging / "om.db", 39) == TermIndex(3, 40)
    follower.install(staging / "om.db")
    # the leader's tables, the volume table's cache reloaded; the old om.db is gone
    assert [k for k, _ in follower.scan(VOLUME_TABLE)] == ["/a", "/b"]
    assert follower.get(VOLUME_TABLE, "/old") is None
    assert follower.get(KEY_TABLE, "/a/b/k") == b"key"
    assert transaction_info(follower.stored_value(META_TABLE, TRANSACTION_INFO)) == TermIndex(3, 40)
    assert not db_checkpoint.aside(follower.path).exists()
    follower.write([(VOLUME_TABLE, "/c", b"c")])  # it keeps serving on the new om.db
    follower.close()
    reopened = OMMetadataStore(follower.path)
    assert [k for k, _ in reopened.scan(VOLUME_TABLE)] == ["/a", "/b", "/c"]
    reopened.close()
    leader.close()


def test_om_db_finishes_an_install_a_crash_interrupted_as_it_opens(tmp_path: Path) -> None:
    db = tmp_path / "om.db"
    old = store_with(db, ["old"], 3)
    new = store_with(tmp_path / "leader" / "om.db", ["new"], 9)
    packed = new.pack_checkpoint()
    new.close()
    old.close()
    # crashed after om.db went aside, before the checkpoint took its name: the old one comes back
    unpack(tar_of(packed), tmp_path / "unpacked", 0)
    db_checkpoint.aside(db).parent.mkdir(exist_ok=True)
    shutil.move(db, db_checkpoint.aside(db))
    staged = db_checkpoint.staging_dir(db)
    staged.mkdir(parents=True)
    shutil.move(tmp_path / "unpacked", staged / "om.db")
    reopened = OMMetadataStore(db)  # recover() runs as om.db opens
    assert not staged.exists() and not db_checkpoint.aside(db).exists()
    assert [k for k, _ in reopened.scan(VOLUME_TABLE)] == ["/old"]
    reopened.close()
    # crashed after the checkpoint took om.db's name, before the old one was deleted: the new one stays
    unpack(tar_of(packed), tmp_path / "unpacked2", 0)
    db_checkpoint.swap_in(db, tmp_path / "unpacked2")
    assert db_checkpoint.aside(db).exists()
    reopened = OMMetadataStore(db)  # recover() runs as om.db opens
    assert [k for k, _ in reopened.scan(VOLUME_TABLE)] == ["/new"]
    assert not db_checkpoint.aside(db).exists()
    reopened.close()
    packed.remove()


def test_a_checkpoint_that_does_not_open_in_place_puts_the_old_om_db_back(tmp_path: Path) -> None:
    store = store_with(tmp_path / "om.db", ["old"], 3)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "CURRENT").write_text("MANIFEST-000099\n")  # names a manifest that is not there
    with pytest.raises(OMStoreError, match="the checkpoint could not be installed"):
        store.install(broken)
    assert not db_checkpoint.aside(store.path).exists()
    assert [k for k, _ in store.scan(VOLUME_TABLE)] == ["/old"]
    store.write([(VOLUME_TABLE, "/more", b"m")])  # still serving on the old om.db
    store.sync()
    assert store.stored_value(VOLUME_TABLE, "/more") == b"m"
    store.close()


def _power_cut_copy(db: Path, into: Path) -> Path:
    """om.db as a power cut leaves it: its files, less the write-ahead log OM HA writes unsynced."""
    shutil.copytree(db, into, ignore=shutil.ignore_patterns("LOCK"))
    for wal in into.glob("*.log"):
        wal.write_bytes(b"")
    return into


def test_a_snapshot_point_claims_only_what_om_db_holds_without_its_write_ahead_log(tmp_path: Path) -> None:
    """A batch the flusher writes between the memtable flush and the read of #TRANSACTIONINFO was claimed
    by the snapshot (and the Raft log purged past it) while only the unsynced WAL held it."""
    store = store_with(tmp_path / "om.db", ["v5"], 5)
    backend = store._backend
    real_flush = backend.flush

    def flush_then_the_flusher_writes_entry_6() -> None:
        real_flush()
        backend.write([(META_TABLE, TRANSACTION_INFO.encode(), b"3#6"), (VOLUME_TABLE, b"/v6", b"v6")])

    backend.flush = flush_then_the_flusher_writes_entry_6  # type: ignore[method-assign]
    point = transaction_info(store.snapshot_point())
    backend.flush = real_flush  # type: ignore[method-assign]
    cut = _power_cut_copy(store.path, tmp_path / "cut" / "om.db")
    store.close()
    after = OMMetadataStore(cut, sync=False)
    assert transaction_info(after.get(META_TABLE, TRANSACTION_INFO)).index >= point.index == 5
    after.close()


def test_a_scan_open_across_an_install_is_ended_and_the_install_goes_through(tmp_path: Path) -> None:
    """An open iterator (a listing, a metrics count) kept the old om.db and its LOCK: the checkpoint did
    not open ("locked by another process"), nor did the old one again, and OM exited."""
    failures: list[BaseException] = []
    store = OMMetadataStore(tmp_path / "om.db", sync=False, on_failure=failures.append)
    store.write([(VOLUME_TABLE, f"/old{i:04d}", b"x") for i in range(100)])
    store.sync()
    leader = store_with(tmp_path / "leader" / "om.db", ["new"], 9)
    packed = leader.pack_checkpoint()
    leader.close()
    unpack(tar_of(packed), tmp_path / "unpacked", 0)
    listing = store.scan(VOLUME_TABLE)
    assert [next(listing)[0] for _ in range(2)] == ["/old0000", "/old0001"]
    store.install(tmp_path / "unpacked")
    assert failures == []
    assert [k for k, _ in store.scan(VOLUME_TABLE)] == ["/new"]
    with pytest.raises(OMStoreError, match="replaced by the leader's checkpoint while this listing read it"):
        next(listing)
    store.write([(VOLUME_TABLE, "/more", b"m")])  # serving on the new om.db
    store.sync()
    assert store.stored_value(VOLUME_TABLE, "/more") == b"m"
    store.close()
    packed.remove()
