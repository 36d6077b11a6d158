"""OzoneManagerService: the client protocol as a thin adapter over the OzoneManager core.

Each handler parses its request, runs the core call in the daemon's thread pool (core calls may wait for
SCM) and builds the answer. Field-level checks live in the converters; every namespace rule in the core.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from concurrent.futures import Executor
from typing import TypeVar

import grpc

from pyozone.hdds.block import ExcludeList
from pyozone.hdds.security.block_token import AccessMode
from pyozone.om import codec
from pyozone.om.block_tokens import READ, READ_WRITE, BlockTokenIssuer, token_owner
from pyozone.om.core import OzoneManager
from pyozone.om.exceptions import OMResultCode
from pyozone.om.multipart import MultipartManager
from pyozone.om.records import MultipartUploadRecord
from pyozone.om.replication import block_capacity
from pyozone.om.scm import scm_call
from pyozone.om.server.rpc import parse, rpc
from pyozone.proto import OmClientProtocol_pb2 as pb
from pyozone.proto import OmClientProtocol_pb2_grpc as pb_grpc
from pyozone.protocol.admin import pipeline_to_proto
from pyozone.protocol.block import BlockLocation, exclude_list_from_proto
from pyozone.protocol.common import integer

Context = grpc.aio.ServicerContext
T = TypeVar("T")


def _excluded(request: pb.OpenKeyRequest | pb.AllocateBlockRequest) -> ExcludeList:
    if not request.HasField("excludeList"):
        return ExcludeList()
    return parse(exclude_list_from_proto, request.excludeList)


def _allocated(location: BlockLocation, length: int) -> pb.KeyLocation:
    """A block to write: `length` is the most key bytes the writer may put in it (an EC block group's
    capacity: what SCM counted for each replica, times the data indexes)."""
    proto = codec.block_to_proto(codec.KeyBlock(location.block_id, 0, length))
    proto.pipeline.CopyFrom(pipeline_to_proto(location.pipeline, location.members.get))
    proto.containerState = "OPEN"
    return proto


class OzoneManagerService(pb_grpc.OzoneManagerServiceServicer):
    def __init__(
        self,
        core: OzoneManager,
        executor: Executor,
        om_id: str,
        cluster_id: str,
        tokens: BlockTokenIssuer | None = None,
    ) -> None:
        """`tokens`: block tokens for every location handed out (hdds.block.token.enabled), else None."""
        self.tokens = tokens
        self.core = core
        self.multipart = MultipartManager(core)
        self.executor = executor
        self.om_id = om_id
        self.cluster_id = cluster_id

    async def _run(self, call: Callable[..., T], *args: object) -> T:
        return await asyncio.get_running_loop().run_in_executor(self.executor, lambda: call(*args))

    async def _sign(
        self,
        locations: Iterable[pb.KeyLocation],
        context: Context,
        modes: frozenset[AccessMode],
        size: int = 0,
    ) -> None:
        """Block tokens for the caller on `locations` (up to `size` bytes, else each one's length)."""
        if self.tokens is not None:
            await self._run(self.tokens.sign, locations, token_owner(context), modes, size)

    # ------------------------------------------------------------------ volumes
    @rpc
    async def createVolume(
        self, request: pb.CreateVolumeRequest, context: Context
    ) -> pb.CreateVolumeResponse:
        quota = parse(integer, request.quotaInBytes, "quotaInBytes")
        record = await self._run(self.core.create_volume, request.volume, request.owner, quota)
        return pb.CreateVolumeResponse(volume=codec.volume_to_proto(record))

    @rpc
    async def infoVolume(self, request: pb.InfoVolumeRequest, context: Context) -> pb.InfoVolumeResponse:
        record = await self._run(self.core.info_volume, request.volume)
        return pb.InfoVolumeResponse(volume=codec.volume_to_proto(record))

    @rpc
    async def deleteVolume(
        self, request: pb.DeleteVolumeRequest, context: Context
    ) -> pb.DeleteVolumeResponse:
        await self._run(self.core.delete_volume, request.volume)
        return pb.DeleteVolumeResponse()

    @rpc
    async def listVolumes(self, request: pb.ListVolumesRequest, context: Context) -> pb.ListVolumesResponse:
        records = await self._run(self.core.list_volumes, request.prefix, request.startKey, request.maxKeys)
        return pb.ListVolumesResponse(volumes=[codec.volume_to_proto(r) for r in records])

    # ------------------------------------------------------------------ buckets
    @rpc
    async def createBucket(
        self, request: pb.CreateBucketRequest, context: Context
    ) -> pb.CreateBucketResponse:
        config = None
        if codec.names_replication(request):
            default = self.core.settings.default_replication
            config = parse(codec.requested_replication, request, default)
        record = await self._run(self.core.create_bucket, request.volume, request.bucket, config)
        return pb.CreateBucketResponse(bucket=codec.bucket_to_proto(record))

    @rpc
    async def infoBucket(self, request: pb.InfoBucketRequest, context: Context) -> pb.InfoBucketResponse:
        record = await self._run(self.core.info_bucket, request.volume, request.bucket)
        return pb.InfoBucketResponse(bucket=codec.bucket_to_proto(record))

    @rpc
    async def deleteBucket(
        self, request: pb.DeleteBucketRequest, context: Context
    ) -> pb.DeleteBucketResponse:
        await self._run(self.core.delete_bucket, request.volume, request.bucket)
        return pb.DeleteBucketResponse()

    @rpc
    async def listBuckets(self, request: pb.ListBucketsRequest, context: Context) -> pb.ListBucketsResponse:
        records = await self._run(
            self.core.list_buckets, request.volume, request.prefix, request.startKey, request.maxKeys
        )
        return pb.ListBucketsResponse(buckets=[codec.bucket_to_proto(r) for r in records])

    # ------------------------------------------------------------------ writing keys
    @rpc
    async def openKey(self, request: pb.OpenKeyRequest, context: Context) -> pb.OpenKeyResponse:
        excluded = _excluded(request)
        size = parse(integer, request.dataSize, "dataSize")
        config = None
        if codec.names_replication(request):
            bucket = await self._run(self.core.info_bucket, request.volume, request.bucket)
            config = parse(codec.requested_replication, request, bucket.replication)
        if request.multipartUploadID:
            session = await self._run(
                self.multipart.open_part, request.volume, request.bucket, request.key,
                request.multipartUploadID, request.multipartNumber, size, excluded,
            )  # fmt: skip
        else:
            session = await self._run(
                self.core.open_key, request.volume, request.bucket, request.key, size, config, excluded,
                dict(request.metadata), dict(request.tags),
            )  # fmt: skip
        info = codec.key_to_proto(session.key, with_blocks=False)
        info.locations.extend(_allocated(b, session.block_length) for b in session.allocated)
        await self._sign(info.locations, context, READ_WRITE, self.core.settings.block_size)
        return pb.OpenKeyResponse(keyInfo=info, clientID=session.client_id, openVersion=0)

    @rpc
    async def allocateBlock(
        self, request: pb.AllocateBlockRequest, context: Context
    ) -> pb.AllocateBlockResponse:
        excluded = _excluded(request)
        block = await self._run(
            self.core.allocate_block, request.volume, request.bucket, request.key, request.clientID, excluded
        )
        capacity = block_capacity(block.pipeline.replication_config, self.core.settings.block_size)
        location = _allocated(block, capacity)
        await self._sign([location], context, READ_WRITE, self.core.settings.block_size)
        return pb.AllocateBlockResponse(location=location)

    @rpc
    async def commitKey(self, request: pb.CommitKeyRequest, context: Context) -> pb.CommitKeyResponse:
        blocks = [
            parse(codec.block_from_proto, x, f"locations[{i}]") for i, x in enumerate(request.locations)
        ]
        size = parse(integer, request.dataSize, "dataSize")
        record = await self._run(
            self.core.commit_key, request.volume, request.bucket, request.key, request.clientID, size, blocks,
            dict(request.metadata),
        )  # fmt: skip
        return pb.CommitKeyResponse(keyInfo=codec.key_to_proto(record))

    # ------------------------------------------------------------------ reading and changing keys
    @rpc
    async def lookupKey(self, request: pb.LookupKeyRequest, context: Context) -> pb.LookupKeyResponse:
        located = await self._run(
            self.core.lookup_key, request.volume, request.bucket, request.key, request.clientHost,
            request.forceUpdateContainerCache,
        )  # fmt: skip
        info = codec.key_to_proto(located.key)
        for proto, where in zip(info.locations, located.locations, strict=True):
            if where.pipeline is not None:
                proto.pipeline.CopyFrom(where.pipeline)
            proto.containerState = where.container_state
        await self._sign(info.locations, context, READ)
        return pb.LookupKeyResponse(keyInfo=info)

    @rpc
    async def listKeys(self, request: pb.ListKeysRequest, context: Context) -> pb.ListKeysResponse:
        records = await self._run(
            self.core.list_keys,
            request.volume,
            request.bucket,
            request.prefix,
            request.startKey,
            request.maxKeys,
        )
        return pb.ListKeysResponse(
            keys=[codec.key_to_proto(r, with_blocks=request.withBlocks) for r in records]
        )

    @rpc
    async def renameKey(self, request: pb.RenameKeyRequest, context: Context) -> pb.RenameKeyResponse:
        await self._run(self.core.rename_key, request.volume, request.bucket, request.key, request.toKey)
        return pb.RenameKeyResponse()

    @rpc
    async def deleteKey(self, request: pb.DeleteKeyRequest, context: Context) -> pb.DeleteKeyResponse:
        await self._run(self.core.delete_key, request.volume, request.bucket, request.key)
        return pb.DeleteKeyResponse()

    @rpc
    async def putObjectTagging(
        self, request: pb.PutObjectTaggingRequest, context: Context
    ) -> pb.PutObjectTaggingResponse:
        await self._run(
            self.core.set_key_tags, request.volume, request.bucket, request.key, dict(request.tags)
        )
        return pb.PutObjectTaggingResponse()

    # ------------------------------------------------------------------ S3 secrets
    @rpc
    async def getS3Secret(self, request: pb.GetS3SecretRequest, context: Context) -> pb.GetS3SecretResponse:
        found = await self._run(self.core.s3_secrets.get, request.kerberosID, request.createIfNotExist)
        return pb.GetS3SecretResponse(
            s3Secret=pb.S3Secret(kerberosID=found.access_id, awsSecret=found.secret)
        )

    @rpc
    async def revokeS3Secret(
        self, request: pb.RevokeS3SecretRequest, context: Context
    ) -> pb.RevokeS3SecretResponse:
        await self._run(self.core.s3_secrets.revoke, request.kerberosID)
        return pb.RevokeS3SecretResponse()

    @rpc
    async def getS3SigningKey(
        self, request: pb.GetS3SigningKeyRequest, context: Context
    ) -> pb.GetS3SigningKeyResponse:
        key = await self._run(
            self.core.s3_secrets.signing_key, request.accessId, request.date, request.region, request.service
        )
        return pb.GetS3SigningKeyResponse(signingKey=key)

    # ------------------------------------------------------------------ multipart uploads
    @rpc
    async def initiateMultipartUpload(
        self, request: pb.InitiateMultipartUploadRequest, context: Context
    ) -> pb.InitiateMultipartUploadResponse:
        config = None
        if codec.names_replication(request):
            bucket = await self._run(self.core.info_bucket, request.volume, request.bucket)
            config = parse(codec.requested_replication, request, bucket.replication)
        upload = await self._run(
            self.multipart.initiate, request.volume, request.bucket, request.key, config,
            dict(request.metadata), dict(request.tags),
        )  # fmt: skip
        return pb.InitiateMultipartUploadResponse(uploadID=upload.upload_id)

    @rpc
    async def commitMultipartUploadPart(
        self, request: pb.CommitMultipartUploadPartRequest, context: Context
    ) -> pb.CommitMultipartUploadPartResponse:
        blocks = [
            parse(codec.block_from_proto, x, f"locations[{i}]") for i, x in enumerate(request.locations)
        ]
        size = parse(integer, request.dataSize, "dataSize")
        part = await self._run(
            self.multipart.commit_part, request.volume, request.bucket, request.key, request.clientID,
            request.multipartUploadID, request.multipartNumber, size, blocks, dict(request.metadata),
        )  # fmt: skip
        return pb.CommitMultipartUploadPartResponse(
            partName=part.part_name, partKeyInfo=codec.key_to_proto(part.key)
        )

    @rpc
    async def completeMultipartUpload(
        self, request: pb.CompleteMultipartUploadRequest, context: Context
    ) -> pb.CompleteMultipartUploadResponse:
        parts = [(p.partNumber, p.partName) for p in request.parts]
        record = await self._run(
            self.multipart.complete, request.volume, request.bucket, request.key, request.uploadID, parts,
            dict(request.metadata),
        )  # fmt: skip
        return pb.CompleteMultipartUploadResponse(keyInfo=codec.key_to_proto(record))

    @rpc
    async def abortMultipartUpload(
        self, request: pb.AbortMultipartUploadRequest, context: Context
    ) -> pb.AbortMultipartUploadResponse:
        await self._run(self.multipart.abort, request.volume, request.bucket, request.key, request.uploadID)
        return pb.AbortMultipartUploadResponse()

    @rpc
    async def listParts(self, request: pb.ListPartsRequest, context: Context) -> pb.ListPartsResponse:
        page = await self._run(
            self.multipart.list_parts, request.volume, request.bucket, request.key, request.uploadID,
            request.partNumberMarker, request.maxParts,
        )  # fmt: skip
        return pb.ListPartsResponse(
            parts=[
                pb.PartSummary(
                    partNumber=p.part_number,
                    partName=p.part_name,
                    size=p.key.data_size,
                    modificationTime=p.key.modification_ms,
                )
                for p in page.parts
            ],
            nextPartNumberMarker=page.next_marker,
            isTruncated=page.truncated,
            metadata=dict(page.upload.metadata),
            **codec.replication_fields(page.upload.replication),
        )

    @rpc
    async def listMultipartUploads(
        self, request: pb.ListMultipartUploadsRequest, context: Context
    ) -> pb.ListMultipartUploadsResponse:
        uploads = await self._run(
            self.multipart.list_uploads, request.volume, request.bucket, request.prefix, request.keyMarker,
            request.uploadIdMarker, request.maxUploads,
        )  # fmt: skip
        return pb.ListMultipartUploadsResponse(uploads=[_upload_summary(u) for u in uploads])

    @rpc
    async def getServiceInfo(
        self, request: pb.ServiceInfoRequest, context: Context
    ) -> pb.ServiceInfoResponse:
        def ask() -> bool:
            with scm_call("asking SCM for its state", OMResultCode.SCM_UNAVAILABLE):
                return self.core.scm.scm_info().in_safe_mode

        in_safe_mode = await self._run(ask)
        return pb.ServiceInfoResponse(clusterID=self.cluster_id, omID=self.om_id, scmInSafeMode=in_safe_mode)


def _upload_summary(upload: MultipartUploadRecord) -> pb.MultipartUploadSummary:
    return pb.MultipartUploadSummary(
        key=upload.key, uploadID=upload.upload_id, creationTime=upload.creation_ms,
        **codec.replication_fields(upload.replication),
    )  # fmt: skip


def add_om_service(server: grpc.aio.Server, service: OzoneManagerService) -> None:
    pb_grpc.add_OzoneManagerServiceServicer_to_server(service, server)
