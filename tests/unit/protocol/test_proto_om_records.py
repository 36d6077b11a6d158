"""om.db's key values (protocol/om_records.py): the fast codec writes the bytes the field-by-field
message did, and a record read back equals the one written (issue 29: OM's CPU per key)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pyozone.hdds.ids import RATIS_ONE, BlockID, ReplicationConfig
from pyozone.hdds.om_records import KeyBlock, KeyRecord, pairs
from pyozone.hdds.security.acl import ACLIdentityType, AclScope, ACLType, OzoneAcl
from pyozone.hdds.security.sse import KeyEncryption, SseAlgorithm
from pyozone.hdds.states import ReplicationType
from pyozone.proto import OmClientProtocol_pb2 as om_pb
from pyozone.protocol import om_records
from pyozone.protocol.acl import acls_to_proto

EC = ReplicationConfig(ReplicationType.EC, 0, 3, 2, "RS", 1024)
ACLS = (
    OzoneAcl(ACLIdentityType.USER, "alice", frozenset({ACLType.READ, ACLType.WRITE})),
    OzoneAcl(ACLIdentityType.GROUP, "staff", frozenset({ACLType.LIST}), AclScope.DEFAULT),
)
BLOCKS = (KeyBlock(BlockID(7, 11), 0, 100, 5, 1), KeyBlock(BlockID(8, 12), 100, 50, 0, 0))
FULL = KeyRecord(
    "vol", "bkt", "a/b", 150, 1, 2, EC, BLOCKS, 99, pairs({"ETag": "x", "Content-Type": "t"}),
    pairs({"k": "v"}), "alice", ACLS, 7,
)  # fmt: skip
EMPTY = KeyRecord("vol", "bkt", "k", 0, 1, 1, RATIS_ONE)


def field_by_field(k: KeyRecord, with_blocks: bool = True) -> om_pb.KeyInfo:
    """The message as every field named once builds it."""
    return om_pb.KeyInfo(
        volume=k.volume, bucket=k.bucket, key=k.key, dataSize=k.data_size, creationTime=k.creation_ms,
        modificationTime=k.modification_ms,
        locations=[om_records.block_to_proto(b) for b in k.blocks] if with_blocks else [],
        objectID=k.object_id, metadata=dict(k.metadata), tags=dict(k.tags), owner=k.owner,
        acls=acls_to_proto(k.acls), chargedBytes=k.charged_bytes,
        **om_records.replication_fields(k.replication),
    )  # fmt: skip


@pytest.mark.parametrize("record", [FULL, EMPTY], ids=["full", "empty"])
@pytest.mark.parametrize("with_blocks", [True, False])
def test_a_key_is_written_as_its_fields_name_it(record: KeyRecord, with_blocks: bool) -> None:
    assert om_records.key_to_proto(record, with_blocks) == field_by_field(record, with_blocks)
    assert om_records.encode(om_records.key_to_proto(record, with_blocks)) == om_records.encode(
        field_by_field(record, with_blocks)
    )


@pytest.mark.parametrize("record", [FULL, EMPTY], ids=["full", "empty"])
def test_a_key_read_back_equals_the_key_written(record: KeyRecord) -> None:
    data = om_records.encode(om_records.key_to_proto(record))
    assert om_records.decode_key(data) == record
    assert om_records.decode_key(bytes(bytearray(data))) == record  # bytes RocksDB hands back


def test_a_record_written_is_read_back_and_answered_without_a_new_encode() -> None:
    record = replace(FULL, key="memo/written")
    data = om_records.encode_key(record)
    assert om_records.encode_key(record) is data  # written again: the same bytes, not a new encode
    assert om_records.decode_key(bytes(bytearray(data))) is record  # read back (a copy, as RocksDB's)


def test_the_record_memo_keeps_at_most_its_size_oldest_first() -> None:
    memo = om_records.RecordMemo(2)
    records = [replace(EMPTY, key=f"k{i}") for i in range(3)]
    for i, record in enumerate(records):
        memo.remember(record, b"%d" % i)
    assert memo.record(b"0") is None and memo.data(records[0]) is None
    assert memo.record(b"2") is records[2] and memo.data(records[1]) == b"1"
    assert memo.data(replace(records[2])) is None  # an equal record is not this one


def test_a_listing_carries_no_part_ivs_and_a_lookup_all_of_them() -> None:
    """A 10,000-part SSE key's ivs are 160 KB: a listing page of such keys outgrew the frame limit though
    no listing reader can use them (it carries no part list); a lookup (with blocks) needs them to read."""
    ivs = tuple(i.to_bytes(16, "big") for i in range(3))
    encrypted = replace(
        EMPTY,
        parts=((1, 5), (2, 5), (3, 5)),
        encryption=KeyEncryption(SseAlgorithm.SSE_S3, bytes(16), part_ivs=ivs),
    )
    assert list(om_records.key_to_proto(encrypted).ssePartIvs) == list(ivs)
    listed = om_records.key_to_proto(encrypted, with_blocks=False)
    assert not listed.ssePartIvs and listed.sseIv == bytes(16)
