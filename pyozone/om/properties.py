"""A volume's or bucket's owner and quotas, and the ACL entries of volumes, buckets and keys: changes of
an existing record, each read and written under the namespace lock (Ozone's OMVolumeSetOwnerRequest,
OMVolumeSetQuotaRequest, OMBucketSetPropertyRequest and the Add/Remove/SetAcl requests)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace

from pyozone.hdds.om_records import BucketRecord, KeyRecord, VolumeRecord
from pyozone.hdds.security.acl import Acls, ResourceType
from pyozone.hdds.security.x509 import check_user_name
from pyozone.om.core import OzoneManager
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.metadata import BUCKET_TABLE, KEY_TABLE, VOLUME_TABLE, bucket_key, key_key, volume_key
from pyozone.om.quota import updated_quota
from pyozone.protocol import om_records
from pyozone.protocol.acl import ObjectPath

log = logging.getLogger(__name__)


class PropertyManager:
    def __init__(self, om: OzoneManager) -> None:
        self.om = om

    def set_volume(
        self, volume: str, owner: str = "", quota_bytes: int = 0, quota_namespace: int = 0
    ) -> VolumeRecord:
        """A new owner (empty: unchanged) and quotas (quota.updated_quota: 0 keeps, -1 clears); a request
        changing nothing is INVALID_REQUEST (Ozone: "Either Quota or owner should be set")."""
        _check_change(owner, quota_bytes, quota_namespace)
        om = self.om
        with om.lock:
            record = om.volume_info(volume)
            record = replace(
                record,
                owner=owner or record.owner,
                quota_bytes=updated_quota(
                    record.quota_bytes, quota_bytes, record.used_bytes, "volume spaceQuota"
                ),
                quota_namespace=updated_quota(
                    record.quota_namespace, quota_namespace, record.used_namespace, "volume namespaceQuota"
                ),
                modification_ms=om.clock.wall_ms(),
            )
            om.commit([(VOLUME_TABLE, volume_key(volume), om_records.encode_volume(record))])
        log.info(
            "volume %s: owner %s, quota %d bytes, %d buckets", volume, record.owner, record.quota_bytes,
            record.quota_namespace,
        )  # fmt: skip
        return record

    def set_bucket(
        self, volume: str, bucket: str, owner: str = "", quota_bytes: int = 0, quota_namespace: int = 0
    ) -> BucketRecord:
        """As set_volume, for a bucket (namespace: its keys)."""
        _check_change(owner, quota_bytes, quota_namespace)
        om = self.om
        with om.lock:
            record = om.bucket_info(volume, bucket)
            record = replace(
                record,
                owner=owner or record.owner,
                quota_bytes=updated_quota(
                    record.quota_bytes, quota_bytes, record.used_bytes, "bucket spaceQuota"
                ),
                quota_namespace=updated_quota(
                    record.quota_namespace, quota_namespace, record.used_namespace, "bucket namespaceQuota"
                ),
                modification_ms=om.clock.wall_ms(),
            )
            om.commit(
                [
                    (
                        BUCKET_TABLE,
                        bucket_key(volume, bucket),
                        om_records.encode_bucket(record),
                    )
                ]
            )
        log.info(
            "bucket %s/%s: owner %s, quota %d bytes, %d keys", volume, bucket, record.owner,
            record.quota_bytes, record.quota_namespace,
        )  # fmt: skip
        return record

    # ------------------------------------------------------------------ ACLs
    def get_acls(self, path: ObjectPath) -> Acls:
        return self._read(path).acls

    def change_acls(self, path: ObjectPath, change: Callable[[Acls], Acls]) -> bool:
        """Applies `change` to the object's entries; whether they changed (Ozone's answer)."""
        om = self.om
        with om.lock:
            record = self._read(path)
            acls = change(record.acls)
            if acls == record.acls:
                return False
            changed = replace(record, acls=acls)
            if path.resource is ResourceType.VOLUME:
                op = (
                    VOLUME_TABLE,
                    volume_key(path.volume),
                    om_records.encode_volume(changed),
                )
            elif path.resource is ResourceType.BUCKET:
                op = (
                    BUCKET_TABLE,
                    bucket_key(path.volume, path.bucket),
                    om_records.encode_bucket(changed),
                )
            else:
                op = (
                    KEY_TABLE,
                    key_key(path.volume, path.bucket, path.key),
                    om_records.encode_key(changed),
                )
            om.commit([op])
        log.info("ACLs of %s %s: %s", path.resource.name.lower(), path, ",".join(map(str, acls)))
        return True

    def _read(self, path: ObjectPath) -> VolumeRecord | BucketRecord | KeyRecord:
        om = self.om
        if path.resource is ResourceType.VOLUME:
            return om.volume_info(path.volume)
        if path.resource is ResourceType.BUCKET:
            return om.bucket_info(path.volume, path.bucket)
        return om.keys.record(path.volume, path.bucket, path.key)


def _check_change(owner: str, quota_bytes: int, quota_namespace: int) -> None:
    if not (owner or quota_bytes or quota_namespace):
        raise OMException(OMResultCode.INVALID_REQUEST, "either an owner or a quota should be set")
    if owner:
        try:
            check_user_name(owner)
        except ValueError as e:
            raise OMException(OMResultCode.INVALID_REQUEST, f"ownerName: {e}") from None
