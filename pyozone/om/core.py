"""OzoneManager: the namespace core. Synchronous, no RPC: the daemon calls it from a thread pool (and
commitKey, which never waits for SCM, from its event loop).

This module holds what every request shares: om.db (`store`), the id counter and `commit`, the clock, the
locks, SCM's gateway and the lookups of volume and bucket records (Ozone's OmMetadataManager reads). Each
request lives with its idea, composed here as Ozone's OzoneManager composes its managers: `volumes`
(volumes.py, Ozone's VolumeManagerImpl and OMVolume*Request), `buckets` (buckets.py, BucketManagerImpl and
OMBucket*Request), `keys` (keys.py, KeyManagerImpl and OMKey*Request) and `data_keys` (data_keys.py, the
SSE data keys of keys).

A mutation holds its locks (locks.py: key requests their keys', everything else the namespace exclusively)
from its first read to the transaction that records it, so two requests never interleave their
read-check-write. The transaction enters om.db's double buffer: the next request sees it at once, and the
daemon answers the client once it is durable. Calls to SCM (block allocation, container locations) run
outside the locks: a slow SCM must not stall the namespace; what they return is checked again under them.
"""

from __future__ import annotations

import getpass
import threading

from pyozone.hdds.clock import Clock, SystemClock
from pyozone.hdds.om_records import BucketRecord, VolumeRecord
from pyozone.om import versions
from pyozone.om.block_batcher import BlockBatcher
from pyozone.om.buckets import BucketManager
from pyozone.om.data_keys import DataKeys
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.keys import KeyManager
from pyozone.om.locations import LocationCache
from pyozone.om.locks import OMLocks
from pyozone.om.master_keys import MasterKeyStore
from pyozone.om.metadata import (
    BUCKET_TABLE,
    META_TABLE,
    VOLUME_TABLE,
    OMMetadataStore,
    Op,
    bucket_key,
    volume_key,
)
from pyozone.om.s3secret import S3SecretManager
from pyozone.om.scm import ScmGateway
from pyozone.om.settings import OMSettings
from pyozone.om.volumes import VolumeManager
from pyozone.protocol import om_records

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
        self.volumes = VolumeManager(self)
        self.buckets = BucketManager(self)
        self.keys = KeyManager(self)
        self.data_keys = DataKeys(self)
        self.versions = versions.ObjectVersions(self)

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

    def now(self) -> int:
        """OM's wall clock, in ms: what records' creation and modification times read."""
        return self.clock.wall_ms()

    # ------------------------------------------------------------------ reads
    def volume_info(self, volume: str) -> VolumeRecord:
        """The volume's record; VOLUME_NOT_FOUND when there is none (Ozone's VolumeManager.getVolumeInfo)."""
        data = self.store.get(VOLUME_TABLE, volume_key(volume))
        if data is None:
            raise OMException(OMResultCode.VOLUME_NOT_FOUND, f"volume {volume}")
        return om_records.decode_volume(data)

    def bucket_info(self, volume: str, bucket: str) -> BucketRecord:
        """The bucket's record; BUCKET_NOT_FOUND (or its volume's) when there is none (Ozone's
        BucketManager.getBucketInfo)."""
        data = self.store.get(BUCKET_TABLE, bucket_key(volume, bucket))
        if data is None:
            self.volume_info(volume)
            raise OMException(OMResultCode.BUCKET_NOT_FOUND, f"bucket {volume}/{bucket}")
        return om_records.decode_bucket(data)


def _user() -> str:
    try:
        return getpass.getuser()
    except Exception:
        return "pyozone"
