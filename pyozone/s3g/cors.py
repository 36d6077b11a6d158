"""How S3 answers a browser's request with a bucket's CORS configuration (the rules and the document
themselves: the kernel's hdds/s3_cors.py, which OM reads too): pure functions over the configuration and
the request's headers, so every rule of S3's is testable without a server.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from pyozone.hdds.s3_cors import CORSConfiguration, CORSError, CORSRule
from pyozone.hdds.s3_cors import parse as parse_document
from pyozone.s3g.errors import S3Error, S3ErrorCode

ORIGIN = "Origin"
REQUEST_METHOD = "Access-Control-Request-Method"
REQUEST_HEADERS = "Access-Control-Request-Headers"
ALLOW_ORIGIN = "Access-Control-Allow-Origin"
ALLOW_CREDENTIALS = "Access-Control-Allow-Credentials"
ALLOW_METHODS = "Access-Control-Allow-Methods"
ALLOW_HEADERS = "Access-Control-Allow-Headers"
EXPOSE_HEADERS = "Access-Control-Expose-Headers"
MAX_AGE = "Access-Control-Max-Age"
VARY = "Vary"
VARY_VALUE = "Origin, Access-Control-Request-Headers, Access-Control-Request-Method"
"""What S3 answers a matched request with, preflight or not: a cache keeps one answer per origin, method
and headers asked."""
MAX_REQUESTED_HEADERS = 100
"""Distinct names a preflight may ask for (pyozone's bound: the matching runs on the gateway's event
loop, unauthenticated; browsers ask for a handful)."""


def parse(body: bytes) -> CORSConfiguration:
    """PutBucketCors' body, refused with S3's error as the kernel's checks name it."""
    try:
        return parse_document(body)
    except CORSError as e:
        raise S3Error(S3ErrorCode[e.code], e.message or None, **e.extra) from None


# ------------------------------------------------------------------ requests
def requested_headers(value: str | None) -> tuple[str, ...]:
    """Access-Control-Request-Headers as S3 reads it: comma-separated names, compared lowercase, each once
    (in the order first asked); more than MAX_REQUESTED_HEADERS distinct names is 400."""
    if not value:
        return ()
    names = tuple(dict.fromkeys(name for name in (part.strip().lower() for part in value.split(",")) if name))
    if len(names) > MAX_REQUESTED_HEADERS:
        raise S3Error(
            S3ErrorCode.BadRequest,
            f"Access-Control-Request-Headers names {len(names)} headers; at most {MAX_REQUESTED_HEADERS}.",
        )
    return names


class ResourceType(StrEnum):
    """The ResourceType of a refused preflight: OBJECT once rules were evaluated for a key's URL."""

    BUCKET = "BUCKET"
    OBJECT = "OBJECT"


def forbidden(message: str, method: str, resource_type: str) -> S3Error:
    return S3Error(S3ErrorCode.AccessForbidden, message, Method=method, ResourceType=resource_type)


NOT_ENABLED = "CORSResponse: CORS is not enabled for this bucket."
NO_BUCKET = "CORSResponse: Bucket not found"


def check_origin(headers: Mapping[str, str]) -> str:
    """A preflight's Origin; without one, S3 answers 400 before it looks at the bucket."""
    origin = headers.get(ORIGIN)
    if not origin:
        raise S3Error(S3ErrorCode.BadRequest)
    return origin


def preflight(
    config: CORSConfiguration | None, origin: str, headers: Mapping[str, str], on_object: bool
) -> dict[str, str]:
    """The CORS headers of S3's 200 answer to an OPTIONS preflight, or its refusal: a bucket without a
    configuration, or whose rules none matches, is 403 AccessForbidden (with the Method asked and the
    ResourceType); a preflight naming no method, 400."""
    method = headers.get(REQUEST_METHOD)
    if config is None:
        raise forbidden(NOT_ENABLED, method or "OPTIONS", ResourceType.BUCKET)
    if not method:
        raise S3Error(
            S3ErrorCode.BadRequest, "Insufficient information. Access-Control-Request-Method header needed."
        )
    asked = requested_headers(headers.get(REQUEST_HEADERS))
    rule = config.first_match(origin, method, asked)
    if rule is None:
        resource_type = ResourceType.OBJECT if on_object else ResourceType.BUCKET
        raise forbidden(S3ErrorCode.AccessForbidden.default_message, method, resource_type)
    answer = allowed(rule, origin)
    if asked:
        answer[ALLOW_HEADERS] = ", ".join(asked)
    return answer


def actual(config: CORSConfiguration | None, headers: Mapping[str, str], method: str) -> dict[str, str]:
    """The CORS headers of the answer to a request that is not a preflight: those of the first rule its
    Origin and method (Access-Control-Request-Method, if it names one) match, else none. S3 checks no
    header of an actual request, and refuses none for CORS: the browser does."""
    origin = headers.get(ORIGIN)
    if not origin or config is None:
        return {}
    rule = config.first_match(origin, headers.get(REQUEST_METHOD) or method)
    return allowed(rule, origin) if rule is not None else {}


def allowed(rule: CORSRule, origin: str) -> dict[str, str]:
    """What a matched rule answers: the origin (credentials allowed) or `*`, the rule's methods, exposed
    headers and max age."""
    answer = {ALLOW_ORIGIN: "*"} if rule.any_origin else {ALLOW_ORIGIN: origin, ALLOW_CREDENTIALS: "true"}
    answer[ALLOW_METHODS] = ", ".join(rule.allowed_methods)
    if rule.expose_headers:
        answer[EXPOSE_HEADERS] = ", ".join(rule.expose_headers)
    if rule.max_age_seconds is not None:
        answer[MAX_AGE] = str(rule.max_age_seconds)
    answer[VARY] = VARY_VALUE
    return answer
