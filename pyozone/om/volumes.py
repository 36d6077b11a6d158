"""Volumes: create, delete and list (Ozone's VolumeManagerImpl with OMVolumeCreateRequest and
OMVolumeDeleteRequest). A volume's record is read by `OzoneManager.volume_info`, which every request
shares."""

from __future__ import annotations

import logging
from collections.abc import Callable
from itertools import islice
from typing import TYPE_CHECKING

from pyozone.hdds.om_records import VolumeRecord
from pyozone.hdds.security.acl import Acls
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.metadata import BUCKET_TABLE, VOLUME_TABLE, volume_key
from pyozone.om.names import check_volume_name
from pyozone.om.settings import DEFAULT_LIST_LIMIT
from pyozone.protocol import om_records

if TYPE_CHECKING:
    from pyozone.om.core import OzoneManager

log = logging.getLogger(__name__)


class VolumeManager:
    def __init__(self, om: OzoneManager) -> None:
        self.om = om

    def create(
        self, volume: str, owner: str = "", quota_bytes: int = 0, quota_namespace: int = 0, acls: Acls = ()
    ) -> VolumeRecord:
        """`acls`: the new volume's entries (with ozone.acl.enabled, its owner's defaults)."""
        check_volume_name(volume)
        om = self.om
        with om.lock:
            if om.store.get(VOLUME_TABLE, volume_key(volume)) is not None:
                raise OMException(OMResultCode.VOLUME_ALREADY_EXISTS, f"volume {volume}")
            now = om.now()
            owner = owner or om.default_owner
            record = VolumeRecord(volume, owner, owner, now, now, quota_bytes, 0, 0, quota_namespace, acls)
            om.commit([(VOLUME_TABLE, volume_key(volume), om_records.encode_volume(record))])
        log.info("created volume %s (owner %s)", volume, owner)
        return record

    def delete(self, volume: str) -> None:
        om = self.om
        with om.lock:
            om.volume_info(volume)
            if next(om.store.scan(BUCKET_TABLE, volume_key(volume) + "/"), None) is not None:
                raise OMException(OMResultCode.VOLUME_NOT_EMPTY, f"volume {volume} still has buckets")
            om.commit([(VOLUME_TABLE, volume_key(volume), None)])
        log.info("deleted volume %s", volume)

    def list(
        self,
        prefix: str = "",
        start_key: str = "",
        max_keys: int = 0,
        visible: Callable[[VolumeRecord], bool] | None = None,
    ) -> list[VolumeRecord]:
        """`visible`: which volumes the caller may see (om/access.py); None: all."""
        start = volume_key(start_key) if start_key else None
        records = (
            om_records.decode_volume(v)
            for _, v in self.om.store.scan(VOLUME_TABLE, volume_key(prefix), start)
        )
        shown = records if visible is None else filter(visible, records)
        return list(islice(shown, max_keys or DEFAULT_LIST_LIMIT))
