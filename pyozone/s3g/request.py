"""One S3 request as the handlers see it, and the gateway state they share."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from aiohttp import web
from multidict import CIMultiDictProxy

from pyozone.hdds.security.acl import S3_ANONYMOUS
from pyozone.s3g.cors_cache import CorsCache
from pyozone.s3g.errors import S3Error, S3ErrorCode
from pyozone.s3g.numbers import decimal
from pyozone.s3g.policy import PolicyCache
from pyozone.s3g.routing import Operation, Target
from pyozone.s3g.settings import S3GatewaySettings

MAX_LIST_ENTRIES = 1000
"""The most entries of one S3 listing page (max-keys, max-uploads, max-parts): a larger ask gets this many,
as Amazon answers."""

if TYPE_CHECKING:
    from pyozone.client.client import AsyncOzoneClient
    from pyozone.s3g.authenticate import SigningKeys
    from pyozone.s3g.body import RequestBody


@dataclass(frozen=True, slots=True)
class Gateway:
    """What every handler shares: the Ozone client (the gateway is one), the settings, the signing keys
    OM gave, and how long a body may stall."""

    client: AsyncOzoneClient
    settings: S3GatewaySettings
    signing_keys: SigningKeys
    body_idle_timeout_s: float
    cors: CorsCache = field(default_factory=CorsCache)
    """Buckets' CORS configurations, read a few seconds at a time (cors_cache.py)."""
    policies: PolicyCache = field(default_factory=PolicyCache)
    """Buckets' owners and policies, read a few seconds at a time (policy.py)."""

    @property
    def volume(self) -> str:
        return self.settings.volume


@dataclass(frozen=True, slots=True)
class S3Request:
    http: web.Request
    target: Target
    operation: Operation
    request_id: str
    access_key: str
    body: RequestBody
    gateway: Gateway
    headers: CIMultiDictProxy[str]
    """The request's, with the checksums a presigned URL's query carries (headers.with_query_headers)."""
    acting: str = ""
    """Whom it acts as in OM (policy.acting_user): its user, or the bucket's owner where the bucket's
    policy allows it; "": its user."""

    @property
    def user(self) -> str:
        """The access id, which is the user's name (authenticate checked it is a valid one; Ozone's
        principal, without Kerberos): the owner of what the request creates, the user OM's ACLs check."""
        return self.access_key

    @property
    def acting_user(self) -> str:
        return self.acting or self.user

    @property
    def as_public(self) -> bool:
        """Served as anyone would be: unsigned, or a signed read OM refused that an object's WORLD entry
        allows (app._run's fallback, R37's F8), which learns no more than an unsigned one (F13)."""
        return not self.user or self.acting == S3_ANONYMOUS

    @property
    def query(self) -> Mapping[str, str]:
        return self.target.query

    @property
    def bucket(self) -> str:
        assert self.target.bucket is not None  # routing gives bucket operations a bucket
        return self.target.bucket

    @property
    def key(self) -> str:
        assert self.target.key is not None  # routing gives object operations a key
        return self.target.key

    def page_size(self, name: str) -> int:
        """A listing's page size parameter, capped at MAX_LIST_ENTRIES (read here, so a test may lower it)."""
        return min(self.int_query(name, MAX_LIST_ENTRIES, 0, 2**31 - 1), MAX_LIST_ENTRIES)

    def int_query(self, name: str, default: int, low: int, high: int) -> int:
        """A non-negative integer query parameter within [low, high]; anything else is InvalidArgument, as
        S3 answers (a sign, spaces or another script's digits included)."""
        raw = self.query.get(name)
        if raw is None or raw == "":
            return default
        value = decimal(raw)
        if value is None:
            raise S3Error(S3ErrorCode.InvalidArgument, f"{name} must be an integer", ArgumentName=name)
        if not low <= value <= high:
            raise S3Error(
                S3ErrorCode.InvalidArgument,
                f"{name} must be between {low} and {high}",
                ArgumentName=name,
                ArgumentValue=raw,
            )
        return value
