"""Every request is authenticated: SigV4 checked with a signing key OM derives from the user's secret
(the secret itself never leaves OM), then the body's checks chosen by how it was signed.

Signing keys are cached for ozone.s3g.signing.key.cache.ttl per (access key, date, region, service): a
key is valid for one day and scope, and the cache spares OM one call per request. A revoked secret is
refused once its cached keys expire.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Protocol

from aiohttp import web
from multidict import CIMultiDict, CIMultiDictProxy

from pyozone.client.errors import OMException, OzoneClientError
from pyozone.hdds.security.x509 import check_user_name
from pyozone.s3g.auth import sigv4
from pyozone.s3g.auth.checksums import BY_HEADER
from pyozone.s3g.auth.payload import Payload, open_payload
from pyozone.s3g.errors import S3Error, S3ErrorCode
from pyozone.s3g.om_errors import s3_error
from pyozone.s3g.request import Gateway

_CACHE_LIMIT = 10_000


class Credential(Protocol):
    """What names a signing key: a header or presigned request's, or a POST form's (sigv4.PostSignature)."""

    @property
    def access_key(self) -> str: ...
    @property
    def date(self) -> str: ...
    @property
    def region(self) -> str: ...
    @property
    def service(self) -> str: ...


class SigningKeys:
    """(access key, date, region, service) -> the signing key OM gave, until it expires here."""

    def __init__(self, ttl_s: float) -> None:
        self._ttl_s = ttl_s
        self._keys: dict[tuple[str, str, str, str], tuple[bytes, float]] = {}

    async def get(self, gateway: Gateway, signed: Credential) -> bytes:
        scope = (signed.access_key, signed.date, signed.region, signed.service)
        now = time.monotonic()
        cached = self._keys.get(scope)
        if cached is not None and cached[1] > now:
            return cached[0]
        try:
            key = await gateway.client.s3_signing_key(*scope)
        except OMException as e:
            if e.result == "INVALID_REQUEST":  # a scope OM cannot derive a key for: not a valid credential
                raise S3Error(S3ErrorCode.AuthorizationHeaderMalformed, e.message) from None
            raise s3_error(e) from None
        except OzoneClientError as e:
            raise s3_error(e) from None
        if len(self._keys) >= _CACHE_LIMIT:
            self._keys = {k: v for k, v in self._keys.items() if v[1] > now}
            if len(self._keys) >= _CACHE_LIMIT:
                self._keys.clear()
        self._keys[scope] = (key, now + self._ttl_s)
        return key


async def authenticate(
    gateway: Gateway, http: web.Request, headers: CIMultiDictProxy[str], *, object_checksum: bool = False
) -> tuple[str, Payload]:
    """The request's access key and the checks its body must pass; refuses as S3 does. `headers`: the
    request's, with the checksums its query carries (headers.with_query_headers). `object_checksum`:
    an x-amz-checksum-* header is the checksum of the object the request makes, not of its body
    (CompleteMultipartUpload's, which the handler checks)."""
    raw_path, _, raw_query = http.raw_path.partition("?")
    signed = sigv4.parse(raw_query, http.headers, datetime.now(UTC))
    key = await signing_key(gateway, signed)
    sigv4.verify(signed, key, http.method, raw_path, raw_query, http.headers)
    body_headers = headers
    if object_checksum:
        body_headers = CIMultiDictProxy(
            CIMultiDict((k, v) for k, v in headers.items() if k.lower() not in BY_HEADER)
        )
    return signed.access_key, open_payload(signed, key, body_headers)


async def signing_key(gateway: Gateway, signed: Credential) -> bytes:
    """The key OM derives for the credential's scope; an access id that is no user name is refused."""
    try:
        check_user_name(signed.access_key)
    except ValueError:  # the id is the user the gateway acts for: one OM gives no secret to
        raise S3Error(S3ErrorCode.InvalidAccessKeyId) from None
    return await gateway.signing_keys.get(gateway, signed)
