"""S3's conditional writes (Amazon's If-None-Match: * and If-Match: ETAG) as OM checks them: against the
committed key, under the key's lock, in the step that writes or deletes it, so two writers never both pass
a condition only one of them may pass (Ozone 2.2's S3 conditional writes, HDDS-13919)."""

from __future__ import annotations

from pyozone.hdds.om_records import KeyRecord
from pyozone.hdds.om_views import KeyCondition
from pyozone.om.exceptions import OMException, OMResultCode

ETAG = "ETag"
"""The metadata entry holding a committed key's S3 ETag."""
ANY = "*"


def check(condition: KeyCondition | None, found: KeyRecord | None, name: str) -> None:
    """KEY_ALREADY_EXISTS or ETAG_MISMATCH when the committed key `found` (None: there is none) fails
    `condition` (None: the request sets none)."""
    if condition is None:
        return
    if condition.must_not_exist and found is not None:
        raise OMException(OMResultCode.KEY_ALREADY_EXISTS, f"key {name} exists (If-None-Match: *)")
    if not condition.expected_etag:
        return
    if found is None:
        raise OMException(OMResultCode.ETAG_MISMATCH, f"key {name} does not exist (If-Match)")
    etag = dict(found.metadata).get(ETAG, "")
    if condition.expected_etag != ANY and etag != condition.expected_etag:
        raise OMException(
            OMResultCode.ETAG_MISMATCH,
            f"key {name} has ETag {etag!r}, not {condition.expected_etag!r} (If-Match)",
        )
