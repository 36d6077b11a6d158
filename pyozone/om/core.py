"""OzoneManager: the namespace core. Synchronous, no RPC: the daemon calls it from a thread pool (and
commitKey, which never waits for SCM, from its event loop).

A mutation holds its locks (locks.py: key requests their keys', everything else the namespace exclusively)
from its first read to the transaction that records it, so two requests never interleave their
read-check-write. The transaction enters om.db's double buffer: the next request sees it at once, and the
daemon answers the client once it is durable. Calls to SCM (block allocation, container locations) run
outside the locks: a slow SCM must not stall the namespace; what they return is checked again under them.
"""

from __future__ import annotations

import getpass
import logging
import math
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from pyozone.hdds.block import ExcludeList
from pyozone.hdds.clock import Clock, SystemClock
from pyozone.hdds.ids import BlockID, ReplicationConfig
from pyozone.hdds.om_records import BucketRecord, KeyBlock, KeyRecord, VolumeRecord, pairs, replicated_size
from pyozone.hdds.om_views import KeyCondition
from pyozone.hdds.s3_object_lock import ObjectLockConfiguration
from pyozone.hdds.s3_versions import BucketVersioning, DeleteOutcome, write_plan
from pyozone.hdds.security.acl import Acls, Ownership, inherit_defaults
from pyozone.hdds.security.sse import (
    KeyEncryption,
    SseAlgorithm,
    SseRequest,
    new_data_key,
    new_iv,
    valid_key_md5,
)
from pyozone.om import conditions, object_lock, quota, versions
from pyozone.om.block_batcher import BlockBatcher
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.key_answers import LocatedKey, OpenKeyPlan, OpenKeySession, ReadLocation
from pyozone.om.key_metadata import check_metadata, check_tags
from pyozone.om.locations import LocationCache, read_pipeline
from pyozone.om.locks import OMLocks
from pyozone.om.master_keys import KEYSTORE_KEY, MasterKeyError, MasterKeyStore
from pyozone.om.metadata import (
    BUCKET_TABLE,
    DELETED_TABLE,
    KEY_TABLE,
    META_TABLE,
    MULTIPART_INFO_TABLE,
    OPEN_KEY_TABLE,
    S3_BUCKET_CORS_TABLE,
    S3_BUCKET_ENCRYPTION_TABLE,
    S3_BUCKET_LIFECYCLE_TABLE,
    S3_BUCKET_OWNERSHIP_CONTROLS_TABLE,
    S3_BUCKET_POLICY_TABLE,
    S3_BUCKET_PUBLIC_ACCESS_BLOCK_TABLE,
    VOLUME_TABLE,
    OMMetadataStore,
    Op,
    bucket_key,
    key_key,
    open_key_key,
    volume_key,
)
from pyozone.om.names import check_bucket_name, check_key_name, check_volume_name
from pyozone.om.replication import block_capacity, replica_bytes
from pyozone.om.s3secret import S3SecretManager
from pyozone.om.scm import ScmGateway, scm_call
from pyozone.om.settings import DEFAULT_LIST_LIMIT, PREALLOCATE_MAX_BLOCKS, OMSettings
from pyozone.protocol import om_records
from pyozone.protocol.block import BlockLocation

log = logging.getLogger(__name__)

OBJECT_ID = "objectID"
"""meta: the next object id. Object ids, open-key client ids and deletedTable sequence numbers come
from this one counter. A transaction carries the counter's value when it enters the double buffer, if it
moved since the last one did, so om.db's value is past every id any durable transaction uses: none
repeats across restarts."""


class OzoneManager:
    def __init__(
        self,
        store: OMMetadataStore,
        scm: ScmGateway,
        settings: OMSettings | None = None,
        clock: Clock | None = None,
        default_owner: str | None = None,
    ) -> None:
        self.store = store
        self.scm = scm
        self.settings = settings or OMSettings()
        self.clock = clock or SystemClock()
        self.default_owner = default_owner or _user()
        self.locks = OMLocks()
        self.lock = self.locks.namespace
        """Exclusive: for everything but key requests (`with om.lock:`)."""
        self.s3_secrets = S3SecretManager(store, self.lock)
        self.master_keys: MasterKeyStore | None = None
        """SSE-S3's master keys (the daemon loads them; None: SSE-S3 is refused)."""
        self.versions = versions.ObjectVersions(self)
        raw = store.get(META_TABLE, OBJECT_ID)
        self._next_id = self._written_id = int(raw.decode()) if raw else 1
        self._id_lock = threading.Lock()
        self.blocks = BlockBatcher(scm)
        self.locations = LocationCache(
            scm.container_location,
            self.clock,
            self.settings.location_cache_size,
            self.settings.location_cache_ttl_ms,
        )

    # ------------------------------------------------------------------ ids
    def new_ids(self, n: int) -> list[int]:
        """n fresh ids, for a transaction `commit` records later."""
        with self._id_lock:
            first = self._next_id
            self._next_id += n
        return list(range(first, first + n))

    def reload_ids(self) -> None:
        """The id counter om.db holds: an OM HA leader takes over the last leader's (replicated as its
        transactions' meta op)."""
        raw = self.store.get(META_TABLE, OBJECT_ID)
        with self._id_lock:
            self._next_id = self._written_id = int(raw.decode()) if raw else 1

    def commit(self, ops: list[Op]) -> None:
        """Records `ops` as one transaction (with the id counter, if it moved)."""
        with self._id_lock:
            if self._next_id != self._written_id:
                ops.append((META_TABLE, OBJECT_ID, str(self._next_id).encode()))
                self._written_id = self._next_id
            self.store.write(ops)

    def _now(self) -> int:
        return self.clock.wall_ms()

    # ------------------------------------------------------------------ reads
    def _volume(self, volume: str) -> VolumeRecord:
        data = self.store.get(VOLUME_TABLE, volume_key(volume))
        if data is None:
            raise OMException(OMResultCode.VOLUME_NOT_FOUND, f"volume {volume}")
        return om_records.decode_volume(data)

    def _bucket(self, volume: str, bucket: str) -> BucketRecord:
        data = self.store.get(BUCKET_TABLE, bucket_key(volume, bucket))
        if data is None:
            self._volume(volume)
            raise OMException(OMResultCode.BUCKET_NOT_FOUND, f"bucket {volume}/{bucket}")
        return om_records.decode_bucket(data)

    def key_record(self, volume: str, bucket: str, key: str) -> KeyRecord:
        """The committed key; KEY_NOT_FOUND (or its bucket's or volume's) when there is none."""
        data = self.store.get(KEY_TABLE, key_key(volume, bucket, key))
        if data is None:
            self._bucket(volume, bucket)
            raise OMException(OMResultCode.KEY_NOT_FOUND, f"key {volume}/{bucket}/{key}")
        return om_records.decode_key(data)

    def find_key(self, volume: str, bucket: str, key: str) -> KeyRecord | None:
        """The committed key, or None (its bucket is not checked)."""
        data = self.store.get(KEY_TABLE, key_key(volume, bucket, key))
        return om_records.decode_key(data) if data is not None else None

    def open_key_record(self, volume: str, bucket: str, key: str, client_id: int) -> KeyRecord:
        data = self.store.get(OPEN_KEY_TABLE, open_key_key(volume, bucket, key, client_id))
        if data is None:
            self._bucket(volume, bucket)
            raise OMException(
                OMResultCode.KEY_NOT_FOUND, f"no open key {volume}/{bucket}/{key} with clientID {client_id}"
            )
        return om_records.decode_key(data)

    def committed_session(self, volume: str, bucket: str, key: str, client_id: int) -> KeyRecord | None:
        """The key open-key session `client_id` committed, while it is still the key of that name (its
        object id is the session's client id): a client retries commitKey while OM is unreachable, so a
        commit whose answer was lost comes again and is answered as the first one was (Ozone answers it
        from its Ratis retry cache)."""
        return self.committed_by(self.find_key(volume, bucket, key), client_id)

    @staticmethod
    def committed_by(found: KeyRecord | None, client_id: int) -> KeyRecord | None:
        """`found` (the key of that name) if open-key session `client_id` committed it."""
        return found if found is not None and found.object_id == client_id else None

    # ------------------------------------------------------------------ volumes
    def create_volume(
        self, volume: str, owner: str = "", quota_bytes: int = 0, quota_namespace: int = 0, acls: Acls = ()
    ) -> VolumeRecord:
        """`acls`: the new volume's entries (with ozone.acl.enabled, its owner's defaults)."""
        check_volume_name(volume)
        with self.lock:
            if self.store.get(VOLUME_TABLE, volume_key(volume)) is not None:
                raise OMException(OMResultCode.VOLUME_ALREADY_EXISTS, f"volume {volume}")
            now = self._now()
            owner = owner or self.default_owner
            record = VolumeRecord(volume, owner, owner, now, now, quota_bytes, 0, 0, quota_namespace, acls)
            self.commit([(VOLUME_TABLE, volume_key(volume), om_records.encode_volume(record))])
        log.info("created volume %s (owner %s)", volume, owner)
        return record

    def info_volume(self, volume: str) -> VolumeRecord:
        return self._volume(volume)

    def delete_volume(self, volume: str) -> None:
        with self.lock:
            self._volume(volume)
            if next(self.store.scan(BUCKET_TABLE, volume_key(volume) + "/"), None) is not None:
                raise OMException(OMResultCode.VOLUME_NOT_EMPTY, f"volume {volume} still has buckets")
            self.commit([(VOLUME_TABLE, volume_key(volume), None)])
        log.info("deleted volume %s", volume)

    def list_volumes(
        self,
        prefix: str = "",
        start_key: str = "",
        max_keys: int = 0,
        visible: Callable[[VolumeRecord], bool] | None = None,
    ) -> list[VolumeRecord]:
        """`visible`: which volumes the caller may see (om/access.py); None: all."""
        start = volume_key(start_key) if start_key else None
        records = (
            om_records.decode_volume(v) for _, v in self.store.scan(VOLUME_TABLE, volume_key(prefix), start)
        )
        shown = records if visible is None else filter(visible, records)
        return _first(shown, max_keys or DEFAULT_LIST_LIMIT)

    # ------------------------------------------------------------------ buckets
    def create_bucket(
        self,
        volume: str,
        bucket: str,
        replication: ReplicationConfig | None = None,
        creator: Ownership | None = None,
        lock: bool = False,
        documents: Sequence[tuple[str, bytes]] = (),
    ) -> BucketRecord:
        """The bucket's owner is its volume's; with ozone.acl.enabled the `creator` (the caller) owns it,
        with the creator's entries and the volume's DEFAULT ones (Ozone's OMBucketCreateRequest). `lock`:
        created versioning-Enabled with S3 Object Lock (om/object_lock.py). `documents`: S3 documents kept
        with it in the same step, (table, document as kept) (om/bucket_documents.py)."""
        check_bucket_name(bucket)
        if replication is not None:
            self.settings.allowed_configs.check(replication)
        with self.lock:
            parent = self._volume(volume)
            if self.store.get(BUCKET_TABLE, bucket_key(volume, bucket)) is not None:
                raise OMException(OMResultCode.BUCKET_ALREADY_EXISTS, f"bucket {volume}/{bucket}")
            quota.check_buckets(parent)
            now = self._now()
            record = BucketRecord(
                volume,
                bucket,
                creator.owner if creator else parent.owner,
                now,
                now,
                replication or self.settings.default_replication,
                acls=creator.entries(parent.acls) if creator else (),
                versioning=BucketVersioning.ENABLED if lock else BucketVersioning.UNVERSIONED,
                object_lock=ObjectLockConfiguration() if lock else None,
            )
            parent = replace(parent, used_namespace=parent.used_namespace + 1, modification_ms=now)
            self.commit(
                [
                    (
                        BUCKET_TABLE,
                        bucket_key(volume, bucket),
                        om_records.encode_bucket(record),
                    ),
                    (VOLUME_TABLE, volume_key(volume), om_records.encode_volume(parent)),
                    *((table, bucket_key(volume, bucket), kept) for table, kept in documents),
                ]
            )
        log.info("created bucket %s/%s (%s)", volume, bucket, record.replication)
        return record

    def info_bucket(self, volume: str, bucket: str) -> BucketRecord:
        return self._bucket(volume, bucket)

    def delete_bucket(self, volume: str, bucket: str) -> None:
        with self.lock:
            self._bucket(volume, bucket)
            if next(self.store.scan(KEY_TABLE, bucket_key(volume, bucket) + "/"), None) is not None:
                raise OMException(OMResultCode.BUCKET_NOT_EMPTY, f"bucket {volume}/{bucket} still has keys")
            if (
                next(self.store.scan(MULTIPART_INFO_TABLE, bucket_key(volume, bucket) + "/"), None)
                is not None
            ):
                # their parts' blocks would be lost to deletion
                raise OMException(
                    OMResultCode.BUCKET_NOT_EMPTY,
                    f"bucket {volume}/{bucket} still has multipart uploads in progress (abort them first)",
                )
            if versions.has_versions(self.store, volume, bucket):  # their blocks would be lost too
                raise OMException(
                    OMResultCode.BUCKET_NOT_EMPTY,
                    f"bucket {volume}/{bucket} still has object versions or delete markers",
                )
            parent = self._volume(volume)
            parent = replace(
                parent, used_namespace=max(0, parent.used_namespace - 1), modification_ms=self._now()
            )
            ops: list[Op] = [
                (BUCKET_TABLE, bucket_key(volume, bucket), None),
                (VOLUME_TABLE, volume_key(volume), om_records.encode_volume(parent)),
            ]
            # its S3 CORS, lifecycle, policy, PublicAccessBlock and ownership documents go with it; only if
            # it has one, so a bucket deletion stays applicable by an OM that predates their tables (R29's N6)
            for table in (
                S3_BUCKET_CORS_TABLE,
                S3_BUCKET_LIFECYCLE_TABLE,
                S3_BUCKET_POLICY_TABLE,
                S3_BUCKET_PUBLIC_ACCESS_BLOCK_TABLE,
                S3_BUCKET_ENCRYPTION_TABLE,
                S3_BUCKET_OWNERSHIP_CONTROLS_TABLE,
            ):
                if self.store.get(table, bucket_key(volume, bucket)) is not None:
                    ops.append((table, bucket_key(volume, bucket), None))
            self.commit(ops)
        log.info("deleted bucket %s/%s", volume, bucket)

    def list_buckets(
        self, volume: str, prefix: str = "", start_key: str = "", max_keys: int = 0, owner: str = ""
    ) -> list[BucketRecord]:
        """`owner`: only that user's buckets (S3's ListBuckets)."""
        self._volume(volume)
        start = bucket_key(volume, start_key) if start_key else None
        records = (
            om_records.decode_bucket(v)
            for _, v in self.store.scan(BUCKET_TABLE, bucket_key(volume, prefix), start)
        )
        shown = (r for r in records if not owner or r.owner == owner)
        return _first(shown, max_keys or DEFAULT_LIST_LIMIT)

    # ------------------------------------------------------------------ writing keys
    def open_key(
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
        A `condition` that fails now is refused before any block is allocated (commit_key decides)."""
        return self.open_planned(
            self.plan_open_key(
                volume, bucket, key, data_size, replication, excluded, metadata, tags, creator, condition, sse
            )
        )

    def plan_open_key(
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
        """open_key's checks and what it asks SCM for; record_open_key then records the blocks SCM gave
        (OM's event loop awaits SCM between the two, issue 29). `sse`: the key's data is encrypted
        (new_encryption)."""
        if replication is not None:
            self.settings.allowed_configs.check(replication)
        if condition is not None:  # a plain open reads no committed key
            conditions.check(condition, self.find_key(volume, bucket, key), key_key(volume, bucket, key))
        plan = self.plan_open_key_as(
            volume, bucket, key, data_size, replication, excluded, metadata, tags, creator
        )
        sse = sse or default_sse(plan.bucket_sse)
        if sse is None:
            return plan
        return replace(plan, encryption=self.new_encryption(sse, volume, bucket, key))

    def new_encryption(self, sse: SseRequest, volume: str, bucket: str, key: str) -> KeyEncryption:
        """A new key's encryption: SSE-S3's fresh data key wrapped under the newest master key version
        (INVALID_KMS_PROVIDER without a keystore; the writer gets it unwrapped from the answer's
        `unwrapped_key`, never from anything recorded); SSE-C's is the customer's (OM never sees it), of
        which OM records the MD5 alone."""
        if sse.algorithm is SseAlgorithm.SSE_C:
            if not valid_key_md5(sse.customer_key_md5):
                raise OMException(
                    OMResultCode.INVALID_REQUEST, "SSE-C needs the base64 MD5 of the customer key"
                )
            return KeyEncryption(SseAlgorithm.SSE_C, new_iv(), customer_key_md5=sse.customer_key_md5)
        if self.master_keys is None:
            raise OMException(
                OMResultCode.INVALID_KMS_PROVIDER, f"SSE-S3: no master keystore ({KEYSTORE_KEY})"
            )
        wrapped, version = self.master_keys.wrap(new_data_key(), f"/{volume}/{bucket}/{key}")
        return KeyEncryption(SseAlgorithm.SSE_S3, new_iv(), wrapped, version)

    def data_key(self, record: KeyRecord) -> bytes:
        """The SSE-S3 data key of a key (unwrapped), b"" for any other: only for a caller its ACLs allow to
        read or write it (the caller checks, as Ozone's KMS checks DECRYPT_EEK)."""
        if record.encryption is None:
            return b""
        return self.unwrapped_key(record.encryption, record.volume, record.bucket, record.key)

    def unwrapped_key(self, encryption: KeyEncryption, volume: str, bucket: str, key: str) -> bytes:
        """SSE-S3's data key of /volume/bucket/key unwrapped (INVALID_KMS_PROVIDER when no master key opens
        it for that object); b"" for SSE-C."""
        if encryption.algorithm is not SseAlgorithm.SSE_S3:
            return b""
        if self.master_keys is None:
            raise OMException(
                OMResultCode.INVALID_KMS_PROVIDER, f"SSE-S3: no master keystore ({KEYSTORE_KEY})"
            )
        try:
            return self.master_keys.unwrap(
                encryption.wrapped_key, encryption.master_key_version, f"/{volume}/{bucket}/{key}"
            )
        except MasterKeyError as e:
            raise OMException(OMResultCode.INVALID_KMS_PROVIDER, str(e)) from None

    def open_planned(self, plan: OpenKeyPlan) -> OpenKeySession:
        """The planned blocks from SCM (through the batcher, blocking), recorded."""
        with scm_call(plan.allocating):
            allocated = self.blocks.allocate_blocks(
                plan.block_size, plan.config, plan.count, plan.excluded, "om"
            )
        return self.record_open_key(plan, allocated)

    def plan_open_key_as(
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
        """plan_open_key with a replication OM already holds (a multipart upload's), not checked again:
        the allowed configs may have changed since it was recorded."""
        check_key_name(key, self.settings.check_key_characters)
        check_metadata(metadata or {})
        check_tags(tags or {})
        parent = self._bucket(volume, bucket)
        object_lock.check_write(parent, metadata, self._now())
        config = replication or parent.replication
        size = self.settings.block_size
        capacity = block_capacity(config, size)
        count = min(PREALLOCATE_MAX_BLOCKS, max(1, math.ceil(data_size / capacity)))
        if 0 < data_size < capacity:
            size, capacity = replica_bytes(config, data_size), data_size
        preallocated = min(data_size, count * capacity) if data_size else capacity
        new_key = bool(parent.quota_namespace) and self.find_key(volume, bucket, key) is None
        self.check_quota(parent, replicated_size(config, preallocated), new_key)
        return OpenKeyPlan(
            volume, bucket, key, data_size, config, size, count, capacity, excluded or ExcludeList(),
            metadata, tags, creator, parent.acls, parent.sse_default,
        )  # fmt: skip

    def record_open_key(self, plan: OpenKeyPlan, allocated: Sequence[BlockLocation]) -> OpenKeySession:
        """Records the open key of `plan` with the blocks SCM allocated to it."""
        volume, bucket, key, creator = plan.volume, plan.bucket, plan.key, plan.creator
        capacity = plan.capacity
        with self.lock.shared():
            ops: list[Op] = []
            (client_id,) = self.new_ids(1)
            object_id = client_id  # how a repeated commit knows the key it made (committed_session)
            now = self._now()
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
                self._bucket(volume, bucket)  # deleted while SCM allocated: the blocks are garbage
            except OMException:
                self.orphan(record, ops)
                self.commit(ops)
                raise
            ops.append(
                (
                    OPEN_KEY_TABLE,
                    open_key_key(volume, bucket, key, client_id),
                    om_records.encode_key(record),
                )
            )
            self.commit(ops)
        return OpenKeySession(record, client_id, tuple(allocated), capacity)

    def allocate_block(
        self, volume: str, bucket: str, key: str, client_id: int, excluded: ExcludeList | None = None
    ) -> BlockLocation:
        """One more block for an open key, of the key's replication, if a full one fits the quotas."""
        record = self.open_key_record(volume, bucket, key, client_id)
        capacity = block_capacity(record.replication, self.settings.block_size)
        self.check_quota(self._bucket(volume, bucket), replicated_size(record.replication, capacity), False)
        with scm_call(f"allocating a block for {volume}/{bucket}/{key}"):
            blocks = self.blocks.allocate_blocks(
                self.settings.block_size, record.replication, 1, excluded or ExcludeList(), "om"
            )
        if len(blocks) != 1:
            raise OMException(OMResultCode.KEY_ALLOCATION_ERROR, f"SCM answered {len(blocks)} blocks for 1")
        block = blocks[0]
        with self.locks.key(key_key(volume, bucket, key)):
            ops: list[Op] = []
            table_key = open_key_key(volume, bucket, key, client_id)
            data = self.store.get(OPEN_KEY_TABLE, table_key)
            if data is None:  # committed or cleaned up meanwhile
                self.orphan(replace(record, blocks=(KeyBlock(block.block_id),)), ops)
                self.commit(ops)
                raise OMException(
                    OMResultCode.KEY_NOT_FOUND,
                    f"no open key {volume}/{bucket}/{key} with clientID {client_id}",
                )
            current = om_records.decode_key(data)
            current = replace(current, blocks=(*current.blocks, KeyBlock(block.block_id, 0, capacity)))
            ops.append((OPEN_KEY_TABLE, table_key, om_records.encode_key(current)))
            self.commit(ops)
        return block

    def commit_key(
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
        name = key_key(volume, bucket, key)
        with self.locks.key(name):
            old = self.find_key(volume, bucket, key)  # read once: the repeat, the condition, the replacement
            repeated = self.committed_by(old, client_id)
            if repeated is not None:
                return repeated
            opened = self.open_key_record(volume, bucket, key, client_id)
            try:
                conditions.check(condition, old, name)
            except OMException as e:
                self.abandon(opened, client_id, f"commit of {name} refused: {e.message}")
                raise
            merged = dict(opened.metadata) | dict(metadata or {})
            check_metadata(merged)
            kept = self.written_blocks(opened, blocks, data_size)
            record = replace(
                opened, data_size=data_size, modification_ms=self._now(), blocks=kept, metadata=pairs(merged),
                charged_bytes=quota.charged_bytes(opened.replication, data_size, kept, stored),
            )  # fmt: skip
            ops: list[Op] = []
            with self.locks.usage:
                try:
                    record = self.replace_key(self._bucket(volume, bucket), record, old, ops)
                except OMException as e:
                    if e.code is OMResultCode.QUOTA_EXCEEDED:
                        why = f"commit of {key_key(volume, bucket, key)} refused: {e.message}"
                        self.abandon(opened, client_id, why)
                    raise
                self.orphan_unused(opened, kept, ops)
                ops.append((OPEN_KEY_TABLE, open_key_key(volume, bucket, key, client_id), None))
                self.commit(ops)
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
        self.commit(ops)
        log.info("%s; its %d block(s) go to deletion", why, len(opened.blocks))

    def replace_key(
        self, parent: BucketRecord, record: KeyRecord, old: KeyRecord | None, ops: list[Op], counted: int = 0
    ) -> KeyRecord:
        """Writes the committed key into `ops` and returns it as written: `old`, the key of that name
        (find_key, read under the key's lock), is replaced (its blocks go to deletedTable), and the bucket's
        and volume's usage follows. In a versioned bucket the key is a new version (om/versions.py) and
        `old` is kept as a noncurrent one unless the rules overwrite it (a `null` version while Suspended).
        `counted`: bytes the usage holds for it already (a multipart upload's parts). QUOTA_EXCEEDED, with
        nothing added to `ops`, when the quotas have no room for it. In a bucket with S3 Object Lock the
        version gets the retention and legal hold its metadata names, or the bucket's default retention
        (om/object_lock.py). Call with the key's lock and `locks.usage` held, `parent` read under them,
        and commit before releasing them."""
        record = object_lock.stamp(parent, record, self._now())
        if parent.versioning is not BucketVersioning.UNVERSIONED:
            return self._add_version(parent, record, old, ops, counted)
        used_delta = record.replicated_bytes - (old.replicated_bytes if old is not None else 0) - counted
        volume = self._volume(parent.volume)
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
        """replace_key in a versioned bucket: the key is a new version, numbered now (hdds/s3_versions.py)."""
        plan = write_plan(parent.versioning, old is not None and old.versioned)
        (seq,) = self.new_ids(1)
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
            dropped = versions.drop_null(self, record.volume, record.bucket, record.key, changes)
            released += dropped.replicated_bytes if dropped is not None else 0
            namespace -= versions.namespace_of(dropped)
        used_delta = record.replicated_bytes - released - counted
        volume = self._volume(parent.volume)
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
        quota.check_space(volume or self._volume(bucket.volume), bucket, requested)

    # ------------------------------------------------------------------ reading and changing keys
    def lookup_key(
        self, volume: str, bucket: str, key: str, client_host: str = "", refresh: bool = False,
        version: str = "", delete_markers: bool = False,
    ) -> LocatedKey:  # fmt: skip
        """`refresh` (forceUpdateContainerCache): the container locations come from SCM, not the cache.
        `version`: that S3 version ("": the current key); `delete_markers`: with no `version`, the latest
        version when it is a delete marker (else KEY_NOT_FOUND, as ever)."""
        check_key_name(key, False)
        record = self._lookup_record(volume, bucket, key, version, delete_markers)
        client_rack = self.settings.rack_of(client_host) if client_host else ""
        found: dict[int, ReadLocation] = {}
        locations = []
        for block in record.blocks:
            cid = block.block_id.container_id
            if cid not in found:
                with scm_call(f"locating container {cid}", OMResultCode.SCM_UNAVAILABLE):
                    location = self.locations.get(cid, refresh)
                state = location.state.name if location.state is not None else ""
                found[cid] = ReadLocation(read_pipeline(location, client_host, client_rack), state)
            locations.append(found[cid])
        return LocatedKey(record, tuple(locations))

    def _lookup_record(
        self, volume: str, bucket: str, key: str, version: str, delete_markers: bool
    ) -> KeyRecord:
        if version:
            return self.versions.find(volume, bucket, key, version)
        found = self.find_key(volume, bucket, key)
        if found is not None:
            return found
        marker = self.versions.latest_marker(volume, bucket, key) if delete_markers else None
        return marker if marker is not None else self.key_record(volume, bucket, key)

    def list_keys(
        self, volume: str, bucket: str, prefix: str = "", start_key: str = "", max_keys: int = 0
    ) -> list[KeyRecord]:
        self._bucket(volume, bucket)
        start = key_key(volume, bucket, start_key) if start_key else None
        entries = self.store.scan(KEY_TABLE, key_key(volume, bucket, prefix), start)
        return [om_records.decode_key(v) for _, v in _first(entries, max_keys or DEFAULT_LIST_LIMIT)]

    def rename_key(self, volume: str, bucket: str, key: str, to_key: str) -> None:
        """Refused in a bucket that is or was S3-versioned: the key's older versions would stay under the
        old name and its current one would not be the newest under the new (om/versions.py)."""
        check_key_name(key, False)
        check_key_name(to_key, self.settings.check_key_characters)
        with self.locks.key(key_key(volume, bucket, key), key_key(volume, bucket, to_key)):
            record = self.key_record(volume, bucket, key)
            if self._bucket(volume, bucket).versioning is not BucketVersioning.UNVERSIONED:
                raise OMException(
                    OMResultCode.INVALID_REQUEST,
                    f"key {volume}/{bucket}/{key}: a rename in an S3-versioned bucket is not supported",
                )
            if to_key == key:
                return
            if self.store.get(KEY_TABLE, key_key(volume, bucket, to_key)) is not None:
                raise OMException(OMResultCode.KEY_ALREADY_EXISTS, f"key {volume}/{bucket}/{to_key}")
            renamed = replace(
                record, key=to_key, modification_ms=self._now(),
                encryption=self._rewrapped(record, to_key),
            )  # fmt: skip
            self.commit(
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

    def _rewrapped(self, record: KeyRecord, to_key: str) -> KeyEncryption | None:
        """A renamed key's encryption: an SSE-S3 data key is bound to its object's name (master_keys.py),
        so it is wrapped again for the new one."""
        encryption = record.encryption
        if encryption is None or encryption.algorithm is not SseAlgorithm.SSE_S3:
            return encryption
        data_key = self.unwrapped_key(encryption, record.volume, record.bucket, record.key)
        assert self.master_keys is not None  # unwrapped_key refused it else
        wrapped, version = self.master_keys.wrap(data_key, f"/{record.volume}/{record.bucket}/{to_key}")
        return replace(encryption, wrapped_key=wrapped, master_key_version=version)

    def set_key_tags(self, volume: str, bucket: str, key: str, tags: Mapping[str, str]) -> KeyRecord:
        """Replaces the key's tag set (S3's PutObjectTagging; empty: DeleteObjectTagging). The key is not
        modified otherwise: S3 keeps an object's Last-Modified through tagging."""
        check_key_name(key, False)
        check_tags(tags)
        with self.locks.key(key_key(volume, bucket, key)):
            record = replace(self.key_record(volume, bucket, key), tags=pairs(tags))
            self.commit(
                [
                    (
                        KEY_TABLE,
                        key_key(volume, bucket, key),
                        om_records.encode_key(record),
                    )
                ]
            )
        return record

    def delete_key(
        self, volume: str, bucket: str, key: str, condition: KeyCondition | None = None, version: str = "",
        creator: Ownership | None = None, bypass: bool = False,
    ) -> DeleteOutcome:  # fmt: skip
        """`condition`: the key is deleted only if it meets it (S3's DeleteObject If-Match). `version`: that
        S3 version is removed for good (om/versions.py), unless S3 Object Lock holds it (om/object_lock.py;
        `bypass`: its GOVERNANCE retention gives way, the caller being allowed to). In a versioned bucket a
        delete without one adds a delete marker, whether or not the key exists (Amazon's "Deleting object
        versions"), owned by its `creator` (the caller, with ozone.acl.enabled) as Amazon's marker is its
        deleter's."""
        check_key_name(key, False)
        with self.locks.key(key_key(volume, bucket, key)):
            if version:
                if condition is not None:  # Amazon evaluates one on the current version alone (R32's F5)
                    raise OMException(
                        OMResultCode.INVALID_REQUEST,
                        f"key {volume}/{bucket}/{key}: a conditional delete of a version is not supported",
                    )
                return self.versions.delete(volume, bucket, key, version, bypass)
            parent = self._bucket(volume, bucket)
            if parent.versioning is not BucketVersioning.UNVERSIONED:
                return self._add_delete_marker(volume, bucket, key, condition, creator)
            record = self.key_record(volume, bucket, key)
            conditions.check(condition, record, key_key(volume, bucket, key))
            ops: list[Op] = [(KEY_TABLE, key_key(volume, bucket, key), None)]
            self.orphan(record, ops)
            with self.locks.usage:
                self.account(self._bucket(volume, bucket), -record.replicated_bytes, -1, ops)
                self.commit(ops)
        log.debug("deleted key %s/%s/%s (%d block(s) to delete)", volume, bucket, key, len(record.blocks))
        return DeleteOutcome("", False)

    def _add_delete_marker(
        self, volume: str, bucket: str, key: str, condition: KeyCondition | None, creator: Ownership | None
    ) -> DeleteOutcome:
        """delete_key in a versioned bucket: the current version is kept (or, a `null` one while
        Suspended, removed) and a delete marker becomes the latest version. Call with the key's lock."""
        current = self.find_key(volume, bucket, key)
        conditions.check(condition, current, key_key(volume, bucket, key))
        ops: list[Op] = []
        with self.locks.usage:
            parent = self._bucket(volume, bucket)
            plan = write_plan(parent.versioning, current is not None and current.versioned)
            (seq,) = self.new_ids(1)
            now = self._now()
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
                dropped = versions.drop_null(self, volume, bucket, key, ops)
                released += dropped.replicated_bytes if dropped is not None else 0
                namespace -= versions.namespace_of(dropped)
            if namespace > 0:  # a row more: within the namespace quota, as a new key (R32's F7b)
                quota.check_keys(parent)
            versions.keep(marker, ops)
            self.account(parent, -released, namespace, ops)
            self.commit(ops)
        return DeleteOutcome(marker.version_id, True)

    # ------------------------------------------------------------------ helpers
    def orphan(self, record: KeyRecord, ops: list[Op]) -> None:
        """The record's blocks go to deletedTable (a key without blocks leaves nothing to delete), without
        what KeyDeletingService never reads (metadata, tags, ACLs, part lists, encryption): a completion
        replacing a 10,000-part key wrote its whole record there, and its Raft entry outgrew the append
        limit (R31's F6)."""
        if not record.blocks:
            return
        (seq,) = self.new_ids(1)
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
        volume = volume or self._volume(bucket.volume)
        volume = replace(volume, used_bytes=max(0, volume.used_bytes + used_delta))
        ops.append((VOLUME_TABLE, volume_key(volume.volume), om_records.encode_volume(volume)))


def _first(entries, limit: int) -> list:
    out = []
    for entry in entries:
        if len(out) >= limit:
            break
        out.append(entry)
    return out


def _user() -> str:
    try:
        return getpass.getuser()
    except Exception:
        return "pyozone"


def default_sse(bucket_sse: bool) -> SseRequest | None:
    """SSE-S3 in a bucket with an S3 default encryption (BucketRecord.sse_default), else None."""
    return SseRequest(SseAlgorithm.SSE_S3) if bucket_sse else None
