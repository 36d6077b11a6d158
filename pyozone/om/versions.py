"""S3 object versions in om.db (pyozone's; Ozone's OM keeps one version of a key and its gateway has no
S3 versioning). The design is in docs/om.md, "S3 versions"; the rules in hdds/s3_versions.py.

A key's current version stays in keyTable, where every client (the native client, ofs://, the gateway's
listings) reads it; objectVersionTable holds its older versions and its delete markers, newest first after
the key's name. keyTable's entry, when there is one, is always newer than every entry of the key in
objectVersionTable: whenever the current version goes, the newest remaining version takes its place in
keyTable unless it is a delete marker (`promote`). A removed version's blocks go to deletedTable as a
deleted key's do, so KeyDeletingService frees them; the blocks of a version kept are never sent there.

The bucket's usage counts the bytes of every version it keeps, and its keys (usedNamespace) the keys with
a current version in keyTable and the delete markers (Ozone's namespace quota bounds om.db's rows; a
marker is one that holds no byte, R32's F7b).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

from pyozone.hdds.om_records import KeyRecord
from pyozone.hdds.s3_object_lock import VERSIONING_LOCKED
from pyozone.hdds.s3_versions import (
    BucketVersioning,
    DeleteOutcome,
    VersionIdError,
    order_suffix,
    parse_version_id,
)
from pyozone.om import object_lock
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.metadata import (
    BUCKET_TABLE,
    KEY_TABLE,
    OBJECT_VERSION_TABLE,
    OMMetadataStore,
    Op,
    bucket_key,
    key_key,
    version_key,
)
from pyozone.om.settings import DEFAULT_LIST_LIMIT
from pyozone.protocol import om_records

if TYPE_CHECKING:
    from pyozone.om.core import OzoneManager

_PAST_VERSIONS = "\x00o"
"""After every order_suffix and the NULL_POINTER of a key: a listing resumes past the key."""


def seq_of(text: str) -> int | None:
    """The sequence number a version id names (None: `null`); INVALID_REQUEST if no version can have it."""
    try:
        return parse_version_id(text)
    except VersionIdError as e:
        raise OMException(OMResultCode.INVALID_REQUEST, str(e)) from None


def is_version(record: KeyRecord, seq: int | None) -> bool:
    """Whether `record` is the version `seq` names (None: the null version)."""
    return not record.versioned if seq is None else record.versioned and record.version_seq == seq


def table_key(record: KeyRecord) -> str:
    return version_key(record.volume, record.bucket, record.key, record.version_seq)


NULL_POINTER = "\x00null"
"""After a key's name in objectVersionTable: the row naming the sequence number of the key's noncurrent
`null` version, so finding it (a Suspended write or delete, under OM's usage lock; versionId=null) reads
one row instead of scanning every version of the key (R32's F2). It sorts after the key's versions and is
not one of them (older_versions and the listing skip it)."""


def null_pointer(volume: str, bucket: str, key: str) -> str:
    return key_key(volume, bucket, key) + NULL_POINTER


def older_versions(store: OMMetadataStore, volume: str, bucket: str, key: str) -> Iterator[KeyRecord]:
    """The key's versions in objectVersionTable, newest first. Only rows whose name is the key's and one
    order_suffix: a key `k` + NUL + ... is another key's range inside k's (R32's F1b; OM refuses such names
    now, but a row written before must not pass for one of k's versions)."""
    prefix = key_key(volume, bucket, key)
    size = len(prefix) + len(order_suffix(0))
    for name, value in store.scan(OBJECT_VERSION_TABLE, prefix + "\x00"):
        if len(name) == size:
            yield om_records.decode_key(value)


def find_older(
    store: OMMetadataStore, volume: str, bucket: str, key: str, seq: int | None
) -> KeyRecord | None:
    """The version `seq` names in objectVersionTable (None: the null one), if it is there."""
    if seq is None:
        pointer = store.get(OBJECT_VERSION_TABLE, null_pointer(volume, bucket, key))
        if pointer is None:
            return None
        data = store.get(OBJECT_VERSION_TABLE, version_key(volume, bucket, key, int(pointer.decode())))
        return om_records.decode_key(data) if data is not None else None
    data = store.get(OBJECT_VERSION_TABLE, version_key(volume, bucket, key, seq))
    found = om_records.decode_key(data) if data is not None else None
    return found if found is not None and found.versioned else None


def drop_null(om: OzoneManager, volume: str, bucket: str, key: str, ops: list[Op]) -> KeyRecord | None:
    """Removes the key's null version from objectVersionTable (a Suspended bucket's write or delete
    overwrites it), its blocks to deletion; the version removed, if there was one."""
    found = find_older(om.store, volume, bucket, key, None)
    if found is None:
        return None
    forget(found, ops)
    om.keys.orphan(found, ops)
    return found


def namespace_of(record: KeyRecord | None) -> int:
    """What a version held in objectVersionTable counts in its bucket's usedNamespace: a delete marker 1
    (a row no byte quota bounds, R32's F7b), an older version 0 (its bytes count in usedBytes)."""
    return 1 if record is not None and record.delete_marker else 0


def keep(record: KeyRecord, ops: list[Op]) -> None:
    """`record` becomes a noncurrent version (its blocks stay where they are); a `null` one is pointed
    at. Call after `forget` of the key's previous null version in the same `ops`."""
    ops.append((OBJECT_VERSION_TABLE, table_key(record), om_records.encode_key(record)))
    if not record.versioned:
        pointer = null_pointer(record.volume, record.bucket, record.key)
        ops.append((OBJECT_VERSION_TABLE, pointer, str(record.version_seq).encode()))


def forget(record: KeyRecord, ops: list[Op]) -> None:
    """`record` leaves objectVersionTable (removed for good or made current again), its pointer too."""
    ops.append((OBJECT_VERSION_TABLE, table_key(record), None))
    if not record.versioned:
        ops.append((OBJECT_VERSION_TABLE, null_pointer(record.volume, record.bucket, record.key), None))


def has_versions(store: OMMetadataStore, volume: str, bucket: str) -> bool:
    return next(store.scan(OBJECT_VERSION_TABLE, bucket_key(volume, bucket) + "/"), None) is not None


class ObjectVersions:
    """The version operations beyond a write and a plain delete (which KeyManager.write and
    delete_key carry out): the bucket's state, a version's lookup and removal, and the listing."""

    def __init__(self, om: OzoneManager) -> None:
        self.om = om

    def set_state(self, volume: str, bucket: str, state: BucketVersioning) -> None:
        """PutBucketVersioning: Enabled or Suspended; a bucket never goes back to unversioned."""
        if state is BucketVersioning.UNVERSIONED:
            raise OMException(OMResultCode.INVALID_REQUEST, "versioning is Enabled or Suspended")
        om = self.om
        with om.lock:  # exclusive: no key commit rewrites the bucket's record meanwhile
            record = om.bucket_info(volume, bucket)
            if record.object_lock is not None and state is not BucketVersioning.ENABLED:
                raise OMException(OMResultCode.INVALID_REQUEST, f"InvalidBucketState: {VERSIONING_LOCKED}")
            if record.versioning is not state:
                record = replace(record, versioning=state, modification_ms=om.clock.wall_ms())
                om.commit([(BUCKET_TABLE, bucket_key(volume, bucket), om_records.encode_bucket(record))])

    def find(self, volume: str, bucket: str, key: str, version: str) -> KeyRecord:
        """The version `version` names, a delete marker included; NO_SUCH_VERSION if the key has none."""
        seq = seq_of(version)
        current = self.om.keys.find(volume, bucket, key)
        if current is not None and is_version(current, seq):
            return current
        found = find_older(self.om.store, volume, bucket, key, seq)
        if found is None:
            self.om.bucket_info(volume, bucket)
            raise OMException(OMResultCode.NO_SUCH_VERSION, f"key {volume}/{bucket}/{key} version {version}")
        return found

    def governing(self, volume: str, bucket: str, key: str, version: str) -> KeyRecord | None:
        """The record whose owner and ACLs decide a request on the key (om/access.py): the version
        `version` names, else ("" or none such) the key's newest version, its current one or, when a delete
        marker is latest, that marker; None when the key has no version at all (R32's F1)."""
        om = self.om
        current = om.keys.find(volume, bucket, key)
        if version:
            seq = seq_of(version)
            if current is not None and is_version(current, seq):
                return current
            found = find_older(om.store, volume, bucket, key, seq)
            if found is not None:
                return found
        return current if current is not None else next(older_versions(om.store, volume, bucket, key), None)

    def latest_marker(self, volume: str, bucket: str, key: str) -> KeyRecord | None:
        """The key's latest version when it is a delete marker (there is no current key then)."""
        newest = next(older_versions(self.om.store, volume, bucket, key), None)
        return newest if newest is not None and newest.delete_marker else None

    def delete(self, volume: str, bucket: str, key: str, version: str, bypass: bool = False) -> DeleteOutcome:
        """Removes version `version` for good (DeleteObject with versionId), a delete marker too; one the key
        does not have is no error, as Amazon answers. A version S3 Object Lock holds is PERMISSION_DENIED
        (om/object_lock.py; `bypass`: through GOVERNANCE retention). Call with the key's lock held."""
        om = self.om
        seq = seq_of(version)
        ops: list[Op] = []
        current = om.keys.find(volume, bucket, key)
        if current is not None and is_version(current, seq):
            object_lock.check_delete(current, om.clock.wall_ms(), bypass)
            removed, namespace = current, -1
            ops.append((KEY_TABLE, key_key(volume, bucket, key), None))
            if self._promote(volume, bucket, key, None, ops):
                namespace = 0
        else:
            found = find_older(om.store, volume, bucket, key, seq)
            if found is None:
                om.bucket_info(volume, bucket)
                return DeleteOutcome(version, False)
            object_lock.check_delete(found, om.clock.wall_ms(), bypass)
            removed, namespace = found, -namespace_of(found)
            forget(found, ops)
            if current is None and self._promote(volume, bucket, key, table_key(found), ops):
                namespace += 1  # only when the marker removed was the latest: the count is unchanged
        om.keys.orphan(removed, ops)
        with om.locks.usage:
            om.keys.account(om.bucket_info(volume, bucket), -removed.replicated_bytes, namespace, ops)
            om.commit(ops)
        return DeleteOutcome(removed.version_id, removed.delete_marker)

    def _promote(self, volume: str, bucket: str, key: str, removed: str | None, ops: list[Op]) -> bool:
        """The newest remaining version (`removed`: a table key going in the same transaction) becomes the
        current one in keyTable, unless it is a delete marker; whether one did."""
        for record in older_versions(self.om.store, volume, bucket, key):
            if table_key(record) == removed:
                continue
            if record.delete_marker:
                return False
            forget(record, ops)
            ops.append((KEY_TABLE, key_key(volume, bucket, key), om_records.encode_key(record)))
            return True
        return False

    def list(
        self, volume: str, bucket: str, prefix: str = "", key_marker: str = "", version_marker: str = "",
        max_keys: int = 0,
    ) -> list[tuple[KeyRecord, bool]]:  # fmt: skip
        """ListObjectVersions' entries (each with whether it is its key's latest version): by key, newest
        first, after version `version_marker` of `key_marker` (none: after every version of it). A hex
        marker is a position, whether or not its version is still there; so is the one a page ending on a
        `null` version answers (the gateway's NextVersionIdMarker, R32's F3). A `null` marker is resolved
        to the key's null version now; when it has none the listing starts at the key's newest version,
        repeating what a page listed rather than skipping what it did not."""
        om = self.om
        om.bucket_info(volume, bucket)
        store = om.store
        after = None
        if key_marker:
            after = key_key(volume, bucket, key_marker) + _PAST_VERSIONS
            if version_marker:
                marked = self._marker_seq(volume, bucket, key_marker, version_marker)
                after = key_key(volume, bucket, key_marker) + (
                    "\x00" if marked is None else order_suffix(marked)
                )
        low = key_key(volume, bucket, key_marker) if key_marker else None  # its current one is newest
        keys = (
            om_records.decode_key(v) for _, v in store.scan(KEY_TABLE, key_key(volume, bucket, prefix), low)
        )
        current = ((key_key(volume, bucket, r.key) + order_suffix(r.version_seq), r) for r in keys)
        resumed = self.om.keys.find(volume, bucket, key_marker) if version_marker else None
        if resumed is not None and resumed.key.startswith(prefix):
            # a version removed since the last page may have made an older one current, past the marker
            place = key_key(volume, bucket, resumed.key) + order_suffix(resumed.version_seq)
            if after is not None and place > after:
                current = itertools.chain([(place, resumed)], current)
        older = (
            (name, om_records.decode_key(v))
            for name, v in store.scan(OBJECT_VERSION_TABLE, key_key(volume, bucket, prefix), after)
            if not name.endswith(NULL_POINTER)
        )
        out: list[tuple[KeyRecord, bool]] = []
        # the marker key's latest may follow the marker, if that one is gone (R32's F6)
        newest = self.governing(volume, bucket, key_marker, "") if version_marker else None
        previous = None
        limit = max_keys or DEFAULT_LIST_LIMIT
        for _, record in heapq.merge(current, older, key=lambda entry: entry[0]):
            if len(out) >= limit:
                break
            if record.key == previous:
                latest = False
            elif version_marker and record.key == key_marker:
                latest = newest is not None and newest.version_seq == record.version_seq
            else:
                latest = True
            out.append((record, latest))
            previous = record.key
        return out

    def _marker_seq(self, volume: str, bucket: str, key: str, version: str) -> int | None:
        """The sequence number of the listing's version marker; None: the key has no such version (the
        listing resumes after the key)."""
        seq = seq_of(version)
        if seq is not None:
            return seq
        current = self.om.keys.find(volume, bucket, key)
        if current is not None and not current.versioned:
            return current.version_seq
        found = find_older(self.om.store, volume, bucket, key, None)
        return found.version_seq if found is not None else None
