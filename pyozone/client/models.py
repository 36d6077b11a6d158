"""What the client hands back: immutable views of OM's volumes, buckets and keys.

Protobuf messages stay inside the client; callers get frozen dataclasses with Python names, so code and
the JSON of `pyozone sh` do not depend on proto3 quirks (zero enum values, unset fields).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pyozone.hdds.ids import ReplicationConfig
from pyozone.proto import OmClientProtocol_pb2 as om_pb
from pyozone.proto import ScmBlockLocationProtocol_pb2 as block_pb
from pyozone.proto import hdds_pb2
from pyozone.protocol.admin import pipeline_replica_indexes
from pyozone.protocol.common import ec_config_from_proto
from pyozone.protocol.tokens import encode_token_proto

DATA_PORT = "STANDALONE"
DATASTREAM_PORT = "RATIS_DATASTREAM"


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
class DatanodeRef:
    """A datanode as the data path needs it: who (uuid) and where its data port listens."""

    uuid: str
    host: str
    ip: str
    port: int | None  # the STANDALONE port; None when OM did not know it
    datastream_port: int | None = None  # RATIS_DATASTREAM; None: the datanode serves no datastream
    rack: str = ""  # its network location, as SCM resolved it

    @property
    def address(self) -> str:
        return f"{self.ip or self.host}:{self.port}"

    @classmethod
    def from_proto(cls, proto: hdds_pb2.DatanodeDetailsProto) -> DatanodeRef:
        ports = {p.name: p.value for p in proto.ports}
        return cls(
            proto.uuid, proto.hostName, proto.ipAddress, ports.get(DATA_PORT), ports.get(DATASTREAM_PORT),
            proto.networkLocation,
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class PipelineRef:
    id: str
    members: tuple[DatanodeRef, ...]
    leader_id: str  # leaderID, else suggestedLeaderID, else "" (see leader())
    replica_indexes: tuple[int, ...] = ()
    """EC: members[i] holds replica index replica_indexes[i] (1..data+parity); empty when replicated."""
    ec: ReplicationConfig | None = None
    """The EC config of an EC pipeline (a block group's), else None."""

    def leader(self) -> DatanodeRef | None:
        """Where writes go: the leader, else the suggested leader, else the only (or first) member."""
        for member in self.members:
            if member.uuid == self.leader_id:
                return member
        return self.members[0] if self.members else None

    def leader_first(self) -> tuple[DatanodeRef, ...]:
        leader = self.leader()
        return (leader, *[m for m in self.members if m is not leader]) if leader else self.members

    def by_index(self) -> dict[int, tuple[DatanodeRef, ...]]:
        """EC: the members holding each replica index, in the pipeline's order (nearest first for reads)."""
        found: dict[int, list[DatanodeRef]] = {}
        for member, index in zip(self.members, self.replica_indexes, strict=True):
            found.setdefault(index, []).append(member)
        return {index: tuple(members) for index, members in found.items()}

    @classmethod
    def from_proto(cls, proto: hdds_pb2.Pipeline) -> PipelineRef:
        """An EC pipeline's memberReplicaIndexes must pair every member with an index of its config (a
        member left without one would go unread, a wrong one read as another index): else ProtocolError."""
        members = tuple(DatanodeRef.from_proto(m) for m in proto.members)
        ec = None
        indexes = tuple(proto.memberReplicaIndexes)
        if proto.type == hdds_pb2.EC and proto.HasField("ecReplicationConfig"):
            ec = ec_config_from_proto(proto.ecReplicationConfig, "pipeline.ecReplicationConfig")
            indexes = pipeline_replica_indexes(proto, "pipeline", ec)
        return cls(proto.id.id, members, proto.leaderID or proto.suggestedLeaderID, indexes, ec)


@dataclass(frozen=True, slots=True)
class KeyLocation:
    """One block of a key: the bytes [offset, offset + length) of the key, and where to read them."""

    container_id: int
    local_id: int
    bcsid: int
    offset: int
    length: int
    pipeline: PipelineRef
    container_state: str = ""
    token: str = ""
    """OM's block token for the block (encodedToken), sent with every request for it; "" without
    hdds.block.token.enabled."""

    @property
    def block_name(self) -> str:
        return f"conID: {self.container_id} locID: {self.local_id}"

    def read_order(self) -> tuple[DatanodeRef, ...]:
        """An OPEN container is read from its pipeline's leader first (it has every applied write);
        other containers' replicas come nearest first from OM, so their order is kept."""
        if self.container_state in ("", "OPEN"):
            return self.pipeline.leader_first()
        return self.pipeline.members

    @classmethod
    def from_proto(cls, proto: om_pb.KeyLocation) -> KeyLocation:
        bid = proto.blockID
        return cls(
            container_id=bid.containerBlockID.containerID,
            local_id=bid.containerBlockID.localID,
            bcsid=bid.blockCommitSequenceId,
            offset=proto.offset,
            length=proto.length,
            pipeline=PipelineRef.from_proto(proto.pipeline),
            container_state=proto.containerState,
            token=encode_token_proto(proto.token),
        )

    def to_proto(self) -> om_pb.KeyLocation:
        """What commitKey needs: the block id with its BCSID, offset and length (not the token)."""
        return om_pb.KeyLocation(
            blockID=block_pb.BlockID(
                containerBlockID=block_pb.ContainerBlockID(
                    containerID=self.container_id, localID=self.local_id
                ),
                blockCommitSequenceId=self.bcsid,
            ),
            offset=self.offset,
            length=self.length,
        )


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
            tuple(KeyLocation.from_proto(loc) for loc in p.locations), "", dict(p.metadata), dict(p.tags),
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
