"""scm.db's checkpoints (issue 31; Ozone's SCMDBCheckpointProvider): the generic ratis_server/db_checkpoint.py
bound to scm.db (`SCM_CHECKPOINT`: scmTransactionInfos' JSON #TRANSACTIONINFO), packed, unpacked, installed in
place of an SCM's scm.db, and an install a crash interrupted finished when scm.db opens."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pyozone.hdds.store.codec import IntKeyCodec
from pyozone.ratis.messages import TermIndex
from pyozone.ratis_server import db_checkpoint
from pyozone.ratis_server.db_checkpoint import CheckpointError
from pyozone.scm.store import scm_db
from pyozone.scm.store.layout import SCM_DB_NAME
from pyozone.scm.store.metadata_store import TRANSACTION_INFO_KEY, SCMMetadataStore


def written(db_dir: Path, info: str, container: int) -> SCMMetadataStore:
    store = scm_db.open_scm_db(db_dir)
    store.apply(("containers", IntKeyCodec().encode(container), b"{}"))
    store.transaction_infos.put(TRANSACTION_INFO_KEY, info)
    return store


def as_tar(packed: db_checkpoint.PackedCheckpoint, into: Path) -> Path:
    with open(into, "wb") as f:
        for chunk in packed.chunks():
            f.write(chunk)
    return into


def test_an_scm_db_checkpoint_unpacks_with_its_transaction_info_and_installs_in_place(tmp_path: Path) -> None:
    leader = written(tmp_path / "leader", "3#7", 1)
    packed = scm_db.pack_checkpoint(leader)
    assert (
        packed.transaction == TermIndex(3, 7) and packed.headers()[db_checkpoint.TRANSACTION_HEADER] == "3#7"
    )
    tar = as_tar(packed, tmp_path / "scm.db.tar")
    packed.remove()
    leader.close()
    with pytest.raises(CheckpointError, match=r"#TRANSACTIONINFO is 3#7, before index 8"):
        db_checkpoint.unpack(scm_db.SCM_CHECKPOINT, tar, tmp_path / "stale", 8)
    unpacked = tmp_path / "unpacked" / SCM_DB_NAME
    assert db_checkpoint.unpack(scm_db.SCM_CHECKPOINT, tar, unpacked, 7) == TermIndex(3, 7)

    follower = written(tmp_path / "follower", "2#4", 2)
    scm_db.install(follower, unpacked)
    assert follower.transaction_infos.get(TRANSACTION_INFO_KEY) == "3#7"
    assert [IntKeyCodec().decode(k) for k, _ in follower.items("containers")] == [1]
    assert not db_checkpoint.aside(scm_db.db_path(follower)).exists()
    follower.close()


def test_an_install_a_crash_interrupted_is_undone_when_scm_db_opens(tmp_path: Path) -> None:
    written(tmp_path, "2#4", 2).close()
    path = tmp_path / SCM_DB_NAME
    shutil.move(path, db_checkpoint.aside(path))  # died between the two renames of the swap
    store = scm_db.open_scm_db(tmp_path)
    assert store.transaction_infos.get(TRANSACTION_INFO_KEY) == "2#4"
    store.close()
