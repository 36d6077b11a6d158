"""S3's conditional writes (Amazon's If-None-Match: * and If-Match: ETAG) as OM checks them: against the
committed key, under the key's lock, in the step that writes or deletes it, so two writers never both pass
a condition only one of them may pass (Ozone 2.2's S3 conditional writes, HDDS-13919)."""

from __future__ import annotations

from dataclasses import dataclass

from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.records import KeyRecord
from pyozone.proto import OmClientProtocol_pb2 as pb

ETAG = "ETag"
"""The metadata entry holding a committed key's S3 ETag."""
ANY = "*"


@dataclass(frozen=True, slots=True)
class KeyCondition:
    must_not_exist: bool = False  # If-None-Match: *
    expected_etag: str = ""  # If-Match: the committed key's ETag ("*": any committed key)

    @classmethod
    def from_proto(cls, proto: pb.KeyCondition) -> KeyCondition | None:
        """None when the request sets no condition."""
        condition = cls(proto.mustNotExist, proto.expectedETag.strip().strip('"'))
        return condition if condition != cls() else None

    def check(self, found: KeyRecord | None, name: str) -> None:
        """KEY_ALREADY_EXISTS or ETAG_MISMATCH when the committed key `found` (None: there is none) fails
        the condition."""
        if self.must_not_exist and found is not None:
            raise OMException(OMResultCode.KEY_ALREADY_EXISTS, f"key {name} exists (If-None-Match: *)")
        if not self.expected_etag:
            return
        if found is None:
            raise OMException(OMResultCode.ETAG_MISMATCH, f"key {name} does not exist (If-Match)")
        etag = dict(found.metadata).get(ETAG, "")
        if self.expected_etag != ANY and etag != self.expected_etag:
            raise OMException(
                OMResultCode.ETAG_MISMATCH,
                f"key {name} has ETag {etag!r}, not {self.expected_etag!r} (If-Match)",
            )


def check(condition: KeyCondition | None, found: KeyRecord | None, name: str) -> None:
    if condition is not None:
        condition.check(found, name)
