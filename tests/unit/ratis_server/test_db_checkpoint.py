"""A replicated daemon's database checkpoints (ratis_server/db_checkpoint.py), generic over a CheckpointSpec:
packed by the leader with the spec's extra files, downloaded with their SHA-256 checked and only from a
certificate of the spec's role, unpacked and checked to open with a #TRANSACTIONINFO reaching the leader's
log, swapped in crash-safely; a corrupt, truncated, stale or malformed checkpoint is refused and nothing is
installed. An om.db-like spec (moved from OM's tests) and an scm.db-like one (other tables, an extra file)."""

from __future__ import annotations

import asyncio
import hashlib
import io
import shutil
import tarfile
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from aiohttp import web

from pyozone.common.http_server import HttpServer
from pyozone.common.tls import TlsStore
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.x509 import CertRole
from pyozone.hdds.store.rocksdb import RocksDBBackend
from pyozone.ratis.messages import TermIndex
from pyozone.ratis_server import db_checkpoint
from pyozone.ratis_server.checkpoint_sender import CheckpointSender
from pyozone.ratis_server.db_checkpoint import (
    CHECKPOINT_PATH,
    CHECKSUM_HEADER,
    CheckpointError,
    CheckpointSpec,
    PackedCheckpoint,
    download,
    extras_dir,
    fetch_and_install,
    pack,
    recover,
    unpack,
)
from tests.checkpoint_server import serving_state, tar_of
from tests.tls_certs import CertAuthority

OM_LIKE = CheckpointSpec("om.db", "meta", "#TRANSACTIONINFO", CertRole.OM)
SCM_LIKE = CheckpointSpec(
    "scm.db", "scmTransactionInfos", "#TRANSACTIONINFO", CertRole.SCM, extra_files=("secret_keys.json",)
)
SCM_TABLES = ("containers", "pipelines", "scmTransactionInfos")


def db_with(
    spec: CheckpointSpec, path: Path, rows: Mapping[str, list[str]], index: int, tables: tuple[str, ...]
) -> RocksDBBackend:
    """A RocksDB at `path` with `tables`, each key of `rows[table]` holding its own name, and the spec's
    #TRANSACTIONINFO at term 3, `index`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    backend = RocksDBBackend(path, tables=tables)
    ops: list[tuple[str, bytes, bytes | None]] = [
        (table, key.encode(), key.encode()) for table, keys in rows.items() for key in keys
    ]
    ops.append((spec.meta_cf, spec.info_key.encode(), f"3#{index}".encode()))
    backend.write(ops, sync=True)
    return backend


def om_db(path: Path, volumes: list[str], index: int) -> RocksDBBackend:
    return db_with(OM_LIKE, path, {"volumeTable": [f"/{v}" for v in volumes]}, index, ("volumeTable", "meta"))


def keys_of(path: Path, table: str) -> list[str]:
    backend = RocksDBBackend(path, read_only=True)
    try:
        return [k.decode() for k, _ in backend.items(table)]
    finally:
        backend.close()


@pytest.fixture
def served() -> Iterator[tuple[str, dict[str, bytes | str]]]:
    with serving_state() as served:
        yield served


def test_a_second_spec_round_trips_other_tables_and_an_extra_file(
    tmp_path: Path, served: tuple[str, dict[str, bytes | str]]
) -> None:
    """scm.db's shape: no `meta` table, its #TRANSACTIONINFO in scmTransactionInfos, secret_keys.json carried
    beside it; the follower's scm.db is replaced whole, the extra file handed to its installer."""
    leader_db = tmp_path / "leader" / "scm.db"
    leader = db_with(SCM_LIKE, leader_db, {"containers": ["#1", "#2"], "pipelines": ["p1"]}, 40, SCM_TABLES)
    keys = tmp_path / "leader" / "keys" / "secret_keys.json"
    keys.parent.mkdir()
    keys.write_text('{"keys": ["k1"]}')
    packed = pack(SCM_LIKE, leader, leader_db, {"secret_keys.json": keys})
    assert packed.transaction == TermIndex(3, 40)
    assert packed.headers()["Content-Disposition"] == 'attachment; filename="scm.db-40.tar"'
    url, state = served
    state["body"], state["checksum"] = b"".join(packed.chunks()), packed.sha256
    assert "secret_keys.json" in dict(packed.files)
    packed.remove()
    leader.close()

    follower_db = tmp_path / "follower" / "scm.db"
    db_with(SCM_LIKE, follower_db, {"containers": ["#9"]}, 7, SCM_TABLES).close()
    handed: dict[str, str] = {}

    def install(unpacked: Path, extras: Mapping[str, Path]) -> None:
        assert unpacked.name == "scm.db" and not (unpacked / "secret_keys.json").exists()
        handed.update({name: path.read_text() for name, path in extras.items()})
        db_checkpoint.swap_in(follower_db, unpacked)
        RocksDBBackend(follower_db, tables=SCM_TABLES).close()  # it opens in place
        db_checkpoint.drop_aside(follower_db)

    installed = fetch_and_install(SCM_LIKE, url, None, follower_db, install, 39)
    assert installed == TermIndex(3, 40)
    assert handed == {"secret_keys.json": '{"keys": ["k1"]}'}
    assert keys_of(follower_db, "containers") == ["#1", "#2"] and keys_of(follower_db, "pipelines") == ["p1"]
    assert not db_checkpoint.staging_dir(follower_db).exists()
    assert not db_checkpoint.aside(follower_db).exists()

    # a leader without the extra file sends none, and the installer is handed none
    bare = db_with(SCM_LIKE, tmp_path / "bare" / "scm.db", {"containers": ["#3"]}, 50, SCM_TABLES)
    packed = pack(SCM_LIKE, bare, bare.path, {"secret_keys.json": tmp_path / "absent.json"})
    assert "secret_keys.json" not in dict(packed.files)
    assert unpack(SCM_LIKE, tar_of(packed), tmp_path / "unpacked" / "scm.db", 0) == TermIndex(3, 50)
    assert not extras_dir(tmp_path / "unpacked" / "scm.db").exists()
    packed.remove()
    bare.close()


def test_a_spec_refuses_what_is_not_its_extra_file_or_shadows_a_database_file(tmp_path: Path) -> None:
    leader = om_db(tmp_path / "om.db", ["a"], 5)
    (tmp_path / "keys.json").write_text("{}")
    with pytest.raises(ValueError, match=r"not an extra file of om\.db's checkpoints"):
        pack(OM_LIKE, leader, leader.path, {"keys.json": tmp_path / "keys.json"})
    shadowing = CheckpointSpec("om.db", "meta", "#TRANSACTIONINFO", CertRole.OM, extra_files=("CURRENT",))
    with pytest.raises(ValueError, match="has a file 'CURRENT' of its own"):
        pack(shadowing, leader, leader.path, {"CURRENT": tmp_path / "keys.json"})
    leader.close()
    with pytest.raises(ValueError, match="not a plain file name"):
        CheckpointSpec("scm.db", "m", "k", CertRole.SCM, extra_files=("keys/secret_keys.json",))


def test_a_checkpoint_without_the_specs_table_is_refused(tmp_path: Path) -> None:
    """An om.db-like checkpoint offered where scm.db's is expected: it has no scmTransactionInfos."""
    leader = om_db(tmp_path / "leader" / "om.db", ["a"], 5)
    packed = pack(OM_LIKE, leader, leader.path)
    with pytest.raises(CheckpointError, match=r"has no scmTransactionInfos table: not an scm\.db"):
        unpack(SCM_LIKE, tar_of(packed), tmp_path / "scm.db", 0)
    packed.remove()
    leader.close()


def test_a_corrupt_or_truncated_download_is_refused_and_removed(
    tmp_path: Path, served: tuple[str, dict[str, bytes | str]]
) -> None:
    leader = om_db(tmp_path / "leader" / "om.db", ["a"], 5)
    packed = pack(OM_LIKE, leader, leader.path)
    good = b"".join(packed.chunks())
    url, state = served
    flipped = bytearray(good)
    flipped[len(flipped) // 2] ^= 0x01
    state["body"], state["checksum"] = bytes(flipped), packed.sha256
    into = tmp_path / "download.tar"
    with pytest.raises(CheckpointError, match=r"corrupt or truncated: its SHA-256 is .* refused"):
        download(OM_LIKE, url, None, into)
    assert not into.exists()
    state["body"], state["length"] = good[: len(good) // 2], str(len(good))  # the connection ends early
    with pytest.raises(CheckpointError):
        download(OM_LIKE, url, None, into)
    assert not into.exists()
    del state["length"]
    state["body"], state["checksum"] = good, ""
    with pytest.raises(CheckpointError, match=f"without its {CHECKSUM_HEADER}"):
        download(OM_LIKE, url, None, into)
    packed.remove()
    leader.close()


def test_a_checkpoint_before_the_leaders_log_or_not_a_database_is_refused(tmp_path: Path) -> None:
    leader = om_db(tmp_path / "leader" / "om.db", ["a"], 5)
    packed = pack(OM_LIKE, leader, leader.path)
    with pytest.raises(CheckpointError, match="before index 6, the last entry the leader's log no longer"):
        unpack(OM_LIKE, tar_of(packed), tmp_path / "stale", 6)
    assert unpack(OM_LIKE, tar_of(packed), tmp_path / "fresh", 5) == TermIndex(3, 5)
    leader.close()
    escaping = tmp_path / "escaping.tar"
    with tarfile.open(escaping, "w") as archive:
        info = tarfile.TarInfo("../CURRENT")
        info.size = 1
        archive.addfile(info, io.BytesIO(b"x"))
    with pytest.raises(CheckpointError, match=r"only om\.db's files"):
        unpack(OM_LIKE, escaping, tmp_path / "escaped", 0)
    assert not (tmp_path / "CURRENT").exists()
    empty = tmp_path / "empty.tar"
    with tarfile.open(empty, "w"):
        pass
    with pytest.raises(CheckpointError, match="does not open as RocksDB"):
        unpack(OM_LIKE, empty, tmp_path / "nothing", 0)
    (tmp_path / "garbage.tar").write_bytes(b"not a tar at all" * 100)
    with pytest.raises(CheckpointError, match="not a readable tar"):
        unpack(OM_LIKE, tmp_path / "garbage.tar", tmp_path / "garbage", 0)


def test_a_crash_mid_swap_leaves_the_old_database_or_the_new_one(tmp_path: Path) -> None:
    db = tmp_path / "om.db"
    om_db(db, ["old"], 3).close()
    new = om_db(tmp_path / "leader" / "om.db", ["new"], 9)
    packed = pack(OM_LIKE, new, new.path)
    new.close()
    # crashed after om.db went aside, before the checkpoint took its name: the old one comes back
    unpack(OM_LIKE, tar_of(packed), tmp_path / "unpacked", 0)
    db_checkpoint.aside(db).parent.mkdir(exist_ok=True)
    shutil.move(db, db_checkpoint.aside(db))
    staged = db_checkpoint.staging_dir(db)
    staged.mkdir(parents=True)
    shutil.move(tmp_path / "unpacked", staged / "om.db")
    recover(db)
    assert not staged.exists() and not db_checkpoint.aside(db).exists()
    assert keys_of(db, "volumeTable") == ["/old"]
    # crashed after the checkpoint took om.db's name, before the old one was deleted: the new one stays
    unpack(OM_LIKE, tar_of(packed), tmp_path / "unpacked2", 0)
    db_checkpoint.swap_in(db, tmp_path / "unpacked2")
    assert db_checkpoint.aside(db).exists()
    recover(db)
    assert keys_of(db, "volumeTable") == ["/new"]
    assert not db_checkpoint.aside(db).exists()
    packed.remove()


def test_a_crash_while_a_refused_checkpoint_is_deleted_keeps_the_old_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """restore_aside once deleted the refused om.db in place: a crash mid-delete left a half om.db beside
    om.db.old, and the next start took it for an installed checkpoint and deleted the only good copy."""
    db = tmp_path / "om.db"
    om_db(db, ["precious"], 3).close()
    om_db(tmp_path / "new", ["other"], 9).close()
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
    recover(db)
    assert keys_of(db, "volumeTable") == ["/precious"]
    assert not db_checkpoint.aside(db).exists()


def test_a_refused_checkpoint_renamed_away_before_the_old_one_is_back_recovers_the_old_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "scm.db"
    db_with(SCM_LIKE, db, {"containers": ["#precious"]}, 3, SCM_TABLES).close()
    db_with(SCM_LIKE, tmp_path / "new", {"containers": ["#other"]}, 9, SCM_TABLES).close()
    db_checkpoint.swap_in(db, tmp_path / "new")
    real_replace = db_checkpoint.os.replace

    def dying_replace(source: Path, target: Path) -> None:
        if Path(source) == db_checkpoint.aside(db):
            raise SystemExit("killed before the old scm.db went back")
        real_replace(source, target)

    monkeypatch.setattr(db_checkpoint.os, "replace", dying_replace)
    with pytest.raises(SystemExit):
        db_checkpoint.restore_aside(db)
    monkeypatch.undo()
    assert not db.exists() and db_checkpoint.refused_dir(db).name == "refused-scm.db"
    recover(db)
    assert keys_of(db, "containers") == ["#precious"]
    assert not db_checkpoint.refused_dir(db).exists()


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
        unpack(OM_LIKE, tar, tmp_path / "out", 1)


@asynccontextmanager
async def serving(sender: CheckpointSender, tls: TlsStore) -> AsyncIterator[int]:
    app = web.Application()
    app.router.add_get(CHECKPOINT_PATH, sender.send)
    server = HttpServer(app)
    port = await server.start("127.0.0.1", 0, tls.server_context())
    try:
        yield port
    finally:
        await server.stop()


def test_a_follower_downloads_only_from_a_certificate_of_the_specs_role(tmp_path: Path) -> None:
    """_check_peer_certificate(role): an SCM's checkpoint comes from an SCM's certificate, not an OM's (any
    service certificate of the cluster's CA passes the handshake)."""
    ca = CertAuthority(tmp_path / "ca")
    follower = ca.store("scm2", X.Identity(CertRole.SCM, "scm", "localhost"))
    leader = db_with(SCM_LIKE, tmp_path / "leader" / "scm.db", {"containers": ["#1"]}, 4, SCM_TABLES)

    async def packs() -> PackedCheckpoint:
        return await asyncio.to_thread(pack, SCM_LIKE, leader, leader.path)

    async def scenario() -> dict[str, str]:
        got = {}
        for role in (CertRole.OM, CertRole.SCM):
            # CN "scm@localhost": the test CA's root is "scm@127.0.0.1" (SANs: both loopback names)
            server_tls = ca.store(f"{role.value}-server", X.Identity(role, role.value, "localhost"))
            async with serving(CheckpointSender(packs), server_tls) as port:
                into = tmp_path / f"{role.value}.tar"
                url = f"https://127.0.0.1:{port}{CHECKPOINT_PATH}"
                try:
                    digest = await asyncio.to_thread(download, SCM_LIKE, url, follower.client_context(), into)
                    assert hashlib.sha256(into.read_bytes()).hexdigest() == digest
                    got[role.value] = "downloaded"
                except CheckpointError as e:
                    got[role.value] = "refused" if "not an SCM's; refused" in str(e) else str(e)
                    assert not into.exists()
        return got

    try:
        assert asyncio.run(asyncio.wait_for(scenario(), 60)) == {"om": "refused", "scm": "downloaded"}
    finally:
        leader.close()
