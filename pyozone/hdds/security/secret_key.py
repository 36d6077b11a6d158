"""The symmetric secret keys block and container tokens are signed with (Ozone 1.4's ManagedSecretKey).

SCM makes a new key every `hdds.secret.key.rotate.duration` and drops one `hdds.secret.key.expiry.duration`
after it was made; OM signs with the newest, datanodes verify with whichever key a token names. A key is
never sent to a client.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import uuid
from dataclasses import dataclass
from typing import Any

HMAC_SHA256 = "HmacSHA256"
_DIGESTS = {HMAC_SHA256: hashlib.sha256, "HmacSHA1": hashlib.sha1, "HmacSHA512": hashlib.sha512}


@dataclass(frozen=True, slots=True)
class ManagedSecretKey:
    id: uuid.UUID
    creation_ms: int
    expiry_ms: int
    algorithm: str
    encoded: bytes

    def __post_init__(self) -> None:
        if self.algorithm not in _DIGESTS:
            raise ValueError(f"hdds.secret.key.algorithm {self.algorithm!r}: one of {', '.join(_DIGESTS)}")
        if len(self.encoded) < 16:
            raise ValueError("a secret key holds at least 16 bytes")

    @classmethod
    def generate(cls, now_ms: int, lifetime_ms: int, algorithm: str = HMAC_SHA256) -> ManagedSecretKey:
        return cls(uuid.uuid4(), now_ms, now_ms + lifetime_ms, algorithm, secrets.token_bytes(32))

    def is_expired(self, now_ms: int) -> bool:
        return now_ms >= self.expiry_ms

    def sign(self, data: bytes) -> bytes:
        return hmac.new(self.encoded, data, _DIGESTS[self.algorithm]).digest()

    def is_valid_signature(self, data: bytes, signature: bytes) -> bool:
        return hmac.compare_digest(self.sign(data), signature)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": str(self.id),
            "creationTime": self.creation_ms,
            "expiryTime": self.expiry_ms,
            "algorithm": self.algorithm,
            "encoded": base64.b64encode(self.encoded).decode(),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ManagedSecretKey:
        try:
            return cls(
                uuid.UUID(data["id"]),
                int(data["creationTime"]),
                int(data["expiryTime"]),
                str(data["algorithm"]),
                base64.b64decode(data["encoded"], validate=True),
            )
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"not a secret key record: {e}") from None
