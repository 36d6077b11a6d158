"""S3 Object Lock in OM (pyozone's; Ozone has none): OM enforces it, not the gateway, so `ozone sh key
delete`, ofs:// deletes and the lifecycle service meet it too. The rules are the kernel's
(hdds/s3_object_lock.py); OM applies them against its own clock (OzoneManager.clock).

- A bucket's Object Lock is a field of its record (BucketInfo.objectLockEnabled, defaultRetention), not a
  bucket document: every write (its default retention) and every delete by version id reads it under the
  locks it already holds, with the record it reads anyway; it is a few bytes and never goes away.
- A version's retention and legal hold are fields of its KeyInfo, so they move with the version between
  keyTable and objectVersionTable. A write asks for them in its metadata, under the names of the S3
  headers (LOCK_METADATA): OM checks them when the key is opened or the upload initiated
  (`check_write`), and moves them out of the metadata into the fields when the version is committed
  (`stamp`; a write naming none gets the bucket's default retention, until = creation + the period).
- A version under legal hold or retention in force is not removed by version id (PERMISSION_DENIED, S3's
  AccessDenied; KeyManager.delete, the lifecycle service through it); a delete without one adds a
  delete marker and an overwrite a version, as in any versioned bucket: the data stays. A bucket with
  Object Lock stays versioning-Enabled (om/versions.py), so no write or delete ever overwrites a version.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from pyozone.hdds.om_records import BucketRecord, KeyRecord, pairs
from pyozone.hdds.s3_object_lock import (
    LEGAL_HOLD_HEADER,
    MISSING_CONFIGURATION,
    MISSING_CONFIGURATION_ON_OBJECT,
    MODE_HEADER,
    UNTIL_HEADER,
    VERSIONING_REQUIRED,
    LockRequest,
    ObjectLockError,
    change_refusal,
    check_future,
    delete_refusal,
    lock_request,
    parse_configuration,
    parse_legal_hold,
    parse_retention,
)
from pyozone.hdds.s3_versions import BucketVersioning
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.metadata import (
    BUCKET_TABLE,
    KEY_TABLE,
    OBJECT_VERSION_TABLE,
    Op,
    bucket_key,
    key_key,
    version_key,
)
from pyozone.protocol import om_records

if TYPE_CHECKING:
    from pyozone.om.core import OzoneManager

LOCK_METADATA = (MODE_HEADER, UNTIL_HEADER, LEGAL_HOLD_HEADER)
"""The metadata entries a write names its retention and legal hold with (never kept as metadata)."""


def _refused(e: ObjectLockError) -> OMException:
    code = OMResultCode.PERMISSION_DENIED if e.code == "AccessDenied" else OMResultCode.INVALID_REQUEST
    return OMException(code, str(e))


def requested(metadata: Mapping[str, str]) -> LockRequest:
    """What a write's metadata asks for; INVALID_REQUEST (with S3's code) when it is malformed."""
    try:
        return lock_request(*(metadata.get(name) for name in LOCK_METADATA))
    except ObjectLockError as e:
        raise _refused(e) from None


def check_write(parent: BucketRecord, metadata: Mapping[str, str] | None, now_ms: int) -> None:
    """At openKey / initiateMultipartUpload: a write naming retention or a legal hold needs a bucket with
    Object Lock, and a date in the future."""
    wanted = requested(metadata or {})
    if not wanted.named:
        return
    if parent.object_lock is None:
        raise _refused(ObjectLockError("InvalidRequest", MISSING_CONFIGURATION))
    if wanted.retention is not None:
        try:
            check_future(wanted.retention, now_ms)
        except ObjectLockError as e:
            raise _refused(e) from None


def stamp(parent: BucketRecord, record: KeyRecord, now_ms: int) -> KeyRecord:
    """The version as committed: the retention and legal hold its metadata names moved into their fields,
    or the bucket's default retention."""
    if parent.object_lock is None and not any(name in LOCK_METADATA for name, _ in record.metadata):
        return record  # every commit in every other bucket: no dict made
    metadata = dict(record.metadata)
    wanted = requested(metadata)
    if wanted.named and parent.object_lock is None:
        raise _refused(ObjectLockError("InvalidRequest", MISSING_CONFIGURATION))
    if parent.object_lock is None:
        return record
    retention = wanted.retention
    if retention is None and parent.object_lock.default is not None:
        retention = parent.object_lock.default.retention(now_ms)
    for name in LOCK_METADATA:
        metadata.pop(name, None)
    return replace(record, metadata=pairs(metadata), retention=retention, legal_hold=wanted.legal_hold)


def check_delete(record: KeyRecord, now_ms: int, bypass: bool) -> None:
    """PERMISSION_DENIED (S3's AccessDenied) when the version may not be removed for good now."""
    why = delete_refusal(record.retention, record.legal_hold, now_ms, bypass)
    if why:
        raise OMException(
            OMResultCode.PERMISSION_DENIED,
            f"key {record.volume}/{record.bucket}/{record.key} version {record.version_id}: {why}",
        )


class ObjectLocks:
    """PutObjectLockConfiguration, PutObjectRetention and PutObjectLegalHold."""

    def __init__(self, om: OzoneManager) -> None:
        self.om = om

    def configure(self, volume: str, bucket: str, body: bytes) -> None:
        """Replaces the bucket's default retention; enables Object Lock on a versioning-Enabled bucket
        (Amazon now allows it), InvalidBucketState on any other."""
        try:
            config = parse_configuration(body)
        except ObjectLockError as e:
            raise _refused(e) from None
        om = self.om
        with om.lock:
            record = om.bucket_info(volume, bucket)
            if record.object_lock is None and record.versioning is not BucketVersioning.ENABLED:
                raise _refused(ObjectLockError("InvalidBucketState", VERSIONING_REQUIRED))
            record = replace(record, object_lock=config, modification_ms=om.clock.wall_ms())
            om.commit([(BUCKET_TABLE, bucket_key(volume, bucket), om_records.encode_bucket(record))])

    def set_retention(
        self, volume: str, bucket: str, key: str, version: str, body: bytes, bypass: bool
    ) -> KeyRecord:
        """A version's retention (None in the document: removed), if the rules allow the change now."""
        try:
            retention = parse_retention(body)
        except ObjectLockError as e:
            raise _refused(e) from None
        now = self.om.clock.wall_ms()

        def change(record: KeyRecord) -> KeyRecord:
            if retention is not None:
                check_future(retention, now)
            why = change_refusal(record.retention, retention, now, bypass)
            if why:
                raise ObjectLockError("AccessDenied", why)
            return replace(record, retention=retention)

        return self._change(volume, bucket, key, version, change)

    def set_legal_hold(self, volume: str, bucket: str, key: str, version: str, body: bytes) -> KeyRecord:
        try:
            on = parse_legal_hold(body)
        except ObjectLockError as e:
            raise _refused(e) from None
        return self._change(volume, bucket, key, version, lambda record: replace(record, legal_hold=on))

    def _change(
        self, volume: str, bucket: str, key: str, version: str, change: Callable[[KeyRecord], KeyRecord]
    ) -> KeyRecord:
        """The version `version` names ("": the current one), changed in place under the key's lock."""
        om = self.om
        with om.locks.key(key_key(volume, bucket, key)):
            parent = om.bucket_info(volume, bucket)
            if parent.object_lock is None:
                raise _refused(ObjectLockError("InvalidRequest", MISSING_CONFIGURATION_ON_OBJECT))
            record = (
                om.versions.find(volume, bucket, key, version)
                if version
                else om.keys.record(volume, bucket, key)
            )
            if record.delete_marker:
                raise OMException(
                    OMResultCode.INVALID_REQUEST,
                    f"MethodNotAllowed: key {volume}/{bucket}/{key} version {version} is a delete marker",
                )
            try:
                changed: KeyRecord = change(record)
            except ObjectLockError as e:
                raise _refused(e) from None
            current = om.keys.find(volume, bucket, key)
            if current is not None and (current.version_seq, current.versioned) == (
                record.version_seq,
                record.versioned,
            ):
                op: Op = (KEY_TABLE, key_key(volume, bucket, key), om_records.encode_key(changed))
            else:
                row = version_key(volume, bucket, key, changed.version_seq)
                op = (OBJECT_VERSION_TABLE, row, om_records.encode_key(changed))
            om.commit([op])
        return changed
