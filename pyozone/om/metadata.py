"""om.db: the OM's tables, one RocksDB column family each, named as in Ozone's om.db.

  volumeTable   /vol                      VolumeInfo
  bucketTable   /vol/bucket               BucketInfo
  keyTable      /vol/bucket/key           KeyInfo (committed keys)
  openKeyTable  /vol/bucket/key/<clientID> KeyInfo (keys being written; locations = allocated blocks)
  deletedTable  /vol/bucket/key/<seq>     KeyInfo (blocks SCM must still delete; seq keeps entries unique)
  s3SecretTable <access id>               S3Secret (a user's S3 secret; the access id is the user name)
  multipartInfoTable /vol/bucket/key NUL uploadID  MultipartInfo (an upload in progress and its parts)
  s3BucketCorsTable /vol/bucket          a bucket's S3 CORS configuration (its document)
  s3BucketEncryptionTable /vol/bucket    a bucket's S3 default encryption (its document)
  s3BucketOwnershipControlsTable /vol/bucket  a bucket's S3 ownership controls (its document)
  objectVersionTable /vol/bucket/key NUL <2^64-1-seq, 16 hex>  KeyInfo (S3: a key's noncurrent versions
                                         and its delete markers, newest first; om/versions.py)
                     /vol/bucket/key NUL "null"  decimal text: the seq of the key's noncurrent null version
                                         (a pointer row, so it is found without a scan)
  meta          name                      the object-id counter (decimal text); #SSEKEYSTOREID, the SSE
                                         master keystore this om.db's keys were wrapped under

Ozone names a multipart upload /vol/bucket/key/uploadID; pyozone puts a NUL (which no key name holds)
before the upload id instead, so a scan lists uploads in S3's order: by key, then by upload id, which
grows with creation time.

Values are serialized OmClientProtocol messages. Keys are UTF-8, so RocksDB's byte order is the names'
code-point order and a listing is a range scan.

Writes go through the double buffer (double_buffer.py): a transaction is visible at once through the table
cache and reaches RocksDB in a synced batch with the transactions around it; a batch is atomic, so a crash
leaves all of a transaction or none. Reads see the cache over RocksDB; volumeTable and bucketTable are
held whole in the cache (FULL_TABLES), as in Ozone.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

from pyozone.hdds.s3_versions import order_suffix
from pyozone.hdds.security.x509 import CertRole
from pyozone.hdds.store.rocksdb import RocksDBBackend, StoreError
from pyozone.om.double_buffer import (
    MISSING,
    BufferFailedError,
    DoubleBuffer,
    FlushStats,
    OwnerDropped,
    encoded,
    merged,
)
from pyozone.ratis_server import db_checkpoint

VOLUME_TABLE = "volumeTable"
BUCKET_TABLE = "bucketTable"
KEY_TABLE = "keyTable"
OPEN_KEY_TABLE = "openKeyTable"
DELETED_TABLE = "deletedTable"
S3_SECRET_TABLE = "s3SecretTable"
MULTIPART_INFO_TABLE = "multipartInfoTable"
S3_BUCKET_CORS_TABLE = "s3BucketCorsTable"
"""A bucket's S3 CORS configuration by bucket_key (pyozone's: Ozone's gateway keeps none), apart from the
bucket's record, which every key commit rewrites and every listing answers."""
S3_BUCKET_LIFECYCLE_TABLE = "s3BucketLifecycleTable"
"""A bucket's S3 lifecycle configuration by bucket_key (pyozone's), apart from the bucket's record as the
CORS configuration is; the lifecycle service (om/lifecycle.py) reads every row of it each run."""
S3_BUCKET_POLICY_TABLE = "s3BucketPolicyTable"
"""A bucket's S3 bucket policy by bucket_key, as sent (pyozone's, as s3BucketCorsTable)."""
S3_BUCKET_PUBLIC_ACCESS_BLOCK_TABLE = "s3BucketPublicAccessBlockTable"
"""A bucket's S3 PublicAccessBlock by bucket_key, as GetPublicAccessBlock answers it (pyozone's)."""
S3_BUCKET_ENCRYPTION_TABLE = "s3BucketEncryptionTable"
"""A bucket's S3 default encryption by bucket_key, as GetBucketEncryption answers it (pyozone's); openKey
reads the bucket record's sse_default instead, set beside it."""
S3_BUCKET_OWNERSHIP_CONTROLS_TABLE = "s3BucketOwnershipControlsTable"
"""A bucket's S3 object ownership controls by bucket_key, as GetBucketOwnershipControls answers them
(pyozone's)."""
OBJECT_VERSION_TABLE = "objectVersionTable"
"""S3 versions (pyozone's; Ozone keeps none): every version of a key but the current one, which stays in
keyTable, and every delete marker; by version_key, so a key's versions follow its name newest first."""
META_TABLE = "meta"
TABLE_NAMES = (
    VOLUME_TABLE,
    BUCKET_TABLE,
    KEY_TABLE,
    OPEN_KEY_TABLE,
    DELETED_TABLE,
    S3_SECRET_TABLE,
    MULTIPART_INFO_TABLE,
    S3_BUCKET_CORS_TABLE,
    S3_BUCKET_LIFECYCLE_TABLE,
    S3_BUCKET_POLICY_TABLE,
    S3_BUCKET_PUBLIC_ACCESS_BLOCK_TABLE,
    S3_BUCKET_ENCRYPTION_TABLE,
    S3_BUCKET_OWNERSHIP_CONTROLS_TABLE,
    OBJECT_VERSION_TABLE,
    META_TABLE,
)
TRANSACTION_INFO = "#TRANSACTIONINFO"
"""meta's key of the last applied Raft entry, "term#index" (Ozone's TRANSACTION_INFO_KEY)."""
OM_CHECKPOINT = db_checkpoint.CheckpointSpec("om.db", META_TABLE, TRANSACTION_INFO, CertRole.OM)
"""om.db's checkpoints: sent by an OM leader, nothing beside om.db."""


def volume_key(volume: str) -> str:
    return f"/{volume}"


def bucket_key(volume: str, bucket: str) -> str:
    return f"/{volume}/{bucket}"


def key_key(volume: str, bucket: str, key: str) -> str:
    return f"/{volume}/{bucket}/{key}"


def version_key(volume: str, bucket: str, key: str, seq: int) -> str:
    """objectVersionTable's key of the key's version numbered `seq` (hdds/s3_versions.py's order)."""
    return key_key(volume, bucket, key) + order_suffix(seq)


def open_key_key(volume: str, bucket: str, key: str, client_id: int) -> str:
    return f"/{volume}/{bucket}/{key}/{client_id}"


FULL_TABLES = (VOLUME_TABLE, BUCKET_TABLE)
"""Held whole in the table cache (Ozone's FULL_CACHE tables): each key request reads its bucket and volume."""

T = TypeVar("T")
Op = tuple[str, str, bytes | None]
"""(table, key, value); None deletes."""
DEFAULT_MAX_UNFLUSHED = 10_000
"""ozone.om.unflushed.transaction.max.count's default."""


class OMStoreError(Exception):
    """om.db cannot be opened or used; the message names the path."""


class _LiveScan:
    """A RocksDB iterator a scan reads through, which the store can end (`end`): an open iterator keeps its
    om.db open (and RocksDB's LOCK held), so an install ends every one before it swaps om.db. A scan ended
    so raises OMStoreError at its next step; the caller lists again, on the new om.db."""

    __slots__ = ("__weakref__", "_iterator", "_lock", "_path")

    def __init__(self, iterator: Iterator[tuple[bytes, bytes]], path: Path) -> None:
        self._iterator: Iterator[tuple[bytes, bytes]] | None = iterator
        self._lock = threading.Lock()
        self._path = path

    def __iter__(self) -> _LiveScan:
        return self

    def __next__(self) -> tuple[bytes, bytes]:
        with self._lock:  # `end` waits for a step under way
            if self._iterator is None:
                raise OMStoreError(
                    f"{self._path}: replaced by the leader's checkpoint while this listing read it; "
                    "list again"
                )
            return next(self._iterator)

    def end(self) -> None:
        with self._lock:
            self._iterator = None


class OMMetadataStore:
    """om.db on the RocksDB backend SCM uses for scm.db, with text keys, written through a double buffer.
    `on_failure`: called (from the flusher) if a flush fails; the daemon exits then."""

    def __init__(
        self,
        path: Path,
        max_unflushed: int = DEFAULT_MAX_UNFLUSHED,
        on_failure: Callable[[BaseException], None] | None = None,
        sync: bool = True,
    ) -> None:
        """`sync`: each flush syncs RocksDB's WAL; OM HA flushes unsynced, as its Raft log is the WAL."""
        self.path = path
        self._on_failure = on_failure
        self._scans: weakref.WeakSet[_LiveScan] = weakref.WeakSet()
        self._scans_lock = threading.Lock()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            db_checkpoint.recover(path)
            self._backend = RocksDBBackend(path, tables=TABLE_NAMES, owner="an OM")
        except (StoreError, OSError) as e:
            raise OMStoreError(str(e)) from None
        # The flusher thread holds the store only weakly: a store dropped without close() (tests) is freed
        # with its RocksDB files, and its idle flusher ends.
        this = weakref.ref(self)

        def flush(ops: list[Op]) -> None:
            store = this()
            if store is None:
                raise OwnerDropped
            store._backend.write(encoded(ops), sync=sync)

        self._buffer = DoubleBuffer(
            TABLE_NAMES, flush, max_unflushed, on_failure, alive=lambda: this() is not None, full=FULL_TABLES
        )
        self._load_full_tables()

    def _load_full_tables(self) -> None:
        for table in FULL_TABLES:
            self._buffer.cache.load(table, self._stored(self._call(self._backend.iterate, table, b""), ""))

    @property
    def buffer(self) -> DoubleBuffer:
        """The double buffer (OM HA splits its write path at the Raft log: om/server/ha.py)."""
        return self._buffer

    def stored_value(self, table: str, key: str) -> bytes | None:
        """What RocksDB holds for `key`, the cache aside."""
        return self._call(self._backend.get, table, key.encode())

    def get(self, table: str, key: str) -> bytes | None:
        pending = self._buffer.cache.get(table, key)
        if pending is not MISSING:
            return pending  # type: ignore[return-value]
        return self._call(self._backend.get, table, key.encode())

    def scan(
        self, table: str, prefix: str = "", start_after: str | None = None
    ) -> Iterator[tuple[str, bytes]]:
        """Entries whose key starts with `prefix`, in key order, after `start_after` (exclusive)."""
        low = prefix
        if start_after is not None and start_after + "\x00" > low:
            low = start_after + "\x00"
        pending, stored = self._buffer.snapshot(
            lambda: (
                self._buffer.cache.pending(table, prefix, low),
                self._live(self._call(self._backend.iterate, table, low.encode())),
            )
        )
        yield from merged(pending, self._stored(stored, prefix))

    def _live(self, iterator: Iterator[tuple[bytes, bytes]]) -> _LiveScan:
        scan = _LiveScan(iterator, self.path)
        with self._scans_lock:
            self._scans.add(scan)
        return scan

    def _end_scans(self) -> None:
        """Ends every scan still open (an install, before om.db closes: see _LiveScan)."""
        with self._scans_lock:
            scans = list(self._scans)
        for scan in scans:
            scan.end()

    @staticmethod
    def _stored(stored: Iterator[tuple[bytes, bytes]], prefix: str) -> Iterator[tuple[str, bytes]]:
        wanted = prefix.encode()
        try:
            for key, value in stored:
                if not key.startswith(wanted):
                    return
                yield key.decode(), value
        except StoreError as e:
            raise OMStoreError(str(e)) from None

    def write(self, ops: Sequence[Op]) -> int:
        """One atomic transaction across tables, visible at once; its epoch, for `durable`."""
        if not ops:
            return 0
        try:
            return self._buffer.add(list(ops))
        except BufferFailedError as e:
            raise OMStoreError(f"{self.path}: {e}") from None

    @property
    def epoch(self) -> int:
        """The last transaction's epoch: a read now may have seen anything up to it."""
        return self._buffer.epoch

    @property
    def flushed_epoch(self) -> int:
        return self._buffer.flushed

    def flush_failure(self) -> BaseException | None:
        return self._buffer.failure

    def on_flush(self, listener: Callable[[int], None]) -> None:
        """`listener(upto)` after each flush (-1: a flush failed), from the flusher thread."""
        self._buffer.listen(listener)

    def sync(self) -> None:
        """Blocks until every write so far is in RocksDB."""
        try:
            self._buffer.wait()
        except BufferFailedError as e:
            raise OMStoreError(f"{self.path}: {e}") from None

    def sync_applied(self) -> None:
        """Blocks until every write applied so far is in RocksDB: all of them on a lone OM; on an HA leader
        the committed ones (`sync` would also wait for those still staged, which may never commit)."""
        try:
            self._buffer.wait_enqueued()
        except BufferFailedError as e:
            raise OMStoreError(f"{self.path}: {e}") from None

    def snapshot_point(self) -> bytes | None:
        """OM HA's snapshot (OzoneManagerStateMachine.takeSnapshot): every applied transaction flushed, and
        RocksDB's memtables written to table files (Ozone's flushDB), so om.db holds them without the
        unsynced write-ahead log; returns the #TRANSACTIONINFO it now holds durably. The point is read
        before the flush: a batch the flusher writes meanwhile is past it, so the log is never purged past
        what the table files hold (read after the flush, that batch sat in the unsynced log only)."""
        self.sync_applied()
        point = self.stored_value(META_TABLE, TRANSACTION_INFO)
        self._call(self._backend.flush)
        return point

    def pack_checkpoint(self) -> db_checkpoint.PackedCheckpoint:
        """A checkpoint of om.db with every applied transaction flushed, ready to send as a tar (the leader's
        /dbCheckpoint)."""
        self.sync_applied()
        try:
            return db_checkpoint.pack(OM_CHECKPOINT, self._backend, self.path)
        except StoreError as e:
            raise OMStoreError(str(e)) from None

    def install(self, checkpoint: Path) -> None:
        """Replaces om.db by the unpacked, checked `checkpoint` (db_checkpoint.swap_in: crash safe) and
        reloads the table cache from it. Nothing may be applied meanwhile (the Raft shell holds its applies
        during an install): everything applied so far is flushed first. If the new om.db does not open,
        the old one is back and OMStoreError is raised. A scan open meanwhile (a listing, a metrics count)
        is ended first, and raises OMStoreError at its next step (_LiveScan)."""
        self.sync_applied()

        def swap() -> None:
            if self._buffer.busy:
                raise OMStoreError(f"{self.path}: transactions arrived during the install")
            self._end_scans()  # no new one starts: a scan begins under the buffer's lock, held here
            self._backend.close()
            try:
                db_checkpoint.swap_in(self.path, checkpoint)
                backend = RocksDBBackend(self.path, tables=TABLE_NAMES, owner="an OM")
            except (StoreError, OSError) as e:
                self._reopen_after(e)
                raise OMStoreError(f"{self.path}: the checkpoint could not be installed: {e}") from None
            self._backend = backend
            self._buffer.cache.clear()
            self._load_full_tables()
            db_checkpoint.drop_aside(self.path)

        self._buffer.locked(swap)

    def _reopen_after(self, error: BaseException) -> None:
        """A failed swap: the old om.db goes back and opens again, or OM cannot go on (`on_failure`)."""
        try:
            if db_checkpoint.aside(self.path).exists():
                db_checkpoint.restore_aside(self.path)
            self._backend = RocksDBBackend(self.path, tables=TABLE_NAMES, owner="an OM")
        except (StoreError, OSError) as again:
            failure = OMStoreError(
                f"{self.path}: neither the checkpoint nor the previous om.db opens: {again}"
            )
            if self._on_failure is not None:
                self._on_failure(failure)
            raise failure from error

    def flush_stats(self) -> FlushStats:
        return self._buffer.stats()

    def close(self) -> None:
        """Flushes what is queued, then closes RocksDB."""
        self._buffer.close()
        self._backend.close()

    @staticmethod
    def _call(fn: Callable[..., T], *args: object) -> T:
        try:
            return fn(*args)
        except StoreError as e:
            raise OMStoreError(str(e)) from None
