"""S3's bucket CORS configuration (PutBucketCors' CORSConfiguration) and how S3 evaluates a browser's
request against it: pure functions over the document and the request's headers, so every rule of S3's is
testable without a server.

The document (API_CORSConfiguration, API_CORSRule): at most 100 rules, at most 64 KB; each rule has at
least one AllowedOrigin and one AllowedMethod (GET, PUT, HEAD, POST, DELETE), an origin or allowed header
holds at most one `*`, the ID at most 255 characters. A request is answered by the first rule whose
origins, methods and, on a preflight, every requested header match it ("How does Amazon S3 evaluate the
CORS configuration on a bucket?"): origins case-sensitively, header names without regard to case; `*`
stands for any run of characters, none included.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

from pyozone.s3g import xml
from pyozone.s3g.errors import S3Error, S3ErrorCode

ROOT = "CORSConfiguration"
MAX_RULES = 100
MAX_CONFIGURATION_BYTES = 64 * 1024
MAX_ID_CHARS = 255
MAX_AGE_SECONDS = 2**31 - 1
"""MaxAgeSeconds is an xs:int."""
METHODS = frozenset({"GET", "PUT", "HEAD", "POST", "DELETE"})

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

_RULE_MEMBERS = frozenset(
    {"ID", "AllowedHeader", "AllowedMethod", "AllowedOrigin", "ExposeHeader", "MaxAgeSeconds"}
)


@dataclass(frozen=True, slots=True)
class CORSRule:
    """One CORSRule, its lists in the order the document gave them (GetBucketCors gives them back so)."""

    allowed_methods: tuple[str, ...]
    allowed_origins: tuple[str, ...]
    allowed_headers: tuple[str, ...] = ()
    expose_headers: tuple[str, ...] = ()
    id: str | None = None
    max_age_seconds: int | None = None

    @property
    def any_origin(self) -> bool:
        """An AllowedOrigin of `*`: S3 answers `Access-Control-Allow-Origin: *`, without credentials."""
        return "*" in self.allowed_origins

    def matches(self, origin: str, method: str, requested_headers: tuple[str, ...] = ()) -> bool:
        """`requested_headers`: lowercase names (a preflight's Access-Control-Request-Headers)."""
        if method not in self.allowed_methods:
            return False
        if not any(_wildcard_match(allowed, origin) for allowed in self.allowed_origins):
            return False
        allowed = [header.lower() for header in self.allowed_headers]
        return all(any(_wildcard_match(a, name) for a in allowed) for name in requested_headers)


@dataclass(frozen=True, slots=True)
class CORSConfiguration:
    rules: tuple[CORSRule, ...]

    def first_match(
        self, origin: str, method: str, requested_headers: tuple[str, ...] = ()
    ) -> CORSRule | None:
        return next((r for r in self.rules if r.matches(origin, method, requested_headers)), None)


def _wildcard_match(pattern: str, value: str) -> bool:
    head, star, tail = pattern.partition("*")
    if not star:
        return pattern == value
    return len(value) >= len(head) + len(tail) and value.startswith(head) and value.endswith(tail)


# ------------------------------------------------------------------ the document
def parse(body: bytes) -> CORSConfiguration:
    """PutBucketCors' body, checked as S3 checks it: a document that does not follow the schema (no rule,
    a rule without an origin or a method, an unknown element) is MalformedXML; a rule S3 cannot apply is
    InvalidRequest in Amazon's words."""
    if len(body) > MAX_CONFIGURATION_BYTES:
        raise S3Error(
            S3ErrorCode.MaxMessageLengthExceeded,
            f"The CORS configuration is {len(body)} bytes; at most {MAX_CONFIGURATION_BYTES} are allowed.",
        )
    root = xml.parse(body, ROOT)
    nodes = list(root)
    if not nodes or any(node.tag != "CORSRule" for node in nodes):
        raise S3Error(S3ErrorCode.MalformedXML)
    if len(nodes) > MAX_RULES:
        raise S3Error(
            S3ErrorCode.InvalidRequest,
            f"The number of CORS rules should not exceed allowed limit of {MAX_RULES} rules.",
        )
    rules = tuple(_rule(node) for node in nodes)
    for rule in rules:
        _check(rule)
    return CORSConfiguration(rules)


def _rule(node: ET.Element) -> CORSRule:
    values: dict[str, list[str]] = {name: [] for name in _RULE_MEMBERS}
    for child in node:
        if child.tag not in _RULE_MEMBERS or len(child):
            raise S3Error(S3ErrorCode.MalformedXML)
        values[child.tag].append((child.text or "").strip())
    if not values["AllowedMethod"] or not values["AllowedOrigin"]:
        raise S3Error(S3ErrorCode.MalformedXML)
    if len(values["ID"]) > 1 or len(values["MaxAgeSeconds"]) > 1:
        raise S3Error(S3ErrorCode.MalformedXML)
    max_age = None
    if values["MaxAgeSeconds"]:
        text = values["MaxAgeSeconds"][0]
        if not text.isascii() or not text.isdigit() or int(text) > MAX_AGE_SECONDS:
            raise S3Error(S3ErrorCode.MalformedXML)
        max_age = int(text)
    return CORSRule(
        allowed_methods=tuple(values["AllowedMethod"]),
        allowed_origins=tuple(values["AllowedOrigin"]),
        allowed_headers=tuple(values["AllowedHeader"]),
        expose_headers=tuple(values["ExposeHeader"]),
        id=values["ID"][0] if values["ID"] else None,
        max_age_seconds=max_age,
    )


def _check(rule: CORSRule) -> None:
    for method in rule.allowed_methods:
        if method not in METHODS:
            raise S3Error(
                S3ErrorCode.InvalidRequest,
                f"Found unsupported HTTP method in CORS config. Unsupported method is {method}",
            )
    for kind, values in (("AllowedOrigin", rule.allowed_origins), ("AllowedHeader", rule.allowed_headers)):
        for value in values:
            if value.count("*") > 1:
                raise S3Error(
                    S3ErrorCode.InvalidRequest, f'{kind} "{value}" can not have more than one wildcard.'
                )
    if rule.id is not None and len(rule.id) > MAX_ID_CHARS:
        raise S3Error(
            S3ErrorCode.InvalidArgument,
            f"The ID of a CORSRule is {len(rule.id)} characters; at most {MAX_ID_CHARS} are allowed.",
            ArgumentName="ID",
        )


def document(config: CORSConfiguration) -> bytes:
    """The configuration as GetBucketCors answers it (members in the order of S3's model), and as the
    gateway keeps it in the bucket's metadata."""
    return xml.document(ROOT, *(_rule_element(rule) for rule in config.rules))


def _rule_element(rule: CORSRule) -> ET.Element:
    return xml.el(
        "CORSRule",
        None,
        xml.el("ID", rule.id) if rule.id is not None else None,
        *(xml.el("AllowedHeader", h) for h in rule.allowed_headers),
        *(xml.el("AllowedMethod", m) for m in rule.allowed_methods),
        *(xml.el("AllowedOrigin", o) for o in rule.allowed_origins),
        *(xml.el("ExposeHeader", h) for h in rule.expose_headers),
        xml.el("MaxAgeSeconds", rule.max_age_seconds) if rule.max_age_seconds is not None else None,
    )


@lru_cache(maxsize=256)
def stored(text: str) -> CORSConfiguration:
    """A configuration the gateway stored (`document`), read once per distinct text."""
    return parse(text.encode())


# ------------------------------------------------------------------ requests
def requested_headers(value: str | None) -> tuple[str, ...]:
    """Access-Control-Request-Headers as S3 reads it: comma-separated names, compared lowercase."""
    if not value:
        return ()
    return tuple(name for name in (part.strip().lower() for part in value.split(",")) if name)


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
