"""OM's records (hdds/om_records.py) as OmClientProtocol's messages: VolumeInfo, BucketInfo, KeyInfo and
MultipartInfo both ways, and as om.db's values (the same messages as bytes: one schema serves the wire and
the disk; a stored value read back is trusted, OM wrote it), and the s3SecretTable's. The client protocol's
requests, answers and the client's views are protocol/om.py's.
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from google.protobuf.message import Message

from pyozone.hdds.ids import BlockID, ReplicationConfig
from pyozone.hdds.om_records import (
    BucketRecord,
    KeyBlock,
    KeyRecord,
    MultipartUploadRecord,
    PartRecord,
    VolumeRecord,
    pairs,
)
from pyozone.hdds.s3_object_lock import DefaultRetention, ObjectLockConfiguration, Retention, RetentionMode
from pyozone.hdds.s3_versions import BucketVersioning
from pyozone.hdds.security.sse import KeyEncryption, SseAlgorithm
from pyozone.proto import OmClientProtocol_pb2 as om_pb
from pyozone.proto import ScmBlockLocationProtocol_pb2 as block_pb
from pyozone.protocol.acl import (
    acls_from_proto,
    acls_to_proto,
)
from pyozone.protocol.block import (
    container_block_id_from_proto,
    container_block_id_to_proto,
)
from pyozone.protocol.common import (
    replication_from_proto,
    replication_to_proto,
    sub_message,
    uint64,
)

if TYPE_CHECKING:
    pass


DECODED_CACHE_SIZE = 4096
"""Volume, bucket and key records kept with their bytes (RecordMemo)."""


@functools.lru_cache(maxsize=256)
def replication_fields(config: ReplicationConfig | None) -> dict[str, Any]:
    """A message's type, factor and (EC only) ecReplicationConfig, as keyword arguments: the one
    conversion of a config to its fields for every OM message, record or request (None: none set, a
    request's "OM's default"; an EC config's factor is 0, which proto3 does not send). Memoized: a
    handful of configs; callers unpack it, never change it."""
    if config is None:
        return {}
    rtype, factor, ec = replication_to_proto(config)
    fields: dict[str, Any] = {"type": rtype, "factor": factor}
    if ec is not None:
        fields["ecReplicationConfig"] = ec
    return fields


def stored_replication(p: om_pb.BucketInfo | om_pb.KeyInfo | om_pb.MultipartInfo) -> ReplicationConfig:
    if p.HasField("ecReplicationConfig"):
        return replication_from_proto(p.type, p.factor, p.ecReplicationConfig)
    return _replicated(p.type, p.factor)


@functools.lru_cache(maxsize=64)
def _replicated(rtype: int, factor: int) -> ReplicationConfig:
    """A stored non-EC config (memoized: a handful of (type, factor) pairs; a bad one raises, uncached)."""
    return replication_from_proto(rtype, factor, None)


# ------------------------------------------------------------------ volumes and buckets
def volume_to_proto(v: VolumeRecord) -> om_pb.VolumeInfo:
    return om_pb.VolumeInfo(
        volume=v.volume,
        owner=v.owner,
        admin=v.admin,
        creationTime=v.creation_ms,
        modificationTime=v.modification_ms,
        quotaInBytes=v.quota_bytes,
        usedBytes=v.used_bytes,
        usedNamespace=v.used_namespace,
        quotaInNamespace=v.quota_namespace,
        acls=acls_to_proto(v.acls),
    )


def volume_from_proto(p: om_pb.VolumeInfo) -> VolumeRecord:
    return VolumeRecord(
        p.volume,
        p.owner,
        p.admin,
        p.creationTime,
        p.modificationTime,
        p.quotaInBytes,
        p.usedBytes,
        p.usedNamespace,
        p.quotaInNamespace,
        acls_from_proto(p.acls, "acls"),
    )


def bucket_to_proto(b: BucketRecord) -> om_pb.BucketInfo:
    return om_pb.BucketInfo(
        volume=b.volume,
        bucket=b.bucket,
        owner=b.owner,
        creationTime=b.creation_ms,
        modificationTime=b.modification_ms,
        layout=b.layout,
        usedBytes=b.used_bytes,
        usedNamespace=b.used_namespace,
        quotaInBytes=b.quota_bytes,
        quotaInNamespace=b.quota_namespace,
        acls=acls_to_proto(b.acls),
        versioning=b.versioning.value,
        objectLockEnabled=b.object_lock is not None,
        defaultRetention=default_retention_to_proto(b.object_lock),
        sseDefault=b.sse_default,
        **replication_fields(b.replication),
    )


def bucket_from_proto(p: om_pb.BucketInfo) -> BucketRecord:
    return BucketRecord(
        p.volume,
        p.bucket,
        p.owner,
        p.creationTime,
        p.modificationTime,
        stored_replication(p),
        p.layout,
        p.usedBytes,
        p.usedNamespace,
        p.quotaInBytes,
        p.quotaInNamespace,
        acls_from_proto(p.acls, "acls"),
        BucketVersioning.of(p.versioning),
        object_lock_from_proto(p),
        p.sseDefault,
    )


def default_retention_to_proto(lock: ObjectLockConfiguration | None) -> om_pb.DefaultRetention | None:
    if lock is None or lock.default is None:
        return None
    d = lock.default
    return om_pb.DefaultRetention(mode=d.mode.value, days=d.days, years=d.years)


def object_lock_from_proto(p: om_pb.BucketInfo) -> ObjectLockConfiguration | None:
    """A BucketInfo's Object Lock (hdds/s3_object_lock.py); None: not enabled."""
    if not p.objectLockEnabled:
        return None
    if not p.HasField("defaultRetention"):
        return ObjectLockConfiguration()
    d = p.defaultRetention
    return ObjectLockConfiguration(DefaultRetention(RetentionMode(d.mode), d.days, d.years))


def retention_from_proto(p: om_pb.KeyInfo) -> Retention | None:
    return Retention(RetentionMode(p.retentionMode), p.retainUntilMs) if p.retentionMode else None


def legal_hold_from_proto(p: om_pb.KeyInfo) -> bool | None:
    return p.legalHold == "ON" if p.legalHold else None


# ------------------------------------------------------------------ keys
def block_to_proto(block: KeyBlock) -> om_pb.KeyLocation:
    return om_pb.KeyLocation(
        blockID=block_pb.BlockID(
            containerBlockID=container_block_id_to_proto(block.block_id),
            blockCommitSequenceId=block.bcsid,
        ),
        offset=block.offset,
        length=block.length,
        createVersion=block.create_version,
    )


def block_from_proto(p: om_pb.KeyLocation, field: str = "location") -> KeyBlock:
    """Checks what a client sent: a block id, and offset/length/BCSID that fit their types."""
    block_id = sub_message(p, "blockID", field)
    return KeyBlock(
        container_block_id_from_proto(
            sub_message(block_id, "containerBlockID", f"{field}.blockID"), f"{field}.blockID.containerBlockID"
        ),
        uint64(p.offset, f"{field}.offset"),
        uint64(p.length, f"{field}.length"),
        uint64(block_id.blockCommitSequenceId, f"{field}.blockID.blockCommitSequenceId"),
        uint64(p.createVersion, f"{field}.createVersion"),
    )


def key_to_proto(k: KeyRecord, with_blocks: bool = True) -> om_pb.KeyInfo:
    """Empty maps and lists are left unset and the blocks built in place (a record's blocks were checked
    when they entered OM): a tenth of OM's CPU per key went to this under omkg (issue 29)."""
    p = om_pb.KeyInfo(
        volume=k.volume,
        bucket=k.bucket,
        key=k.key,
        dataSize=k.data_size,
        creationTime=k.creation_ms,
        modificationTime=k.modification_ms,
        objectID=k.object_id,
        owner=k.owner,
        chargedBytes=k.charged_bytes,
        versionSeq=k.version_seq,
        versioned=k.versioned,
        deleteMarker=k.delete_marker,
        **replication_fields(k.replication),
    )
    if k.retention is not None:
        p.retentionMode = k.retention.mode.value
        p.retainUntilMs = k.retention.until_ms
    if k.legal_hold is not None:
        p.legalHold = "ON" if k.legal_hold else "OFF"
    if with_blocks:
        add = p.locations.add
        for b in k.blocks:
            location = add(offset=b.offset, length=b.length, createVersion=b.create_version)
            block_id = location.blockID
            block_id.blockCommitSequenceId = b.bcsid
            block_id.containerBlockID.containerID = b.block_id.container_id
            block_id.containerBlockID.localID = b.block_id.local_id
        if k.parts:
            p.partNumbers.extend(number for number, _ in k.parts)
            p.partSizes.extend(size for _, size in k.parts)
            p.partChecksums.extend(k.part_checksums)
    if k.metadata:
        p.metadata.update(k.metadata)
    if k.tags:
        p.tags.update(k.tags)
    if k.acls:
        p.acls.extend(acls_to_proto(k.acls))
    if k.encryption is not None:
        encryption_to_proto(k.encryption, p, part_ivs=with_blocks)
    return p


def encryption_to_proto(e: KeyEncryption, p: om_pb.KeyInfo, part_ivs: bool = True) -> None:
    """`part_ivs` False: without a multipart key's ivs (up to 10,000 x 16 bytes), as a listing carries no
    part list to read them with."""
    p.sseAlgorithm = int(e.algorithm)  # type: ignore[assignment]
    p.sseIv = e.iv
    p.sseWrappedKey = e.wrapped_key
    p.sseMasterKeyVersion = e.master_key_version
    p.sseCustomerKeyMD5 = e.customer_key_md5
    if e.part_ivs and part_ivs:
        p.ssePartIvs.extend(e.part_ivs)


def encryption_from_proto(p: om_pb.KeyInfo) -> KeyEncryption | None:
    if not p.sseAlgorithm:
        return None
    return KeyEncryption(
        SseAlgorithm(p.sseAlgorithm), p.sseIv, p.sseWrappedKey, p.sseMasterKeyVersion, p.sseCustomerKeyMD5,
        tuple(p.ssePartIvs),
    )  # fmt: skip


def sse_info_to_proto(e: KeyEncryption) -> om_pb.SseInfo:
    return om_pb.SseInfo(
        algorithm=int(e.algorithm), iv=e.iv, wrappedKey=e.wrapped_key,  # type: ignore[arg-type]
        masterKeyVersion=e.master_key_version, customerKeyMD5=e.customer_key_md5,
    )  # fmt: skip


def sse_info_from_proto(p: om_pb.SseInfo) -> KeyEncryption:
    return KeyEncryption(SseAlgorithm(p.algorithm), p.iv, p.wrappedKey, p.masterKeyVersion, p.customerKeyMD5)


def key_from_proto(p: om_pb.KeyInfo) -> KeyRecord:
    return KeyRecord(
        p.volume,
        p.bucket,
        p.key,
        p.dataSize,
        p.creationTime,
        p.modificationTime,
        stored_replication(p),
        tuple(
            KeyBlock(
                BlockID(x.blockID.containerBlockID.containerID, x.blockID.containerBlockID.localID),
                x.offset,
                x.length,
                x.blockID.blockCommitSequenceId,
                x.createVersion,
            )
            for x in p.locations
        ),
        p.objectID,
        pairs(p.metadata) if p.metadata else (),
        pairs(p.tags) if p.tags else (),
        p.owner,
        acls_from_proto(p.acls, "acls") if p.acls else (),
        p.chargedBytes,
        tuple(zip(p.partNumbers, p.partSizes, strict=True)),
        tuple(p.partChecksums),
        p.versionSeq,
        p.versioned,
        p.deleteMarker,
        retention_from_proto(p),
        legal_hold_from_proto(p),
        encryption_from_proto(p),
    )


# ------------------------------------------------------------------ multipart uploads
def multipart_to_proto(u: MultipartUploadRecord) -> om_pb.MultipartInfo:
    return om_pb.MultipartInfo(
        volume=u.volume,
        bucket=u.bucket,
        key=u.key,
        uploadID=u.upload_id,
        creationTime=u.creation_ms,
        objectID=u.object_id,
        metadata=dict(u.metadata),
        tags=dict(u.tags),
        parts=[
            om_pb.PartInfo(partNumber=p.part_number, partName=p.part_name, partKeyInfo=key_to_proto(p.key))
            for p in u.parts
        ],
        owner=u.owner,
        acls=acls_to_proto(u.acls),
        sse=sse_info_to_proto(u.encryption) if u.encryption is not None else None,
        **replication_fields(u.replication),
    )


def multipart_from_proto(p: om_pb.MultipartInfo) -> MultipartUploadRecord:
    return MultipartUploadRecord(
        p.volume,
        p.bucket,
        p.key,
        p.uploadID,
        p.creationTime,
        stored_replication(p),
        p.objectID,
        pairs(p.metadata),
        pairs(p.tags),
        tuple(PartRecord(x.partNumber, x.partName, key_from_proto(x.partKeyInfo)) for x in p.parts),
        p.owner,
        acls_from_proto(p.acls, "acls"),
        sse_info_from_proto(p.sse) if p.HasField("sse") else None,
    )


# ------------------------------------------------------------------ bytes, for the tables
def encode(message: om_pb.VolumeInfo | om_pb.BucketInfo | om_pb.KeyInfo | om_pb.MultipartInfo) -> bytes:
    return message.SerializeToString(deterministic=True)


class RecordMemo:
    """The records OM wrote or read lately with their om.db bytes, both ways: Ozone's table cache keeps
    objects (OmKeyInfo, OmBucketInfo), not bytes, and so does this, beside the tables. A record read back
    from bytes it was written as is the same (frozen) object, not a new decode: commitKey reads the open
    key openKey wrote, every key request the bucket and volume the last commit wrote. A record written or
    answered again is not encoded again (by identity: the memo holds the record, so its id stays its own).
    At most `size` of each; the oldest go first. Safe across threads (the event loop and OM's pool)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._by_bytes: OrderedDict[bytes, object] = OrderedDict()
        self._by_id: OrderedDict[int, tuple[object, bytes]] = OrderedDict()
        self._lock = threading.Lock()

    def record(self, data: bytes) -> Any:
        """The record these bytes decode to, if one was seen; else None."""
        return self._by_bytes.get(data)

    def data(self, record: object) -> bytes | None:
        """The bytes this very record was encoded as or decoded from; else None."""
        entry = self._by_id.get(id(record))
        return entry[1] if entry is not None and entry[0] is record else None

    def remember(self, record: object, data: bytes) -> None:
        with self._lock:
            by_bytes, by_id = self._by_bytes, self._by_id
            by_bytes[data] = record
            by_id[id(record)] = (record, data)
            if len(by_bytes) > self.size:
                by_bytes.popitem(last=False)
            if len(by_id) > self.size:
                by_id.popitem(last=False)


RECORDS = RecordMemo(DECODED_CACHE_SIZE)
"""om.db's volume, bucket and key records with their bytes (one memo: equal bytes are one record)."""

R = TypeVar("R", VolumeRecord, BucketRecord, KeyRecord)


def _encoded(record: R, to_proto: Callable[[R], Message]) -> bytes:
    data = RECORDS.data(record)
    if data is None:
        data = to_proto(record).SerializeToString(deterministic=True)
        RECORDS.remember(record, data)
    return data


def _decoded(data: bytes, message: type[Message], from_proto: Callable[[Any], R]) -> R:
    record = RECORDS.record(data)
    if record is None:
        record = from_proto(message.FromString(data))
        RECORDS.remember(record, data)
    return record


def encode_volume(record: VolumeRecord) -> bytes:
    """A volumeTable value (the record's bytes, once per record)."""
    return _encoded(record, volume_to_proto)


def encode_bucket(record: BucketRecord) -> bytes:
    """A bucketTable value."""
    return _encoded(record, bucket_to_proto)


def encode_key(record: KeyRecord) -> bytes:
    """A keyTable, openKeyTable or deletedTable value."""
    return _encoded(record, key_to_proto)


def decode_volume(data: bytes) -> VolumeRecord:
    return _decoded(data, om_pb.VolumeInfo, volume_from_proto)


def decode_bucket(data: bytes) -> BucketRecord:
    return _decoded(data, om_pb.BucketInfo, bucket_from_proto)


def decode_key(data: bytes) -> KeyRecord:
    return _decoded(data, om_pb.KeyInfo, key_from_proto)


def decode_key_block_ids(data: bytes) -> tuple[BlockID, ...]:
    """The block ids of a stored KeyInfo and nothing else: all KeyDeletingService sends SCM of a
    deletedTable entry (decoding whole records was a twentieth of OM's CPU under omkg, issue 29)."""
    return tuple(
        BlockID(x.blockID.containerBlockID.containerID, x.blockID.containerBlockID.localID)
        for x in om_pb.KeyInfo.FromString(data).locations
    )


def decode_multipart(data: bytes) -> MultipartUploadRecord:
    return multipart_from_proto(om_pb.MultipartInfo.FromString(data))


def encode_s3_secret(access_id: str, secret: str) -> bytes:
    """An s3SecretTable value (Ozone's S3Secret message)."""
    return om_pb.S3Secret(kerberosID=access_id, awsSecret=secret).SerializeToString()


def decode_s3_secret(data: bytes) -> tuple[str, str]:
    """The access id and secret of an s3SecretTable value."""
    proto = om_pb.S3Secret.FromString(data)
    return proto.kerberosID, proto.awsSecret
