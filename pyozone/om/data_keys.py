"""The data keys of encrypted keys (S3's SSE): made for a new key, unwrapped for a reader or writer,
wrapped again when the key is renamed. SSE-S3's data key is wrapped under OM's master keys
(master_keys.py) and bound to its object's name; SSE-C's is the customer's, of which OM records the MD5
alone. Ozone's OMKeyRequest.getFileEncryptionInfo makes a key's encryption info from its KMS
(generateEncryptedKey); KeyManagerImpl hands it to readers after their ACL check, as KMS checks
DECRYPT_EEK."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from pyozone.hdds.om_records import KeyRecord
from pyozone.hdds.security.sse import (
    KeyEncryption,
    SseAlgorithm,
    SseRequest,
    new_data_key,
    new_iv,
    valid_key_md5,
)
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.master_keys import KEYSTORE_KEY, MasterKeyError, MasterKeyStore

if TYPE_CHECKING:
    from pyozone.om.core import OzoneManager


def default_sse(bucket_sse: bool) -> SseRequest | None:
    """SSE-S3 in a bucket with an S3 default encryption (BucketRecord.sse_default), else None."""
    return SseRequest(SseAlgorithm.SSE_S3) if bucket_sse else None


class DataKeys:
    def __init__(self, om: OzoneManager) -> None:
        self.om = om

    def new(self, sse: SseRequest, volume: str, bucket: str, key: str) -> KeyEncryption:
        """A new key's encryption: SSE-S3's fresh data key wrapped under the newest master key version
        (INVALID_KMS_PROVIDER without a keystore; the writer gets it unwrapped in openKey's answer, by
        `unwrapped` through protocol/om.py's with_data_key, never from anything recorded); SSE-C's is the
        customer's (OM never sees it), of which OM records the MD5 alone."""
        if sse.algorithm is SseAlgorithm.SSE_C:
            if not valid_key_md5(sse.customer_key_md5):
                raise OMException(
                    OMResultCode.INVALID_REQUEST, "SSE-C needs the base64 MD5 of the customer key"
                )
            return KeyEncryption(SseAlgorithm.SSE_C, new_iv(), customer_key_md5=sse.customer_key_md5)
        wrapped, version = self._master_keys().wrap(new_data_key(), f"/{volume}/{bucket}/{key}")
        return KeyEncryption(SseAlgorithm.SSE_S3, new_iv(), wrapped, version)

    def of(self, record: KeyRecord) -> bytes:
        """The SSE-S3 data key of a key (unwrapped), b"" for any other: only for a caller its ACLs allow to
        read or write it (the caller checks, as Ozone's KMS checks DECRYPT_EEK)."""
        if record.encryption is None:
            return b""
        return self.unwrapped(record.encryption, record.volume, record.bucket, record.key)

    def unwrapped(self, encryption: KeyEncryption, volume: str, bucket: str, key: str) -> bytes:
        """SSE-S3's data key of /volume/bucket/key unwrapped (INVALID_KMS_PROVIDER when no master key opens
        it for that object); b"" for SSE-C."""
        if encryption.algorithm is not SseAlgorithm.SSE_S3:
            return b""
        master_keys = self._master_keys()
        try:
            return master_keys.unwrap(
                encryption.wrapped_key, encryption.master_key_version, f"/{volume}/{bucket}/{key}"
            )
        except MasterKeyError as e:
            raise OMException(OMResultCode.INVALID_KMS_PROVIDER, str(e)) from None

    def rewrapped(self, record: KeyRecord, to_key: str) -> KeyEncryption | None:
        """A renamed key's encryption: an SSE-S3 data key is bound to its object's name (master_keys.py),
        so it is wrapped again for the new one."""
        encryption = record.encryption
        if encryption is None or encryption.algorithm is not SseAlgorithm.SSE_S3:
            return encryption
        data_key = self.unwrapped(encryption, record.volume, record.bucket, record.key)
        wrapped, version = self._master_keys().wrap(data_key, f"/{record.volume}/{record.bucket}/{to_key}")
        return replace(encryption, wrapped_key=wrapped, master_key_version=version)

    def _master_keys(self) -> MasterKeyStore:
        """OM's master keystore; INVALID_KMS_PROVIDER without one (SSE-S3 is refused)."""
        if self.om.master_keys is None:
            raise OMException(
                OMResultCode.INVALID_KMS_PROVIDER, f"SSE-S3: no master keystore ({KEYSTORE_KEY})"
            )
        return self.om.master_keys
