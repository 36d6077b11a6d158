"""Keys: openKey pre-allocation, allocateBlock, commitKey's checks, replacing, renaming, deleting (their
blocks go to deletedTable) and listing."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyozone.hdds.block import ExcludeList
from pyozone.hdds.ids import RATIS_ONE, BlockID
from pyozone.hdds.om_records import KeyBlock
from pyozone.om.core import OzoneManager
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.metadata import DELETED_TABLE, OPEN_KEY_TABLE
from pyozone.om.settings import PREALLOCATE_MAX_BLOCKS
from pyozone.protocol import om_records
from tests.unit.om.om_fakes import BLOCK, FakeScm, make_om


@pytest.fixture
def scm() -> FakeScm:
    return FakeScm()


@pytest.fixture
def om(tmp_path: Path, scm: FakeScm) -> OzoneManager:
    om = make_om(tmp_path, scm)
    om.volumes.create("vol1")
    om.buckets.create("vol1", "bkt1")
    return om


def code(call, *args) -> OMResultCode:
    with pytest.raises(OMException) as error:
        call(*args)
    return error.value.code


def write(om: OzoneManager, key: str, size: int) -> list[BlockID]:
    """openKey + commitKey of `size` bytes in full blocks; the block ids used."""
    session = om.keys.open("vol1", "bkt1", key, size)
    blocks, offset = [], 0
    for block in session.key.blocks:
        length = min(BLOCK, size - offset)
        blocks.append(KeyBlock(block.block_id, offset, length, bcsid=7))
        offset += length
    om.keys.commit("vol1", "bkt1", key, session.client_id, size, blocks)
    return [b.block_id for b in blocks if b.length]


def deleted(om: OzoneManager) -> dict[str, list[BlockID]]:
    return {
        name: [b.block_id for b in om_records.decode_key(value).blocks]
        for name, value in om.store.scan(DELETED_TABLE)
    }


@pytest.mark.parametrize(("size", "blocks"), [(0, 1), (1, 1), (BLOCK, 1), (BLOCK + 1, 2), (3 * BLOCK, 3)])
def test_open_key_preallocates_one_block_per_block_size(
    om: OzoneManager, scm: FakeScm, size: int, blocks: int
) -> None:
    excluded = ExcludeList(datanodes=frozenset({"dn-x"}))
    session = om.keys.open("vol1", "bkt1", "k", size, excluded=excluded)
    assert len(session.key.blocks) == len(session.allocated) == blocks
    asked = size if 0 < size < BLOCK else BLOCK
    assert scm.allocations[-1] == (asked, om.bucket_info("vol1", "bkt1").replication, blocks, excluded)
    assert om.store.get(OPEN_KEY_TABLE, f"/vol1/bkt1/k/{session.client_id}") is not None
    assert om.keys.list("vol1", "bkt1") == []  # nothing visible before commitKey


def test_a_key_smaller_than_a_block_asks_scm_for_its_size_only(om: OzoneManager, scm: FakeScm) -> None:
    """SCM counts allocations against the container: small keys must not use it up by the block."""
    small = om.keys.open("vol1", "bkt1", "small", BLOCK // 4)
    assert scm.allocations[-1][0] == small.block_length == BLOCK // 4  # the writer stops there
    session = om.keys.open("vol1", "bkt1", "unknown", 0)  # size unknown: a whole block
    assert scm.allocations[-1][0] == session.block_length == BLOCK
    om.keys.allocate_block("vol1", "bkt1", "unknown", session.client_id)  # a key growing: whole blocks
    assert scm.allocations[-1][0] == BLOCK


def test_preallocation_is_capped(om: OzoneManager) -> None:
    session = om.keys.open("vol1", "bkt1", "big", 10_000 * BLOCK)
    assert len(session.key.blocks) == PREALLOCATE_MAX_BLOCKS


def test_open_key_checks_names_and_parents(om: OzoneManager) -> None:
    assert code(om.keys.open, "vol1", "bkt1", "", 1) is OMResultCode.INVALID_KEY_NAME
    assert code(om.keys.open, "vol1", "nope", "k", 1) is OMResultCode.BUCKET_NOT_FOUND
    assert code(om.keys.open, "nope", "bkt1", "k", 1) is OMResultCode.VOLUME_NOT_FOUND
    assert om.keys.open("vol1", "bkt1", "k", 1, RATIS_ONE).key.replication == RATIS_ONE


def test_character_check_applies_to_keys(tmp_path: Path) -> None:
    om = make_om(tmp_path, check_key_characters=True)
    om.volumes.create("vol1")
    om.buckets.create("vol1", "bkt1")
    assert code(om.keys.open, "vol1", "bkt1", "a#b", 1) is OMResultCode.INVALID_KEY_NAME


def test_allocate_block_extends_the_open_key(om: OzoneManager) -> None:
    session = om.keys.open("vol1", "bkt1", "k", BLOCK)
    extra = om.keys.allocate_block("vol1", "bkt1", "k", session.client_id)
    blocks = [
        KeyBlock(session.key.blocks[0].block_id, 0, BLOCK),
        KeyBlock(extra.block_id, BLOCK, 5),
    ]
    record = om.keys.commit("vol1", "bkt1", "k", session.client_id, BLOCK + 5, blocks)
    assert [b.block_id for b in record.blocks] == [session.key.blocks[0].block_id, extra.block_id]
    assert code(om.keys.allocate_block, "vol1", "bkt1", "k", session.client_id) is OMResultCode.KEY_NOT_FOUND


def test_commit_refuses_blocks_not_allocated_to_the_open_key(om: OzoneManager) -> None:
    other = om.keys.open("vol1", "bkt1", "other", 1)
    session = om.keys.open("vol1", "bkt1", "k", 1)
    foreign = [KeyBlock(other.key.blocks[0].block_id, 0, 1)]
    assert (
        code(om.keys.commit, "vol1", "bkt1", "k", session.client_id, 1, foreign)
        is OMResultCode.INVALID_BLOCK_LIST
    )
    mine = session.key.blocks[0].block_id
    twice = [KeyBlock(mine, 0, 1), KeyBlock(mine, 1, 1)]
    assert (
        code(om.keys.commit, "vol1", "bkt1", "k", session.client_id, 2, twice)
        is OMResultCode.INVALID_BLOCK_LIST
    )
    assert (
        code(om.keys.commit, "vol1", "bkt1", "k", 12345, 1, [KeyBlock(mine, 0, 1)])
        is OMResultCode.KEY_NOT_FOUND
    )


def test_commit_refuses_gaps_and_a_wrong_size(om: OzoneManager) -> None:
    session = om.keys.open("vol1", "bkt1", "k", 2 * BLOCK)
    a, b = (x.block_id for x in session.key.blocks)
    cid = session.client_id
    cases = [
        ([KeyBlock(a, 1, BLOCK)], BLOCK),  # not from 0
        ([KeyBlock(a, 0, 10), KeyBlock(b, 11, 10)], 21),  # a gap
        ([KeyBlock(a, 0, 10), KeyBlock(b, 5, 10)], 15),  # an overlap
        ([KeyBlock(a, 0, 10)], 11),  # lengths do not add up to dataSize
    ]
    for blocks, size in cases:
        with pytest.raises(OMException) as error:
            om.keys.commit("vol1", "bkt1", "k", cid, size, blocks)
        assert error.value.code is OMResultCode.INVALID_REQUEST, (blocks, size)
    assert om.store.get(OPEN_KEY_TABLE, f"/vol1/bkt1/k/{cid}") is not None  # still open


def test_commit_drops_empty_blocks_and_deletes_unused_ones(om: OzoneManager) -> None:
    session = om.keys.open("vol1", "bkt1", "k", 3 * BLOCK)
    a, b, c = (x.block_id for x in session.key.blocks)
    record = om.keys.commit(
        "vol1", "bkt1", "k", session.client_id, 10, [KeyBlock(a, 0, 10), KeyBlock(b, 10, 0)]
    )
    assert [x.block_id for x in record.blocks] == [a]
    assert list(deleted(om).values()) == [[b, c]]
    assert om.store.get(OPEN_KEY_TABLE, f"/vol1/bkt1/k/{session.client_id}") is None


def test_replacing_a_key_deletes_its_old_blocks_and_keeps_usage_right(om: OzoneManager) -> None:
    first = write(om, "k", 2 * BLOCK)
    bucket = om.bucket_info("vol1", "bkt1")
    assert (bucket.used_bytes, bucket.used_namespace) == (2 * BLOCK * 3, 1)
    second = write(om, "k", 10)
    assert list(deleted(om).values()) == [first]
    bucket = om.bucket_info("vol1", "bkt1")
    assert (bucket.used_bytes, bucket.used_namespace) == (30, 1)
    assert om.volume_info("vol1").used_bytes == 30
    assert [b.block_id for b in om.keys.lookup("vol1", "bkt1", "k").key.blocks] == second
    assert om.keys.lookup("vol1", "bkt1", "k").key.blocks[0].bcsid == 7


def test_delete_key(om: OzoneManager) -> None:
    blocks = write(om, "k", 10)
    om.keys.delete("vol1", "bkt1", "k")
    assert list(deleted(om).values()) == [blocks]
    assert code(om.keys.lookup, "vol1", "bkt1", "k") is OMResultCode.KEY_NOT_FOUND
    assert code(om.keys.delete, "vol1", "bkt1", "k") is OMResultCode.KEY_NOT_FOUND
    bucket = om.bucket_info("vol1", "bkt1")
    assert (bucket.used_bytes, bucket.used_namespace) == (0, 0)
    write(om, "empty", 0)
    om.keys.delete("vol1", "bkt1", "empty")
    assert len(deleted(om)) == 2  # the empty key's unused block went at commit, nothing more now


def test_rename_key(om: OzoneManager) -> None:
    blocks = write(om, "a", 10)
    write(om, "b", 10)
    assert code(om.keys.rename, "vol1", "bkt1", "a", "b") is OMResultCode.KEY_ALREADY_EXISTS
    assert code(om.keys.rename, "vol1", "bkt1", "zz", "c") is OMResultCode.KEY_NOT_FOUND
    assert code(om.keys.rename, "vol1", "bkt1", "a", "") is OMResultCode.INVALID_KEY_NAME
    om.keys.rename("vol1", "bkt1", "a", "c")
    assert [k.key for k in om.keys.list("vol1", "bkt1")] == ["b", "c"]
    assert [b.block_id for b in om.keys.lookup("vol1", "bkt1", "c").key.blocks] == blocks
    assert deleted(om) == {}
    assert om.bucket_info("vol1", "bkt1").used_namespace == 2


def test_list_keys_prefix_start_key_and_limit(om: OzoneManager) -> None:
    for key in ("dir/b", "dir/a", "dir2/x", "top", "dir/c/d"):
        write(om, key, 1)
    om.buckets.create("vol1", "bkt2")
    names = lambda keys: [k.key for k in keys]  # noqa: E731
    assert names(om.keys.list("vol1", "bkt1")) == ["dir/a", "dir/b", "dir/c/d", "dir2/x", "top"]
    assert names(om.keys.list("vol1", "bkt1", "dir/")) == ["dir/a", "dir/b", "dir/c/d"]
    assert names(om.keys.list("vol1", "bkt1", "dir/", "dir/a")) == ["dir/b", "dir/c/d"]
    assert names(om.keys.list("vol1", "bkt1", "", "", 2)) == ["dir/a", "dir/b"]
    assert names(om.keys.list("vol1", "bkt1", "", "dir2/x")) == ["top"]
    assert om.keys.list("vol1", "bkt2") == []
    assert code(om.keys.list, "vol1", "nope") is OMResultCode.BUCKET_NOT_FOUND


def test_list_keys_default_limit_is_1000(om: OzoneManager, scm: FakeScm) -> None:
    for i in range(1005):
        session = om.keys.open("vol1", "bkt1", f"k{i:04d}", 0)
        om.keys.commit("vol1", "bkt1", f"k{i:04d}", session.client_id, 0, [])
    listed = om.keys.list("vol1", "bkt1")
    assert len(listed) == 1000 and listed[-1].key == "k0999"


def test_a_key_is_opened_and_committed_reading_each_record_once(om: OzoneManager, monkeypatch) -> None:
    """issue 29: commitKey read the committed key three times (the repeat check, the condition, the
    replacement) and the volume twice (quota, usage); openKey read the committed key with no condition."""
    reads: list[tuple[str, str]] = []
    get = om.store.get

    def counted(table: str, key: str) -> bytes | None:
        reads.append((table, key))
        return get(table, key)

    monkeypatch.setattr(om.store, "get", counted)
    for replacing in (False, True):
        reads.clear()
        session = om.keys.open("vol1", "bkt1", "k", 1)
        assert [table for table, _ in reads] == ["bucketTable", "volumeTable", "bucketTable"]
        reads.clear()
        block = KeyBlock(session.key.blocks[0].block_id, 0, 1)
        om.keys.commit("vol1", "bkt1", "k", session.client_id, 1, [block])
        assert sorted(table for table, _ in reads) == [
            "bucketTable", "keyTable", "openKeyTable", "volumeTable"
        ], f"replacing={replacing}"  # fmt: skip
    assert om.keys.record("vol1", "bkt1", "k").blocks == (block,)
    assert len(deleted(om)) == 1  # the replaced key's block
