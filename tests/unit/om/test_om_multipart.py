"""Multipart uploads in the OM core: completing (blocks in part order, offsets shifted, usage, metadata),
replacing a part, unlisted and aborted parts' blocks to deletedTable, the completion's one batch, the
ordering, part and size refusals, and the listings' paging."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyozone.hdds.ids import BlockID
from pyozone.hdds.om_records import KeyBlock
from pyozone.hdds.om_views import UPLOAD_ALGORITHM
from pyozone.hdds.security.sse import SseAlgorithm, SseRequest, key_md5
from pyozone.om.core import OzoneManager
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.metadata import DELETED_TABLE, MULTIPART_INFO_TABLE, OPEN_KEY_TABLE, OMStoreError
from pyozone.om.multipart import MultipartManager
from pyozone.om.properties import PropertyManager
from pyozone.protocol import om_records
from pyozone.protocol.om import key_view
from tests.unit.om.om_fakes import BLOCK, FakeScm, make_om

MIN = 1500  # the tests' minimum part size


@pytest.fixture
def om(tmp_path: Path) -> OzoneManager:
    om = make_om(tmp_path, FakeScm(), multipart_min_size=MIN)
    om.volumes.create("vol1")
    om.buckets.create("vol1", "bkt1")
    return om


@pytest.fixture
def mpu(om: OzoneManager) -> MultipartManager:
    return MultipartManager(om)


def code(call, *args) -> OMResultCode:
    with pytest.raises(OMException) as error:
        call(*args)
    return error.value.code


def write_part(
    mpu: MultipartManager, upload_id: str, number: int, size: int, key: str = "k", checksum: str = ""
) -> list[BlockID]:
    """Writes part `number` of `size` bytes in full blocks, committed with ETag "e<number>-<size>" (and the
    S3 gateway's x-amz-checksum-crc32 `checksum`)."""
    session = mpu.open_part("vol1", "bkt1", key, upload_id, number, size)
    blocks, offset = [], 0
    for block in session.key.blocks:
        length = min(BLOCK, size - offset)
        blocks.append(KeyBlock(block.block_id, offset, length, bcsid=3))
        offset += length
    etag = {"ETag": f"e{number}-{size}"} | ({"x-amz-checksum-crc32": checksum} if checksum else {})
    mpu.commit_part("vol1", "bkt1", key, session.client_id, upload_id, number, size, blocks, etag)
    return [b.block_id for b in blocks if b.length]


def deleted_blocks(om: OzoneManager) -> set[BlockID]:
    return {b.block_id for _, v in om.store.scan(DELETED_TABLE) for b in om_records.decode_key(v).blocks}


def test_complete_makes_the_key_of_the_parts_in_order(om: OzoneManager, mpu: MultipartManager) -> None:
    upload = mpu.initiate("vol1", "bkt1", "k", metadata={"Content-Type": "x/y"}, tags={"t": "1"})
    second = write_part(mpu, upload.upload_id, 2, 700)  # parts arrive in any order
    first = write_part(mpu, upload.upload_id, 1, 2500)
    key = mpu.complete(
        "vol1", "bkt1", "k", upload.upload_id, [(1, "e1-2500"), (2, "e2-700")], {"ETag": "abc-2"}
    )
    assert key.data_size == 3200 and key.object_id == upload.object_id
    assert [b.block_id for b in key.blocks] == first + second
    assert [(b.offset, b.length) for b in key.blocks] == [(0, 1000), (1000, 1000), (2000, 500), (2500, 700)]
    assert dict(key.metadata) == {"Content-Type": "x/y", "ETag": "abc-2"} and dict(key.tags) == {"t": "1"}
    assert om.keys.lookup("vol1", "bkt1", "k").key == key
    assert list(om.store.scan(MULTIPART_INFO_TABLE)) == []
    assert list(om.store.scan(OPEN_KEY_TABLE)) == []
    bucket = om.bucket_info("vol1", "bkt1")
    assert (bucket.used_bytes, bucket.used_namespace) == (3200 * 3, 1)
    assert deleted_blocks(om) == set()
    assert code(mpu.complete, "vol1", "bkt1", "k", upload.upload_id, [(1, "e1-2500")]) is (
        OMResultCode.NO_SUCH_MULTIPART_UPLOAD_ERROR
    )


def test_the_key_keeps_its_parts_numbers_and_sizes_for_a_lookup_not_a_listing(
    om: OzoneManager, mpu: MultipartManager
) -> None:
    """S3's GET by partNumber needs the part boundaries of a completed key: the listed parts', in order."""
    upload = mpu.initiate("vol1", "bkt1", "k")
    write_part(mpu, upload.upload_id, 1, 2500)
    write_part(mpu, upload.upload_id, 2, 1600)  # not listed: not a part of the key
    write_part(mpu, upload.upload_id, 3, 700)
    key = mpu.complete("vol1", "bkt1", "k", upload.upload_id, [(1, "e1-2500"), (3, "e3-700")])
    assert key.parts == ((1, 2500), (3, 700))
    stored = om.keys.lookup("vol1", "bkt1", "k").key
    assert stored.parts == ((1, 2500), (3, 700))
    assert om_records.decode_key(om_records.encode(om_records.key_to_proto(stored))).parts == stored.parts
    assert key_view(stored).parts == ()  # a listing's key carries no parts


def test_the_key_keeps_each_parts_checksum_when_the_completion_names_it(mpu: MultipartManager) -> None:
    upload = mpu.initiate("vol1", "bkt1", "k")
    write_part(mpu, upload.upload_id, 1, 2500, checksum="c1")
    write_part(mpu, upload.upload_id, 2, 700, checksum="c2")
    parts = [(1, "e1-2500"), (2, "e2-700")]
    key = mpu.complete("vol1", "bkt1", "k", upload.upload_id, parts, part_checksum="x-amz-checksum-crc32")
    assert key.part_checksums == ("c1", "c2")


@pytest.mark.parametrize("name", ["ETag", "x-amz-meta-crc", "x-amz-checksum-sha256"])
def test_only_the_uploads_checksum_entry_is_kept_as_the_parts_checksums(
    mpu: MultipartManager, name: str
) -> None:
    """R31's F5: a native client named `ETag`, and the parts' MD5s were served as their CRC32s. An upload
    created with CRC32 keeps only x-amz-checksum-crc32; any other name is INVALID_REQUEST."""
    upload = mpu.initiate("vol1", "bkt1", "k", metadata={UPLOAD_ALGORITHM: "CRC32"})
    write_part(mpu, upload.upload_id, 1, 700, checksum="c1")
    with pytest.raises(OMException) as e:
        mpu.complete("vol1", "bkt1", "k", upload.upload_id, [(1, "e1-700")], part_checksum=name)
    assert e.value.code is OMResultCode.INVALID_REQUEST


def test_a_replaced_key_leaves_only_its_blocks_in_deleted_table(
    om: OzoneManager, mpu: MultipartManager
) -> None:
    """R31's F6: the replaced key's whole record (part lists, metadata) went to deletedTable, which reads
    only blocks, and a 10,000-part key's Raft entry outgrew the append limit; an encrypted one's part ivs
    (16 bytes a part) and wrapped key stay out too (the session's reread)."""
    sse = SseRequest(SseAlgorithm.SSE_C, key_md5(bytes(32)))
    for _ in range(2):
        upload = mpu.initiate("vol1", "bkt1", "k", sse=sse)
        write_part(mpu, upload.upload_id, 1, 700, checksum="c1")
        mpu.complete(
            "vol1", "bkt1", "k", upload.upload_id, [(1, "e1-700")], part_checksum="x-amz-checksum-crc32"
        )
    [orphaned] = [om_records.decode_key(v) for _, v in om.store.scan(DELETED_TABLE)]
    assert orphaned.blocks and (orphaned.parts, orphaned.part_checksums, orphaned.metadata) == ((), (), ())
    assert orphaned.encryption is None


def test_a_part_written_again_replaces_the_older(om: OzoneManager, mpu: MultipartManager) -> None:
    upload = mpu.initiate("vol1", "bkt1", "k")
    old = write_part(mpu, upload.upload_id, 1, 1600)
    new = write_part(mpu, upload.upload_id, 1, 1700)
    assert deleted_blocks(om) == set(old)
    page = mpu.list_parts("vol1", "bkt1", "k", upload.upload_id)
    assert [(p.part_number, p.part_name, p.key.data_size) for p in page.parts] == [(1, "e1-1700", 1700)]
    key = mpu.complete("vol1", "bkt1", "k", upload.upload_id, [(1, "e1-1700")])
    assert [b.block_id for b in key.blocks] == new


def test_unlisted_parts_and_a_replaced_key_go_to_deleted_table(
    om: OzoneManager, mpu: MultipartManager
) -> None:
    upload = mpu.initiate("vol1", "bkt1", "k")
    one = write_part(mpu, upload.upload_id, 1, 1500)
    two = write_part(mpu, upload.upload_id, 2, 1500)
    three = write_part(mpu, upload.upload_id, 3, 10)
    mpu.complete("vol1", "bkt1", "k", upload.upload_id, [(1, "e1-1500"), (3, "e3-10")])
    assert deleted_blocks(om) == set(two)
    again = mpu.initiate("vol1", "bkt1", "k")
    four = write_part(mpu, again.upload_id, 1, 5)
    key = mpu.complete("vol1", "bkt1", "k", again.upload_id, [(1, "e1-5")])
    assert [b.block_id for b in key.blocks] == four
    assert deleted_blocks(om) == set(two) | set(one) | set(three)
    bucket = om.bucket_info("vol1", "bkt1")
    assert (bucket.used_bytes, bucket.used_namespace) == (5 * 3, 1)


def test_abort_sends_every_part_to_deleted_table(om: OzoneManager, mpu: MultipartManager) -> None:
    upload = mpu.initiate("vol1", "bkt1", "k")
    blocks = write_part(mpu, upload.upload_id, 1, 1500) + write_part(mpu, upload.upload_id, 2, 20)
    mpu.abort("vol1", "bkt1", "k", upload.upload_id)
    assert deleted_blocks(om) == set(blocks)
    assert (
        code(mpu.abort, "vol1", "bkt1", "k", upload.upload_id) is OMResultCode.NO_SUCH_MULTIPART_UPLOAD_ERROR
    )
    assert om.keys.list("vol1", "bkt1") == []


def test_a_part_committed_after_its_upload_ended_is_deleted(om: OzoneManager, mpu: MultipartManager) -> None:
    upload = mpu.initiate("vol1", "bkt1", "k")
    session = mpu.open_part("vol1", "bkt1", "k", upload.upload_id, 1, 10)
    mpu.abort("vol1", "bkt1", "k", upload.upload_id)
    block = KeyBlock(session.key.blocks[0].block_id, 0, 10)
    with pytest.raises(OMException) as error:
        mpu.commit_part("vol1", "bkt1", "k", session.client_id, upload.upload_id, 1, 10, [block])
    assert error.value.code is OMResultCode.NO_SUCH_MULTIPART_UPLOAD_ERROR
    assert deleted_blocks(om) == {block.block_id}
    assert list(om.store.scan(OPEN_KEY_TABLE)) == []


def test_complete_is_one_batch(
    om: OzoneManager, mpu: MultipartManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failed write leaves the upload whole and no key: nothing of the completion is half done."""
    upload = mpu.initiate("vol1", "bkt1", "k")
    write_part(mpu, upload.upload_id, 1, 1500)
    write_part(mpu, upload.upload_id, 2, 30)
    before = {t: list(om.store.scan(t)) for t in (MULTIPART_INFO_TABLE, DELETED_TABLE)}

    def fail(ops) -> None:
        raise OMStoreError("disk full")

    monkeypatch.setattr(om.store, "write", fail)
    with pytest.raises(OMStoreError):
        mpu.complete("vol1", "bkt1", "k", upload.upload_id, [(2, "e2-30")])
    monkeypatch.undo()
    assert {t: list(om.store.scan(t)) for t in before} == before
    assert om.keys.list("vol1", "bkt1") == []
    assert om.bucket_info("vol1", "bkt1").used_bytes == 1530 * 3  # the parts, still open
    key = mpu.complete("vol1", "bkt1", "k", upload.upload_id, [(1, "e1-1500"), (2, "e2-30")])
    assert key.data_size == 1530


def test_parts_count_in_the_usage_until_abort_or_complete(om: OzoneManager, mpu: MultipartManager) -> None:
    """As Ozone's commit-part request: a committed part joins its bucket's and volume's usage, so parts
    must fit the quotas while the upload is open; a part past a quota is refused and its blocks go to
    deletion; aborting releases the parts, completing moves them to the key (counted once)."""

    def used() -> tuple[int, int]:
        return om.bucket_info("vol1", "bkt1").used_bytes, om.volume_info("vol1").used_bytes

    PropertyManager(om).set_bucket("vol1", "bkt1", quota_bytes=4000 * 3)  # RATIS/THREE
    upload = mpu.initiate("vol1", "bkt1", "k").upload_id
    write_part(mpu, upload, 1, 1500)
    write_part(mpu, upload, 2, 1500)
    assert used() == (3000 * 3, 3000 * 3)
    other = mpu.initiate("vol1", "bkt1", "other").upload_id
    assert code(mpu.open_part, "vol1", "bkt1", "other", other, 1, 1500) is OMResultCode.QUOTA_EXCEEDED

    session = mpu.open_part("vol1", "bkt1", "k", upload, 3, 0)  # of unknown size: one block fits
    second = om.keys.allocate_block("vol1", "bkt1", "k", session.client_id)  # a second full one still fits
    blocks = [KeyBlock(session.key.blocks[0].block_id, 0, 1000), KeyBlock(second.block_id, 1000, 100)]
    commit = (session.client_id, upload, 3, 1100, blocks)
    assert code(mpu.commit_part, "vol1", "bkt1", "k", *commit) is OMResultCode.QUOTA_EXCEEDED
    assert deleted_blocks(om) == {b.block_id for b in blocks}
    assert list(om.store.scan(OPEN_KEY_TABLE)) == []
    assert len(mpu.list_parts("vol1", "bkt1", "k", upload).parts) == 2 and used() == (9000, 9000)

    write_part(mpu, upload, 2, 1000)  # a part written again counts once
    write_part(mpu, other, 1, 500, key="other")
    assert used() == (3000 * 3, 3000 * 3)
    mpu.abort("vol1", "bkt1", "other", other)
    assert used() == (2500 * 3, 2500 * 3)
    key = mpu.complete("vol1", "bkt1", "k", upload, [(1, "e1-1500"), (2, "e2-1000")])
    assert key.data_size == 2500 and used() == (2500 * 3, 2500 * 3)
    om.keys.delete("vol1", "bkt1", "k")
    assert used() == (0, 0)


@pytest.mark.parametrize(
    ("parts", "expected"),
    [
        ([], OMResultCode.INVALID_REQUEST),
        ([(2, "e2-1500"), (1, "e1-1500")], OMResultCode.INVALID_PART_ORDER),
        ([(1, "e1-1500"), (1, "e1-1500")], OMResultCode.INVALID_PART_ORDER),
        ([(1, "e1-1500"), (4, "e4-1")], OMResultCode.INVALID_PART),
        ([(1, "wrong"), (2, "e2-1499")], OMResultCode.INVALID_PART),
        ([(2, "e2-1499"), (3, "e3-10")], OMResultCode.ENTITY_TOO_SMALL),
    ],
)
def test_complete_refusals_leave_the_upload(
    om: OzoneManager, mpu: MultipartManager, parts: list, expected: OMResultCode
) -> None:
    upload = mpu.initiate("vol1", "bkt1", "k")
    write_part(mpu, upload.upload_id, 1, 1500)
    write_part(mpu, upload.upload_id, 2, 1499)
    write_part(mpu, upload.upload_id, 3, 10)
    assert code(mpu.complete, "vol1", "bkt1", "k", upload.upload_id, parts) is expected
    assert len(mpu.list_parts("vol1", "bkt1", "k", upload.upload_id).parts) == 3
    assert om.keys.list("vol1", "bkt1") == []
    key = mpu.complete("vol1", "bkt1", "k", upload.upload_id, [(1, "e1-1500"), (2, "e2-1499")])
    assert key.data_size == 2999  # the last part may be small


def test_part_numbers_and_unknown_uploads(om: OzoneManager, mpu: MultipartManager) -> None:
    upload = mpu.initiate("vol1", "bkt1", "k")
    for number in (0, 10_001):
        assert (
            code(mpu.open_part, "vol1", "bkt1", "k", upload.upload_id, number) is OMResultCode.INVALID_REQUEST
        )
    assert mpu.open_part("vol1", "bkt1", "k", upload.upload_id, 10_000).key.key == "k"
    missing = OMResultCode.NO_SUCH_MULTIPART_UPLOAD_ERROR
    assert code(mpu.open_part, "vol1", "bkt1", "k", "nope", 1) is missing
    assert code(mpu.open_part, "vol1", "bkt1", "other", upload.upload_id, 1) is missing
    assert code(mpu.list_parts, "vol1", "bkt1", "k", "nope") is missing
    assert code(mpu.list_parts, "vol1", "nobucket", "k", "nope") is OMResultCode.BUCKET_NOT_FOUND
    assert code(mpu.initiate, "vol1", "bkt1", "") is OMResultCode.INVALID_KEY_NAME


def test_a_bucket_with_uploads_in_progress_is_not_deleted(om: OzoneManager, mpu: MultipartManager) -> None:
    upload = mpu.initiate("vol1", "bkt1", "k")
    assert code(om.buckets.delete, "vol1", "bkt1") is OMResultCode.BUCKET_NOT_EMPTY
    mpu.abort("vol1", "bkt1", "k", upload.upload_id)
    om.buckets.delete("vol1", "bkt1")


def test_list_parts_pages(om: OzoneManager, mpu: MultipartManager) -> None:
    upload = mpu.initiate("vol1", "bkt1", "k", metadata={"m": "1"})
    for number in (1, 3, 5, 7):
        write_part(mpu, upload.upload_id, number, 1)
    page = mpu.list_parts("vol1", "bkt1", "k", upload.upload_id, 0, 2)
    assert ([p.part_number for p in page.parts], page.next_marker, page.truncated) == ([1, 3], 3, True)
    page = mpu.list_parts("vol1", "bkt1", "k", upload.upload_id, 3, 2)
    assert ([p.part_number for p in page.parts], page.next_marker, page.truncated) == ([5, 7], 7, False)
    page = mpu.list_parts("vol1", "bkt1", "k", upload.upload_id, 7, 2)
    assert (page.parts, page.next_marker, page.truncated) == ((), 7, False)
    assert dict(page.upload.metadata) == {"m": "1"}


def test_list_uploads_by_key_then_creation_with_s3s_markers(om: OzoneManager, mpu: MultipartManager) -> None:
    made = [mpu.initiate("vol1", "bkt1", k) for k in ("a/b", "a", "a-b", "a", "b")]
    a1, a2 = made[1].upload_id, made[3].upload_id
    order = [(u.key, u.upload_id) for u in mpu.list_uploads("vol1", "bkt1")]
    assert order == [
        ("a", a1),
        ("a", a2),
        ("a-b", made[2].upload_id),
        ("a/b", made[0].upload_id),
        ("b", made[4].upload_id),
    ]
    listed = lambda **kw: [(u.key, u.upload_id) for u in mpu.list_uploads("vol1", "bkt1", **kw)]  # noqa: E731
    assert listed(max_uploads=2) == order[:2]
    assert listed(key_marker="a", upload_id_marker=a1, max_uploads=2) == order[1:3]
    assert listed(key_marker="a") == order[2:]
    assert listed(prefix="a/") == [order[3]]
    assert listed(prefix="a", key_marker="a-b") == [order[3]]
    assert listed(upload_id_marker=a1) == order  # without a key marker S3 ignores it


def test_a_page_of_1000_and_one_more(om: OzoneManager, mpu: MultipartManager) -> None:
    """The gateway asks S3's 1000 and one more, to tell whether the listing is truncated."""
    for i in range(1001):
        mpu.initiate("vol1", "bkt1", f"k{i:04d}")
    assert len(mpu.list_uploads("vol1", "bkt1")) == 1000
    assert len(mpu.list_uploads("vol1", "bkt1", max_uploads=1001)) == 1001
