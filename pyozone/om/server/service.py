"""OzoneManagerService: the client protocol as a thin adapter over the OzoneManager core.

Each handler parses its request, runs the core call in the daemon's thread pool (core calls may wait for
SCM; commitKey, which never does, runs on the loop and saves the pool's two thread hops; openKey runs on
the loop too and awaits SCM's blocks through a batcher there) and builds the answer once what the call
wrote or saw is durable (om/server/durability.py `CoreCalls`). Messages are built and converted in
protocol/om.py (a handler reads plain fields of its request, never a copy of it); field-level checks live
in the converters; every namespace rule in the core.
With ozone.acl.enabled a handler names the caller and the check the call needs (om/server/request_checks.py,
decided by om/access.py), which runs in the same pool job just before the call; with ACLs off the checks
return at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from concurrent.futures import Executor
from functools import partial
from typing import TYPE_CHECKING

from pyozone.hdds.ids import BlockID, ReplicationConfig
from pyozone.hdds.limits import MAX_ECHO_PAYLOAD_BYTES
from pyozone.hdds.om_records import KeyBlock, MultipartUploadRecord
from pyozone.hdds.s3_versions import DeleteOutcome
from pyozone.hdds.security.acl import ACLType, Caller, Ownership, add_acl, remove_acl
from pyozone.hdds.security.block_token import AccessMode
from pyozone.hdds.security.x509 import check_user_name
from pyozone.om import bucket_documents
from pyozone.om.access import Access
from pyozone.om.block_batcher import LoopBlockBatcher
from pyozone.om.block_tokens import READ, READ_WRITE, BlockTokenIssuer, token_owner, write_max_length
from pyozone.om.core import OzoneManager
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.keys import OpenKeySession
from pyozone.om.lifecycle import S3LifecycleService
from pyozone.om.multipart import MultipartManager
from pyozone.om.object_lock import ObjectLocks
from pyozone.om.properties import PropertyManager
from pyozone.om.replication import block_capacity, replica_bytes
from pyozone.om.scm import scm_call
from pyozone.om.server.durability import CoreCalls
from pyozone.om.server.ha import OmReplication
from pyozone.om.server.request_checks import RequestChecks
from pyozone.om.server.rpc import RequestObserver, ignore, parse, rpc, rpc_finished
from pyozone.om.stored_lengths import StoredLengths
from pyozone.protocol import om as wire
from pyozone.protocol.acl import acl_from_proto, acls_from_proto
from pyozone.protocol.common import integer
from pyozone.rpc import CallContext, Server, ServiceSpec

if TYPE_CHECKING:
    from pyozone.proto import OmClientProtocol_pb2 as pb

Context = CallContext
BUCKET_PROPERTY_WHAT = "change its owner or quotas"
"""What only a bucket's owner or an administrator may (setBucketProperty: R37's F3, F11)."""


class OzoneManagerService:
    def __init__(
        self,
        core: OzoneManager,
        executor: Executor,
        om_id: str,
        cluster_id: str,
        tokens: BlockTokenIssuer | None = None,
        observe: RequestObserver = ignore,
        stored: StoredLengths | None = None,
        lifecycle: S3LifecycleService | None = None,
    ) -> None:
        """`tokens`: block tokens for every location handed out (hdds.block.token.enabled), else None;
        `observe`: told of every request (its type, seconds and whether it failed), as OM's metrics;
        `stored`: checks a commit's block lengths with the datanodes under a space quota (None: never);
        `lifecycle`: the daemon's S3 lifecycle service, which runS3Lifecycle runs (None: one of its own)."""
        self.tokens = tokens
        self.stored = stored
        self.observe = observe
        self.core = core
        self.multipart = MultipartManager(core)
        self.properties = PropertyManager(core)
        self.bucket_cors = bucket_documents.cors(core)
        self.bucket_encryption = bucket_documents.BucketEncryptions(core)
        self.bucket_lifecycle = bucket_documents.lifecycle(core)
        self.lifecycle = lifecycle or S3LifecycleService(core)
        self.bucket_policy = bucket_documents.BucketPolicies(core)
        self.public_access_block = bucket_documents.public_access_block(core)
        self.object_locks = ObjectLocks(core)
        self.ownership_controls = bucket_documents.ownership_controls(core)
        self.access = Access(core, core.settings.access)
        self.executor = executor
        self.om_id = om_id
        self.cluster_id = cluster_id
        self.calls = CoreCalls(core, executor)
        self.checks = RequestChecks(self.access)
        self._loop_blocks: LoopBlockBatcher | None = None
        """openKey's batcher, created on the serving loop by the first openKey."""
        self.ha: OmReplication | None = None
        """With OM HA, every call passes through it (`rpc`): only the leader executes, and a call's
        answer waits for its transactions to commit (om/server/ha.py)."""

    def _blocks(self) -> LoopBlockBatcher:
        if self._loop_blocks is None:
            self._loop_blocks = LoopBlockBatcher(self.core.blocks, self.executor)
        return self._loop_blocks

    def _limit(self, asked: int) -> int:
        """A list call answers at most ozone.om.server.list.max.size entries, however many it asks for
        (Ozone's OzoneManager caps them so); 0 asks for that many."""
        most = self.core.settings.list_max_size
        return min(asked or most, most)

    async def _sign(
        self,
        locations: Iterable[pb.KeyLocation],
        context: Context,
        modes: frozenset[AccessMode],
        size: int = 0,
    ) -> None:
        """Block tokens for the caller on `locations` (up to `size` bytes, else each one's length)."""
        if self.tokens is not None:
            await self.calls.run(self.tokens.sign, locations, token_owner(context), modes, size)

    # ------------------------------------------------------------------ volumes
    @rpc
    async def createVolume(
        self, request: pb.CreateVolumeRequest, context: Context
    ) -> pb.CreateVolumeResponse:
        quota = parse(integer, request.quotaInBytes, "quotaInBytes")
        namespace = parse(integer, request.quotaInNamespace, "quotaInNamespace")
        caller = self.access.caller(context)
        owner = request.owner or (caller.user if caller else "")
        acls = self.access.defaults(owner) if caller else ()
        record = await self.calls.run(
            self.core.volumes.create, request.volume, owner, quota, namespace, acls,
            check=partial(self.access.admin, caller, "create Ozone volumes"),
        )  # fmt: skip
        return wire.volume_answer("createVolume", record)

    @rpc
    async def infoVolume(self, request: pb.InfoVolumeRequest, context: Context) -> pb.InfoVolumeResponse:
        check = partial(self.access.volume, self.access.caller(context), ACLType.READ, request.volume)
        record = await self.calls.run(self.core.volume_info, request.volume, check=check)
        return wire.volume_answer("infoVolume", record)

    @rpc
    async def deleteVolume(
        self, request: pb.DeleteVolumeRequest, context: Context
    ) -> pb.DeleteVolumeResponse:
        check = partial(self.access.volume, self.access.caller(context), ACLType.DELETE, request.volume)
        await self.calls.run(self.core.volumes.delete, request.volume, check=check)
        return wire.empty_answer("deleteVolume")

    @rpc
    async def listVolumes(self, request: pb.ListVolumesRequest, context: Context) -> pb.ListVolumesResponse:
        visible = self.access.list_volumes(self.access.caller(context))
        records = await self.calls.run(
            self.core.volumes.list, request.prefix, request.startKey, self._limit(request.maxKeys), visible
        )
        return wire.volumes_answer(records)

    # ------------------------------------------------------------------ buckets
    @rpc
    async def createBucket(
        self, request: pb.CreateBucketRequest, context: Context
    ) -> pb.CreateBucketResponse:
        config = None
        if wire.names_replication(request):
            config = parse(
                wire.requested_replication, request, lambda: self.core.settings.default_replication
            )
        caller = self.access.caller(context)
        creator = self._bucket_owner(caller, request.owner) if request.owner else self.access.creator(caller)
        creator = self._named_acls(creator, request.acls)
        documents = []
        if request.ownershipControls:  # kept in the create's step: never a bucket without them
            controls = self.ownership_controls
            documents.append((controls.table, controls.read(request.ownershipControls, request.bucket)))
        record = await self.calls.run(
            self.core.buckets.create, request.volume, request.bucket, config, creator,
            request.objectLockEnabled, documents,
            check=partial(self.access.bucket, caller, ACLType.CREATE, request.volume, request.bucket),
        )  # fmt: skip
        return wire.bucket_answer("createBucket", record)

    @staticmethod
    def _named_acls(creator: Ownership | None, named: Iterable[pb.OzoneAclInfo]) -> Ownership | None:
        """The creator with the whole ACL a create names (S3's x-amz-acl / x-amz-grant-*), recorded in the
        create's own step (R37's F1, F10: never a second call after the commit); none named: unchanged.
        Whoever may create the object may name its ACL (its writer owns it, as Amazon's object writer).
        With ACLs off the record has no owner, as ever, and these entries (the anonymous caller's check)."""
        acls = parse(acls_from_proto, list(named), "acls")
        if not acls:
            return creator
        return Ownership(creator.owner if creator else "", acls, explicit=True)

    def _bucket_owner(self, caller: Caller | None, owner: str) -> Ownership:
        """The owner a createBucket names (Ozone's client sends BucketInfo.owner; the S3 gateway names the
        request's user, so the bucket never exists without its owner). With ACLs on, only an administrator
        may name another user than the caller."""
        try:
            check_user_name(owner)
        except ValueError as e:
            raise OMException(OMResultCode.INVALID_REQUEST, f"owner: {e}") from None
        if caller is None:
            return Ownership(owner)
        if owner != caller.user and not caller.admin:
            raise OMException(
                OMResultCode.PERMISSION_DENIED,
                f"Only admin users may create a bucket owned by another user. User: {caller.user}",
            )
        return Ownership(owner, self.access.defaults(owner))

    @rpc
    async def infoBucket(self, request: pb.InfoBucketRequest, context: Context) -> pb.InfoBucketResponse:
        check = self.checks.bucket(context, ACLType.READ, request)
        record = await self.calls.run(self.core.bucket_info, request.volume, request.bucket, check=check)
        return wire.bucket_answer("infoBucket", record)

    @rpc
    async def deleteBucket(
        self, request: pb.DeleteBucketRequest, context: Context
    ) -> pb.DeleteBucketResponse:
        check = self.checks.bucket(context, ACLType.DELETE, request)
        await self.calls.run(self.core.buckets.delete, request.volume, request.bucket, check=check)
        return wire.empty_answer("deleteBucket")

    @rpc
    async def listBuckets(self, request: pb.ListBucketsRequest, context: Context) -> pb.ListBucketsResponse:
        check = partial(self.access.volume, self.access.caller(context), ACLType.LIST, request.volume)
        records = await self.calls.run(
            self.core.buckets.list, request.volume, request.prefix, request.startKey,
            self._limit(request.maxKeys), request.owner, check=check,
        )  # fmt: skip
        return wire.buckets_answer(records)

    # ------------------------------------------------------------------ writing keys
    @rpc_finished(lambda service, answer: service.with_data_key(answer))
    async def openKey(self, request: pb.OpenKeyRequest, context: Context) -> pb.OpenKeyResponse:
        excluded = parse(wire.excluded, request)
        size = parse(integer, request.dataSize, "dataSize")
        caller = self.access.caller(context)
        creating = partial(
            self.access.key, caller, ACLType.CREATE, request.volume, request.bucket, request.key
        )
        check = self.checks.locking_write(caller, request, creating)
        creator = self._named_acls(self.access.creator(caller), request.acls)
        sse = parse(wire.sse_request_from_proto, request)
        if request.multipartUploadID:
            if sse is not None:  # a part is encrypted as its upload is, never as it asks
                raise OMException(OMResultCode.INVALID_REQUEST, "a part takes its upload's encryption")
            if request.acls:
                raise OMException(OMResultCode.INVALID_REQUEST, "a part takes its upload's ACL")
            session = await self.calls.run(
                self.multipart.open_part, request.volume, request.bucket, request.key,
                request.multipartUploadID, request.multipartNumber, size, excluded, creator, check=check,
            )  # fmt: skip
        else:
            metadata, tags = dict(request.metadata), dict(request.tags)
            condition = wire.key_condition_from_proto(request.condition)

            async def open_key() -> OpenKeySession:
                check()
                plan = self.core.keys.plan_open(
                    request.volume, request.bucket, request.key, size, self._requested_replication(request),
                    excluded, metadata, tags, creator, condition, sse,
                )  # fmt: skip
                with scm_call(plan.allocating):
                    allocated = await self._blocks().allocate_blocks(
                        plan.block_size, plan.config, plan.count, plan.excluded, "om"
                    )
                return self.core.keys.record_open(plan, allocated)

            session = await self.calls.on_loop(open_key)
        answer = wire.open_key_answer(session.key, session.client_id, session.allocated, session.block_length)
        # the most one replica holds of what SCM allocated (a small key's block is its size; an EC group's
        # fullest replica): the datanodes hold a write to it (write_max_length for a full block)
        replica_length = replica_bytes(session.key.replication, session.block_length)
        await self._sign(answer.keyInfo.locations, context, READ_WRITE, replica_length)
        return answer

    def with_data_key(self, answer: pb.OpenKeyResponse | bytes) -> pb.OpenKeyResponse:
        """openKey's answer (as executed, or its bytes replayed from the retry cache) with its SSE-S3 data
        key unwrapped for the writer: added after the call's Raft entry and retry cache record were made,
        which keep the wrapped key alone (R36 F1)."""
        return wire.with_data_key(answer, self.core.data_keys.unwrapped)

    def _requested_replication(
        self, request: pb.OpenKeyRequest | pb.InitiateMultipartUploadRequest
    ) -> ReplicationConfig | None:
        """The config a request names, its unset parts from its bucket's (read here only for a request that
        leaves a part unset: call in the pool job that uses it); None when it names none (the core takes the
        bucket's)."""
        if not wire.names_replication(request):
            return None

        def bucket_default() -> ReplicationConfig:
            return self.core.bucket_info(request.volume, request.bucket).replication

        return parse(wire.requested_replication, request, bucket_default)

    @rpc
    async def allocateBlock(
        self, request: pb.AllocateBlockRequest, context: Context
    ) -> pb.AllocateBlockResponse:
        excluded = parse(wire.excluded, request)
        check = self.checks.open_key(context, request)
        block = await self.calls.run(
            self.core.keys.allocate_block, request.volume, request.bucket, request.key, request.clientID,
            excluded, check=check,
        )  # fmt: skip
        capacity = block_capacity(block.pipeline.replication_config, self.core.settings.block_size)
        answer = wire.allocate_block_answer(block, capacity)
        length = write_max_length(block.pipeline.replication_config, self.core.settings.block_size)
        await self._sign([answer.location], context, READ_WRITE, length)
        return answer

    @rpc
    async def commitKey(self, request: pb.CommitKeyRequest, context: Context) -> pb.CommitKeyResponse:
        blocks = parse(wire.commit_blocks, request)
        size = parse(integer, request.dataSize, "dataSize")
        stored = await self._stored_lengths(context, request, blocks)
        caller = self.access.caller(context)
        record = await self.calls.run(
            self.core.keys.commit, request.volume, request.bucket, request.key, request.clientID, size,
            blocks, dict(request.metadata), wire.key_condition_from_proto(request.condition), stored,
            check=self.checks.locking_write(caller, request, self.checks.open_key(context, request)),
            inline=True,
        )  # fmt: skip
        return wire.committed_key_answer(record)

    async def _stored_lengths(
        self,
        context: Context,
        request: pb.CommitKeyRequest | pb.CommitMultipartUploadPartRequest,
        blocks: list[KeyBlock],
    ) -> dict[BlockID, int] | None:
        """Under a space quota, what to charge each block for (om/stored_lengths.py: the datanodes asked on
        the event loop, within its deadline), after the caller's ACL check; a commit outside any quota pays
        nothing for it (None)."""
        if self.stored is None or not self.stored.needed(request.volume, request.bucket):
            return None
        plan = await self.calls.run(
            self.stored.plan, request.volume, request.bucket, request.key, request.clientID, blocks,
            check=self.checks.open_key(context, request),
        )  # fmt: skip
        return await self.stored.charges(plan)

    # ------------------------------------------------------------------ reading and changing keys
    @rpc
    async def lookupKey(self, request: pb.LookupKeyRequest, context: Context) -> pb.LookupKeyResponse:
        located = await self.calls.run(
            self.core.keys.lookup, request.volume, request.bucket, request.key, request.clientHost,
            request.forceUpdateContainerCache, request.versionId, request.deleteMarkers,
            check=self.checks.version(context, ACLType.READ, request),
        )  # fmt: skip
        info = wire.located_key_to_proto(located.key, located.where())
        info.sseDataKey = self.core.data_keys.of(located.key)  # the caller may READ it (the check above)
        await self._sign(info.locations, context, READ)
        return wire.lookup_key_answer(info)

    @rpc
    async def listKeys(self, request: pb.ListKeysRequest, context: Context) -> pb.ListKeysResponse:
        records = await self.calls.run(
            self.core.keys.list, request.volume, request.bucket, request.prefix, request.startKey,
            self._limit(request.maxKeys), check=self.checks.bucket(context, ACLType.LIST, request),
        )  # fmt: skip
        return wire.keys_answer(records, request.withBlocks)

    @rpc
    async def renameKey(self, request: pb.RenameKeyRequest, context: Context) -> pb.RenameKeyResponse:
        caller = self.access.caller(context)

        def check() -> None:  # Ozone's OMKeyRenameRequest: DELETE the key, CREATE its new name
            self.access.key(caller, ACLType.DELETE, request.volume, request.bucket, request.key)
            self.access.key(caller, ACLType.CREATE, request.volume, request.bucket, request.toKey)

        await self.calls.run(
            self.core.keys.rename, request.volume, request.bucket, request.key, request.toKey, check=check
        )
        return wire.empty_answer("renameKey")

    @rpc
    async def deleteKey(self, request: pb.DeleteKeyRequest, context: Context) -> pb.DeleteKeyResponse:
        caller = self.access.caller(context)
        check = partial(
            self.access.key_version,
            caller,
            ACLType.DELETE,
            request.volume,
            request.bucket,
            request.key,
            request.versionId,
        )

        def delete() -> DeleteOutcome:  # one pool job: whether the caller may bypass, then the delete
            bypass = request.bypassGovernanceRetention and self.access.may_bypass_governance(
                caller, request.volume, request.bucket
            )
            return self.core.keys.delete(
                request.volume, request.bucket, request.key, wire.key_condition_from_proto(request.condition),
                request.versionId, self.access.creator(caller), bypass,
            )  # fmt: skip

        outcome = await self.calls.run(delete, check=check)
        return wire.delete_key_answer(outcome)

    # ------------------------------------------------------------------ S3 versions
    @rpc
    async def setBucketVersioning(
        self, request: pb.SetBucketVersioningRequest, context: Context
    ) -> pb.SetBucketVersioningResponse:
        state = wire.bucket_versioning_from_proto(request)
        await self.calls.run(
            self.core.versions.set_state, request.volume, request.bucket, state,
            check=self.checks.owner(context, request, "change its versioning"),
        )  # fmt: skip
        return wire.empty_answer("setBucketVersioning")

    # ------------------------------------------------------------------ S3 Object Lock
    @rpc
    async def putObjectLockConfiguration(
        self, request: pb.PutObjectLockConfigurationRequest, context: Context
    ) -> pb.PutObjectLockConfigurationResponse:
        await self.calls.run(
            self.object_locks.configure, request.volume, request.bucket, request.configuration,
            check=self.checks.owner(context, request, "change its Object Lock configuration"),
        )  # fmt: skip
        return wire.empty_answer("putObjectLockConfiguration")

    @rpc
    async def putObjectRetention(
        self, request: pb.PutObjectRetentionRequest, context: Context
    ) -> pb.PutObjectRetentionResponse:
        """Amazon's s3:PutObjectRetention (RequestChecks.lock); the bypass is the bucket owner's or an
        administrator's (Access.may_bypass_governance)."""
        caller = self.access.caller(context)

        def change() -> None:
            bypass = request.bypassGovernanceRetention and self.access.may_bypass_governance(
                caller, request.volume, request.bucket
            )
            self.object_locks.set_retention(
                request.volume, request.bucket, request.key, request.versionId, request.retention, bypass
            )

        await self.calls.run(change, check=self.checks.lock(context, request))
        return wire.empty_answer("putObjectRetention")

    @rpc
    async def putObjectLegalHold(
        self, request: pb.PutObjectLegalHoldRequest, context: Context
    ) -> pb.PutObjectLegalHoldResponse:
        await self.calls.run(
            self.object_locks.set_legal_hold, request.volume, request.bucket, request.key, request.versionId,
            request.legalHold, check=self.checks.lock(context, request),
        )  # fmt: skip
        return wire.empty_answer("putObjectLegalHold")

    @rpc
    async def listKeyVersions(
        self, request: pb.ListKeyVersionsRequest, context: Context
    ) -> pb.ListKeyVersionsResponse:
        found = await self.calls.run(
            self.core.versions.list, request.volume, request.bucket, request.prefix, request.keyMarker,
            request.versionIdMarker, self._limit(request.maxKeys),
            check=self.checks.bucket(context, ACLType.LIST, request),
        )  # fmt: skip
        return wire.key_versions_answer(found)

    @rpc
    async def putObjectTagging(
        self, request: pb.PutObjectTaggingRequest, context: Context
    ) -> pb.PutObjectTaggingResponse:
        await self.calls.run(
            self.core.keys.set_tags, request.volume, request.bucket, request.key, dict(request.tags),
            check=self.checks.key(context, ACLType.WRITE, request),
        )  # fmt: skip
        return wire.empty_answer("putObjectTagging")

    # ------------------------------------------------------------------ S3 bucket default encryption
    @rpc
    async def putBucketEncryption(
        self, request: pb.PutBucketEncryptionRequest, context: Context
    ) -> pb.PutBucketEncryptionResponse:
        await self.calls.run(
            self.bucket_encryption.put, request.volume, request.bucket, request.configuration,
            check=self.checks.owner(context, request, "change its default encryption"),
        )  # fmt: skip
        return wire.empty_answer("putBucketEncryption")

    @rpc
    async def getBucketEncryption(
        self, request: pb.GetBucketEncryptionRequest, context: Context
    ) -> pb.GetBucketEncryptionResponse:
        found = await self.calls.run(
            self.bucket_encryption.get, request.volume, request.bucket,
            check=self.checks.owner(context, request, "read its default encryption"),
        )  # fmt: skip
        return wire.bucket_encryption_answer(found)

    @rpc
    async def deleteBucketEncryption(
        self, request: pb.DeleteBucketEncryptionRequest, context: Context
    ) -> pb.DeleteBucketEncryptionResponse:
        await self.calls.run(
            self.bucket_encryption.delete, request.volume, request.bucket,
            check=self.checks.owner(context, request, "delete its default encryption"),
        )  # fmt: skip
        return wire.empty_answer("deleteBucketEncryption")

    # ------------------------------------------------------------------ S3 bucket CORS
    @rpc
    async def putBucketCors(
        self, request: pb.PutBucketCorsRequest, context: Context
    ) -> pb.PutBucketCorsResponse:
        await self.calls.run(
            self.bucket_cors.put, request.volume, request.bucket, request.configuration,
            check=self.checks.owner(context, request, "change its CORS configuration"),
        )  # fmt: skip
        return wire.empty_answer("putBucketCors")

    @rpc
    async def getBucketCors(
        self, request: pb.GetBucketCorsRequest, context: Context
    ) -> pb.GetBucketCorsResponse:
        found = await self.calls.run(
            self.bucket_cors.get, request.volume, request.bucket,
            check=self.checks.owner(context, request, "read its CORS configuration"),
        )  # fmt: skip
        return wire.bucket_cors_answer(found)

    @rpc
    async def deleteBucketCors(
        self, request: pb.DeleteBucketCorsRequest, context: Context
    ) -> pb.DeleteBucketCorsResponse:
        await self.calls.run(
            self.bucket_cors.delete, request.volume, request.bucket,
            check=self.checks.owner(context, request, "delete its CORS configuration"),
        )  # fmt: skip
        return wire.empty_answer("deleteBucketCors")

    # ------------------------------------------------------------------ S3 bucket lifecycle
    @rpc
    async def putBucketLifecycle(
        self, request: pb.PutBucketLifecycleRequest, context: Context
    ) -> pb.PutBucketLifecycleResponse:
        await self.calls.run(
            self.bucket_lifecycle.put, request.volume, request.bucket, request.configuration,
            check=self.checks.owner(context, request, "change its lifecycle configuration"),
        )  # fmt: skip
        return wire.empty_answer("putBucketLifecycle")

    @rpc
    async def getBucketLifecycle(
        self, request: pb.GetBucketLifecycleRequest, context: Context
    ) -> pb.GetBucketLifecycleResponse:
        found = await self.calls.run(
            self.bucket_lifecycle.get, request.volume, request.bucket,
            check=self.checks.owner(context, request, "read its lifecycle configuration"),
        )  # fmt: skip
        return wire.bucket_lifecycle_answer(found)

    @rpc
    async def deleteBucketLifecycle(
        self, request: pb.DeleteBucketLifecycleRequest, context: Context
    ) -> pb.DeleteBucketLifecycleResponse:
        await self.calls.run(
            self.bucket_lifecycle.delete, request.volume, request.bucket,
            check=self.checks.owner(context, request, "delete its lifecycle configuration"),
        )  # fmt: skip
        return wire.empty_answer("deleteBucketLifecycle")

    @rpc
    async def runS3Lifecycle(
        self, request: pb.RunS3LifecycleRequest, context: Context
    ) -> pb.RunS3LifecycleResponse:
        """Administrators only, ACLs on or off (it acts on every bucket of every owner at once); a run at a
        given time (nowMs) only where ozone.om.s3.lifecycle.time.override.enabled allows it. It runs as
        the timer runs it (`background`): a key's actions at a time through the normal write path, never
        one long call holding OM HA's log behind its first transaction."""
        caller = self.access.identify(context)

        def check() -> None:
            self.access.administrator(caller, "run the S3 lifecycle service")
            if request.nowMs and not self.core.settings.s3_lifecycle_time_override:
                raise OMException(
                    OMResultCode.INVALID_REQUEST,
                    f"runS3Lifecycle at nowMs {request.nowMs} is refused: "
                    "ozone.om.s3.lifecycle.time.override.enabled is false (tests and rehearsals only)",
                )

        run = await self.calls.run(self.lifecycle.run_once, request.nowMs, check=check, background=True)
        return wire.lifecycle_run_answer(run)

    @rpc
    async def rotateS3MasterKey(
        self, request: pb.RotateS3MasterKeyRequest, context: Context
    ) -> pb.RotateS3MasterKeyResponse:
        """Administrators only, ACLs on or off: a new SSE-S3 master key version (om/master_keys.py)."""
        caller = self.access.identify(context)
        self.access.administrator(caller, "rotate the S3 master key")
        if self.ha is not None:
            raise OMException(
                OMResultCode.INVALID_REQUEST,
                "an OM HA service shares one keystore file: rotate it on every OM alike, while they are "
                "stopped",
            )
        keys = self.core.master_keys
        if keys is None:
            raise OMException(OMResultCode.INVALID_KMS_PROVIDER, "no SSE master keystore to rotate")
        version = await asyncio.get_running_loop().run_in_executor(None, keys.rotate)
        return wire.rotate_master_key_answer(version)

    # ------------------------------------------------------------------ S3 bucket policy
    @rpc
    async def putBucketPolicy(
        self, request: pb.PutBucketPolicyRequest, context: Context
    ) -> pb.PutBucketPolicyResponse:
        await self.calls.run(
            self.bucket_policy.put, request.volume, request.bucket, request.policy,
            check=self.checks.owner(context, request, "change its policy"),
        )  # fmt: skip
        return wire.empty_answer("putBucketPolicy")

    @rpc
    async def getBucketPolicy(
        self, request: pb.GetBucketPolicyRequest, context: Context
    ) -> pb.GetBucketPolicyResponse:
        found = await self.calls.run(
            self.bucket_policy.get, request.volume, request.bucket,
            check=self.checks.owner(context, request, "read its policy"),
        )  # fmt: skip
        return wire.bucket_policy_answer(found)

    @rpc
    async def deleteBucketPolicy(
        self, request: pb.DeleteBucketPolicyRequest, context: Context
    ) -> pb.DeleteBucketPolicyResponse:
        await self.calls.run(
            self.bucket_policy.delete, request.volume, request.bucket,
            check=self.checks.owner(context, request, "delete its policy"),
        )  # fmt: skip
        return wire.empty_answer("deleteBucketPolicy")

    @rpc
    async def putBucketPublicAccessBlock(
        self, request: pb.PutBucketPublicAccessBlockRequest, context: Context
    ) -> pb.PutBucketPublicAccessBlockResponse:
        await self.calls.run(
            self.public_access_block.put, request.volume, request.bucket, request.configuration,
            check=self.checks.owner(context, request, "change its PublicAccessBlock"),
        )  # fmt: skip
        return wire.empty_answer("putBucketPublicAccessBlock")

    @rpc
    async def getBucketPublicAccessBlock(
        self, request: pb.GetBucketPublicAccessBlockRequest, context: Context
    ) -> pb.GetBucketPublicAccessBlockResponse:
        found = await self.calls.run(
            self.public_access_block.get, request.volume, request.bucket,
            check=self.checks.owner(context, request, "read its PublicAccessBlock"),
        )  # fmt: skip
        return wire.bucket_public_access_block_answer(found)

    @rpc
    async def deleteBucketPublicAccessBlock(
        self, request: pb.DeleteBucketPublicAccessBlockRequest, context: Context
    ) -> pb.DeleteBucketPublicAccessBlockResponse:
        await self.calls.run(
            self.public_access_block.delete, request.volume, request.bucket,
            check=self.checks.owner(context, request, "delete its PublicAccessBlock"),
        )  # fmt: skip
        return wire.empty_answer("deleteBucketPublicAccessBlock")

    @rpc
    async def putBucketOwnershipControls(
        self, request: pb.PutBucketOwnershipControlsRequest, context: Context
    ) -> pb.PutBucketOwnershipControlsResponse:
        await self.calls.run(
            self.ownership_controls.put, request.volume, request.bucket, request.configuration,
            check=self.checks.owner(context, request, "change its ownership controls"),
        )  # fmt: skip
        return wire.empty_answer("putBucketOwnershipControls")

    @rpc
    async def getBucketOwnershipControls(
        self, request: pb.GetBucketOwnershipControlsRequest, context: Context
    ) -> pb.GetBucketOwnershipControlsResponse:
        found = await self.calls.run(
            self.ownership_controls.get, request.volume, request.bucket,
            check=self.checks.owner(context, request, "read its ownership controls"),
        )  # fmt: skip
        return wire.bucket_ownership_controls_answer(found)

    @rpc
    async def deleteBucketOwnershipControls(
        self, request: pb.DeleteBucketOwnershipControlsRequest, context: Context
    ) -> pb.DeleteBucketOwnershipControlsResponse:
        await self.calls.run(
            self.ownership_controls.delete, request.volume, request.bucket,
            check=self.checks.owner(context, request, "delete its ownership controls"),
        )  # fmt: skip
        return wire.empty_answer("deleteBucketOwnershipControls")

    # ------------------------------------------------------------------ S3 secrets
    @rpc
    async def getS3Secret(self, request: pb.GetS3SecretRequest, context: Context) -> pb.GetS3SecretResponse:
        check = partial(self.access.s3_secret, self.access.caller(context), request.kerberosID)
        found = await self.calls.run(
            self.core.s3_secrets.get, request.kerberosID, request.createIfNotExist, check=check
        )
        return wire.s3_secret_answer(found.access_id, found.secret)

    @rpc
    async def revokeS3Secret(
        self, request: pb.RevokeS3SecretRequest, context: Context
    ) -> pb.RevokeS3SecretResponse:
        check = partial(self.access.s3_secret, self.access.caller(context), request.kerberosID)
        await self.calls.run(self.core.s3_secrets.revoke, request.kerberosID, check=check)
        return wire.empty_answer("revokeS3Secret")

    @rpc
    async def getS3SigningKey(
        self, request: pb.GetS3SigningKeyRequest, context: Context
    ) -> pb.GetS3SigningKeyResponse:
        key = await self.calls.run(
            self.core.s3_secrets.signing_key, request.accessId, request.date, request.region, request.service,
            check=partial(self.access.admin, self.access.caller(context), "derive S3 signing keys"),
        )  # fmt: skip
        return wire.signing_key_answer(key)

    # ------------------------------------------------------------------ multipart uploads
    @rpc
    async def initiateMultipartUpload(
        self, request: pb.InitiateMultipartUploadRequest, context: Context
    ) -> pb.InitiateMultipartUploadResponse:
        caller = self.access.caller(context)
        metadata, tags = dict(request.metadata), dict(request.tags)
        creator = self.access.creator(caller)
        sse = parse(wire.sse_request_from_proto, request)

        def initiate() -> MultipartUploadRecord:  # one pool job, as openKey's
            self.checks.lock_setter(caller, request)
            config = self._requested_replication(request)
            return self.multipart.initiate(
                request.volume, request.bucket, request.key, config, metadata, tags, creator, sse
            )

        upload = await self.calls.run(initiate, check=self.checks.key(context, ACLType.CREATE, request))
        return wire.initiated_answer(upload.upload_id, upload.encryption)

    @rpc
    async def commitMultipartUploadPart(
        self, request: pb.CommitMultipartUploadPartRequest, context: Context
    ) -> pb.CommitMultipartUploadPartResponse:
        blocks = parse(wire.commit_blocks, request)
        size = parse(integer, request.dataSize, "dataSize")
        stored = await self._stored_lengths(context, request, blocks)
        part = await self.calls.run(
            self.multipart.commit_part, request.volume, request.bucket, request.key, request.clientID,
            request.multipartUploadID, request.multipartNumber, size, blocks, dict(request.metadata), stored,
            check=self.checks.open_key(context, request),
        )  # fmt: skip
        return wire.part_committed_answer(part)

    @rpc
    async def completeMultipartUpload(
        self, request: pb.CompleteMultipartUploadRequest, context: Context
    ) -> pb.CompleteMultipartUploadResponse:
        parts = [(p.partNumber, p.partName) for p in request.parts]
        record = await self.calls.run(
            self.multipart.complete, request.volume, request.bucket, request.key, request.uploadID, parts,
            dict(request.metadata), wire.key_condition_from_proto(request.condition),
            request.partChecksumName, request.sseCustomerKeyMD5,
            check=self.checks.locking_write(
                self.access.caller(context), request, self.checks.key(context, ACLType.WRITE, request)
            ),
        )  # fmt: skip
        return wire.completed_key_answer(record)

    @rpc
    async def abortMultipartUpload(
        self, request: pb.AbortMultipartUploadRequest, context: Context
    ) -> pb.AbortMultipartUploadResponse:
        await self.calls.run(  # Ozone's S3MultipartUploadAbortRequest: WRITE on the key (so on its bucket)
            self.multipart.abort, request.volume, request.bucket, request.key, request.uploadID,
            check=self.checks.key(context, ACLType.WRITE, request),
        )  # fmt: skip
        return wire.empty_answer("abortMultipartUpload")

    @rpc
    async def listParts(self, request: pb.ListPartsRequest, context: Context) -> pb.ListPartsResponse:
        page = await self.calls.run(
            self.multipart.list_parts, request.volume, request.bucket, request.key, request.uploadID,
            request.partNumberMarker, self._limit(request.maxParts),
            check=self.checks.key(context, ACLType.READ, request),
        )  # fmt: skip
        return wire.parts_answer(page.parts, page.next_marker, page.truncated, page.upload)

    @rpc
    async def listMultipartUploads(
        self, request: pb.ListMultipartUploadsRequest, context: Context
    ) -> pb.ListMultipartUploadsResponse:
        uploads = await self.calls.run(
            self.multipart.list_uploads, request.volume, request.bucket, request.prefix, request.keyMarker,
            request.uploadIdMarker, self._limit(request.maxUploads),
            check=self.checks.bucket(context, ACLType.LIST, request),
        )  # fmt: skip
        return wire.uploads_answer(uploads)

    @rpc
    async def getServiceInfo(
        self, request: pb.ServiceInfoRequest, context: Context
    ) -> pb.ServiceInfoResponse:
        def ask() -> bool:
            with scm_call("asking SCM for its state", OMResultCode.SCM_UNAVAILABLE):
                return self.core.scm.scm_info().in_safe_mode

        in_safe_mode = await self.calls.run(ask)
        return wire.service_info_answer(self.cluster_id, self.om_id, in_safe_mode)

    # ------------------------------------------------------------------ owners, quotas and ACLs
    @rpc
    async def setVolumeProperty(
        self, request: pb.SetVolumePropertyRequest, context: Context
    ) -> pb.SetVolumePropertyResponse:
        caller = self.access.caller(context)

        def check() -> None:  # Ozone: WRITE_ACL to change the owner, WRITE for a quota (or for nothing)
            if request.ownerName:
                self.access.volume(caller, ACLType.WRITE_ACL, request.volumeName)
            if request.quotaInBytes or request.quotaInNamespace or not request.ownerName:
                self.access.volume(caller, ACLType.WRITE, request.volumeName)

        record = await self.calls.run(
            self.properties.set_volume, request.volumeName, request.ownerName, request.quotaInBytes,
            request.quotaInNamespace, check=check,
        )  # fmt: skip
        return wire.volume_answer("setVolumeProperty", record)

    @rpc
    async def setBucketProperty(
        self, request: pb.SetBucketPropertyRequest, context: Context
    ) -> pb.SetBucketPropertyResponse:
        args = request.bucketArgs
        caller = self.access.caller(context)

        def check() -> None:
            """The bucket's owner or an administrator for its owner and quotas (R37's F3, F11; Ozone lets
            WRITE_ACL change the owner and WRITE the quotas, but S3's WRITE_ACP and WRITE grants map onto
            those rights and never carry a bucket's ownership or its limits); WRITE for the rest."""
            if args.ownerName or args.quotaInBytes or args.quotaInNamespace:
                self.access.bucket_owner(caller, args.volumeName, args.bucketName, BUCKET_PROPERTY_WHAT)
            else:
                self.access.bucket(caller, ACLType.WRITE, args.volumeName, args.bucketName)

        record = await self.calls.run(
            self.properties.set_bucket, args.volumeName, args.bucketName, args.ownerName, args.quotaInBytes,
            args.quotaInNamespace, check=check,
        )  # fmt: skip
        return wire.bucket_answer("setBucketProperty", record)

    @rpc
    async def addAcl(self, request: pb.AddAclRequest, context: Context) -> pb.AddAclResponse:
        path = parse(wire.acl_object, request)
        acl = parse(acl_from_proto, request.acl, "acl")
        changed = await self.calls.run(
            self.properties.change_acls, path, lambda acls: add_acl(acls, acl),
            check=self.checks.acl(context, ACLType.WRITE_ACL, path),
        )  # fmt: skip
        return wire.acl_changed_answer("addAcl", changed)

    @rpc
    async def removeAcl(self, request: pb.RemoveAclRequest, context: Context) -> pb.RemoveAclResponse:
        path = parse(wire.acl_object, request)
        acl = parse(acl_from_proto, request.acl, "acl")
        changed = await self.calls.run(
            self.properties.change_acls, path, lambda acls: remove_acl(acls, acl),
            check=self.checks.acl(context, ACLType.WRITE_ACL, path),
        )  # fmt: skip
        return wire.acl_changed_answer("removeAcl", changed)

    @rpc
    async def setAcl(self, request: pb.SetAclRequest, context: Context) -> pb.SetAclResponse:
        path = parse(wire.acl_object, request)
        acls = parse(acls_from_proto, request.acl, "acl")
        changed = await self.calls.run(
            self.properties.change_acls, path, lambda _: acls,
            check=self.checks.acl(context, ACLType.WRITE_ACL, path),
        )  # fmt: skip
        return wire.acl_changed_answer("setAcl", changed)

    @rpc
    async def getAcl(self, request: pb.GetAclRequest, context: Context) -> pb.GetAclResponse:
        path = parse(wire.acl_object, request)
        acls = await self.calls.run(
            self.properties.get_acls, path, check=self.checks.acl(context, ACLType.READ_ACL, path)
        )
        return wire.acls_answer(acls)

    # ------------------------------------------------------------------ the RPC floor
    @rpc
    async def echoRPC(self, request: pb.EchoRPCRequest, context: Context) -> pb.EchoRPCResponse:
        """Ozone's EchoRPC (freon ome): answered here on the event loop, with no pool job and no table, so
        its rate is what OM's RPC layer costs per call and nothing more."""
        size = parse(integer, request.payloadSizeResp, "payloadSizeResp", 0, MAX_ECHO_PAYLOAD_BYTES)
        return wire.echo_answer(size)


def add_om_service(server: Server, service: OzoneManagerService) -> None:
    server.add_service(ServiceSpec.of(wire.SERVICE), service)
