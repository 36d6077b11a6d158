"""S3's bucket CORS configuration (PutBucketCors' CORSConfiguration): the document, its checks and how a
browser's origin, method and requested headers match its rules. Sans-IO and in the kernel because both
sides read it: OM checks every document before it stores one (om/bucket_documents.py), so nothing it keeps is
unreadable (the 64 KB limit is of the body as sent; the kept form is read without it), and the S3 gateway
answers browsers with it (s3g/cors.py).

The document (API_CORSConfiguration, API_CORSRule): at most 100 rules, at most 64 KB as sent; each rule has
at least one AllowedOrigin and one AllowedMethod (GET, PUT, HEAD, POST, DELETE), an origin or allowed header
holds at most one `*`, an exposed header none, the ID at most 255 characters. Every value that an answer
echoes as a header (origins, header names) is printable ASCII: a CR or LF would end the header. A request is
answered by the first rule whose origins, methods and, on a preflight, every requested header match it ("How
does Amazon S3 evaluate the CORS configuration on a bucket?"): origins case-sensitively, header names
without regard to case; `*` stands for any run of characters, none included, matched by the literal pieces
around it (never a backtracking expression), against an Origin of at most MAX_ORIGIN_CHARS.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

ROOT = "CORSConfiguration"
S3_NAMESPACE = "http://s3.amazonaws.com/doc/2006-03-01/"
MAX_RULES = 100
MAX_CONFIGURATION_BYTES = 64 * 1024
"""Of the document as the client sent it."""
MAX_ID_CHARS = 255
MAX_AGE_SECONDS = 2**31 - 1
"""MaxAgeSeconds is an xs:int."""
MAX_ORIGIN_CHARS = 2048
"""The longest Origin matched: a browser's is a scheme, a host of at most 253 characters and a port; a
longer one matches no rule, so no request makes the rules cost more than this (R29's N0)."""
METHODS = frozenset({"GET", "PUT", "HEAD", "POST", "DELETE"})

_RULE_MEMBERS = frozenset(
    {"ID", "AllowedHeader", "AllowedMethod", "AllowedOrigin", "ExposeHeader", "MaxAgeSeconds"}
)
_HEADER_TEXT = re.compile(r"[\x20-\x7e]*")
"""What a value echoed in a header may hold: printable ASCII (no CR, LF, other control or non-ASCII)."""


class CORSError(Exception):
    """A document S3 refuses: `code` is S3's error code (MalformedXML, InvalidRequest, ...), `message` its
    words; the gateway answers it as is, OM as INVALID_REQUEST."""

    def __init__(self, code: str, message: str = "", **extra: str) -> None:
        super().__init__(message or code)
        self.code = code
        self.message = message
        self.extra = extra


class _Patterns:
    """A list of patterns, each with at most one `*` (`_check` refuses more, as Amazon does), matched
    without backtracking (R29's N0) and in C over many patterns at once, never a Python step per
    pattern (R26's D8, R30's C1: a preflight must not cost requested names x allowed patterns): exact
    names by a set, prefixes (`x-amz-*`) and suffixes by one startswith/endswith over all of them, and
    the rest (`https://*.example.com`) by head: per distinct head length one lookup of the value's
    start, then one endswith over that head's tails. A 64 KB document has at most a few hundred
    distinct head lengths."""

    __slots__ = ("any", "exact", "heads", "prefixes", "suffixes")

    def __init__(self, patterns: tuple[str, ...]) -> None:
        self.any = "*" in patterns
        self.exact = frozenset(p for p in patterns if "*" not in p)
        self.prefixes = tuple({p[:-1] for p in patterns if p.endswith("*")})
        self.suffixes = tuple({p[1:] for p in patterns if p.startswith("*")})
        heads: dict[int, dict[str, list[str]]] = {}
        for pattern in dict.fromkeys(p for p in patterns if "*" in p[1:-1]):
            head, tail = pattern.split("*", 1)
            heads.setdefault(len(head), {}).setdefault(head, []).append(tail)
        self.heads = tuple(
            (length, {head: tuple(tails) for head, tails in by_head.items()})
            for length, by_head in sorted(heads.items())
        )

    def match(self, value: str) -> bool:
        if (
            self.any
            or value in self.exact
            or (bool(self.prefixes) and value.startswith(self.prefixes))
            or (bool(self.suffixes) and value.endswith(self.suffixes))
        ):
            return True
        for length, by_head in self.heads:
            if length > len(value):
                return False
            tails = by_head.get(value[:length])
            if tails is not None and value[length:].endswith(tails):  # the tail after the head
                return True
        return False


@dataclass(frozen=True, slots=True)
class CORSRule:
    """One CORSRule, its lists in the order the document gave them (GetBucketCors gives them back so)."""

    allowed_methods: tuple[str, ...]
    allowed_origins: tuple[str, ...]
    allowed_headers: tuple[str, ...] = ()
    expose_headers: tuple[str, ...] = ()
    id: str | None = None
    max_age_seconds: int | None = None
    _origins: _Patterns = field(init=False, repr=False, compare=False)
    _headers: _Patterns = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_origins", _Patterns(self.allowed_origins))
        object.__setattr__(self, "_headers", _Patterns(tuple(h.lower() for h in self.allowed_headers)))

    @property
    def any_origin(self) -> bool:
        """An AllowedOrigin of `*`: S3 answers `Access-Control-Allow-Origin: *`, without credentials."""
        return "*" in self.allowed_origins

    def matches(self, origin: str, method: str, requested_headers: tuple[str, ...] = ()) -> bool:
        """`requested_headers`: lowercase names (a preflight's Access-Control-Request-Headers)."""
        if method not in self.allowed_methods or not self._origins.match(origin):
            return False
        return all(self._headers.match(name) for name in requested_headers)


@dataclass(frozen=True, slots=True)
class CORSConfiguration:
    rules: tuple[CORSRule, ...]

    def first_match(
        self, origin: str, method: str, requested_headers: tuple[str, ...] = ()
    ) -> CORSRule | None:
        if len(origin) > MAX_ORIGIN_CHARS:
            return None
        return next((r for r in self.rules if r.matches(origin, method, requested_headers)), None)


# ------------------------------------------------------------------ the document
def parse(body: bytes, limit: int | None = MAX_CONFIGURATION_BYTES) -> CORSConfiguration:
    """PutBucketCors' body, checked as S3 checks it: above `limit` (64 KB), MaxMessageLengthExceeded; a
    document that does not follow the schema (no rule, a rule without an origin or a method, an unknown
    element) is MalformedXML; a rule S3 cannot apply is InvalidRequest in Amazon's words.

    `limit` None: a document OM keeps (`document` of an accepted body), whose escapes and declaration may
    make it longer than the body as sent (R29's N1); its size was checked on the way in."""
    if limit is not None and len(body) > limit:
        raise CORSError(
            "MaxMessageLengthExceeded",
            f"The CORS configuration is {len(body)} bytes; at most {limit} are allowed.",
        )
    root = _root(body)
    nodes = list(root)
    if not nodes or any(node.tag != "CORSRule" for node in nodes):
        raise CORSError("MalformedXML")
    if len(nodes) > MAX_RULES:
        raise CORSError(
            "InvalidRequest",
            f"The number of CORS rules should not exceed allowed limit of {MAX_RULES} rules.",
        )
    rules = tuple(_rule(node) for node in nodes)
    for rule in rules:
        _check(rule)
    return CORSConfiguration(rules)


def _root(body: bytes) -> ET.Element:
    try:
        element = ET.fromstring(body)  # expat: no external entities, its amplification guard
    except (ET.ParseError, LookupError, ValueError):  # also an unknown or multi-byte encoding (R29's N7)
        raise CORSError("MalformedXML") from None
    for node in element.iter():
        if isinstance(node.tag, str) and "}" in node.tag:
            node.tag = node.tag.rsplit("}", 1)[1]
    if element.tag != ROOT:
        raise CORSError("MalformedXML")
    return element


def _rule(node: ET.Element) -> CORSRule:
    values: dict[str, list[str]] = {name: [] for name in _RULE_MEMBERS}
    for child in node:
        if child.tag not in _RULE_MEMBERS or len(child):
            raise CORSError("MalformedXML")
        values[child.tag].append((child.text or "").strip())
    if not values["AllowedMethod"] or not values["AllowedOrigin"]:
        raise CORSError("MalformedXML")
    if len(values["ID"]) > 1 or len(values["MaxAgeSeconds"]) > 1:
        raise CORSError("MalformedXML")
    max_age = None
    if values["MaxAgeSeconds"]:
        digits = values["MaxAgeSeconds"][0].lstrip("0") or "0"
        if (
            not digits.isascii()
            or not digits.isdigit()
            or len(digits) > len(str(MAX_AGE_SECONDS))  # before int(): its digit limit (R29's N7)
            or int(digits) > MAX_AGE_SECONDS
        ):
            raise CORSError("MalformedXML")
        max_age = int(digits)
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
            raise CORSError(
                "InvalidRequest",
                f"Found unsupported HTTP method in CORS config. Unsupported method is {method}",
            )
    for kind, values in (
        ("AllowedOrigin", rule.allowed_origins),
        ("AllowedHeader", rule.allowed_headers),
        ("ExposeHeader", rule.expose_headers),
    ):
        for value in values:
            if not _HEADER_TEXT.fullmatch(value):
                raise CORSError(
                    "InvalidRequest", f"{kind} {value[:64]!r} holds a character a header cannot carry."
                )
            if kind == "ExposeHeader" and "*" in value:
                raise CORSError(
                    "InvalidRequest",
                    f'ExposeHeader "{value}" contains wildcard. '
                    "We currently do not support wildcard for ExposeHeader.",
                )
            if value.count("*") > 1:
                raise CORSError("InvalidRequest", f'{kind} "{value}" can not have more than one wildcard.')
    if rule.id is not None:
        if len(rule.id) > MAX_ID_CHARS:
            raise CORSError(
                "InvalidArgument",
                f"The ID of a CORSRule is {len(rule.id)} characters; at most {MAX_ID_CHARS} are allowed.",
                ArgumentName="ID",
            )
        if any(ord(c) < 0x20 or ord(c) == 0x7F for c in rule.id):
            raise CORSError(
                "InvalidArgument", "The ID of a CORSRule holds a control character.", ArgumentName="ID"
            )


def document(config: CORSConfiguration) -> bytes:
    """The configuration as GetBucketCors answers it (members in the order of S3's model), and as OM
    keeps it."""
    root = ET.Element(ROOT, {"xmlns": S3_NAMESPACE})
    root.extend(_rule_element(rule) for rule in config.rules)
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="utf-8")


def _rule_element(rule: CORSRule) -> ET.Element:
    element = ET.Element("CORSRule")
    members: list[tuple[str, object]] = [("ID", rule.id)] if rule.id is not None else []
    members += [("AllowedHeader", h) for h in rule.allowed_headers]
    members += [("AllowedMethod", m) for m in rule.allowed_methods]
    members += [("AllowedOrigin", o) for o in rule.allowed_origins]
    members += [("ExposeHeader", h) for h in rule.expose_headers]
    if rule.max_age_seconds is not None:
        members.append(("MaxAgeSeconds", rule.max_age_seconds))
    for tag, text in members:
        ET.SubElement(element, tag).text = str(text)
    return element
