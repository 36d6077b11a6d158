"""What the client hands back: immutable views of OM's volumes, buckets and keys.

Protobuf messages stay inside the client; callers get frozen dataclasses with Python names, so code and
the JSON of `pyozone sh` do not depend on proto3 quirks (zero enum values, unset fields).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.locations import KeyLocation
from pyozone.proto import OmClientProtocol_pb2 as om_pb
from pyozone.proto import hdds_pb2
from pyozone.protocol.common import ec_config_from_proto
from pyozone.protocol.locations import key_location_from_proto


def replication_name(rtype: int, factor: int, ec: hdds_pb2.ECReplicationConfig | None = None) -> str:
    """Ozone's "RATIS/THREE", or "EC/RS-3-2-1024k" from an EC message's ecReplicationConfig; an unset type
    or factor reads as the other part alone."""
    if rtype == hdds_pb2.EC and ec is not None:
        return str(ec_config_from_proto(ec, "ecReplicationConfig"))
    kind = hdds_pb2.ReplicationType.Name(rtype) if rtype else "RATIS"
    return f"{kind}/{hdds_pb2.ReplicationFactor.Name(factor) if factor else 'THREE'}"


def message_replication(p: om_pb.BucketInfo | om_pb.KeyInfo | om_pb.ListPartsResponse
                        | om_pb.MultipartUploadSummary) -> str:  # fmt: skip
    """The replication name of an OM message carrying type, factor and ecReplicationConfig."""
    ec = p.ecReplicationConfig if p.HasField("ecReplicationConfig") else None
    return replication_name(p.type, p.factor, ec)


@dataclass(frozen=True, slots=True)
class KeyCondition:
    """An S3 conditional write, which OM checks in the step that commits or deletes the key
    (OmClientProtocol.proto: KeyCondition): `must_not_exist` is If-None-Match: *, `expected_etag` If-Match
    ("*": any committed key)."""

    must_not_exist: bool = False
    expected_etag: str = ""

    def to_proto(self) -> om_pb.KeyCondition:
        return om_pb.KeyCondition(mustNotExist=self.must_not_exist, expectedETag=self.expected_etag)


@dataclass(frozen=True, slots=True)
class VolumeInfo:
    name: str
    owner: str
    admin: str
    creation_time: int
    modification_time: int
    quota_in_bytes: int  # replicated bytes at most; 0: no quota
    used_bytes: int
    used_namespace: int  # buckets
    quota_in_namespace: int  # buckets at most; 0: no quota

    @classmethod
    def from_proto(cls, p: om_pb.VolumeInfo) -> VolumeInfo:
        return cls(
            p.volume, p.owner, p.admin, p.creationTime, p.modificationTime,
            p.quotaInBytes, p.usedBytes, p.usedNamespace, p.quotaInNamespace,
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class BucketInfo:
    volume: str
    name: str
    owner: str
    creation_time: int
    modification_time: int
    replication: str
    layout: str
    used_bytes: int
    used_namespace: int  # keys
    quota_in_bytes: int  # replicated bytes at most; 0: no quota
    quota_in_namespace: int  # keys at most; 0: no quota

    @property
    def replication_config(self) -> ReplicationConfig:
        """The bucket's default replication config (`replication` is its name, "EC/RS-3-2-1024k")."""
        return ReplicationConfig.parse(self.replication)

    @classmethod
    def from_proto(cls, p: om_pb.BucketInfo) -> BucketInfo:
        return cls(
            p.volume, p.bucket, p.owner, p.creationTime, p.modificationTime,
            message_replication(p), p.layout or "OBJECT_STORE", p.usedBytes, p.usedNamespace,
            p.quotaInBytes, p.quotaInNamespace,
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class KeyInfo:
    volume: str
    bucket: str
    name: str
    data_size: int
    creation_time: int
    modification_time: int
    replication: str
    object_id: int = 0
    locations: tuple[KeyLocation, ...] = field(default=())
    write_path: str = ""  # "V1" or "V2" on what a write returns; OM does not record it
    metadata: Mapping[str, str] = field(default_factory=dict)  # S3's: "ETag", "Content-Type", x-amz-meta-*
    tags: Mapping[str, str] = field(default_factory=dict)

    @property
    def replication_config(self) -> ReplicationConfig:
        """The key's replication config (`replication` is its name, "EC/RS-3-2-1024k")."""
        return ReplicationConfig.parse(self.replication)

    @property
    def is_ec(self) -> bool:
        """Whether the key is erasure coded, by its type alone (its name may lack the EC config)."""
        return self.replication.partition("/")[0].upper() == "EC"

    @classmethod
    def from_proto(cls, p: om_pb.KeyInfo) -> KeyInfo:
        return cls(
            p.volume, p.bucket, p.key, p.dataSize, p.creationTime, p.modificationTime,
            message_replication(p), p.objectID,
            tuple(key_location_from_proto(loc) for loc in p.locations), "", dict(p.metadata), dict(p.tags),
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class PartInfo:
    """A committed part of a multipart upload; `etag` is the name it was committed with, `metadata` what
    it was committed with (the S3 gateway's part checksums)."""

    part_number: int
    etag: str
    size: int
    modification_ms: int
    metadata: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class MultipartPartList:
    """One page of ListParts: the parts after the marker, where the next page starts, and the upload's
    replication and metadata."""

    parts: tuple[PartInfo, ...]
    next_part_number_marker: int
    truncated: bool
    replication: str
    metadata: Mapping[str, str]

    @classmethod
    def from_proto(cls, p: om_pb.ListPartsResponse) -> MultipartPartList:
        return cls(
            tuple(
                PartInfo(x.partNumber, x.partName, x.size, x.modificationTime, dict(x.metadata))
                for x in p.parts
            ),
            p.nextPartNumberMarker, p.isTruncated, message_replication(p), dict(p.metadata),
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class MultipartUploadInfo:
    key: str
    upload_id: str
    creation_ms: int
    replication: str

    @classmethod
    def from_proto(cls, p: om_pb.MultipartUploadSummary) -> MultipartUploadInfo:
        return cls(p.key, p.uploadID, p.creationTime, message_replication(p))
