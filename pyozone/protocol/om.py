"""OmClientProtocol (OzoneManagerService) as OM's client and service speak it: the requests OM's client sends
(framework/om.py), what OM's service reads of a request and the answers it builds (om/server/service.py),
and the client's views (hdds/om_views.py) read from those answers. In the role of Ozone's
OzoneManagerProtocolClientSideTranslatorPB and OzoneManagerRequestHandler's message work; the records inside
the answers, which are also om.db's values, are protocol/om_records.py's.

Reading a request checks it and raises ProtocolError naming the field, which the server answers with
INVALID_ARGUMENT. Costs (OM's hot path): OM's handlers read plain fields of the request they are handed
(request.volume, request.clientID) instead of a dataclass copy of it; an answer is built once, straight
from the record.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from google.protobuf.descriptor import ServiceDescriptor
from google.protobuf.message_factory import GetMessageClass

from pyozone.hdds.block import ExcludeList
from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.ids import BlockID, ReplicationConfig
from pyozone.hdds.locations import KeyLocation
from pyozone.hdds.om_records import (
    BucketRecord,
    KeyBlock,
    KeyRecord,
    MultipartUploadRecord,
    PartRecord,
    VolumeRecord,
)
from pyozone.hdds.om_views import (
    BucketInfo,
    InitiatedUpload,
    KeyCondition,
    KeyInfo,
    MultipartPartList,
    MultipartUploadInfo,
    OpenedKey,
    PartInfo,
    ServiceInfo,
    VolumeInfo,
)
from pyozone.hdds.s3_lifecycle import LifecycleRun
from pyozone.hdds.s3_versions import BucketVersioning, DeleteOutcome, version_id
from pyozone.hdds.security.acl import Acls, OzoneAcl
from pyozone.hdds.security.block_token import Token
from pyozone.hdds.security.sse import KeyEncryption, SseAlgorithm, SseRequest
from pyozone.hdds.states import ReplicationType
from pyozone.proto import OmClientProtocol_pb2 as om_pb
from pyozone.proto import ScmBlockLocationProtocol_pb2 as block_pb
from pyozone.proto import hdds_pb2
from pyozone.protocol.acl import (
    ObjectPath,
    acl_to_proto,
    acls_to_proto,
    obj_from_proto,
    obj_to_proto,
)
from pyozone.protocol.block import (
    BlockLocation,
    exclude_list_from_proto,
    write_pipeline_to_proto,
)
from pyozone.protocol.common import (
    enum_from_proto,
    replication_from_proto,
)
from pyozone.protocol.locations import key_location_from_proto, key_location_to_proto
from pyozone.protocol.om_records import (
    block_from_proto,
    bucket_to_proto,
    encode_key,
    encryption_from_proto,
    key_to_proto,
    legal_hold_from_proto,
    object_lock_from_proto,
    replication_fields,
    retention_from_proto,
    volume_to_proto,
)
from pyozone.protocol.tokens import token_to_proto

if TYPE_CHECKING:
    from google.protobuf.message import Message

SERVICE: ServiceDescriptor = om_pb.DESCRIPTOR.services_by_name["OzoneManagerService"]
"""OzoneManagerService's schema: what OM's RPC server registers and its client calls (rpc.ServiceSpec.of),
and what OM's request bounds are set on (om/server/limits.py)."""

# ------------------------------------------------------------------ replication
ReplicationRequest = om_pb.CreateBucketRequest | om_pb.OpenKeyRequest | om_pb.InitiateMultipartUploadRequest


def names_replication(request: ReplicationRequest) -> bool:
    """Whether a request names a replication config at all (else the bucket's or server's default)."""
    return bool(request.type or request.factor or request.HasField("ecReplicationConfig"))


def requested_replication(
    request: ReplicationRequest, default: Callable[[], ReplicationConfig]
) -> ReplicationConfig:
    """The config a request names (Ozone's type, factor and ecReplicationConfig). Parts left unset come from
    `default()`, asked only then (OM reads the bucket for it: a request naming every part costs no read): a
    factor alone keeps the default's replicated type (RATIS under an EC default), an ecReplicationConfig
    alone means EC. A config whose parts contradict each other is refused."""
    if not names_replication(request):
        return default()
    ec = request.ecReplicationConfig if request.HasField("ecReplicationConfig") else None
    if request.type:
        kind = enum_from_proto(ReplicationType, request.type, "type")
    elif ec is not None:
        kind = ReplicationType.EC
    else:
        base = default()
        kind = base.type if base.type is not ReplicationType.EC else ReplicationType.RATIS
    if kind is ReplicationType.EC:
        if request.factor:
            raise ProtocolError(
                "factor", "is set for an EC replication config (EC takes ecReplicationConfig)"
            )
        return replication_from_proto(kind.value, 0, ec)
    if ec is not None:
        raise ProtocolError("ecReplicationConfig", f"is set but type is {kind.name}")
    if request.factor:
        return replication_from_proto(kind.value, request.factor, None)
    base = default()
    return replication_from_proto(kind.value, base.factor if base.type is not ReplicationType.EC else 3, None)


# ------------------------------------------------------------------ conditions
def key_condition_from_proto(proto: om_pb.KeyCondition) -> KeyCondition | None:
    """None when the request sets no condition; an If-Match ETag without its quotes."""
    condition = KeyCondition(proto.mustNotExist, proto.expectedETag.strip().strip('"'))
    return condition if condition != KeyCondition() else None


def key_condition_to_proto(condition: KeyCondition | None) -> om_pb.KeyCondition | None:
    if condition is None:
        return None
    return om_pb.KeyCondition(mustNotExist=condition.must_not_exist, expectedETag=condition.expected_etag)


# ------------------------------------------------------------------ the client's views of OM's answers
def message_replication(p: om_pb.BucketInfo | om_pb.KeyInfo | om_pb.ListPartsResponse
                        | om_pb.MultipartUploadSummary) -> ReplicationConfig:  # fmt: skip
    """The config of an OM answer carrying type, factor and ecReplicationConfig; an unset type reads as
    RATIS and an unset factor as THREE (proto3's zeros)."""
    ec = p.ecReplicationConfig if p.HasField("ecReplicationConfig") else None
    return replication_from_proto(p.type or hdds_pb2.RATIS, p.factor or hdds_pb2.THREE, ec)


def volume_info_from_proto(p: om_pb.VolumeInfo) -> VolumeInfo:
    return VolumeInfo(
        p.volume, p.owner, p.admin, p.creationTime, p.modificationTime,
        p.quotaInBytes, p.usedBytes, p.usedNamespace, p.quotaInNamespace,
    )  # fmt: skip


def bucket_info_from_proto(p: om_pb.BucketInfo) -> BucketInfo:
    return BucketInfo(
        p.volume, p.bucket, p.owner, p.creationTime, p.modificationTime,
        message_replication(p), p.layout or "OBJECT_STORE", p.usedBytes, p.usedNamespace,
        p.quotaInBytes, p.quotaInNamespace, p.versioning, object_lock_from_proto(p),
    )  # fmt: skip


def key_info_from_proto(p: om_pb.KeyInfo) -> KeyInfo:
    """`version_id`: "" for a key written while its bucket was unversioned (S3's null version, which an
    unversioned bucket's answers do not name)."""
    version = version_id(p.versionSeq, p.versioned) if p.versionSeq or p.versioned else ""
    return KeyInfo(
        p.volume, p.bucket, p.key, p.dataSize, p.creationTime, p.modificationTime,
        message_replication(p), p.objectID,
        tuple(key_location_from_proto(loc) for loc in p.locations), "", dict(p.metadata), dict(p.tags),
        tuple(zip(p.partNumbers, p.partSizes, strict=True)), tuple(p.partChecksums),
        version, p.deleteMarker, p.versionSeq, retention_from_proto(p), legal_hold_from_proto(p),
        encryption_from_proto(p), p.sseDataKey, p.owner,
    )  # fmt: skip


def key_versions_from_proto(p: om_pb.ListKeyVersionsResponse) -> list[tuple[KeyInfo, bool]]:
    """ListObjectVersions' entries: each version with whether it is its key's latest."""
    return [(key_info_from_proto(v.key), v.isLatest) for v in p.versions]


def delete_outcome_from_proto(p: om_pb.DeleteKeyResponse) -> tuple[str, bool]:
    """The version a delete added or removed ("": an unversioned bucket's) and whether it is a marker."""
    return p.versionId, p.deleteMarker


def part_list_from_proto(p: om_pb.ListPartsResponse) -> MultipartPartList:
    return MultipartPartList(
        tuple(
            PartInfo(x.partNumber, x.partName, x.size, x.modificationTime, dict(x.metadata)) for x in p.parts
        ),
        p.nextPartNumberMarker, p.isTruncated, message_replication(p), dict(p.metadata),
        SseAlgorithm(p.sseAlgorithm), p.sseCustomerKeyMD5,
    )  # fmt: skip


def service_info_from_proto(p: om_pb.ServiceInfoResponse) -> ServiceInfo:
    return ServiceInfo(p.clusterID, p.omID, p.scmInSafeMode)


def upload_info_from_proto(p: om_pb.MultipartUploadSummary) -> MultipartUploadInfo:
    return MultipartUploadInfo(p.key, p.uploadID, p.creationTime, message_replication(p))


def volume_view(record: VolumeRecord) -> VolumeInfo:
    """A record as the client would read it from OM's answer (OM's web API shows what `sh` prints)."""
    return volume_info_from_proto(volume_to_proto(record))


def bucket_view(record: BucketRecord) -> BucketInfo:
    return bucket_info_from_proto(bucket_to_proto(record))


def key_view(record: KeyRecord) -> KeyInfo:
    """Without its blocks (a listing's key)."""
    return key_info_from_proto(key_to_proto(record, with_blocks=False))


def located_key_view(record: KeyRecord, where: Iterable[tuple[hdds_pb2.Pipeline | None, str]]) -> KeyInfo:
    """With its blocks where lookupKey reads them (located_key_to_proto), without tokens."""
    return key_info_from_proto(located_key_to_proto(record, where))


# ------------------------------------------------------------------ requests (OM's client)
def create_volume_request(
    volume: str, owner: str, quota_bytes: int, quota_namespace: int
) -> om_pb.CreateVolumeRequest:
    return om_pb.CreateVolumeRequest(
        volume=volume, owner=owner, quotaInBytes=quota_bytes, quotaInNamespace=quota_namespace
    )


def info_volume_request(volume: str) -> om_pb.InfoVolumeRequest:
    return om_pb.InfoVolumeRequest(volume=volume)


def set_volume_property_request(
    volume: str, owner: str, quota_bytes: int, quota_namespace: int
) -> om_pb.SetVolumePropertyRequest:
    return om_pb.SetVolumePropertyRequest(
        volumeName=volume, ownerName=owner, quotaInBytes=quota_bytes, quotaInNamespace=quota_namespace
    )


def delete_volume_request(volume: str) -> om_pb.DeleteVolumeRequest:
    return om_pb.DeleteVolumeRequest(volume=volume)


def list_volumes_request(prefix: str, start: str, limit: int) -> om_pb.ListVolumesRequest:
    return om_pb.ListVolumesRequest(prefix=prefix, startKey=start, maxKeys=limit)


def create_bucket_request(
    volume: str, bucket: str, replication: ReplicationConfig | None, owner: str, object_lock: bool = False,
    acls: Acls = (), ownership_controls: bytes = b"",
) -> om_pb.CreateBucketRequest:  # fmt: skip
    return om_pb.CreateBucketRequest(
        volume=volume, bucket=bucket, owner=owner, objectLockEnabled=object_lock, acls=acls_to_proto(acls),
        ownershipControls=ownership_controls, **replication_fields(replication),
    )  # fmt: skip


def info_bucket_request(volume: str, bucket: str) -> om_pb.InfoBucketRequest:
    return om_pb.InfoBucketRequest(volume=volume, bucket=bucket)


def set_bucket_property_request(
    volume: str, bucket: str, owner: str, quota_bytes: int, quota_namespace: int
) -> om_pb.SetBucketPropertyRequest:
    args = om_pb.BucketArgs(
        volumeName=volume, bucketName=bucket, ownerName=owner, quotaInBytes=quota_bytes,
        quotaInNamespace=quota_namespace,
    )  # fmt: skip
    return om_pb.SetBucketPropertyRequest(bucketArgs=args)


def delete_bucket_request(volume: str, bucket: str) -> om_pb.DeleteBucketRequest:
    return om_pb.DeleteBucketRequest(volume=volume, bucket=bucket)


def list_buckets_request(
    volume: str, prefix: str, start: str, limit: int, owner: str = ""
) -> om_pb.ListBucketsRequest:
    return om_pb.ListBucketsRequest(volume=volume, prefix=prefix, startKey=start, maxKeys=limit, owner=owner)


def open_key_request(
    volume: str, bucket: str, key: str, size: int, replication: ReplicationConfig | None,
    exclude: block_pb.ExcludeListProto | None, metadata: Mapping[str, str] | None,
    tags: Mapping[str, str] | None, upload_id: str, part_number: int, condition: KeyCondition | None,
    sse: SseRequest | None = None, acls: Acls = (),
) -> om_pb.OpenKeyRequest:  # fmt: skip
    return om_pb.OpenKeyRequest(
        volume=volume, bucket=bucket, key=key, dataSize=size, excludeList=exclude,
        metadata=metadata, tags=tags, multipartUploadID=upload_id, multipartNumber=part_number,
        condition=key_condition_to_proto(condition), **replication_fields(replication),
        sseAlgorithm=int(sse.algorithm) if sse else 0, sseCustomerKeyMD5=sse.customer_key_md5 if sse else "",
        acls=acls_to_proto(acls),
    )  # fmt: skip


def sse_request_from_proto(
    p: om_pb.OpenKeyRequest | om_pb.InitiateMultipartUploadRequest,
) -> SseRequest | None:
    """The encryption an openKey asks for (None: none); an unknown algorithm is refused."""
    if not p.sseAlgorithm:
        return None
    try:
        algorithm = SseAlgorithm(p.sseAlgorithm)
    except ValueError:
        raise ProtocolError(f"sseAlgorithm {p.sseAlgorithm} is not known") from None
    return SseRequest(algorithm, p.sseCustomerKeyMD5)


def open_key_answer_from_proto(p: om_pb.OpenKeyResponse) -> OpenedKey:
    """The open key's clientID, its pre-allocated blocks and its encryption (with the data key)."""
    return OpenedKey(
        p.clientID, [key_location_from_proto(loc) for loc in p.keyInfo.locations],
        encryption_from_proto(p.keyInfo), p.keyInfo.sseDataKey,
    )  # fmt: skip


def allocate_block_request(
    volume: str, bucket: str, key: str, client_id: int, exclude: block_pb.ExcludeListProto
) -> om_pb.AllocateBlockRequest:
    return om_pb.AllocateBlockRequest(
        volume=volume, bucket=bucket, key=key, clientID=client_id, excludeList=exclude
    )


def commit_key_request(
    volume: str, bucket: str, key: str, client_id: int, size: int, locations: Sequence[KeyLocation],
    metadata: Mapping[str, str] | None, condition: KeyCondition | None,
) -> om_pb.CommitKeyRequest:  # fmt: skip
    return om_pb.CommitKeyRequest(
        volume=volume, bucket=bucket, key=key, clientID=client_id, dataSize=size,
        locations=[key_location_to_proto(loc) for loc in locations], metadata=metadata,
        condition=key_condition_to_proto(condition),
    )  # fmt: skip


def lookup_key_request(
    volume: str, bucket: str, key: str, client_host: str, refresh: bool, version: str = "",
    delete_markers: bool = False,
) -> om_pb.LookupKeyRequest:  # fmt: skip
    return om_pb.LookupKeyRequest(
        volume=volume, bucket=bucket, key=key, clientHost=client_host, forceUpdateContainerCache=refresh,
        versionId=version, deleteMarkers=delete_markers,
    )  # fmt: skip


def list_keys_request(
    volume: str, bucket: str, prefix: str, start: str, limit: int, with_blocks: bool = False
) -> om_pb.ListKeysRequest:
    return om_pb.ListKeysRequest(
        volume=volume, bucket=bucket, prefix=prefix, startKey=start, maxKeys=limit, withBlocks=with_blocks
    )


def rename_key_request(volume: str, bucket: str, key: str, to_key: str) -> om_pb.RenameKeyRequest:
    return om_pb.RenameKeyRequest(volume=volume, bucket=bucket, key=key, toKey=to_key)


def delete_key_request(
    volume: str, bucket: str, key: str, condition: KeyCondition | None, version: str = "",
    bypass: bool = False,
) -> om_pb.DeleteKeyRequest:  # fmt: skip
    return om_pb.DeleteKeyRequest(
        volume=volume, bucket=bucket, key=key, condition=key_condition_to_proto(condition), versionId=version,
        bypassGovernanceRetention=bypass,
    )  # fmt: skip


def put_object_lock_configuration_request(
    volume: str, bucket: str, configuration: bytes
) -> om_pb.PutObjectLockConfigurationRequest:
    return om_pb.PutObjectLockConfigurationRequest(volume=volume, bucket=bucket, configuration=configuration)


def put_object_retention_request(
    volume: str, bucket: str, key: str, version: str, retention: bytes, bypass: bool
) -> om_pb.PutObjectRetentionRequest:
    return om_pb.PutObjectRetentionRequest(
        volume=volume, bucket=bucket, key=key, versionId=version, retention=retention,
        bypassGovernanceRetention=bypass,
    )  # fmt: skip


def put_object_legal_hold_request(
    volume: str, bucket: str, key: str, version: str, legal_hold: bytes
) -> om_pb.PutObjectLegalHoldRequest:
    return om_pb.PutObjectLegalHoldRequest(
        volume=volume, bucket=bucket, key=key, versionId=version, legalHold=legal_hold
    )


def set_bucket_versioning_request(volume: str, bucket: str, state: str) -> om_pb.SetBucketVersioningRequest:
    return om_pb.SetBucketVersioningRequest(volume=volume, bucket=bucket, versioning=state)


def bucket_versioning_from_proto(request: om_pb.SetBucketVersioningRequest) -> BucketVersioning:
    """INVALID_ARGUMENT unless Enabled or Suspended (a bucket never goes back to unversioned)."""
    if request.versioning not in (BucketVersioning.ENABLED.value, BucketVersioning.SUSPENDED.value):
        raise ProtocolError(f"versioning {request.versioning!r}: Enabled or Suspended")
    return BucketVersioning.of(request.versioning)


def list_key_versions_request(
    volume: str, bucket: str, prefix: str, key_marker: str, version_marker: str, limit: int
) -> om_pb.ListKeyVersionsRequest:
    return om_pb.ListKeyVersionsRequest(
        volume=volume, bucket=bucket, prefix=prefix, keyMarker=key_marker, versionIdMarker=version_marker,
        maxKeys=limit,
    )  # fmt: skip


def put_object_tagging_request(
    volume: str, bucket: str, key: str, tags: Mapping[str, str]
) -> om_pb.PutObjectTaggingRequest:
    return om_pb.PutObjectTaggingRequest(volume=volume, bucket=bucket, key=key, tags=tags)


def put_bucket_cors_request(volume: str, bucket: str, configuration: bytes) -> om_pb.PutBucketCorsRequest:
    return om_pb.PutBucketCorsRequest(volume=volume, bucket=bucket, configuration=configuration)


def get_bucket_cors_request(volume: str, bucket: str) -> om_pb.GetBucketCorsRequest:
    return om_pb.GetBucketCorsRequest(volume=volume, bucket=bucket)


def delete_bucket_cors_request(volume: str, bucket: str) -> om_pb.DeleteBucketCorsRequest:
    return om_pb.DeleteBucketCorsRequest(volume=volume, bucket=bucket)


def bucket_cors_from_proto(response: om_pb.GetBucketCorsResponse) -> bytes | None:
    """None: the bucket has no CORS configuration."""
    return response.configuration or None


def put_bucket_encryption_request(
    volume: str, bucket: str, configuration: bytes
) -> om_pb.PutBucketEncryptionRequest:
    return om_pb.PutBucketEncryptionRequest(volume=volume, bucket=bucket, configuration=configuration)


def get_bucket_encryption_request(volume: str, bucket: str) -> om_pb.GetBucketEncryptionRequest:
    return om_pb.GetBucketEncryptionRequest(volume=volume, bucket=bucket)


def delete_bucket_encryption_request(volume: str, bucket: str) -> om_pb.DeleteBucketEncryptionRequest:
    return om_pb.DeleteBucketEncryptionRequest(volume=volume, bucket=bucket)


def bucket_encryption_from_proto(response: om_pb.GetBucketEncryptionResponse) -> bytes | None:
    """None: the bucket has no default encryption."""
    return response.configuration or None


def bucket_encryption_answer(configuration: bytes | None) -> om_pb.GetBucketEncryptionResponse:
    return om_pb.GetBucketEncryptionResponse(configuration=configuration or b"")


def put_bucket_lifecycle_request(
    volume: str, bucket: str, configuration: bytes
) -> om_pb.PutBucketLifecycleRequest:
    return om_pb.PutBucketLifecycleRequest(volume=volume, bucket=bucket, configuration=configuration)


def get_bucket_lifecycle_request(volume: str, bucket: str) -> om_pb.GetBucketLifecycleRequest:
    return om_pb.GetBucketLifecycleRequest(volume=volume, bucket=bucket)


def delete_bucket_lifecycle_request(volume: str, bucket: str) -> om_pb.DeleteBucketLifecycleRequest:
    return om_pb.DeleteBucketLifecycleRequest(volume=volume, bucket=bucket)


def bucket_lifecycle_from_proto(response: om_pb.GetBucketLifecycleResponse) -> bytes | None:
    """None: the bucket has no lifecycle configuration."""
    return response.configuration or None


def run_s3_lifecycle_request(now_ms: int) -> om_pb.RunS3LifecycleRequest:
    return om_pb.RunS3LifecycleRequest(nowMs=now_ms)


def lifecycle_run_from_proto(response: om_pb.RunS3LifecycleResponse) -> LifecycleRun:
    return LifecycleRun(
        response.keysExpired, response.versionsExpired, response.markersRemoved, response.uploadsAborted
    )


def put_bucket_policy_request(volume: str, bucket: str, policy: bytes) -> om_pb.PutBucketPolicyRequest:
    return om_pb.PutBucketPolicyRequest(volume=volume, bucket=bucket, policy=policy)


def get_bucket_policy_request(volume: str, bucket: str) -> om_pb.GetBucketPolicyRequest:
    return om_pb.GetBucketPolicyRequest(volume=volume, bucket=bucket)


def delete_bucket_policy_request(volume: str, bucket: str) -> om_pb.DeleteBucketPolicyRequest:
    return om_pb.DeleteBucketPolicyRequest(volume=volume, bucket=bucket)


def bucket_policy_from_proto(response: om_pb.GetBucketPolicyResponse) -> bytes | None:
    """None: the bucket has no policy."""
    return response.policy or None


def put_bucket_public_access_block_request(
    volume: str, bucket: str, configuration: bytes
) -> om_pb.PutBucketPublicAccessBlockRequest:
    return om_pb.PutBucketPublicAccessBlockRequest(volume=volume, bucket=bucket, configuration=configuration)


def get_bucket_public_access_block_request(
    volume: str, bucket: str
) -> om_pb.GetBucketPublicAccessBlockRequest:
    return om_pb.GetBucketPublicAccessBlockRequest(volume=volume, bucket=bucket)


def delete_bucket_public_access_block_request(
    volume: str, bucket: str
) -> om_pb.DeleteBucketPublicAccessBlockRequest:
    return om_pb.DeleteBucketPublicAccessBlockRequest(volume=volume, bucket=bucket)


def bucket_public_access_block_from_proto(response: om_pb.GetBucketPublicAccessBlockResponse) -> bytes | None:
    """None: the bucket has no PublicAccessBlock."""
    return response.configuration or None


def put_bucket_ownership_controls_request(
    volume: str, bucket: str, configuration: bytes
) -> om_pb.PutBucketOwnershipControlsRequest:
    return om_pb.PutBucketOwnershipControlsRequest(volume=volume, bucket=bucket, configuration=configuration)


def get_bucket_ownership_controls_request(
    volume: str, bucket: str
) -> om_pb.GetBucketOwnershipControlsRequest:
    return om_pb.GetBucketOwnershipControlsRequest(volume=volume, bucket=bucket)


def delete_bucket_ownership_controls_request(
    volume: str, bucket: str
) -> om_pb.DeleteBucketOwnershipControlsRequest:
    return om_pb.DeleteBucketOwnershipControlsRequest(volume=volume, bucket=bucket)


def bucket_ownership_controls_from_proto(response: om_pb.GetBucketOwnershipControlsResponse) -> bytes | None:
    """None: the bucket has no ownership controls."""
    return response.configuration or None


def get_s3_secret_request(user: str, create: bool) -> om_pb.GetS3SecretRequest:
    return om_pb.GetS3SecretRequest(kerberosID=user, createIfNotExist=create)


def revoke_s3_secret_request(user: str) -> om_pb.RevokeS3SecretRequest:
    return om_pb.RevokeS3SecretRequest(kerberosID=user)


def s3_signing_key_request(
    access_id: str, date: str, region: str, service: str
) -> om_pb.GetS3SigningKeyRequest:
    return om_pb.GetS3SigningKeyRequest(accessId=access_id, date=date, region=region, service=service)


def initiate_multipart_upload_request(
    volume: str, bucket: str, key: str, replication: ReplicationConfig | None,
    metadata: Mapping[str, str] | None, tags: Mapping[str, str] | None, sse: SseRequest | None = None,
) -> om_pb.InitiateMultipartUploadRequest:  # fmt: skip
    return om_pb.InitiateMultipartUploadRequest(
        volume=volume, bucket=bucket, key=key, metadata=metadata, tags=tags,
        sseAlgorithm=int(sse.algorithm) if sse else 0, sseCustomerKeyMD5=sse.customer_key_md5 if sse else "",
        **replication_fields(replication),
    )  # fmt: skip


def commit_multipart_part_request(
    volume: str, bucket: str, key: str, client_id: int, upload_id: str, part_number: int, size: int,
    locations: Sequence[KeyLocation], metadata: Mapping[str, str] | None,
) -> om_pb.CommitMultipartUploadPartRequest:  # fmt: skip
    return om_pb.CommitMultipartUploadPartRequest(
        volume=volume, bucket=bucket, key=key, clientID=client_id, multipartUploadID=upload_id,
        multipartNumber=part_number, dataSize=size, metadata=metadata,
        locations=[key_location_to_proto(loc) for loc in locations],
    )  # fmt: skip


def complete_multipart_upload_request(
    volume: str, bucket: str, key: str, upload_id: str, parts: Sequence[tuple[int, str]],
    metadata: Mapping[str, str] | None, condition: KeyCondition | None, part_checksum: str = "",
    customer_key_md5: str = "",
) -> om_pb.CompleteMultipartUploadRequest:  # fmt: skip
    return om_pb.CompleteMultipartUploadRequest(
        volume=volume, bucket=bucket, key=key, uploadID=upload_id, metadata=metadata,
        parts=[om_pb.Part(partNumber=n, partName=name) for n, name in parts],
        condition=key_condition_to_proto(condition), partChecksumName=part_checksum,
        sseCustomerKeyMD5=customer_key_md5,
    )  # fmt: skip


def abort_multipart_upload_request(
    volume: str, bucket: str, key: str, upload_id: str
) -> om_pb.AbortMultipartUploadRequest:
    return om_pb.AbortMultipartUploadRequest(volume=volume, bucket=bucket, key=key, uploadID=upload_id)


def list_parts_request(
    volume: str, bucket: str, key: str, upload_id: str, marker: int, max_parts: int
) -> om_pb.ListPartsRequest:
    return om_pb.ListPartsRequest(
        volume=volume, bucket=bucket, key=key, uploadID=upload_id, partNumberMarker=marker,
        maxParts=max_parts,
    )  # fmt: skip


def list_multipart_uploads_request(
    volume: str, bucket: str, prefix: str, key_marker: str, upload_id_marker: str, max_uploads: int
) -> om_pb.ListMultipartUploadsRequest:
    return om_pb.ListMultipartUploadsRequest(
        volume=volume, bucket=bucket, prefix=prefix, keyMarker=key_marker, uploadIdMarker=upload_id_marker,
        maxUploads=max_uploads,
    )  # fmt: skip


def add_acl_request(path: ObjectPath, acl: OzoneAcl) -> om_pb.AddAclRequest:
    return om_pb.AddAclRequest(obj=obj_to_proto(path), acl=acl_to_proto(acl))


def remove_acl_request(path: ObjectPath, acl: OzoneAcl) -> om_pb.RemoveAclRequest:
    return om_pb.RemoveAclRequest(obj=obj_to_proto(path), acl=acl_to_proto(acl))


def set_acl_request(path: ObjectPath, acls: Acls) -> om_pb.SetAclRequest:
    return om_pb.SetAclRequest(obj=obj_to_proto(path), acl=acls_to_proto(acls))


def get_acl_request(path: ObjectPath) -> om_pb.GetAclRequest:
    return om_pb.GetAclRequest(obj=obj_to_proto(path))


def service_info_request() -> om_pb.ServiceInfoRequest:
    return om_pb.ServiceInfoRequest()


def echo_request(payload: bytes, response_size: int) -> om_pb.EchoRPCRequest:
    return om_pb.EchoRPCRequest(payloadReq=payload, payloadSizeResp=response_size, readOnly=True)


# ------------------------------------------------------------------ what OM's service reads of a request
def excluded(request: om_pb.OpenKeyRequest | om_pb.AllocateBlockRequest) -> ExcludeList:
    """The writer's exclude list (empty when it sends none)."""
    if not request.HasField("excludeList"):
        return ExcludeList()
    return exclude_list_from_proto(request.excludeList)


def acl_object(
    request: om_pb.AddAclRequest | om_pb.RemoveAclRequest | om_pb.SetAclRequest | om_pb.GetAclRequest,
) -> ObjectPath:
    if not request.HasField("obj"):
        raise ProtocolError("obj", "is missing")
    return obj_from_proto(request.obj, "obj")


def commit_blocks(
    request: om_pb.CommitKeyRequest | om_pb.CommitMultipartUploadPartRequest,
) -> list[KeyBlock]:
    """The blocks a commit names, each checked (block_from_proto)."""
    return [block_from_proto(x, f"locations[{i}]") for i, x in enumerate(request.locations)]


# ------------------------------------------------------------------ answers (OM's service)
_ANSWERS: dict[str, Callable[..., Any]] = {m.name: GetMessageClass(m.output_type) for m in SERVICE.methods}


def empty_answer(method: str) -> Message:
    """The answer of an rpc that answers nothing but success (deleteVolume, renameKey, ...)."""
    return _ANSWERS[method]()


def delete_key_answer(outcome: DeleteOutcome) -> om_pb.DeleteKeyResponse:
    return om_pb.DeleteKeyResponse(versionId=outcome.version_id, deleteMarker=outcome.delete_marker)


def key_versions_answer(found: Iterable[tuple[KeyRecord, bool]]) -> om_pb.ListKeyVersionsResponse:
    return om_pb.ListKeyVersionsResponse(
        versions=[
            om_pb.KeyVersion(key=key_to_proto(r, with_blocks=False), isLatest=latest) for r, latest in found
        ]
    )


def bucket_cors_answer(configuration: bytes | None) -> om_pb.GetBucketCorsResponse:
    return om_pb.GetBucketCorsResponse(configuration=configuration or b"")


def bucket_lifecycle_answer(configuration: bytes | None) -> om_pb.GetBucketLifecycleResponse:
    return om_pb.GetBucketLifecycleResponse(configuration=configuration or b"")


def lifecycle_run_answer(run: LifecycleRun) -> om_pb.RunS3LifecycleResponse:
    return om_pb.RunS3LifecycleResponse(
        keysExpired=run.keys_expired, versionsExpired=run.versions_expired,
        markersRemoved=run.markers_removed, uploadsAborted=run.uploads_aborted,
    )  # fmt: skip


def bucket_policy_answer(policy: bytes | None) -> om_pb.GetBucketPolicyResponse:
    return om_pb.GetBucketPolicyResponse(policy=policy or b"")


def bucket_public_access_block_answer(
    configuration: bytes | None,
) -> om_pb.GetBucketPublicAccessBlockResponse:
    return om_pb.GetBucketPublicAccessBlockResponse(configuration=configuration or b"")


def bucket_ownership_controls_answer(
    configuration: bytes | None,
) -> om_pb.GetBucketOwnershipControlsResponse:
    return om_pb.GetBucketOwnershipControlsResponse(configuration=configuration or b"")


def volume_answer(method: str, record: VolumeRecord) -> Message:
    """createVolume, infoVolume, setVolumeProperty: the volume."""
    return _ANSWERS[method](volume=volume_to_proto(record))


def volumes_answer(records: Iterable[VolumeRecord]) -> om_pb.ListVolumesResponse:
    return om_pb.ListVolumesResponse(volumes=[volume_to_proto(r) for r in records])


def bucket_answer(method: str, record: BucketRecord) -> Message:
    """createBucket, infoBucket, setBucketProperty: the bucket."""
    return _ANSWERS[method](bucket=bucket_to_proto(record))


def buckets_answer(records: Iterable[BucketRecord]) -> om_pb.ListBucketsResponse:
    return om_pb.ListBucketsResponse(buckets=[bucket_to_proto(r) for r in records])


def committed_key_answer(record: KeyRecord) -> om_pb.CommitKeyResponse:
    """commitKey: the committed key with its blocks."""
    answer = om_pb.CommitKeyResponse()
    answer.keyInfo.MergeFromString(encode_key(record))  # the bytes om.db got: parsed, not built again
    return answer


def completed_key_answer(record: KeyRecord) -> om_pb.CompleteMultipartUploadResponse:
    """completeMultipartUpload: the key without its blocks and part lists (a 10,000-part key's are
    megabytes, which OM HA's log entry carries beside the writes: R31's F6); a reader looks it up."""
    return om_pb.CompleteMultipartUploadResponse(keyInfo=key_to_proto(record, with_blocks=False))


def keys_answer(records: Iterable[KeyRecord], with_blocks: bool) -> om_pb.ListKeysResponse:
    return om_pb.ListKeysResponse(keys=[key_to_proto(r, with_blocks=with_blocks) for r in records])


def allocated_to_proto(location: BlockLocation, length: int) -> om_pb.KeyLocation:
    """A block to write: `length` is the most key bytes the writer may put in it (an EC block group's
    capacity: what SCM counted for each replica, times the data indexes)."""
    proto = om_pb.KeyLocation()
    _fill_allocated(proto, location, length)
    return proto


def _fill_allocated(proto: om_pb.KeyLocation, location: BlockLocation, length: int) -> None:
    """allocated_to_proto into an empty KeyLocation, in place (SCM's answer was checked as it was read)."""
    proto.length = length
    block_id = proto.blockID.containerBlockID
    block_id.containerID = location.block_id.container_id
    block_id.localID = location.block_id.local_id
    proto.pipeline.MergeFromString(write_pipeline_to_proto(location))
    proto.containerState = "OPEN"


def open_key_answer(
    record: KeyRecord, client_id: int, allocated: Iterable[BlockLocation], block_length: int
) -> om_pb.OpenKeyResponse:
    """The open key without its record's blocks, and its pre-allocated blocks to write (tokens: `sign`)."""
    answer = om_pb.OpenKeyResponse(clientID=client_id, openVersion=0)
    info = answer.keyInfo
    info.MergeFromString(encode_key(record))  # the open key's om.db bytes, parsed: not built again
    del info.locations[:]
    for block in allocated:
        _fill_allocated(info.locations.add(), block, block_length)
    return answer


def with_data_key(
    answer: om_pb.OpenKeyResponse | bytes, unwrap: Callable[[KeyEncryption, str, str, str], bytes]
) -> om_pb.OpenKeyResponse:
    """openKey's answer (as executed, or its bytes replayed) with its data key `unwrap`ped from its
    encryption: added after OM HA logged the answer, so no log entry or retry cache holds it."""
    opened = om_pb.OpenKeyResponse.FromString(answer) if isinstance(answer, bytes) else answer
    encryption = encryption_from_proto(opened.keyInfo)
    if encryption is not None:
        info = opened.keyInfo
        info.sseDataKey = unwrap(encryption, info.volume, info.bucket, info.key)
    return opened


def allocate_block_answer(location: BlockLocation, length: int) -> om_pb.AllocateBlockResponse:
    return om_pb.AllocateBlockResponse(location=allocated_to_proto(location, length))


def located_key_to_proto(
    record: KeyRecord, where: Iterable[tuple[hdds_pb2.Pipeline | None, str]]
) -> om_pb.KeyInfo:
    """The key with each block's read pipeline (None: SCM no longer knows its container) and container
    state, as lookupKey answers (tokens: `sign`)."""
    info = key_to_proto(record)
    for proto, (pipeline, state) in zip(info.locations, where, strict=True):
        if pipeline is not None:
            proto.pipeline.CopyFrom(pipeline)
        proto.containerState = state
    return info


def lookup_key_answer(info: om_pb.KeyInfo) -> om_pb.LookupKeyResponse:
    return om_pb.LookupKeyResponse(keyInfo=info)


def sign(locations: Iterable[om_pb.KeyLocation], token: Callable[[BlockID, int], Token]) -> None:
    """Sets each location's token to `token(block, length)`."""
    for location in locations:
        block = location.blockID.containerBlockID
        issued = token(BlockID(block.containerID, block.localID), location.length)
        location.token.CopyFrom(token_to_proto(issued))


def s3_secret_answer(access_id: str, secret: str) -> om_pb.GetS3SecretResponse:
    return om_pb.GetS3SecretResponse(s3Secret=om_pb.S3Secret(kerberosID=access_id, awsSecret=secret))


def signing_key_answer(key: bytes) -> om_pb.GetS3SigningKeyResponse:
    return om_pb.GetS3SigningKeyResponse(signingKey=key)


def initiated_answer(
    upload_id: str, encryption: KeyEncryption | None
) -> om_pb.InitiateMultipartUploadResponse:
    algorithm = int(encryption.algorithm) if encryption is not None else 0
    return om_pb.InitiateMultipartUploadResponse(uploadID=upload_id, sseAlgorithm=algorithm)  # type: ignore[arg-type]


def initiated_from_proto(p: om_pb.InitiateMultipartUploadResponse) -> InitiatedUpload:
    return InitiatedUpload(p.uploadID, SseAlgorithm(p.sseAlgorithm))


def part_committed_answer(part: PartRecord) -> om_pb.CommitMultipartUploadPartResponse:
    return om_pb.CommitMultipartUploadPartResponse(
        partName=part.part_name, partKeyInfo=key_to_proto(part.key)
    )


def parts_answer(
    parts: Iterable[PartRecord], next_marker: int, truncated: bool, upload: MultipartUploadRecord
) -> om_pb.ListPartsResponse:
    return om_pb.ListPartsResponse(
        parts=[
            om_pb.PartSummary(
                partNumber=p.part_number,
                partName=p.part_name,
                size=p.key.data_size,
                modificationTime=p.key.modification_ms,
                metadata=dict(p.key.metadata),
            )
            for p in parts
        ],
        nextPartNumberMarker=next_marker,
        isTruncated=truncated,
        metadata=dict(upload.metadata),
        sseAlgorithm=int(upload.encryption.algorithm) if upload.encryption else 0,
        sseCustomerKeyMD5=upload.encryption.customer_key_md5 if upload.encryption else "",
        **replication_fields(upload.replication),
    )


def uploads_answer(uploads: Iterable[MultipartUploadRecord]) -> om_pb.ListMultipartUploadsResponse:
    return om_pb.ListMultipartUploadsResponse(
        uploads=[
            om_pb.MultipartUploadSummary(
                key=u.key,
                uploadID=u.upload_id,
                creationTime=u.creation_ms,
                **replication_fields(u.replication),
            )
            for u in uploads
        ]
    )


def service_info_answer(cluster_id: str, om_id: str, scm_in_safe_mode: bool) -> om_pb.ServiceInfoResponse:
    return om_pb.ServiceInfoResponse(clusterID=cluster_id, omID=om_id, scmInSafeMode=scm_in_safe_mode)


def acl_changed_answer(method: str, changed: bool) -> Message:
    """addAcl, removeAcl, setAcl: whether the object's entries changed."""
    return _ANSWERS[method](response=changed)


def acls_answer(acls: Acls) -> om_pb.GetAclResponse:
    return om_pb.GetAclResponse(acls=acls_to_proto(acls))


def echo_answer(size: int) -> om_pb.EchoRPCResponse:
    return om_pb.EchoRPCResponse(payload=bytes(size))


# ------------------------------------------------------------------ the service's requests
def request_fields() -> dict[str, list[tuple[str, int]]]:
    """Each rpc's request fields (name, number): what OM's request bounds are set on."""
    return {m.name: [(f.name, f.number) for f in m.input_type.fields] for m in SERVICE.methods}


def rotate_master_key_request() -> om_pb.RotateS3MasterKeyRequest:
    return om_pb.RotateS3MasterKeyRequest()


def rotate_master_key_answer(version: int) -> om_pb.RotateS3MasterKeyResponse:
    return om_pb.RotateS3MasterKeyResponse(version=version)
