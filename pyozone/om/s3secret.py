"""S3SecretManager: users' S3 secrets in s3SecretTable (Ozone's S3SecretManager), and the SigV4 signing
keys derived from them.

The access id is the user name (Ozone uses the Kerberos principal; pyozone has no Kerberos): the user the
gateway acts for, so an id that is not a valid user name (`check_user_name`: no '@', '/', ...) gets no
secret and no signing key, and `alice@EVIL.ORG` never reads as `alice`. A secret is 32 random bytes as 64 hex
characters, Ozone's shape. A gateway never needs the secret itself: OM derives the signing key of a
credential scope (date, region, service), so the secret does not leave OM for a signature check.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

from pyozone.hdds.security.x509 import check_user_name
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.locks import NamespaceLock
from pyozone.om.metadata import S3_SECRET_TABLE, OMMetadataStore
from pyozone.protocol.om_records import decode_s3_secret, encode_s3_secret

MAX_ACCESS_ID_BYTES = 256
"""As a user name at the RPC edge (limits.py)."""
MAX_REGION_CHARS = 64
MAX_SERVICE_CHARS = 32
_DATE = re.compile(r"\d{8}")
_SCOPE_PART = re.compile(r"[A-Za-z0-9._-]+")
"""What a credential scope's region and service may hold: no '/', which separates the scope's parts."""


@dataclass(frozen=True, slots=True)
class S3Secret:
    access_id: str
    secret: str


class S3SecretManager:
    def __init__(self, store: OMMetadataStore, lock: NamespaceLock) -> None:
        self.store = store
        self.lock = lock

    def get(self, access_id: str, create: bool = True) -> S3Secret:
        """The user's secret; a new one when there is none and `create`, else S3_SECRET_NOT_FOUND."""
        _check_access_id(access_id)
        with self.lock:
            found = self._find(access_id)
            if found is not None:
                return found
            if not create:
                raise OMException(OMResultCode.S3_SECRET_NOT_FOUND, f"no S3 secret for {access_id!r}")
            made = S3Secret(access_id, secrets.token_hex(32))
            self.store.write([(S3_SECRET_TABLE, access_id, encode_s3_secret(access_id, made.secret))])
        return made

    def revoke(self, access_id: str) -> None:
        """Also of an id an older OM gave a secret to and that is no user name now."""
        _check_stored_id(access_id)
        with self.lock:
            if self._find(access_id) is None:
                raise OMException(OMResultCode.S3_SECRET_NOT_FOUND, f"no S3 secret for {access_id!r}")
            self.store.write([(S3_SECRET_TABLE, access_id, None)])

    def signing_key(self, access_id: str, date: str, region: str, service: str) -> bytes:
        """SigV4's kSigning: HMAC-SHA256 chained from "AWS4" + secret over date, region, service and
        "aws4_request"."""
        _check_scope(date, region, service)
        _check_access_id(access_id)
        found = self._find(access_id)
        if found is None:
            raise OMException(OMResultCode.S3_SECRET_NOT_FOUND, f"no S3 secret for access id {access_id!r}")
        key = ("AWS4" + found.secret).encode()
        for part in (date, region, service, "aws4_request"):
            key = hmac.new(key, part.encode(), hashlib.sha256).digest()
        return key

    def _find(self, access_id: str) -> S3Secret | None:
        data = self.store.get(S3_SECRET_TABLE, access_id)
        if data is None:
            return None
        return S3Secret(*decode_s3_secret(data))


def _check_access_id(access_id: str) -> None:
    _check_stored_id(access_id)
    try:
        check_user_name(access_id)
    except ValueError as e:
        raise OMException(OMResultCode.INVALID_REQUEST, f"access id: {e}") from None


def _check_stored_id(access_id: str) -> None:
    if not access_id.strip():
        raise OMException(
            OMResultCode.INVALID_REQUEST, f"access id {access_id[:64]!r}: an empty or blank user name"
        )
    if len(access_id.encode()) > MAX_ACCESS_ID_BYTES or any(
        ord(c) < 0x20 or ord(c) == 0x7F for c in access_id
    ):
        raise OMException(
            OMResultCode.INVALID_REQUEST,
            f"access id {access_id[:64]!r}: at most {MAX_ACCESS_ID_BYTES} bytes, no control characters",
        )


def _check_scope(date: str, region: str, service: str) -> None:
    if not _DATE.fullmatch(date) or not _is_date(date):
        raise OMException(OMResultCode.INVALID_REQUEST, f"date {date[:16]!r} is not YYYYMMDD")
    for what, value, limit in (("region", region, MAX_REGION_CHARS), ("service", service, MAX_SERVICE_CHARS)):
        if len(value) > limit or not _SCOPE_PART.fullmatch(value):
            raise OMException(
                OMResultCode.INVALID_REQUEST,
                f"{what} {value[:limit]!r}: 1 to {limit} letters, digits, '.', '_' or '-'",
            )


def _is_date(text: str) -> bool:
    try:
        datetime.date(int(text[:4]), int(text[4:6]), int(text[6:]))
    except ValueError:
        return False
    return True
