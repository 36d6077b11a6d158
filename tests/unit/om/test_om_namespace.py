"""Volumes and buckets: create, info, delete (not while not empty), listing with prefix and paging; safe
mode does not stop them; om.db keeps everything across a reopen."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyozone.hdds.ids import RATIS_ONE, RATIS_THREE
from pyozone.hdds.om_records import KeyBlock
from pyozone.om.exceptions import OMException, OMResultCode
from tests.unit.om.om_fakes import FakeScm, make_om


def code(call, *args) -> OMResultCode:
    with pytest.raises(OMException) as error:
        call(*args)
    assert str(error.value).startswith(f"{error.value.code.name}: ")
    return error.value.code


def test_volume_lifecycle(tmp_path: Path) -> None:
    om = make_om(tmp_path)
    created = om.volumes.create("vol1", "alice", 1 << 30)
    assert (created.owner, created.admin, created.quota_bytes) == ("alice", "alice", 1 << 30)
    assert om.volume_info("vol1") == created
    assert om.volumes.create("vol2").owner == "tester"
    assert code(om.volumes.create, "vol1") is OMResultCode.VOLUME_ALREADY_EXISTS
    assert code(om.volume_info, "nope") is OMResultCode.VOLUME_NOT_FOUND
    assert code(om.volumes.create, "No") is OMResultCode.INVALID_VOLUME_NAME
    om.buckets.create("vol1", "bkt1")
    assert om.volume_info("vol1").used_namespace == 1
    assert code(om.volumes.delete, "vol1") is OMResultCode.VOLUME_NOT_EMPTY
    om.buckets.delete("vol1", "bkt1")
    assert om.volume_info("vol1").used_namespace == 0
    om.volumes.delete("vol1")
    assert code(om.volume_info, "vol1") is OMResultCode.VOLUME_NOT_FOUND
    assert code(om.volumes.delete, "vol1") is OMResultCode.VOLUME_NOT_FOUND


def test_volume_listing_prefix_and_paging(tmp_path: Path) -> None:
    om = make_om(tmp_path)
    for name in ("vol-c", "vol-a", "other", "vol-b", "vol-d"):
        om.volumes.create(name)
    names = lambda vols: [v.volume for v in vols]  # noqa: E731
    assert names(om.volumes.list()) == ["other", "vol-a", "vol-b", "vol-c", "vol-d"]
    assert names(om.volumes.list("vol-")) == ["vol-a", "vol-b", "vol-c", "vol-d"]
    assert names(om.volumes.list("vol-", "", 2)) == ["vol-a", "vol-b"]
    assert names(om.volumes.list("vol-", "vol-b", 2)) == ["vol-c", "vol-d"]
    assert names(om.volumes.list("vol-", "vol-d", 2)) == []
    assert names(om.volumes.list("zzz")) == []


def test_bucket_lifecycle_and_replication_defaults(tmp_path: Path) -> None:
    om = make_om(tmp_path, default_replication=RATIS_ONE)
    om.volumes.create("vol1")
    assert om.buckets.create("vol1", "bkt1").replication == RATIS_ONE
    assert om.buckets.create("vol1", "bkt2", RATIS_THREE).replication == RATIS_THREE
    assert om.bucket_info("vol1", "bkt2").replication == RATIS_THREE
    assert code(om.buckets.create, "vol1", "bkt1") is OMResultCode.BUCKET_ALREADY_EXISTS
    assert code(om.buckets.create, "nope", "bkt1") is OMResultCode.VOLUME_NOT_FOUND
    assert code(om.buckets.create, "vol1", "b_1") is OMResultCode.INVALID_BUCKET_NAME
    assert code(om.bucket_info, "vol1", "nope") is OMResultCode.BUCKET_NOT_FOUND
    assert code(om.bucket_info, "nope", "bkt1") is OMResultCode.VOLUME_NOT_FOUND
    session = om.keys.open("vol1", "bkt1", "k", 0)
    om.keys.commit("vol1", "bkt1", "k", session.client_id, 0, [])
    assert code(om.buckets.delete, "vol1", "bkt1") is OMResultCode.BUCKET_NOT_EMPTY
    om.keys.delete("vol1", "bkt1", "k")
    om.buckets.delete("vol1", "bkt1")
    assert code(om.buckets.delete, "vol1", "bkt1") is OMResultCode.BUCKET_NOT_FOUND


def test_bucket_listing_stays_in_its_volume(tmp_path: Path) -> None:
    om = make_om(tmp_path)
    for volume in ("vol", "vol1"):
        om.volumes.create(volume)
    for bucket in ("b-3", "b-1", "b-2", "a-1"):
        om.buckets.create("vol", bucket)
    om.buckets.create("vol1", "b-0")
    names = lambda bs: [b.bucket for b in bs]  # noqa: E731
    assert names(om.buckets.list("vol")) == ["a-1", "b-1", "b-2", "b-3"]
    assert names(om.buckets.list("vol", "b-", "b-1")) == ["b-2", "b-3"]
    assert names(om.buckets.list("vol", "", "", 1)) == ["a-1"]
    assert names(om.buckets.list("vol1")) == ["b-0"]
    assert code(om.buckets.list, "nope") is OMResultCode.VOLUME_NOT_FOUND


def test_safe_mode_allows_volumes_buckets_and_lookups(tmp_path: Path) -> None:
    scm = FakeScm()
    om = make_om(tmp_path, scm)
    om.volumes.create("vol1")
    om.buckets.create("vol1", "bkt1")
    session = om.keys.open("vol1", "bkt1", "k", 10)
    om.keys.commit(
        "vol1", "bkt1", "k", session.client_id, 10, [KeyBlock(session.key.blocks[0].block_id, 0, 10)]
    )
    scm.safe_mode = True
    om.volumes.create("vol2")
    om.buckets.create("vol2", "bkt2")
    assert [v.volume for v in om.volumes.list()] == ["vol1", "vol2"]
    assert om.keys.lookup("vol1", "bkt1", "k").key.data_size == 10
    assert code(om.keys.open, "vol1", "bkt1", "k2", 10) is OMResultCode.SCM_IN_SAFE_MODE
    assert code(om.keys.allocate_block, "vol1", "bkt1", "k", 99) is OMResultCode.KEY_NOT_FOUND
    again = None
    scm.safe_mode = False
    again = om.keys.open("vol1", "bkt1", "k2", 10)
    scm.safe_mode = True
    assert (
        code(om.keys.allocate_block, "vol1", "bkt1", "k2", again.client_id) is OMResultCode.SCM_IN_SAFE_MODE
    )


def test_scm_unreachable_is_unavailable(tmp_path: Path) -> None:
    scm = FakeScm()
    om = make_om(tmp_path, scm)
    om.volumes.create("vol1")
    om.buckets.create("vol1", "bkt1")
    scm.unreachable = True
    with pytest.raises(OMException) as error:
        om.keys.open("vol1", "bkt1", "k", 1)
    assert error.value.code is OMResultCode.SCM_UNAVAILABLE
    assert error.value.status_name == "UNAVAILABLE"
    assert "connection refused" in str(error.value)


def test_reopening_om_db_keeps_everything(tmp_path: Path) -> None:
    scm = FakeScm()
    om = make_om(tmp_path, scm)
    om.volumes.create("vol1")
    om.buckets.create("vol1", "bkt1")
    session = om.keys.open("vol1", "bkt1", "k", 10)
    committed = om.keys.commit(
        "vol1", "bkt1", "k", session.client_id, 10, [KeyBlock(session.key.blocks[0].block_id, 0, 10)]
    )
    pending = om.keys.open("vol1", "bkt1", "open", 10)
    om.keys.delete("vol1", "bkt1", "k")
    session = om.keys.open("vol1", "bkt1", "k", 10)
    om.keys.commit(
        "vol1", "bkt1", "k", session.client_id, 10, [KeyBlock(session.key.blocks[0].block_id, 0, 10)]
    )
    before = (om.volume_info("vol1"), om.bucket_info("vol1", "bkt1"), om.keys.list("vol1", "bkt1"))
    deleted = list(om.store.scan("deletedTable"))
    om.store.close()

    reopened = make_om(tmp_path, scm)
    assert (
        reopened.volume_info("vol1"),
        reopened.bucket_info("vol1", "bkt1"),
        reopened.keys.list("vol1", "bkt1"),
    ) == before
    assert list(reopened.store.scan("deletedTable")) == deleted
    assert committed.object_id < session.key.object_id
    # The id counter survived: fresh ids never repeat those handed out before the reopen.
    fresh = reopened.keys.open("vol1", "bkt1", "x", 1)
    assert fresh.client_id > max(session.client_id, pending.client_id, session.key.object_id)
    block = pending.key.blocks[0]
    reopened.keys.commit("vol1", "bkt1", "open", pending.client_id, 5, [KeyBlock(block.block_id, 0, 5)])
    reopened.store.close()
