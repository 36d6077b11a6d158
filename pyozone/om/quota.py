"""Space and namespace quotas of volumes and buckets: what a write or a new bucket may still take, and what
a quota may be set to. Refusals carry Ozone's QUOTA_EXCEEDED / QUOTA_ERROR codes and wording.

Space counts replicated bytes, as Ozone's usedBytes does (records.replicated_size: every copy of a
replicated key, data plus parity of an EC key). A bucket's namespace is its keys, a volume's its buckets.
A quota of 0 means none (Ozone's -1, QUOTA_RESET, which the protocol uses to clear one).

Ozone checks a write at three points, and so does OM here: openKey (the blocks it pre-allocates),
allocateBlock (one more block), both against what committed keys and parts use, and commitKey with the
key's real size less the key it replaces. A multipart part is checked the same way at openKey and at its
commit, where it joins the usage until its upload is aborted or completed. Ozone enforces a volume's space
quota only through its buckets' quotas (their sum may not exceed it); pyozone checks the volume's own
usage at the same points too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pyozone.hdds.ids import BlockID, ReplicationConfig
from pyozone.hdds.om_records import BucketRecord, KeyBlock, VolumeRecord, replicated_size
from pyozone.om.exceptions import OMException, OMResultCode

QUOTA_RESET = -1
"""Ozone's OzoneConsts.QUOTA_RESET: clears a quota in setVolumeProperty / setBucketProperty."""


def charged_bytes(
    config: ReplicationConfig,
    data_size: int,
    blocks: Sequence[KeyBlock],
    stored: Mapping[BlockID, int] | None,
) -> int:
    """A commit's KeyRecord.charged_bytes: the replicated bytes `stored` charges each block
    (stored_lengths.py, under a space quota; a block it does not name: its committed length's) when that is
    more than `data_size` makes, else 0."""
    if not stored:
        return 0
    charged = sum(stored.get(b.block_id, replicated_size(config, b.length)) for b in blocks)
    return charged if charged > replicated_size(config, data_size) else 0


def check_space(volume: VolumeRecord, bucket: BucketRecord, requested: int) -> None:
    """QUOTA_EXCEEDED when `requested` more replicated bytes pass the bucket's or the volume's quota."""
    if requested <= 0:
        return
    if bucket.quota_bytes and bucket.used_bytes + requested > bucket.quota_bytes:
        raise OMException(
            OMResultCode.QUOTA_EXCEEDED,
            f"The DiskSpace quota of bucket:{bucket.bucket} exceeded quotaInBytes: {bucket.quota_bytes} "
            f"Bytes but diskspace consumed: {bucket.used_bytes + requested} Bytes.",
        )
    if volume.quota_bytes and volume.used_bytes + requested > volume.quota_bytes:
        raise OMException(
            OMResultCode.QUOTA_EXCEEDED,
            f"The DiskSpace quota of volume:{volume.volume} exceeded quotaInBytes: {volume.quota_bytes} "
            f"Bytes but diskspace consumed: {volume.used_bytes + requested} Bytes.",
        )


def check_keys(bucket: BucketRecord) -> None:
    """QUOTA_EXCEEDED when one more key passes the bucket's namespace quota."""
    if bucket.quota_namespace and bucket.used_namespace + 1 > bucket.quota_namespace:
        raise OMException(
            OMResultCode.QUOTA_EXCEEDED,
            f"The namespace quota of Bucket:{bucket.bucket} exceeded: quotaInNamespace: "
            f"{bucket.quota_namespace} but namespace consumed: {bucket.used_namespace + 1}.",
        )


def check_buckets(volume: VolumeRecord) -> None:
    """QUOTA_EXCEEDED when one more bucket passes the volume's namespace quota."""
    if volume.quota_namespace and volume.used_namespace + 1 > volume.quota_namespace:
        raise OMException(
            OMResultCode.QUOTA_EXCEEDED,
            f"The namespace quota of Volume:{volume.volume} exceeded: quotaInNamespace: "
            f"{volume.quota_namespace} but namespace consumed: {volume.used_namespace + 1}.",
        )


def updated_quota(current: int, requested: int, used: int, what: str) -> int:
    """The quota after a set request: 0 keeps it, QUOTA_RESET clears it (0), a positive one replaces it
    unless what is already used is more (QUOTA_ERROR, as Ozone refuses it)."""
    if requested == 0:
        return current
    if requested == QUOTA_RESET:
        return 0
    if requested < 0:
        raise OMException(
            OMResultCode.QUOTA_ERROR, f"{what} {requested}: a quota is positive, or -1 to clear it"
        )
    if requested < used:
        raise OMException(
            OMResultCode.QUOTA_ERROR,
            f"Cannot update {what}. Requested {requested} is less than the {used} already used.",
        )
    return requested
