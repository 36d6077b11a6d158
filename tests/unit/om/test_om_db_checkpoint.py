"""om.db checkpoints (om/db_checkpoint.py): packed by the leader, downloaded with their SHA-256 checked,
unpacked and checked to open with a #TRANSACTIONINFO reaching the leader's log, swapped in as om.db with the
cache reloaded; a corrupt, truncated, stale or malformed checkpoint is refused and nothing is installed; a
crash mid-swap leaves the old om.db or the new one, never a mix."""

from __future__ import annotations

import hashlib
import http.server
import io
import shutil
import tarfile
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from pyozone.om import db_checkpoint
from pyozone.om.db_checkpoint import (
    CHECKSUM_HEADER,
    TRANSACTION_INFO,
    CheckpointError,
    download,
    recover,
    transaction_info,
    unpack,
)
from pyozone.om.metadata import KEY_TABLE, META_TABLE, VOLUME_TABLE, OMMetadataStore, OMStoreError
from pyozone.ratis.messages import TermIndex


def store_with(path: Path, volumes: list[str], index: int) -> OMMetadataStore:
    store = OMMetadataStore(path, sync=False)
    for name in volumes:
        store.write([(VOLUME_TABLE, f"/{name}", name.encode()), (KEY_TABLE, f"/{name}/b/k", b"key")])
    store.write([(META_TABLE, TRANSACTION_INFO, f"3#{index}".encode())])
    store.sync()
    return store


def tar_of(packed: db_checkpoint.PackedCheckpoint) -> Path:
    """The tar /dbCheckpoint streams, as a file (as a follower downloads it)."""
    tar = packed.directory.parent / f"downloaded-{uuid.uuid4().hex}.tar"
    tar.write_bytes(b"".join(packed.chunks()))
    return tar


@pytest.fixture
def served() -> Iterator[tuple[str, dict[str, bytes | str]]]:
    """An HTTP server answering `state["body"]` with `state["checksum"]` (and Content-Length `state["length"]`
    when set, to cut the body short)."""
    state: dict[str, bytes | str] = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = state["body"]
            assert isinstance(body, bytes)
            self.send_response(200)
            self.send_header(CHECKSUM_HEADER, str(state["checksum"]))
            self.send_header("Content-Length", str(state.get("length", len(body))))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/dbCheckpoint", state
    finally:
        server.shutdown()
        server.server_close()


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


def test_a_corrupt_or_truncated_download_is_refused_and_removed(
    tmp_path: Path, served: tuple[str, dict[str, bytes | str]]
) -> None:
    leader = store_with(tmp_path / "leader" / "om.db", ["a"], 5)
    packed = leader.pack_checkpoint()
    good = b"".join(packed.chunks())
    url, state = served
    flipped = bytearray(good)
    flipped[len(flipped) // 2] ^= 0x01
    state["body"], state["checksum"] = bytes(flipped), packed.sha256
    into = tmp_path / "download.tar"
    with pytest.raises(CheckpointError, match=r"corrupt or truncated: its SHA-256 is .* refused"):
        download(url, None, into)
    assert not into.exists()
    state["body"], state["length"] = good[: len(good) // 2], str(len(good))  # the connection ends early
    with pytest.raises(CheckpointError):
        download(url, None, into)
    assert not into.exists()
    del state["length"]
    state["body"], state["checksum"] = good, ""
    with pytest.raises(CheckpointError, match=f"without its {CHECKSUM_HEADER}"):
        download(url, None, into)
    packed.remove()
    leader.close()


def test_a_checkpoint_before_the_leaders_log_or_not_an_om_db_is_refused(tmp_path: Path) -> None:
    leader = store_with(tmp_path / "leader" / "om.db", ["a"], 5)
    packed = leader.pack_checkpoint()
    with pytest.raises(CheckpointError, match="before index 6, the last entry the leader's log no longer"):
        unpack(tar_of(packed), tmp_path / "stale", 6)
    assert unpack(tar_of(packed), tmp_path / "fresh", 5) == TermIndex(3, 5)
    leader.close()
    escaping = tmp_path / "escaping.tar"
    with tarfile.open(escaping, "w") as archive:
        info = tarfile.TarInfo("../CURRENT")
        info.size = 1
        archive.addfile(info, io.BytesIO(b"x"))
    with pytest.raises(CheckpointError, match=r"only om\.db's files"):
        unpack(escaping, tmp_path / "escaped", 0)
    assert not (tmp_path / "CURRENT").exists()
    empty = tmp_path / "empty.tar"
    with tarfile.open(empty, "w"):
        pass
    with pytest.raises(CheckpointError, match="does not open as RocksDB"):
        unpack(empty, tmp_path / "nothing", 0)
    (tmp_path / "garbage.tar").write_bytes(b"not a tar at all" * 100)
    with pytest.raises(CheckpointError, match="not a readable tar"):
        unpack(tmp_path / "garbage.tar", tmp_path / "garbage", 0)


def test_a_crash_mid_swap_leaves_the_old_om_db_or_the_new_one(tmp_path: Path) -> None:
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
    recover(db)
    assert not staged.exists() and not db_checkpoint.aside(db).exists()
    reopened = OMMetadataStore(db)
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


def test_a_crash_while_a_refused_checkpoint_is_deleted_keeps_the_old_om_db(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """restore_aside once deleted the refused om.db in place: a crash mid-delete left a half om.db beside
    om.db.old, and the next start took it for an installed checkpoint and deleted the only good copy."""
    db = tmp_path / "om.db"
    store_with(db, ["precious"], 3).close()
    new = store_with(tmp_path / "new", ["other"], 9)
    new.close()
    db_checkpoint.swap_in(db, tmp_path / "new")
    deleted = 0
    real_unlink = db_checkpoint.os.unlink

    def dying_unlink(path: object, *args: object, **kwargs: object) -> None:
        nonlocal deleted
        deleted += 1
        if deleted > 2:
            raise SystemExit("killed while deleting")
        real_unlink(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(db_checkpoint.os, "unlink", dying_unlink)
    with pytest.raises(SystemExit):
        db_checkpoint.restore_aside(db)
    monkeypatch.undo()
    reopened = OMMetadataStore(db)  # recover() runs as om.db opens
    assert [k for k, _ in reopened.scan(VOLUME_TABLE)] == ["/precious"]
    assert not db_checkpoint.aside(db).exists()
    reopened.close()


def test_a_refused_checkpoint_renamed_away_before_the_old_one_is_back_recovers_the_old_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "om.db"
    store_with(db, ["precious"], 3).close()
    store_with(tmp_path / "new", ["other"], 9).close()
    db_checkpoint.swap_in(db, tmp_path / "new")
    real_replace = db_checkpoint.os.replace

    def dying_replace(source: Path, target: Path) -> None:
        if Path(source) == db_checkpoint.aside(db):
            raise SystemExit("killed before the old om.db went back")
        real_replace(source, target)

    monkeypatch.setattr(db_checkpoint.os, "replace", dying_replace)
    with pytest.raises(SystemExit):
        db_checkpoint.restore_aside(db)
    monkeypatch.undo()
    assert not db.exists()
    reopened = OMMetadataStore(db)
    assert [k for k, _ in reopened.scan(VOLUME_TABLE)] == ["/precious"]
    assert not db_checkpoint.refused_dir(db).exists()
    reopened.close()


@pytest.mark.parametrize(
    ("names", "why"),
    [(["CURRENT", "CURRENT"], "'CURRENT' twice"), (["x" * 300], "could not be unpacked")],
    ids=["duplicate", "name-too-long"],
)
def test_a_checkpoint_that_cannot_be_unpacked_is_a_checkpoint_error(
    tmp_path: Path, names: list[str], why: str
) -> None:
    tar = tmp_path / "bad.tar"
    with tarfile.open(tar, "w") as archive:
        for name in names:
            info = tarfile.TarInfo(name)
            info.size = 3
            archive.addfile(info, io.BytesIO(b"abc"))
    with pytest.raises(CheckpointError, match=why):
        unpack(tar, tmp_path / "out", 1)


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
