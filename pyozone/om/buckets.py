"""Buckets: create, delete and list (Ozone's BucketManagerImpl with OMBucketCreateRequest and
OMBucketDeleteRequest). A bucket's record is read by `OzoneManager.bucket_info`, which every request
shares; its S3 documents live in bucket_documents.py and go with it."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from itertools import islice
from typing import TYPE_CHECKING

from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.om_records import BucketRecord
from pyozone.hdds.s3_object_lock import ObjectLockConfiguration
from pyozone.hdds.s3_versions import BucketVersioning
from pyozone.hdds.security.acl import Ownership
from pyozone.om import quota, versions
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.metadata import (
    BUCKET_TABLE,
    KEY_TABLE,
    MULTIPART_INFO_TABLE,
    S3_BUCKET_CORS_TABLE,
    S3_BUCKET_ENCRYPTION_TABLE,
    S3_BUCKET_LIFECYCLE_TABLE,
    S3_BUCKET_OWNERSHIP_CONTROLS_TABLE,
    S3_BUCKET_POLICY_TABLE,
    S3_BUCKET_PUBLIC_ACCESS_BLOCK_TABLE,
    VOLUME_TABLE,
    Op,
    bucket_key,
    volume_key,
)
from pyozone.om.names import check_bucket_name
from pyozone.om.settings import DEFAULT_LIST_LIMIT
from pyozone.protocol import om_records

if TYPE_CHECKING:
    from pyozone.om.core import OzoneManager

log = logging.getLogger(__name__)


class BucketManager:
    def __init__(self, om: OzoneManager) -> None:
        self.om = om

    def create(
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
        om = self.om
        check_bucket_name(bucket)
        if replication is not None:
            om.settings.allowed_configs.check(replication)
        with om.lock:
            parent = om.volume_info(volume)
            if om.store.get(BUCKET_TABLE, bucket_key(volume, bucket)) is not None:
                raise OMException(OMResultCode.BUCKET_ALREADY_EXISTS, f"bucket {volume}/{bucket}")
            quota.check_buckets(parent)
            now = om.now()
            record = BucketRecord(
                volume,
                bucket,
                creator.owner if creator else parent.owner,
                now,
                now,
                ReplicationConfig.resolve(replication, None, om.settings.default_replication),
                acls=creator.entries(parent.acls) if creator else (),
                versioning=BucketVersioning.ENABLED if lock else BucketVersioning.UNVERSIONED,
                object_lock=ObjectLockConfiguration() if lock else None,
            )
            parent = replace(parent, used_namespace=parent.used_namespace + 1, modification_ms=now)
            om.commit(
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

    def delete(self, volume: str, bucket: str) -> None:
        om = self.om
        with om.lock:
            om.bucket_info(volume, bucket)
            if next(om.store.scan(KEY_TABLE, bucket_key(volume, bucket) + "/"), None) is not None:
                raise OMException(OMResultCode.BUCKET_NOT_EMPTY, f"bucket {volume}/{bucket} still has keys")
            if next(om.store.scan(MULTIPART_INFO_TABLE, bucket_key(volume, bucket) + "/"), None) is not None:
                # their parts' blocks would be lost to deletion
                raise OMException(
                    OMResultCode.BUCKET_NOT_EMPTY,
                    f"bucket {volume}/{bucket} still has multipart uploads in progress (abort them first)",
                )
            if versions.has_versions(om.store, volume, bucket):  # their blocks would be lost too
                raise OMException(
                    OMResultCode.BUCKET_NOT_EMPTY,
                    f"bucket {volume}/{bucket} still has object versions or delete markers",
                )
            parent = om.volume_info(volume)
            parent = replace(
                parent, used_namespace=max(0, parent.used_namespace - 1), modification_ms=om.now()
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
                if om.store.get(table, bucket_key(volume, bucket)) is not None:
                    ops.append((table, bucket_key(volume, bucket), None))
            om.commit(ops)
        log.info("deleted bucket %s/%s", volume, bucket)

    def list(
        self, volume: str, prefix: str = "", start_key: str = "", max_keys: int = 0, owner: str = ""
    ) -> list[BucketRecord]:
        """`owner`: only that user's buckets (S3's ListBuckets)."""
        om = self.om
        om.volume_info(volume)
        start = bucket_key(volume, start_key) if start_key else None
        records = (
            om_records.decode_bucket(v)
            for _, v in om.store.scan(BUCKET_TABLE, bucket_key(volume, prefix), start)
        )
        shown = (r for r in records if not owner or r.owner == owner)
        return list(islice(shown, max_keys or DEFAULT_LIST_LIMIT))
