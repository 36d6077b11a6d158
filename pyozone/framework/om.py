"""OmClient: the one client of OM's OzoneManagerService (Ozone's OzoneManagerProtocolClientSideTranslatorPB),
asyncio, with Ozone's error codes (om_errors.py) and bounded retries; used by pyozone.client and, through
it, the S3 gateway, the fsspec filesystems, freon and the CLI. Its messages are built and read in
protocol/om.py.

Block allocation (openKey, allocateBlock) retries UNAVAILABLE and SCM_IN_SAFE_MODE with a short backoff
for a bounded time, because OM answers them while SCM has no OPEN pipeline yet (a fresh cluster, or one
replacing a dead pipeline a writer excluded) or is restarting, and that heals by itself; a writer retrying
a failed block gives its own deadline. A key's commit waits out an unreachable OM longer (client/retry.py's
OmRetryPolicy): its data is written already. Every other call fails at once, so a command against a
stopped OM reports it instead of hanging.

Who makes a call: over TLS the client's certificate says it and the call claims no one; without TLS the
call names the login user in x-ozone-user metadata, which OM believes (rpc/metadata.user_metadata).
A call `acting_for` a user names that user either way: the S3 gateway acts for each request's user, and
OM believes that from the gateway's certificate. The gateway's own calls claim no one, so OM sees the
gateway itself.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from pyozone.common.net import HostPort
from pyozone.common.tls import TlsStore
from pyozone.framework.failover_round import next_in_round
from pyozone.framework.om_errors import (
    CommitOutcomeUnknown,
    OMException,
    OMLeaderNotReadyException,
    OMNotLeaderException,
    OMUnavailableError,
    SafeModeException,
    om_exception,
)
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.limits import MAX_OM_MESSAGE_BYTES
from pyozone.hdds.locations import KeyLocation
from pyozone.hdds.om_views import (
    BucketInfo,
    InitiatedUpload,
    KeyCondition,
    KeyInfo,
    MultipartPartList,
    MultipartUploadInfo,
    OpenedKey,
    ServiceInfo,
    VolumeInfo,
)
from pyozone.hdds.s3_lifecycle import LifecycleRun
from pyozone.hdds.security.acl import Acls, OzoneAcl
from pyozone.hdds.security.sse import SseRequest
from pyozone.hdds.security.users import login_user
from pyozone.hdds.security.x509 import CertRole
from pyozone.protocol import om as wire
from pyozone.protocol.acl import ObjectPath, acls_from_proto
from pyozone.protocol.locations import key_location_from_proto
from pyozone.rpc import Channel, ChannelSettings, RpcError, ServiceSpec, Stub
from pyozone.rpc.metadata import CALL_ID_METADATA, CLIENT_ID_METADATA, USER_METADATA, user_metadata

if TYPE_CHECKING:
    from pyozone.proto import ScmBlockLocationProtocol_pb2 as block_pb

T = TypeVar("T")
log = logging.getLogger(__name__)
_BACKOFF_START_S, _BACKOFF_MAX_S = 0.1, 2.0
_ACTING_FOR: ContextVar[str | None] = ContextVar("pyozone_om_acting_for", default=None)
OM_SERVICE = ServiceSpec.of(wire.SERVICE)


class RetryPolicy(Protocol):
    """How long a commit waits out an unreachable OM (client/retry.py's OmRetryPolicy)."""

    @property
    def max_attempts(self) -> int: ...

    @property
    def wait_s(self) -> float: ...

    @property
    def deadline_s(self) -> float: ...

    def delay(self, attempt: int, remaining_s: float) -> float | None: ...


class OmSettings(Protocol):
    """What OmClient reads of the client's configuration (pyozone.client.ClientConfig)."""

    @property
    def om_nodes(self) -> tuple[OmEndpoint, ...]: ...

    @property
    def tls(self) -> TlsStore | None: ...

    @property
    def om_timeout_s(self) -> float: ...

    @property
    def unavailable_budget_s(self) -> float: ...

    @property
    def om_retry(self) -> RetryPolicy: ...


class StepRecorder(Protocol):
    """Where a key's OM calls are timed (client/steps.py's StepTimes)."""

    def add(self, step: str, started: float) -> None: ...


def _no_recording() -> StepRecorder | None:
    return None


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


@dataclass(frozen=True, slots=True)
class OmEndpoint:
    """One OM the client may call: a lone OM (node id "") or a node of an HA service."""

    node_id: str
    address: HostPort


class _Node:
    """One OM's channel, opened on first use."""

    def __init__(self, endpoint: OmEndpoint, config: OmSettings) -> None:
        self.endpoint = endpoint
        self.channel = Channel(
            endpoint.address,
            # an OM of a service that just refused a connection is not waited for: the next one is asked
            ChannelSettings(max_message_bytes=MAX_OM_MESSAGE_BYTES, fail_fast=len(config.om_nodes) > 1),
            config.tls,
            CertRole.OM,
        )
        self.stub = Stub(self.channel, OM_SERVICE)


class OmClient:
    """Channels to OM, used on one event loop (their connections belong to that loop). A channel
    reconnects after a lost connection, and with a renewed certificate (the S3 gateway's client lives for
    its process).

    With an HA service (`om_nodes`: several), the client fails over as Ozone's OMFailoverProxyProvider: an
    OM that is not the leader names the one it knows and the call goes there at once; an unreachable OM or
    one without a leader to name sends it to the next OM not asked since the client last waited (a dead
    leader its followers still name is not asked again at once); once every OM was asked the client waits
    `ozone.client.wait.between.retries.millis`; at most `ozone.client.failover.max.attempts` failovers per
    call. A refusal (not the leader, leader not ready) means the call was not executed, so every call may fail
    over on it; an OM answering with its own code (SCM_UNAVAILABLE) is answered as a lone OM would be (waited
    out on the same OM where the call retries), never failed over; an unreachable OM, only a call that may be
    repeated (`retry`, or a commit's own loop), or any call to a service: each names this client and itself
    (x-ozone-client-id, x-ozone-call-id, as Hadoop RPC's clientId and callId), the same on every attempt, so
    OM's retry cache answers a call whose first attempt committed with that first answer instead of executing
    it again. Out of failovers at a follower after an OM was found unreachable, the client reports the
    unreachable OM (why the call failed), naming the follower's refusal."""

    def __init__(self, config: OmSettings, steps: Callable[[], StepRecorder | None] = _no_recording) -> None:
        """`steps`: the recording open in the caller's context, if any (client/steps.py's `current`):
        each call adds its time under its rpc name."""
        self._steps = steps
        self._config = config
        self._nodes = [_Node(endpoint, config) for endpoint in config.om_nodes]
        if not self._nodes:
            raise ValueError("an OM client needs at least one OM")
        self._current = 0
        self._tried: set[int] = set()
        """The OMs asked since the client last waited (Ozone's attemptedOMs)."""
        self._own = user_metadata(config.tls)
        self._client_id = str(uuid.uuid4())
        self._call_ids = itertools.count(1)

    def new_call_id(self) -> int:
        return next(self._call_ids)

    @property
    def address(self) -> str:
        """The OM calls go to now (host:port)."""
        return str(self._nodes[self._current].endpoint.address)

    async def close(self) -> None:
        for node in self._nodes:
            await node.channel.close()

    def _fail_over(self, leader_id: str | None, asked: int | None = None) -> bool:
        """Moves to the named leader, or else to the next OM, skipping those asked in this round; True when
        every OM was asked: the client waits before the new round (Ozone's OMFailoverProxyProviderBase
        .getWaitTime), which begins at the named leader or the next OM. `asked`: the OM the failed attempt
        went to; when another call already moved on from it, the call follows (nothing moves)."""
        if asked is not None and asked != self._current:
            return False
        named = [
            i for i, n in enumerate(self._nodes) if n.endpoint.node_id == leader_id and i != self._current
        ]
        self._current, new_round = next_in_round(self._current, len(self._nodes), named, self._tried)
        return new_round

    async def _call(
        self, name: str, request: Any, convert: Callable[[Any], T], retry: bool = False,
        budget_s: float | None = None, timeout_s: float | None = None, call_id: int | None = None,
    ) -> T:  # fmt: skip
        """`timeout_s`: the call's own timeout (default: the client's OM timeout); `call_id`: the call's id
        when it continues an earlier attempt (a service's retry cache)."""
        acting = _ACTING_FOR.get()
        metadata = self._own if acting is None else ((USER_METADATA, acting),)
        service = len(self._nodes) > 1
        if service:
            named = (
                (CLIENT_ID_METADATA, self._client_id),
                (CALL_ID_METADATA, str(call_id or self.new_call_id())),
            )
            metadata = (*(metadata or ()), *named)
        deadline = time.monotonic() + (self._config.unavailable_budget_s if budget_s is None else budget_s)
        backoff = _BACKOFF_START_S
        failovers = 0
        recording = self._steps()
        started = time.perf_counter() if recording is not None else 0.0
        unreached: OMUnavailableError | None = None  # the last OM found unreachable: why failovers failed
        while True:
            asked = self._current
            node = self._nodes[asked]
            try:
                timeout = self._config.om_timeout_s if timeout_s is None else timeout_s
                response = await getattr(node.stub, name)(request, timeout=timeout, metadata=metadata)
            except RpcError as e:
                error = om_exception(e, str(node.endpoint.address))
                policy = self._config.om_retry
                refused = isinstance(error, (OMNotLeaderException, OMLeaderNotReadyException))
                # an OM that answered with its own code (SCM_UNAVAILABLE) was reached: no failover
                unreachable = (
                    isinstance(error, OMUnavailableError) and not error.timed_out and error.result is None
                )
                if unreachable:
                    unreached = error
                if (
                    len(self._nodes) > 1
                    and failovers < policy.max_attempts
                    and (refused or (unreachable and (retry or service)))
                ):
                    failovers += 1
                    # The same OM once it is ready; else the leader named, or the next OM not asked since
                    # the last wait (a full round of them waits first: a follower names the last leader it
                    # heard of, maybe the dead one, until the next is elected).
                    stay = isinstance(error, OMLeaderNotReadyException)
                    if stay or self._fail_over(getattr(error, "leader_id", None), asked):
                        await asyncio.sleep(policy.wait_s)
                    continue
                waitable = isinstance(error, (OMUnavailableError, SafeModeException))  # SCM restarting
                if retry and waitable and time.monotonic() + backoff < deadline:
                    await asyncio.sleep(backoff)
                    backoff = min(backoff * 2, _BACKOFF_MAX_S)
                    continue
                if refused and unreached is not None:
                    # out of failovers at a follower that names a leader found unreachable: that is the news
                    raise OMUnavailableError(
                        f"{unreached} (after {failovers} failovers, ozone.client.failover.max.attempts "
                        f"{policy.max_attempts}; the last OM asked: {error})"
                    ) from None
                raise error from None
            self._tried.clear()
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
        session committed (om/keys.py KeyManager.committed_session)."""
        policy = self._config.om_retry
        call_id = self.new_call_id()  # one call, however many attempts
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
                return await self._call(name, request, convert, timeout_s=timeout_s, call_id=call_id)
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
                if len(self._nodes) > 1 and e.result is None:
                    self._fail_over(None)  # the next OM of the service may lead now
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
        request = wire.create_volume_request(volume, owner or login_user(), quota_bytes, quota_namespace)
        return await self._call("createVolume", request, lambda r: wire.volume_info_from_proto(r.volume))

    async def volume_info(self, volume: str) -> VolumeInfo:
        request = wire.info_volume_request(volume)
        return await self._call("infoVolume", request, lambda r: wire.volume_info_from_proto(r.volume))

    async def set_volume_property(
        self, volume: str, owner: str = "", quota_bytes: int = 0, quota_namespace: int = 0
    ) -> VolumeInfo:
        """A new owner ("" keeps it) and quotas (0 keeps one, -1 clears it)."""
        request = wire.set_volume_property_request(volume, owner, quota_bytes, quota_namespace)
        return await self._call("setVolumeProperty", request, lambda r: wire.volume_info_from_proto(r.volume))

    async def delete_volume(self, volume: str) -> None:
        await self._call("deleteVolume", wire.delete_volume_request(volume), lambda r: None)

    async def list_volumes(self, prefix: str = "", start: str = "", limit: int = 1000) -> list[VolumeInfo]:
        request = wire.list_volumes_request(prefix, start, limit)
        return await self._call(
            "listVolumes", request, lambda r: [wire.volume_info_from_proto(v) for v in r.volumes]
        )

    # ------------------------------------------------------------------ buckets
    async def create_bucket(
        self, volume: str, bucket: str, replication: ReplicationConfig | None = None, owner: str = "",
        object_lock: bool = False, acls: Acls = (), ownership_controls: bytes = b"",
    ) -> BucketInfo:  # fmt: skip
        """`owner`: the new bucket's (unset: OM's default, the caller with ACLs on); `object_lock`: created
        versioned with S3 Object Lock enabled; `acls`: its whole ACL (unset: its creator's defaults);
        `ownership_controls`: its S3 OwnershipControls document, kept by the create itself."""
        request = wire.create_bucket_request(
            volume, bucket, replication, owner, object_lock, acls, ownership_controls
        )
        return await self._call("createBucket", request, lambda r: wire.bucket_info_from_proto(r.bucket))

    async def bucket_info(self, volume: str, bucket: str) -> BucketInfo:
        request = wire.info_bucket_request(volume, bucket)
        return await self._call("infoBucket", request, lambda r: wire.bucket_info_from_proto(r.bucket))

    async def set_bucket_property(
        self, volume: str, bucket: str, owner: str = "", quota_bytes: int = 0, quota_namespace: int = 0
    ) -> BucketInfo:
        """As set_volume_property."""
        request = wire.set_bucket_property_request(volume, bucket, owner, quota_bytes, quota_namespace)
        return await self._call("setBucketProperty", request, lambda r: wire.bucket_info_from_proto(r.bucket))

    async def delete_bucket(self, volume: str, bucket: str) -> None:
        await self._call("deleteBucket", wire.delete_bucket_request(volume, bucket), lambda r: None)

    async def list_buckets(
        self, volume: str, prefix: str = "", start: str = "", limit: int = 1000, owner: str = ""
    ) -> list[BucketInfo]:
        """`owner`: only that user's buckets."""
        request = wire.list_buckets_request(volume, prefix, start, limit, owner)
        return await self._call(
            "listBuckets", request, lambda r: [wire.bucket_info_from_proto(b) for b in r.buckets]
        )

    # ------------------------------------------------------------------ keys
    async def open_key(
        self,
        volume: str,
        bucket: str,
        key: str,
        size: int,
        replication: ReplicationConfig | None,
        exclude: block_pb.ExcludeListProto | None = None,
        metadata: Mapping[str, str] | None = None,
        tags: Mapping[str, str] | None = None,
        upload_id: str = "",
        part_number: int = 0,
        condition: KeyCondition | None = None,
        sse: SseRequest | None = None,
        acls: Acls = (),
    ) -> OpenedKey:
        """The open key's clientID and its pre-allocated blocks; with `upload_id`, an open key for part
        `part_number` of that multipart upload. A `condition` that fails already is refused here. `sse`:
        its data is to be encrypted (the answer's encryption and data key). `acls`: the key's whole ACL,
        committed with it (unset: its writer's defaults)."""
        request = wire.open_key_request(
            volume,
            bucket,
            key,
            size,
            replication,
            exclude,
            metadata,
            tags,
            upload_id,
            part_number,
            condition,
            sse,
            acls,
        )
        return await self._call("openKey", request, wire.open_key_answer_from_proto, retry=True)

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
        request = wire.allocate_block_request(volume, bucket, key, client_id, exclude)
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
        request = wire.commit_key_request(
            volume, bucket, key, client_id, size, locations, metadata, condition
        )
        return await self._call_reaching(
            "commitKey", f"/{volume}/{bucket}/{key}", request, lambda r: wire.key_info_from_proto(r.keyInfo),
            within_s,
        )  # fmt: skip

    async def lookup_key(
        self, volume: str, bucket: str, key: str, client_host: str = "", refresh: bool = False,
        version: str = "", delete_markers: bool = False,
    ) -> KeyInfo:  # fmt: skip
        """`refresh`: OM is to ask SCM for the container locations instead of answering from its cache (a
        reader retrying after the locations it had failed it). `version`: that S3 version ("": the current
        key); `delete_markers`: with no version, the latest one when it is a delete marker."""
        request = wire.lookup_key_request(volume, bucket, key, client_host, refresh, version, delete_markers)
        return await self._call("lookupKey", request, lambda r: wire.key_info_from_proto(r.keyInfo))

    async def list_keys(
        self, volume: str, bucket: str, prefix: str = "", start: str = "", limit: int = 1000
    ) -> list[KeyInfo]:
        request = wire.list_keys_request(volume, bucket, prefix, start, limit)
        return await self._call("listKeys", request, lambda r: [wire.key_info_from_proto(k) for k in r.keys])

    async def rename_key(self, volume: str, bucket: str, key: str, to_key: str) -> None:
        await self._call("renameKey", wire.rename_key_request(volume, bucket, key, to_key), lambda r: None)

    async def delete_key(
        self, volume: str, bucket: str, key: str, condition: KeyCondition | None = None, version: str = "",
        bypass_governance: bool = False,
    ) -> tuple[str, bool]:  # fmt: skip
        """The version the delete added (a delete marker) or removed ("": an unversioned bucket's key) and
        whether it is a delete marker. `bypass_governance`: S3 Object Lock's GOVERNANCE retention gives way
        (if the caller may bypass it)."""
        request = wire.delete_key_request(volume, bucket, key, condition, version, bypass_governance)
        return await self._call("deleteKey", request, wire.delete_outcome_from_proto)

    async def set_bucket_versioning(self, volume: str, bucket: str, state: str) -> None:
        """S3's PutBucketVersioning: "Enabled" or "Suspended" (the bucket's owner alone)."""
        request = wire.set_bucket_versioning_request(volume, bucket, state)
        await self._call("setBucketVersioning", request, lambda r: None)

    async def put_object_lock_configuration(self, volume: str, bucket: str, configuration: bytes) -> None:
        """S3's PutObjectLockConfiguration (the document as the S3 client sent it)."""
        request = wire.put_object_lock_configuration_request(volume, bucket, configuration)
        await self._call("putObjectLockConfiguration", request, lambda r: None)

    async def put_object_retention(
        self, volume: str, bucket: str, key: str, version: str, retention: bytes, bypass_governance: bool
    ) -> None:
        """S3's PutObjectRetention of a version ("": the current one); an empty Retention removes it."""
        bypass = bypass_governance
        request = wire.put_object_retention_request(volume, bucket, key, version, retention, bypass)
        await self._call("putObjectRetention", request, lambda r: None)

    async def put_object_legal_hold(
        self, volume: str, bucket: str, key: str, version: str, legal_hold: bytes
    ) -> None:
        request = wire.put_object_legal_hold_request(volume, bucket, key, version, legal_hold)
        await self._call("putObjectLegalHold", request, lambda r: None)

    async def list_key_versions(
        self, volume: str, bucket: str, prefix: str, key_marker: str, version_marker: str, limit: int = 1000
    ) -> list[tuple[KeyInfo, bool]]:
        """S3 versions by key, newest first, after `version_marker` of `key_marker`; each with whether it
        is its key's latest."""
        request = wire.list_key_versions_request(volume, bucket, prefix, key_marker, version_marker, limit)
        return await self._call("listKeyVersions", request, wire.key_versions_from_proto)

    async def put_object_tagging(self, volume: str, bucket: str, key: str, tags: Mapping[str, str]) -> None:
        request = wire.put_object_tagging_request(volume, bucket, key, tags)
        await self._call("putObjectTagging", request, lambda r: None)

    async def put_bucket_encryption(self, volume: str, bucket: str, configuration: bytes) -> None:
        """Replaces the bucket's S3 default encryption (the document as the S3 client sent it)."""
        request = wire.put_bucket_encryption_request(volume, bucket, configuration)
        await self._call("putBucketEncryption", request, lambda r: None)

    async def get_bucket_encryption(self, volume: str, bucket: str) -> bytes | None:
        """The bucket's S3 default encryption as OM keeps it; None: it has none."""
        request = wire.get_bucket_encryption_request(volume, bucket)
        return await self._call("getBucketEncryption", request, wire.bucket_encryption_from_proto)

    async def delete_bucket_encryption(self, volume: str, bucket: str) -> None:
        request = wire.delete_bucket_encryption_request(volume, bucket)
        await self._call("deleteBucketEncryption", request, lambda r: None)

    async def put_bucket_cors(self, volume: str, bucket: str, configuration: bytes) -> None:
        """Replaces the bucket's S3 CORS configuration (the document as the S3 client sent it)."""
        request = wire.put_bucket_cors_request(volume, bucket, configuration)
        await self._call("putBucketCors", request, lambda r: None)

    async def get_bucket_cors(self, volume: str, bucket: str) -> bytes | None:
        """The bucket's S3 CORS configuration as OM keeps it; None: it has none."""
        request = wire.get_bucket_cors_request(volume, bucket)
        return await self._call("getBucketCors", request, wire.bucket_cors_from_proto)

    async def delete_bucket_cors(self, volume: str, bucket: str) -> None:
        request = wire.delete_bucket_cors_request(volume, bucket)
        await self._call("deleteBucketCors", request, lambda r: None)

    async def put_bucket_lifecycle(self, volume: str, bucket: str, configuration: bytes) -> None:
        """Replaces the bucket's S3 lifecycle configuration (the document as the S3 client sent it)."""
        request = wire.put_bucket_lifecycle_request(volume, bucket, configuration)
        await self._call("putBucketLifecycle", request, lambda r: None)

    async def get_bucket_lifecycle(self, volume: str, bucket: str) -> bytes | None:
        """The bucket's S3 lifecycle configuration as OM keeps it; None: it has none."""
        request = wire.get_bucket_lifecycle_request(volume, bucket)
        return await self._call("getBucketLifecycle", request, wire.bucket_lifecycle_from_proto)

    async def delete_bucket_lifecycle(self, volume: str, bucket: str) -> None:
        request = wire.delete_bucket_lifecycle_request(volume, bucket)
        await self._call("deleteBucketLifecycle", request, lambda r: None)

    async def rotate_s3_master_key(self) -> int:
        """A new SSE-S3 master key version (administrators only); its number."""
        return await self._call("rotateS3MasterKey", wire.rotate_master_key_request(), lambda r: r.version)

    async def run_s3_lifecycle(self, now_ms: int = 0) -> LifecycleRun:
        """Runs OM's S3 lifecycle service once, judged at `now_ms` (0: OM's clock); administrators only."""
        request = wire.run_s3_lifecycle_request(now_ms)
        return await self._call("runS3Lifecycle", request, wire.lifecycle_run_from_proto)

    async def put_bucket_policy(self, volume: str, bucket: str, policy: bytes) -> None:
        """Replaces the bucket's S3 bucket policy (the JSON document as the S3 client sent it)."""
        request = wire.put_bucket_policy_request(volume, bucket, policy)
        await self._call("putBucketPolicy", request, lambda r: None)

    async def get_bucket_policy(self, volume: str, bucket: str) -> bytes | None:
        """The bucket's S3 bucket policy as sent; None: it has none."""
        request = wire.get_bucket_policy_request(volume, bucket)
        return await self._call("getBucketPolicy", request, wire.bucket_policy_from_proto)

    async def delete_bucket_policy(self, volume: str, bucket: str) -> None:
        request = wire.delete_bucket_policy_request(volume, bucket)
        await self._call("deleteBucketPolicy", request, lambda r: None)

    async def put_bucket_public_access_block(self, volume: str, bucket: str, configuration: bytes) -> None:
        """Replaces the bucket's S3 PublicAccessBlock (the document as the S3 client sent it)."""
        request = wire.put_bucket_public_access_block_request(volume, bucket, configuration)
        await self._call("putBucketPublicAccessBlock", request, lambda r: None)

    async def get_bucket_public_access_block(self, volume: str, bucket: str) -> bytes | None:
        """The bucket's S3 PublicAccessBlock as OM keeps it; None: it has none."""
        request = wire.get_bucket_public_access_block_request(volume, bucket)
        return await self._call(
            "getBucketPublicAccessBlock", request, wire.bucket_public_access_block_from_proto
        )

    async def delete_bucket_public_access_block(self, volume: str, bucket: str) -> None:
        request = wire.delete_bucket_public_access_block_request(volume, bucket)
        await self._call("deleteBucketPublicAccessBlock", request, lambda r: None)

    async def put_bucket_ownership_controls(self, volume: str, bucket: str, configuration: bytes) -> None:
        """Replaces the bucket's S3 ownership controls (the document as the S3 client sent it)."""
        request = wire.put_bucket_ownership_controls_request(volume, bucket, configuration)
        await self._call("putBucketOwnershipControls", request, lambda r: None)

    async def get_bucket_ownership_controls(self, volume: str, bucket: str) -> bytes | None:
        """The bucket's S3 ownership controls as OM keeps them; None: it has none."""
        request = wire.get_bucket_ownership_controls_request(volume, bucket)
        return await self._call(
            "getBucketOwnershipControls", request, wire.bucket_ownership_controls_from_proto
        )

    async def delete_bucket_ownership_controls(self, volume: str, bucket: str) -> None:
        request = wire.delete_bucket_ownership_controls_request(volume, bucket)
        await self._call("deleteBucketOwnershipControls", request, lambda r: None)

    async def get_s3_secret(self, user: str, create: bool) -> tuple[str, str]:
        request = wire.get_s3_secret_request(user, create)
        return await self._call(
            "getS3Secret", request, lambda r: (r.s3Secret.kerberosID, r.s3Secret.awsSecret)
        )

    async def revoke_s3_secret(self, user: str) -> None:
        await self._call("revokeS3Secret", wire.revoke_s3_secret_request(user), lambda r: None)

    async def s3_signing_key(self, access_id: str, date: str, region: str, service: str) -> bytes:
        request = wire.s3_signing_key_request(access_id, date, region, service)
        return await self._call("getS3SigningKey", request, lambda r: r.signingKey)

    # ------------------------------------------------------------------ multipart uploads
    async def initiate_multipart_upload(
        self, volume: str, bucket: str, key: str, replication: ReplicationConfig | None,
        metadata: Mapping[str, str] | None, tags: Mapping[str, str] | None, sse: SseRequest | None = None,
    ) -> InitiatedUpload:  # fmt: skip
        request = wire.initiate_multipart_upload_request(
            volume, bucket, key, replication, metadata, tags, sse
        )
        return await self._call("initiateMultipartUpload", request, wire.initiated_from_proto)

    async def commit_multipart_part(
        self, volume: str, bucket: str, key: str, client_id: int, upload_id: str, part_number: int,
        size: int, locations: list[KeyLocation], metadata: Mapping[str, str] | None = None,
    ) -> KeyInfo:  # fmt: skip
        """The committed part as a key (its size, blocks and metadata)."""
        request = wire.commit_multipart_part_request(
            volume, bucket, key, client_id, upload_id, part_number, size, locations, metadata
        )
        return await self._call(
            "commitMultipartUploadPart", request, lambda r: wire.key_info_from_proto(r.partKeyInfo)
        )

    async def complete_multipart_upload(
        self, volume: str, bucket: str, key: str, upload_id: str, parts: Sequence[tuple[int, str]],
        metadata: Mapping[str, str] | None, condition: KeyCondition | None = None, part_checksum: str = "",
        customer_key_md5: str = "",
    ) -> KeyInfo:  # fmt: skip
        request = wire.complete_multipart_upload_request(
            volume, bucket, key, upload_id, parts, metadata, condition, part_checksum, customer_key_md5
        )
        return await self._call(
            "completeMultipartUpload", request, lambda r: wire.key_info_from_proto(r.keyInfo)
        )

    async def abort_multipart_upload(self, volume: str, bucket: str, key: str, upload_id: str) -> None:
        request = wire.abort_multipart_upload_request(volume, bucket, key, upload_id)
        await self._call("abortMultipartUpload", request, lambda r: None)

    async def list_parts(
        self, volume: str, bucket: str, key: str, upload_id: str, marker: int, max_parts: int
    ) -> MultipartPartList:
        request = wire.list_parts_request(volume, bucket, key, upload_id, marker, max_parts)
        return await self._call("listParts", request, wire.part_list_from_proto)

    async def list_multipart_uploads(
        self, volume: str, bucket: str, prefix: str, key_marker: str, upload_id_marker: str, max_uploads: int
    ) -> list[MultipartUploadInfo]:
        request = wire.list_multipart_uploads_request(
            volume, bucket, prefix, key_marker, upload_id_marker, max_uploads
        )
        return await self._call(
            "listMultipartUploads", request, lambda r: [wire.upload_info_from_proto(u) for u in r.uploads]
        )

    # ------------------------------------------------------------------ ACLs
    async def add_acl(self, path: ObjectPath, acl: OzoneAcl) -> bool:
        """Whether the object's entries changed."""
        return await self._call("addAcl", wire.add_acl_request(path, acl), lambda r: r.response)

    async def remove_acl(self, path: ObjectPath, acl: OzoneAcl) -> bool:
        return await self._call("removeAcl", wire.remove_acl_request(path, acl), lambda r: r.response)

    async def set_acl(self, path: ObjectPath, acls: Acls) -> bool:
        return await self._call("setAcl", wire.set_acl_request(path, acls), lambda r: r.response)

    async def get_acl(self, path: ObjectPath) -> Acls:
        request = wire.get_acl_request(path)
        return await self._call("getAcl", request, lambda r: acls_from_proto(r.acls, "acls"))

    async def service_info(self) -> ServiceInfo:
        return await self._call("getServiceInfo", wire.service_info_request(), wire.service_info_from_proto)

    async def echo(self, payload: bytes = b"", response_size: int = 0) -> bytes:
        """Ozone's EchoRPC (freon ome): `payload` to OM and `response_size` bytes back, no table touched."""
        return await self._call("echoRPC", wire.echo_request(payload, response_size), lambda r: r.payload)
