"""Keys: open, allocate a block, commit, look up, list, rename, tag and delete (Ozone's KeyManagerImpl with
OMKeyCreateRequest, OMAllocateBlockRequest, OMKeyCommitRequest, OMKeyRenameRequest and OMKeyDeleteRequest),
and what every key write shares: a committed key replacing the current one (a new version in an S3-versioned
bucket, versions.py), the blocks nothing references going to deletedTable (`orphan`) and the usage of the
bucket and volume following (`account`, within the quotas of quota.py). What the requests answer is
here too: an open key's plan and session, a committed key with where its blocks are read.

Key requests hold their keys' locks with the namespace shared (locks.py); usage changes hold
`locks.usage` too. The blocks of an open key come from SCM outside the locks (`plan_open`, then
`record_open`, which checks the bucket again)."""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import islice
from typing import TYPE_CHECKING

from pyozone.hdds.block import ExcludeList
from pyozone.hdds.ids import BlockID, ReplicationConfig
from pyozone.hdds.om_records import BucketRecord, KeyBlock, KeyRecord, VolumeRecord, pairs, replicated_size
from pyozone.hdds.om_views import KeyCondition
from pyozone.hdds.s3_versions import BucketVersioning, DeleteOutcome, write_plan
from pyozone.hdds.security.acl import Acls, Ownership, inherit_defaults
from pyozone.hdds.security.sse import KeyEncryption, SseRequest
from pyozone.om import conditions, object_lock, quota, versions
from pyozone.om.data_keys import default_sse
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.key_metadata import check_metadata, check_tags
from pyozone.om.locations import read_pipeline
from pyozone.om.metadata import (
    BUCKET_TABLE,
    DELETED_TABLE,
    KEY_TABLE,
    OPEN_KEY_TABLE,
    VOLUME_TABLE,
    Op,
    bucket_key,
    key_key,
    open_key_key,
    volume_key,
)
from pyozone.om.names import check_key_name
from pyozone.om.replication import block_capacity, replica_bytes
from pyozone.om.scm import scm_call
from pyozone.om.settings import DEFAULT_LIST_LIMIT, PREALLOCATE_MAX_BLOCKS
from pyozone.protocol import om_records
from pyozone.protocol.block import BlockLocation

if TYPE_CHECKING:
    from pyozone.om.core import OzoneManager
    from pyozone.proto import hdds_pb2

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class OpenKeyPlan:
    """An openKey that passed its checks: the `count` blocks of `block_size` bytes (what the largest replica
    holds) of `config` to ask SCM for, each holding `capacity` key bytes, and what the open key records."""

    volume: str
    bucket: str
    key: str
    data_size: int
    config: ReplicationConfig
    block_size: int
    count: int
    capacity: int
    excluded: ExcludeList
    metadata: Mapping[str, str] | None
    tags: Mapping[str, str] | None
    creator: Ownership | None
    parent_acls: Acls
    bucket_sse: bool = False  # the bucket's S3 default encryption
    encryption: KeyEncryption | None = None

    @property
    def allocating(self) -> str:
        return f"allocating {self.count} block(s) for {self.volume}/{self.bucket}/{self.key}"


@dataclass(frozen=True, slots=True)
class OpenKeySession:
    """An open key: its record (blocks without offsets), where each pre-allocated block is written, and
    how many key bytes each holds (what SCM counted for it; an EC block group's: that on each data
    index); a writer moves to a new block past that."""

    key: KeyRecord
    client_id: int
    allocated: tuple[BlockLocation, ...]
    block_length: int


@dataclass(frozen=True, slots=True)
class ReadLocation:
    """Where one block of a key is read: the pipeline (None if SCM no longer knows the container)."""

    pipeline: hdds_pb2.Pipeline | None
    container_state: str


@dataclass(frozen=True, slots=True)
class LocatedKey:
    key: KeyRecord
    locations: tuple[ReadLocation, ...]

    def where(self) -> Iterator[tuple[hdds_pb2.Pipeline | None, str]]:
        """Each block's read pipeline and container state, in the key's block order."""
        return ((r.pipeline, r.container_state) for r in self.locations)


class KeyManager:
    def __init__(self, om: OzoneManager) -> None:
        self.om = om

    # ------------------------------------------------------------------ reading key records
    def record(self, volume: str, bucket: str, key: str) -> KeyRecord:
        """The committed key; KEY_NOT_FOUND (or its bucket's or volume's) when there is none."""
        om = self.om
        data = om.store.get(KEY_TABLE, key_key(volume, bucket, key))
        if data is None:
            om.bucket_info(volume, bucket)
            raise OMException(OMResultCode.KEY_NOT_FOUND, f"key {volume}/{bucket}/{key}")
        return om_records.decode_key(data)

    def find(self, volume: str, bucket: str, key: str) -> KeyRecord | None:
        """The committed key, or None (its bucket is not checked)."""
        data = self.om.store.get(KEY_TABLE, key_key(volume, bucket, key))
        return om_records.decode_key(data) if data is not None else None

    def open_record(self, volume: str, bucket: str, key: str, client_id: int) -> KeyRecord:
        om = self.om
        data = om.store.get(OPEN_KEY_TABLE, open_key_key(volume, bucket, key, client_id))
        if data is None:
            om.bucket_info(volume, bucket)
            raise OMException(
                OMResultCode.KEY_NOT_FOUND, f"no open key {volume}/{bucket}/{key} with clientID {client_id}"
            )
        return om_records.decode_key(data)

    def committed_session(self, volume: str, bucket: str, key: str, client_id: int) -> KeyRecord | None:
        """The key open-key session `client_id` committed, while it is still the key of that name (its
        object id is the session's client id): a client retries commitKey while OM is unreachable, so a
        commit whose answer was lost comes again and is answered as the first one was (Ozone answers it
        from its Ratis retry cache)."""
        return self.committed_by(self.find(volume, bucket, key), client_id)

    @staticmethod
    def committed_by(found: KeyRecord | None, client_id: int) -> KeyRecord | None:
        """`found` (the key of that name) if open-key session `client_id` committed it."""
        return found if found is not None and found.object_id == client_id else None

    # ------------------------------------------------------------------ writing keys
    def open(
        self,
        volume: str,
        bucket: str,
        key: str,
        data_size: int = 0,
        replication: ReplicationConfig | None = None,
        excluded: ExcludeList | None = None,
        metadata: Mapping[str, str] | None = None,
        tags: Mapping[str, str] | None = None,
        creator: Ownership | None = None,
        condition: KeyCondition | None = None,
        sse: SseRequest | None = None,
    ) -> OpenKeySession:
        """Records an open key under a fresh client id with ceil(dataSize / block capacity) pre-allocated
        blocks (at least one, at most PREALLOCATE_MAX_BLOCKS), with the metadata and tags the committed
        key will carry. `replication` is the client's (checked against ozone.replication.allowed-configs);
        None takes the bucket's. A block's capacity is the block size, an EC block group's the block
        size on each data index.

        A key announced smaller than a block asks SCM for only what its largest replica holds, the
        length its location then carries (docs/differences.md).

        The blocks must fit the quotas (quota.py); with ozone.acl.enabled the key's `creator` owns it.
        A `condition` that fails now is refused before any block is allocated (commit decides)."""
        return self.open_planned(
            self.plan_open(
                volume, bucket, key, data_size, replication, excluded, metadata, tags, creator, condition, sse
            )
        )

    def plan_open(
        self,
        volume: str,
        bucket: str,
        key: str,
        data_size: int = 0,
        replication: ReplicationConfig | None = None,
        excluded: ExcludeList | None = None,
        metadata: Mapping[str, str] | None = None,
        tags: Mapping[str, str] | None = None,
        creator: Ownership | None = None,
        condition: KeyCondition | None = None,
        sse: SseRequest | None = None,
    ) -> OpenKeyPlan:
        """open's checks and what it asks SCM for; record_open then records the blocks SCM gave
        (OM's event loop awaits SCM between the two, issue 29). `sse`: the key's data is encrypted
        (DataKeys.new)."""
        om = self.om
        if replication is not None:
            om.settings.allowed_configs.check(replication)
        if condition is not None:  # a plain open reads no committed key
            conditions.check(condition, self.find(volume, bucket, key), key_key(volume, bucket, key))
        plan = self.plan_open_as(
            volume, bucket, key, data_size, replication, excluded, metadata, tags, creator
        )
        sse = sse or default_sse(plan.bucket_sse)
        if sse is None:
            return plan
        return replace(plan, encryption=om.data_keys.new(sse, volume, bucket, key))

    def open_planned(self, plan: OpenKeyPlan) -> OpenKeySession:
        """The planned blocks from SCM (through the batcher, blocking), recorded."""
        with scm_call(plan.allocating):
            allocated = self.om.blocks.allocate_blocks(
                plan.block_size, plan.config, plan.count, plan.excluded, "om"
            )
        return self.record_open(plan, allocated)

    def plan_open_as(
        self,
        volume: str,
        bucket: str,
        key: str,
        data_size: int = 0,
        replication: ReplicationConfig | None = None,
        excluded: ExcludeList | None = None,
        metadata: Mapping[str, str] | None = None,
        tags: Mapping[str, str] | None = None,
        creator: Ownership | None = None,
    ) -> OpenKeyPlan:
        """plan_open with a replication OM already holds (a multipart upload's), not checked again:
        the allowed configs may have changed since it was recorded."""
        om = self.om
        check_key_name(key, om.settings.check_key_characters)
        check_metadata(metadata or {})
        check_tags(tags or {})
        parent = om.bucket_info(volume, bucket)
        object_lock.check_write(parent, metadata, om.now())
        config = ReplicationConfig.resolve(replication, parent.replication, om.settings.default_replication)
        size = om.settings.block_size
        capacity = block_capacity(config, size)
        count = min(PREALLOCATE_MAX_BLOCKS, max(1, math.ceil(data_size / capacity)))
        if 0 < data_size < capacity:
            size, capacity = replica_bytes(config, data_size), data_size
        preallocated = min(data_size, count * capacity) if data_size else capacity
        new_key = bool(parent.quota_namespace) and self.find(volume, bucket, key) is None
        self.check_quota(parent, replicated_size(config, preallocated), new_key)
        return OpenKeyPlan(
            volume, bucket, key, data_size, config, size, count, capacity, excluded or ExcludeList(),
            metadata, tags, creator, parent.acls, parent.sse_default,
        )  # fmt: skip

    def record_open(self, plan: OpenKeyPlan, allocated: Sequence[BlockLocation]) -> OpenKeySession:
        """Records the open key of `plan` with the blocks SCM allocated to it."""
        om = self.om
        volume, bucket, key, creator = plan.volume, plan.bucket, plan.key, plan.creator
        capacity = plan.capacity
        with om.lock.shared():
            ops: list[Op] = []
            (client_id,) = om.new_ids(1)
            object_id = client_id  # how a repeated commit knows the key it made (committed_session)
            now = om.now()
            record = KeyRecord(
                volume,
                bucket,
                key,
                plan.data_size,
                now,
                now,
                plan.config,
                tuple(KeyBlock(b.block_id, 0, capacity) for b in allocated),
                object_id,
                pairs(plan.metadata),
                pairs(plan.tags),
                creator.owner if creator else "",
                creator.entries(plan.parent_acls) if creator else (),
                encryption=plan.encryption,
            )
            try:
                om.bucket_info(volume, bucket)  # deleted while SCM allocated: the blocks are garbage
            except OMException:
                self.orphan(record, ops)
                om.commit(ops)
                raise
            ops.append(
                (
                    OPEN_KEY_TABLE,
                    open_key_key(volume, bucket, key, client_id),
                    om_records.encode_key(record),
                )
            )
            om.commit(ops)
        return OpenKeySession(record, client_id, tuple(allocated), capacity)

    def allocate_block(
        self, volume: str, bucket: str, key: str, client_id: int, excluded: ExcludeList | None = None
    ) -> BlockLocation:
        """One more block for an open key, of the key's replication, if a full one fits the quotas."""
        om = self.om
        record = self.open_record(volume, bucket, key, client_id)
        capacity = block_capacity(record.replication, om.settings.block_size)
        self.check_quota(om.bucket_info(volume, bucket), replicated_size(record.replication, capacity), False)
        with scm_call(f"allocating a block for {volume}/{bucket}/{key}"):
            blocks = om.blocks.allocate_blocks(
                om.settings.block_size, record.replication, 1, excluded or ExcludeList(), "om"
            )
        if len(blocks) != 1:
            raise OMException(OMResultCode.KEY_ALLOCATION_ERROR, f"SCM answered {len(blocks)} blocks for 1")
        block = blocks[0]
        with om.locks.key(key_key(volume, bucket, key)):
            ops: list[Op] = []
            table_key = open_key_key(volume, bucket, key, client_id)
            data = om.store.get(OPEN_KEY_TABLE, table_key)
            if data is None:  # committed or cleaned up meanwhile
                self.orphan(replace(record, blocks=(KeyBlock(block.block_id),)), ops)
                om.commit(ops)
                raise OMException(
                    OMResultCode.KEY_NOT_FOUND,
                    f"no open key {volume}/{bucket}/{key} with clientID {client_id}",
                )
            current = om_records.decode_key(data)
            current = replace(current, blocks=(*current.blocks, KeyBlock(block.block_id, 0, capacity)))
            ops.append((OPEN_KEY_TABLE, table_key, om_records.encode_key(current)))
            om.commit(ops)
        return block

    def commit(
        self, volume: str, bucket: str, key: str, client_id: int, data_size: int, blocks: Sequence[KeyBlock],
        metadata: Mapping[str, str] | None = None, condition: KeyCondition | None = None,
        stored: Mapping[BlockID, int] | None = None,
    ) -> KeyRecord:  # fmt: skip
        """Makes the open key visible with exactly `blocks` (OmClientProtocol.proto: CommitKeyRequest);
        `metadata` is merged into what openKey recorded; `stored`: the replicated bytes to charge
        blocks for (stored_lengths.py, under a space quota), when more than they declare. A key the quotas
        have no room for is refused (QUOTA_EXCEEDED), as is one whose `condition` the committed key fails
        (conditions.py); either way its open key is abandoned: its blocks go to deletedTable. A repeated
        commit of a session that committed is answered as the first was (committed_session), its condition
        not checked again."""
        om = self.om
        name = key_key(volume, bucket, key)
        with om.locks.key(name):
            old = self.find(volume, bucket, key)  # read once: the repeat, the condition, the replacement
            repeated = self.committed_by(old, client_id)
            if repeated is not None:
                return repeated
            opened = self.open_record(volume, bucket, key, client_id)
            try:
                conditions.check(condition, old, name)
            except OMException as e:
                self.abandon(opened, client_id, f"commit of {name} refused: {e.message}")
                raise
            merged = dict(opened.metadata) | dict(metadata or {})
            check_metadata(merged)
            kept = self.written_blocks(opened, blocks, data_size)
            record = replace(
                opened, data_size=data_size, modification_ms=om.now(), blocks=kept, metadata=pairs(merged),
                charged_bytes=quota.charged_bytes(opened.replication, data_size, kept, stored),
            )  # fmt: skip
            ops: list[Op] = []
            with om.locks.usage:
                try:
                    record = self.write(om.bucket_info(volume, bucket), record, old, ops)
                except OMException as e:
                    if e.code is OMResultCode.QUOTA_EXCEEDED:
                        why = f"commit of {key_key(volume, bucket, key)} refused: {e.message}"
                        self.abandon(opened, client_id, why)
                    raise
                self.orphan_unused(opened, kept, ops)
                ops.append((OPEN_KEY_TABLE, open_key_key(volume, bucket, key, client_id), None))
                om.commit(ops)
        log.debug(
            "committed key %s/%s/%s: %d bytes in %d block(s)", volume, bucket, key, data_size, len(kept)
        )
        return record

    @staticmethod
    def written_blocks(opened: KeyRecord, blocks: Sequence[KeyBlock], data_size: int) -> tuple[KeyBlock, ...]:
        """A writer's block list, checked against its open key: each block allocated to it, holding no more
        than it was allocated for (the length its block token allows; 0: an open key recorded before OM kept
        it), none twice, contiguous from offset 0 and holding `data_size` bytes; the empty ones dropped."""
        allocated = {b.block_id: b.length for b in opened.blocks}
        seen: set = set()
        offset = 0
        for i, block in enumerate(blocks):
            if block.block_id not in allocated:
                raise OMException(
                    OMResultCode.INVALID_BLOCK_LIST,
                    f"locations[{i}]: block {block.block_id} was not allocated to this open key",
                )
            if 0 < allocated[block.block_id] < block.length:
                raise OMException(
                    OMResultCode.INVALID_BLOCK_LIST,
                    f"locations[{i}]: block {block.block_id} holds {block.length} bytes, more than the "
                    f"{allocated[block.block_id]} allocated to it",
                )
            if block.block_id in seen:
                raise OMException(
                    OMResultCode.INVALID_BLOCK_LIST, f"locations[{i}]: block {block.block_id} twice"
                )
            seen.add(block.block_id)
            if block.offset != offset:
                raise OMException(
                    OMResultCode.INVALID_REQUEST,
                    f"locations[{i}]: offset {block.offset}, expected {offset} (blocks are contiguous)",
                )
            offset += block.length
        if offset != data_size:
            raise OMException(
                OMResultCode.INVALID_REQUEST, f"the blocks hold {offset} bytes but dataSize is {data_size}"
            )
        return tuple(b for b in blocks if b.length > 0)

    def orphan_unused(self, opened: KeyRecord, kept: Sequence[KeyBlock], ops: list[Op]) -> None:
        """The open key's allocated blocks the writer did not use go to deletedTable."""
        kept_ids = {b.block_id for b in kept}
        unused = tuple(b for b in opened.blocks if b.block_id not in kept_ids)
        if len(unused) == len(opened.blocks):  # the open key itself: its om.db bytes, not a new encode
            self.orphan(opened, ops)
        elif unused:
            self.orphan(replace(opened, blocks=unused), ops)

    def abandon(self, opened: KeyRecord, client_id: int, why: str) -> None:
        """Drops an open key whose commit was refused: its blocks go to deletedTable (logged with `why`)."""
        ops: list[Op] = [
            (OPEN_KEY_TABLE, open_key_key(opened.volume, opened.bucket, opened.key, client_id), None)
        ]
        self.orphan(opened, ops)
        self.om.commit(ops)
        log.info("%s; its %d block(s) go to deletion", why, len(opened.blocks))

    def write(
        self, parent: BucketRecord, record: KeyRecord, old: KeyRecord | None, ops: list[Op], counted: int = 0
    ) -> KeyRecord:
        """Writes the committed key into `ops` and returns it as written: `old`, the key of that name
        (find, read under the key's lock), is replaced (its blocks go to deletedTable), and the bucket's
        and volume's usage follows. In a versioned bucket the key is a new version (om/versions.py) and
        `old` is kept as a noncurrent one unless the rules overwrite it (a `null` version while Suspended).
        `counted`: bytes the usage holds for it already (a multipart upload's parts). QUOTA_EXCEEDED, with
        nothing added to `ops`, when the quotas have no room for it. In a bucket with S3 Object Lock the
        version gets the retention and legal hold its metadata names, or the bucket's default retention
        (om/object_lock.py). Call with the key's lock and `locks.usage` held, `parent` read under them,
        and commit before releasing them."""
        om = self.om
        record = object_lock.stamp(parent, record, om.now())
        if parent.versioning is not BucketVersioning.UNVERSIONED:
            return self._add_version(parent, record, old, ops, counted)
        used_delta = record.replicated_bytes - (old.replicated_bytes if old is not None else 0) - counted
        volume = om.volume_info(parent.volume)
        self.check_quota(parent, used_delta, old is None, volume)
        if old is not None:
            self.orphan(old, ops)
        ops.append(
            (
                KEY_TABLE,
                key_key(record.volume, record.bucket, record.key),
                om_records.encode_key(record),
            )
        )
        self.account(parent, used_delta, 0 if old is not None else 1, ops, volume)
        return record

    def _add_version(
        self, parent: BucketRecord, record: KeyRecord, old: KeyRecord | None, ops: list[Op], counted: int
    ) -> KeyRecord:
        """write in a versioned bucket: the key is a new version, numbered now (hdds/s3_versions.py)."""
        om = self.om
        plan = write_plan(parent.versioning, old is not None and old.versioned)
        (seq,) = om.new_ids(1)
        record = replace(record, version_seq=seq, versioned=plan.versioned)
        changes: list[Op] = []
        released = 0
        if old is not None and plan.keep_current:
            versions.keep(old, changes)
        elif old is not None:
            self.orphan(old, changes)
            released += old.replicated_bytes
        namespace = 0 if old is not None else 1
        if plan.drops_null:
            dropped = versions.drop_null(self.om, record.volume, record.bucket, record.key, changes)
            released += dropped.replicated_bytes if dropped is not None else 0
            namespace -= versions.namespace_of(dropped)
        used_delta = record.replicated_bytes - released - counted
        volume = om.volume_info(parent.volume)
        self.check_quota(parent, used_delta, namespace > 0, volume)
        ops.extend(changes)
        ops.append(
            (KEY_TABLE, key_key(record.volume, record.bucket, record.key), om_records.encode_key(record))
        )
        self.account(parent, used_delta, namespace, ops, volume)
        return record

    def check_quota(
        self, bucket: BucketRecord, requested: int, new_key: bool, volume: VolumeRecord | None = None
    ) -> None:
        """QUOTA_EXCEEDED when `requested` more replicated bytes, or a new key, pass a quota of the bucket
        or its volume (quota.py); `volume`: the bucket's, when the caller read it already."""
        if new_key:
            quota.check_keys(bucket)
        quota.check_space(volume or self.om.volume_info(bucket.volume), bucket, requested)

    # ------------------------------------------------------------------ reading and changing keys
    def lookup(
        self, volume: str, bucket: str, key: str, client_host: str = "", refresh: bool = False,
        version: str = "", delete_markers: bool = False,
    ) -> LocatedKey:  # fmt: skip
        """`refresh` (forceUpdateContainerCache): the container locations come from SCM, not the cache.
        `version`: that S3 version ("": the current key); `delete_markers`: with no `version`, the latest
        version when it is a delete marker (else KEY_NOT_FOUND, as ever)."""
        om = self.om
        check_key_name(key, False)
        record = self._lookup_record(volume, bucket, key, version, delete_markers)
        client_rack = om.settings.rack_of(client_host) if client_host else ""
        found: dict[int, ReadLocation] = {}
        locations = []
        for block in record.blocks:
            cid = block.block_id.container_id
            if cid not in found:
                with scm_call(f"locating container {cid}", OMResultCode.SCM_UNAVAILABLE):
                    location = om.locations.get(cid, refresh)
                state = location.state.name if location.state is not None else ""
                found[cid] = ReadLocation(read_pipeline(location, client_host, client_rack), state)
            locations.append(found[cid])
        return LocatedKey(record, tuple(locations))

    def _lookup_record(
        self, volume: str, bucket: str, key: str, version: str, delete_markers: bool
    ) -> KeyRecord:
        om = self.om
        if version:
            return om.versions.find(volume, bucket, key, version)
        found = self.find(volume, bucket, key)
        if found is not None:
            return found
        marker = om.versions.latest_marker(volume, bucket, key) if delete_markers else None
        return marker if marker is not None else self.record(volume, bucket, key)

    def list(
        self, volume: str, bucket: str, prefix: str = "", start_key: str = "", max_keys: int = 0
    ) -> list[KeyRecord]:
        om = self.om
        om.bucket_info(volume, bucket)
        start = key_key(volume, bucket, start_key) if start_key else None
        entries = om.store.scan(KEY_TABLE, key_key(volume, bucket, prefix), start)
        return [om_records.decode_key(v) for _, v in islice(entries, max_keys or DEFAULT_LIST_LIMIT)]

    def rename(self, volume: str, bucket: str, key: str, to_key: str) -> None:
        """Refused in a bucket that is or was S3-versioned: the key's older versions would stay under the
        old name and its current one would not be the newest under the new (om/versions.py)."""
        om = self.om
        check_key_name(key, False)
        check_key_name(to_key, om.settings.check_key_characters)
        with om.locks.key(key_key(volume, bucket, key), key_key(volume, bucket, to_key)):
            record = self.record(volume, bucket, key)
            if om.bucket_info(volume, bucket).versioning is not BucketVersioning.UNVERSIONED:
                raise OMException(
                    OMResultCode.INVALID_REQUEST,
                    f"key {volume}/{bucket}/{key}: a rename in an S3-versioned bucket is not supported",
                )
            if to_key == key:
                return
            if om.store.get(KEY_TABLE, key_key(volume, bucket, to_key)) is not None:
                raise OMException(OMResultCode.KEY_ALREADY_EXISTS, f"key {volume}/{bucket}/{to_key}")
            renamed = replace(
                record, key=to_key, modification_ms=om.now(),
                encryption=om.data_keys.rewrapped(record, to_key),
            )  # fmt: skip
            om.commit(
                [
                    (KEY_TABLE, key_key(volume, bucket, key), None),
                    (
                        KEY_TABLE,
                        key_key(volume, bucket, to_key),
                        om_records.encode_key(renamed),
                    ),
                ]
            )
        log.debug("renamed key %s/%s/%s to %s", volume, bucket, key, to_key)

    def set_tags(self, volume: str, bucket: str, key: str, tags: Mapping[str, str]) -> KeyRecord:
        """Replaces the key's tag set (S3's PutObjectTagging; empty: DeleteObjectTagging). The key is not
        modified otherwise: S3 keeps an object's Last-Modified through tagging."""
        om = self.om
        check_key_name(key, False)
        check_tags(tags)
        with om.locks.key(key_key(volume, bucket, key)):
            record = replace(self.record(volume, bucket, key), tags=pairs(tags))
            om.commit(
                [
                    (
                        KEY_TABLE,
                        key_key(volume, bucket, key),
                        om_records.encode_key(record),
                    )
                ]
            )
        return record

    def delete(
        self, volume: str, bucket: str, key: str, condition: KeyCondition | None = None, version: str = "",
        creator: Ownership | None = None, bypass: bool = False,
    ) -> DeleteOutcome:  # fmt: skip
        """`condition`: the key is deleted only if it meets it (S3's DeleteObject If-Match). `version`: that
        S3 version is removed for good (om/versions.py), unless S3 Object Lock holds it (om/object_lock.py;
        `bypass`: its GOVERNANCE retention gives way, the caller being allowed to). In a versioned bucket a
        delete without one adds a delete marker, whether or not the key exists (Amazon's "Deleting object
        versions"), owned by its `creator` (the caller, with ozone.acl.enabled) as Amazon's marker is its
        deleter's."""
        om = self.om
        check_key_name(key, False)
        with om.locks.key(key_key(volume, bucket, key)):
            if version:
                if condition is not None:  # Amazon evaluates one on the current version alone (R32's F5)
                    raise OMException(
                        OMResultCode.INVALID_REQUEST,
                        f"key {volume}/{bucket}/{key}: a conditional delete of a version is not supported",
                    )
                return om.versions.delete(volume, bucket, key, version, bypass)
            parent = om.bucket_info(volume, bucket)
            if parent.versioning is not BucketVersioning.UNVERSIONED:
                return self._add_delete_marker(volume, bucket, key, condition, creator)
            record = self.record(volume, bucket, key)
            conditions.check(condition, record, key_key(volume, bucket, key))
            ops: list[Op] = [(KEY_TABLE, key_key(volume, bucket, key), None)]
            self.orphan(record, ops)
            with om.locks.usage:
                self.account(om.bucket_info(volume, bucket), -record.replicated_bytes, -1, ops)
                om.commit(ops)
        log.debug("deleted key %s/%s/%s (%d block(s) to delete)", volume, bucket, key, len(record.blocks))
        return DeleteOutcome("", False)

    def _add_delete_marker(
        self, volume: str, bucket: str, key: str, condition: KeyCondition | None, creator: Ownership | None
    ) -> DeleteOutcome:
        """delete in a versioned bucket: the current version is kept (or, a `null` one while
        Suspended, removed) and a delete marker becomes the latest version. Call with the key's lock."""
        om = self.om
        current = self.find(volume, bucket, key)
        conditions.check(condition, current, key_key(volume, bucket, key))
        ops: list[Op] = []
        with om.locks.usage:
            parent = om.bucket_info(volume, bucket)
            plan = write_plan(parent.versioning, current is not None and current.versioned)
            (seq,) = om.new_ids(1)
            now = om.now()
            marker = KeyRecord(
                volume, bucket, key, 0, now, now, parent.replication, version_seq=seq,
                versioned=plan.versioned, delete_marker=True, owner=creator.owner if creator else "",
                acls=inherit_defaults(creator.acls, parent.acls) if creator else (),
            )  # fmt: skip
            released = 0
            if current is not None:
                ops.append((KEY_TABLE, key_key(volume, bucket, key), None))
                if plan.keep_current:
                    versions.keep(current, ops)
                else:
                    self.orphan(current, ops)
                    released += current.replicated_bytes
            namespace = 0 if current is not None else 1  # the marker counts, the current key no more
            if plan.drops_null:
                dropped = versions.drop_null(self.om, volume, bucket, key, ops)
                released += dropped.replicated_bytes if dropped is not None else 0
                namespace -= versions.namespace_of(dropped)
            if namespace > 0:  # a row more: within the namespace quota, as a new key (R32's F7b)
                quota.check_keys(parent)
            versions.keep(marker, ops)
            self.account(parent, -released, namespace, ops)
            om.commit(ops)
        return DeleteOutcome(marker.version_id, True)

    # ------------------------------------------------------------------ orphans and usage
    def orphan(self, record: KeyRecord, ops: list[Op]) -> None:
        """The record's blocks go to deletedTable (a key without blocks leaves nothing to delete), without
        what KeyDeletingService never reads (metadata, tags, ACLs, part lists, encryption): a completion
        replacing a 10,000-part key wrote its whole record there, and its Raft entry outgrew the append
        limit (R31's F6)."""
        if not record.blocks:
            return
        (seq,) = self.om.new_ids(1)
        entry = key_key(record.volume, record.bucket, record.key) + f"/{seq}"
        blocks_only = replace(
            record, metadata=(), tags=(), acls=(), parts=(), part_checksums=(), encryption=None
        )
        ops.append((DELETED_TABLE, entry, om_records.encode_key(blocks_only)))

    def account(
        self,
        bucket: BucketRecord,
        used_delta: int,
        namespace_delta: int,
        ops: list[Op],
        volume: VolumeRecord | None = None,
    ) -> None:
        """Usage of the bucket (bytes and keys) and its volume (bytes), in the same batch; `volume`: the
        bucket's volume when the caller read it already (under the same locks)."""
        bucket = replace(
            bucket,
            used_bytes=max(0, bucket.used_bytes + used_delta),
            used_namespace=max(0, bucket.used_namespace + namespace_delta),
        )
        ops.append(
            (
                BUCKET_TABLE,
                bucket_key(bucket.volume, bucket.bucket),
                om_records.encode_bucket(bucket),
            )
        )
        volume = volume or self.om.volume_info(bucket.volume)
        volume = replace(volume, used_bytes=max(0, volume.used_bytes + used_delta))
        ops.append((VOLUME_TABLE, volume_key(volume.volume), om_records.encode_volume(volume)))
