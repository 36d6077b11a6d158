"""OmClient: the asyncio stub of OzoneManagerService with Ozone's error codes and bounded retries.

Block allocation (openKey, allocateBlock) retries UNAVAILABLE and SCM_IN_SAFE_MODE with a short backoff
for a bounded time, because OM answers them while SCM has no OPEN pipeline yet (a fresh cluster, or one
replacing a dead pipeline a writer excluded) or is restarting, and that heals by itself; a writer retrying
a failed block gives its own deadline.
A key's commit waits out an unreachable OM longer (retry.OmRetryPolicy): its data is written already.
Every other call fails at once, so a command against a stopped OM reports it instead of hanging.

Who makes a call: over TLS the client's certificate says it and the call claims no one; without TLS the
call names the login user in x-ozone-user metadata, which OM believes (rpc/metadata.user_metadata).
A call `acting_for` a user names that user either way: the S3 gateway acts for each request's user, and
OM believes that from the gateway's certificate. The gateway's own calls claim no one, so OM sees the
gateway itself.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

from pyozone.client import steps
from pyozone.client.config import ClientConfig
from pyozone.client.errors import (
    CommitOutcomeUnknown,
    OMException,
    OMUnavailableError,
    SafeModeException,
    om_exception,
)
from pyozone.client.models import (
    BucketInfo,
    KeyCondition,
    KeyInfo,
    MultipartPartList,
    MultipartUploadInfo,
    VolumeInfo,
)
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.limits import MAX_OM_MESSAGE_BYTES
from pyozone.hdds.locations import KeyLocation
from pyozone.hdds.security.acl import Acls, OzoneAcl
from pyozone.hdds.security.users import login_user
from pyozone.hdds.security.x509 import CertRole
from pyozone.proto import OmClientProtocol_pb2 as pb
from pyozone.proto import ScmBlockLocationProtocol_pb2 as block_pb
from pyozone.protocol.acl import ObjectPath, acl_to_proto, acls_from_proto, acls_to_proto, obj_to_proto
from pyozone.protocol.common import replication_to_proto
from pyozone.protocol.locations import key_location_from_proto, key_location_to_proto
from pyozone.rpc import Channel, ChannelSettings, RpcError, Stub, service
from pyozone.rpc.metadata import USER_METADATA, user_metadata

T = TypeVar("T")
log = logging.getLogger(__name__)
_BACKOFF_START_S, _BACKOFF_MAX_S = 0.1, 2.0
_ACTING_FOR: ContextVar[str | None] = ContextVar("pyozone_om_acting_for", default=None)
OM_SERVICE = service(pb, "OzoneManagerService")


@contextmanager
def acting_for(user: str) -> Iterator[None]:
    """OM calls made in this context (this task, and tasks it starts) act for `user`. An empty name is
    refused: the calls would go out as the client itself (the S3 gateway's, an OM administrator)."""
    if not user:
        raise ValueError("the client acts for no user: an empty user name")
    token = _ACTING_FOR.set(user)
    try:
        yield
    finally:
        _ACTING_FOR.reset(token)


def replication_fields(replication: str | None) -> dict[str, Any]:
    """openKey/createBucket/initiateMultipartUpload fields for "RATIS/THREE", "EC/RS-3-2-1024k" or
    "rs-3-2-1024k" (unset: OM's default, the bucket's for a key)."""
    if not replication:
        return {}
    rtype, factor, ec = replication_to_proto(ReplicationConfig.parse(replication), "replication")
    if ec is None:
        return {"type": rtype, "factor": factor}
    return {"type": rtype, "ecReplicationConfig": ec}


class OmClient:
    """One channel to OM, used on one event loop (its connection belongs to that loop). The channel
    reconnects after a lost connection, and with a renewed certificate (the S3 gateway's client lives for
    its process)."""

    def __init__(self, config: ClientConfig) -> None:
        self.address = str(config.om_address)
        self._config = config
        self._channel = Channel(
            config.om_address,
            ChannelSettings(max_message_bytes=MAX_OM_MESSAGE_BYTES),
            config.tls,
            CertRole.OM,
        )
        self._stub = Stub(self._channel, OM_SERVICE)
        self._own = user_metadata(config.tls)

    async def close(self) -> None:
        await self._channel.close()

    async def _call(
        self, name: str, request: Any, convert: Callable[[Any], T], retry: bool = False,
        budget_s: float | None = None, timeout_s: float | None = None,
    ) -> T:  # fmt: skip
        """`timeout_s`: the call's own timeout (default: the client's OM timeout)."""
        method = getattr(self._stub, name)
        acting = _ACTING_FOR.get()
        metadata = self._own if acting is None else ((USER_METADATA, acting),)
        deadline = time.monotonic() + (self._config.unavailable_budget_s if budget_s is None else budget_s)
        backoff = _BACKOFF_START_S
        recording = steps.current()
        started = time.perf_counter() if recording is not None else 0.0
        while True:
            try:
                timeout = self._config.om_timeout_s if timeout_s is None else timeout_s
                response = await method(request, timeout=timeout, metadata=metadata)
            except RpcError as e:
                error = om_exception(e, self.address)
                waitable = isinstance(error, (OMUnavailableError, SafeModeException))  # SCM restarting
                if retry and waitable and time.monotonic() + backoff < deadline:
                    await asyncio.sleep(backoff)
                    backoff = min(backoff * 2, _BACKOFF_MAX_S)
                    continue
                raise error from None
            if recording is not None:
                recording.add(name, started)
            return convert(response)

    async def _call_reaching(
        self, name: str, what: str, request: Any, convert: Callable[[Any], T], within_s: float | None = None
    ) -> T:  # fmt: skip
        """`_call`, attempted again while OM is unreachable, as the client's OmRetryPolicy allows (a call
        OM answers alike when repeated, whose loss would lose written data: commitKey). `within_s`: a
        caller's own bound (freon's --duration), when shorter than the policy's deadline. Each attempt
        lasts at most what is left of the deadline. Once an attempt timed out, OM may have applied it: the
        final error then says the outcome is unknown. KEY_NOT_FOUND after a lost answer is
        CommitOutcomeUnknown: OM answers a repeated commit as the first only while the key is the one that
        session committed (om/core.py committed_session)."""
        policy = self._config.om_retry
        budget_s = policy.deadline_s if within_s is None else min(policy.deadline_s, within_s)
        started = time.monotonic()
        deadline = started + budget_s
        attempt = 0
        timed_out = False
        while True:
            attempt += 1
            timeout_s = self._config.om_timeout_s  # ozone.client.retry.deadline 0: one attempt, not none
            if policy.deadline_s > 0:
                timeout_s = max(0.0, min(timeout_s, deadline - time.monotonic()))
            try:
                return await self._call(name, request, convert, timeout_s=timeout_s)
            except OMException as e:
                if attempt > 1 and e.result == "KEY_NOT_FOUND":
                    raise CommitOutcomeUnknown(
                        f"{name} of {what}: outcome unknown: an earlier attempt's answer was lost, and OM "
                        f"no longer knows the session (it may have committed the key, since replaced or "
                        f"deleted): {e}"
                    ) from None
                raise
            except OMUnavailableError as e:
                timed_out = timed_out or e.timed_out
                delay = policy.delay(attempt, deadline - time.monotonic())
                if delay is not None:
                    if time.monotonic() + delay < deadline:
                        log.info("%s of %s: %s; attempt %d of %d in %gs", name, what, e, attempt + 1,
                                 policy.max_attempts, delay)  # fmt: skip
                    await asyncio.sleep(delay)
                if delay is None or time.monotonic() >= deadline:
                    outcome = (
                        "outcome unknown: an attempt timed out, so OM may have applied it; look it up"
                        if timed_out else "OM unreachable"
                    )  # fmt: skip
                    took = time.monotonic() - started
                    raise OMUnavailableError(
                        f"{name} of {what}: {outcome}: {attempt} attempts in {took:.1f}s of {budget_s:g}s "
                        f"(ozone.client.retry.deadline {policy.deadline_s:g}s, "
                        f"ozone.client.failover.max.attempts {policy.max_attempts}, "
                        f"ozone.client.wait.between.retries.millis "
                        f"{policy.wait_s * 1000:g}): {e}",
                        timed_out=timed_out,
                    ) from None

    # ------------------------------------------------------------------ volumes
    async def create_volume(
        self, volume: str, owner: str = "", quota_bytes: int = 0, quota_namespace: int = 0
    ) -> VolumeInfo:
        request = pb.CreateVolumeRequest(
            volume=volume,
            owner=owner or login_user(),
            quotaInBytes=quota_bytes,
            quotaInNamespace=quota_namespace,
        )
        return await self._call("createVolume", request, lambda r: VolumeInfo.from_proto(r.volume))

    async def volume_info(self, volume: str) -> VolumeInfo:
        request = pb.InfoVolumeRequest(volume=volume)
        return await self._call("infoVolume", request, lambda r: VolumeInfo.from_proto(r.volume))

    async def set_volume_property(
        self, volume: str, owner: str = "", quota_bytes: int = 0, quota_namespace: int = 0
    ) -> VolumeInfo:
        """A new owner ("" keeps it) and quotas (0 keeps one, -1 clears it)."""
        request = pb.SetVolumePropertyRequest(
            volumeName=volume, ownerName=owner, quotaInBytes=quota_bytes, quotaInNamespace=quota_namespace
        )
        return await self._call("setVolumeProperty", request, lambda r: VolumeInfo.from_proto(r.volume))

    async def delete_volume(self, volume: str) -> None:
        await self._call("deleteVolume", pb.DeleteVolumeRequest(volume=volume), lambda r: None)

    async def list_volumes(self, prefix: str = "", start: str = "", limit: int = 1000) -> list[VolumeInfo]:
        request = pb.ListVolumesRequest(prefix=prefix, startKey=start, maxKeys=limit)
        return await self._call(
            "listVolumes", request, lambda r: [VolumeInfo.from_proto(v) for v in r.volumes]
        )

    # ------------------------------------------------------------------ buckets
    async def create_bucket(
        self, volume: str, bucket: str, replication: str | None = None, owner: str = ""
    ) -> BucketInfo:
        """`owner`: the new bucket's (unset: OM's default, the caller with ACLs on)."""
        request = pb.CreateBucketRequest(
            volume=volume, bucket=bucket, owner=owner, **replication_fields(replication)
        )
        return await self._call("createBucket", request, lambda r: BucketInfo.from_proto(r.bucket))

    async def bucket_info(self, volume: str, bucket: str) -> BucketInfo:
        request = pb.InfoBucketRequest(volume=volume, bucket=bucket)
        return await self._call("infoBucket", request, lambda r: BucketInfo.from_proto(r.bucket))

    async def set_bucket_property(
        self, volume: str, bucket: str, owner: str = "", quota_bytes: int = 0, quota_namespace: int = 0
    ) -> BucketInfo:
        """As set_volume_property."""
        args = pb.BucketArgs(
            volumeName=volume, bucketName=bucket, ownerName=owner, quotaInBytes=quota_bytes,
            quotaInNamespace=quota_namespace,
        )  # fmt: skip
        request = pb.SetBucketPropertyRequest(bucketArgs=args)
        return await self._call("setBucketProperty", request, lambda r: BucketInfo.from_proto(r.bucket))

    async def delete_bucket(self, volume: str, bucket: str) -> None:
        await self._call("deleteBucket", pb.DeleteBucketRequest(volume=volume, bucket=bucket), lambda r: None)

    async def list_buckets(
        self, volume: str, prefix: str = "", start: str = "", limit: int = 1000, owner: str = ""
    ) -> list[BucketInfo]:
        """`owner`: only that user's buckets."""
        request = pb.ListBucketsRequest(
            volume=volume, prefix=prefix, startKey=start, maxKeys=limit, owner=owner
        )
        return await self._call(
            "listBuckets", request, lambda r: [BucketInfo.from_proto(b) for b in r.buckets]
        )

    # ------------------------------------------------------------------ keys
    async def open_key(
        self,
        volume: str,
        bucket: str,
        key: str,
        size: int,
        replication: str | None,
        exclude: block_pb.ExcludeListProto | None = None,
        metadata: Mapping[str, str] | None = None,
        tags: Mapping[str, str] | None = None,
        upload_id: str = "",
        part_number: int = 0,
        condition: KeyCondition | None = None,
    ) -> tuple[int, list[KeyLocation]]:
        """The open key's clientID and its pre-allocated blocks; with `upload_id`, an open key for part
        `part_number` of that multipart upload. A `condition` that fails already is refused here."""
        request = pb.OpenKeyRequest(
            volume=volume, bucket=bucket, key=key, dataSize=size, excludeList=exclude,
            metadata=metadata, tags=tags, multipartUploadID=upload_id, multipartNumber=part_number,
            condition=condition.to_proto() if condition else None, **replication_fields(replication),
        )  # fmt: skip
        return await self._call(
            "openKey",
            request,
            lambda r: (r.clientID, [key_location_from_proto(loc) for loc in r.keyInfo.locations]),
            retry=True,
        )

    async def allocate_block(
        self,
        volume: str,
        bucket: str,
        key: str,
        client_id: int,
        exclude: block_pb.ExcludeListProto,
        budget_s: float | None = None,
    ) -> KeyLocation:
        """`budget_s`: how long UNAVAILABLE is retried (default: the client's unavailable budget)."""
        request = pb.AllocateBlockRequest(
            volume=volume, bucket=bucket, key=key, clientID=client_id, excludeList=exclude
        )
        return await self._call(
            "allocateBlock", request, lambda r: key_location_from_proto(r.location), retry=True,
            budget_s=budget_s,
        )  # fmt: skip

    async def commit_key(
        self, volume: str, bucket: str, key: str, client_id: int, size: int, locations: list[KeyLocation],
        metadata: Mapping[str, str] | None = None, condition: KeyCondition | None = None,
        within_s: float | None = None,
    ) -> KeyInfo:  # fmt: skip
        """`within_s`: the commit's wait for an unreachable OM ends within this many seconds too."""
        request = pb.CommitKeyRequest(
            volume=volume, bucket=bucket, key=key, clientID=client_id, dataSize=size,
            locations=[key_location_to_proto(loc) for loc in locations], metadata=metadata,
            condition=condition.to_proto() if condition else None,
        )  # fmt: skip
        return await self._call_reaching(
            "commitKey", f"/{volume}/{bucket}/{key}", request, lambda r: KeyInfo.from_proto(r.keyInfo),
            within_s,
        )  # fmt: skip

    async def lookup_key(
        self, volume: str, bucket: str, key: str, client_host: str = "", refresh: bool = False
    ) -> KeyInfo:
        """`refresh`: OM is to ask SCM for the container locations instead of answering from its cache (a
        reader retrying after the locations it had failed it)."""
        request = pb.LookupKeyRequest(
            volume=volume, bucket=bucket, key=key, clientHost=client_host, forceUpdateContainerCache=refresh
        )
        return await self._call("lookupKey", request, lambda r: KeyInfo.from_proto(r.keyInfo))

    async def list_keys(
        self, volume: str, bucket: str, prefix: str = "", start: str = "", limit: int = 1000
    ) -> list[KeyInfo]:
        request = pb.ListKeysRequest(
            volume=volume, bucket=bucket, prefix=prefix, startKey=start, maxKeys=limit
        )
        return await self._call("listKeys", request, lambda r: [KeyInfo.from_proto(k) for k in r.keys])

    async def rename_key(self, volume: str, bucket: str, key: str, to_key: str) -> None:
        request = pb.RenameKeyRequest(volume=volume, bucket=bucket, key=key, toKey=to_key)
        await self._call("renameKey", request, lambda r: None)

    async def delete_key(
        self, volume: str, bucket: str, key: str, condition: KeyCondition | None = None
    ) -> None:
        request = pb.DeleteKeyRequest(
            volume=volume, bucket=bucket, key=key, condition=condition.to_proto() if condition else None
        )
        await self._call("deleteKey", request, lambda r: None)

    async def put_object_tagging(self, volume: str, bucket: str, key: str, tags: Mapping[str, str]) -> None:
        request = pb.PutObjectTaggingRequest(volume=volume, bucket=bucket, key=key, tags=tags)
        await self._call("putObjectTagging", request, lambda r: None)

    async def get_s3_secret(self, user: str, create: bool) -> tuple[str, str]:
        request = pb.GetS3SecretRequest(kerberosID=user, createIfNotExist=create)
        return await self._call(
            "getS3Secret", request, lambda r: (r.s3Secret.kerberosID, r.s3Secret.awsSecret)
        )

    async def revoke_s3_secret(self, user: str) -> None:
        await self._call("revokeS3Secret", pb.RevokeS3SecretRequest(kerberosID=user), lambda r: None)

    async def s3_signing_key(self, access_id: str, date: str, region: str, service: str) -> bytes:
        request = pb.GetS3SigningKeyRequest(accessId=access_id, date=date, region=region, service=service)
        return await self._call("getS3SigningKey", request, lambda r: r.signingKey)

    # ------------------------------------------------------------------ multipart uploads
    async def initiate_multipart_upload(
        self, volume: str, bucket: str, key: str, replication: str | None,
        metadata: Mapping[str, str] | None, tags: Mapping[str, str] | None,
    ) -> str:  # fmt: skip
        request = pb.InitiateMultipartUploadRequest(
            volume=volume, bucket=bucket, key=key, metadata=metadata, tags=tags,
            **replication_fields(replication),
        )  # fmt: skip
        return await self._call("initiateMultipartUpload", request, lambda r: r.uploadID)

    async def commit_multipart_part(
        self, volume: str, bucket: str, key: str, client_id: int, upload_id: str, part_number: int,
        size: int, locations: list[KeyLocation], metadata: Mapping[str, str] | None = None,
    ) -> KeyInfo:  # fmt: skip
        """The committed part as a key (its size, blocks and metadata)."""
        request = pb.CommitMultipartUploadPartRequest(
            volume=volume, bucket=bucket, key=key, clientID=client_id, multipartUploadID=upload_id,
            multipartNumber=part_number, dataSize=size, metadata=metadata,
            locations=[key_location_to_proto(loc) for loc in locations],
        )  # fmt: skip
        return await self._call(
            "commitMultipartUploadPart", request, lambda r: KeyInfo.from_proto(r.partKeyInfo)
        )

    async def complete_multipart_upload(
        self, volume: str, bucket: str, key: str, upload_id: str, parts: Sequence[tuple[int, str]],
        metadata: Mapping[str, str] | None, condition: KeyCondition | None = None,
    ) -> KeyInfo:  # fmt: skip
        request = pb.CompleteMultipartUploadRequest(
            volume=volume, bucket=bucket, key=key, uploadID=upload_id, metadata=metadata,
            parts=[pb.Part(partNumber=n, partName=name) for n, name in parts],
            condition=condition.to_proto() if condition else None,
        )  # fmt: skip
        return await self._call("completeMultipartUpload", request, lambda r: KeyInfo.from_proto(r.keyInfo))

    async def abort_multipart_upload(self, volume: str, bucket: str, key: str, upload_id: str) -> None:
        request = pb.AbortMultipartUploadRequest(volume=volume, bucket=bucket, key=key, uploadID=upload_id)
        await self._call("abortMultipartUpload", request, lambda r: None)

    async def list_parts(
        self, volume: str, bucket: str, key: str, upload_id: str, marker: int, max_parts: int
    ) -> MultipartPartList:
        request = pb.ListPartsRequest(
            volume=volume, bucket=bucket, key=key, uploadID=upload_id, partNumberMarker=marker,
            maxParts=max_parts,
        )  # fmt: skip
        return await self._call("listParts", request, MultipartPartList.from_proto)

    async def list_multipart_uploads(
        self, volume: str, bucket: str, prefix: str, key_marker: str, upload_id_marker: str, max_uploads: int
    ) -> list[MultipartUploadInfo]:
        request = pb.ListMultipartUploadsRequest(
            volume=volume, bucket=bucket, prefix=prefix, keyMarker=key_marker,
            uploadIdMarker=upload_id_marker, maxUploads=max_uploads,
        )  # fmt: skip
        return await self._call(
            "listMultipartUploads", request, lambda r: [MultipartUploadInfo.from_proto(u) for u in r.uploads]
        )

    # ------------------------------------------------------------------ ACLs
    async def add_acl(self, path: ObjectPath, acl: OzoneAcl) -> bool:
        """Whether the object's entries changed."""
        request = pb.AddAclRequest(obj=obj_to_proto(path), acl=acl_to_proto(acl))
        return await self._call("addAcl", request, lambda r: r.response)

    async def remove_acl(self, path: ObjectPath, acl: OzoneAcl) -> bool:
        request = pb.RemoveAclRequest(obj=obj_to_proto(path), acl=acl_to_proto(acl))
        return await self._call("removeAcl", request, lambda r: r.response)

    async def set_acl(self, path: ObjectPath, acls: Acls) -> bool:
        request = pb.SetAclRequest(obj=obj_to_proto(path), acl=acls_to_proto(acls))
        return await self._call("setAcl", request, lambda r: r.response)

    async def get_acl(self, path: ObjectPath) -> Acls:
        request = pb.GetAclRequest(obj=obj_to_proto(path))
        return await self._call("getAcl", request, lambda r: acls_from_proto(r.acls, "acls"))

    async def service_info(self) -> pb.ServiceInfoResponse:
        return await self._call("getServiceInfo", pb.ServiceInfoRequest(), lambda r: r)

    async def echo(self, payload: bytes = b"", response_size: int = 0) -> bytes:
        """Ozone's EchoRPC (freon ome): `payload` to OM and `response_size` bytes back, no table touched."""
        request = pb.EchoRPCRequest(payloadReq=payload, payloadSizeResp=response_size, readOnly=True)
        return await self._call("echoRPC", request, lambda r: r.payload)
