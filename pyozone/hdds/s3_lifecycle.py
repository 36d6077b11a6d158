"""S3's bucket lifecycle configuration (PutBucketLifecycleConfiguration's LifecycleConfiguration): the
document, its checks, and when a rule's action falls due for an object, a noncurrent version, a delete
marker or an incomplete multipart upload (Amazon's "Lifecycle configuration elements"). Sans-IO and in the
kernel because both sides read it: OM checks every document before it keeps one (om/bucket_documents.py)
and its lifecycle service applies the rules (om/lifecycle.py); the S3 gateway answers S3's errors with it.

The actions are the expirations (Expiration by Days or Date, ExpiredObjectDeleteMarker,
NoncurrentVersionExpiration with NewerNoncurrentVersions, AbortIncompleteMultipartUpload); pyozone keeps
one storage class, so a Transition or NoncurrentVersionTransition is NotImplemented, once the rest of the
document was found valid. A rule's age in days counts from the object's creation (a noncurrent version's:
from when its successor was created) and is rounded up to the next midnight UTC, as Amazon defines it: an
object created 2014-01-15 10:30 UTC with Days 3 expires at 2014-01-19 00:00 UTC.
"""

from __future__ import annotations

import hashlib
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from itertools import pairwise

ROOT = "LifecycleConfiguration"
S3_NAMESPACE = "http://s3.amazonaws.com/doc/2006-03-01/"
MAX_RULES = 1000
"""Amazon: a lifecycle configuration holds up to 1,000 rules."""
MAX_ID_CHARS = 255
MAX_NEWER_NONCURRENT = 100
"""Amazon keeps up to 100 newer noncurrent versions by NewerNoncurrentVersions."""
MAX_CONFIGURATION_BYTES = 1024 * 1024
"""Of the document as sent (Amazon names no bound; 1,000 rules of about 1 KB each fit)."""
DAY_MS = 86_400_000
MAX_INTEGER = 2**31 - 1
"""The largest of Amazon's Integer members (Days and the like are a Java int)."""

_RULE_MEMBERS = frozenset(
    {"ID", "Status", "Filter", "Prefix", "Expiration", "Transition", "NoncurrentVersionTransition",
     "NoncurrentVersionExpiration", "AbortIncompleteMultipartUpload"}
)  # fmt: skip
_SINGLE = frozenset(_RULE_MEMBERS - {"Transition", "NoncurrentVersionTransition"})
_FILTER_MEMBERS = frozenset({"Prefix", "Tag", "ObjectSizeGreaterThan", "ObjectSizeLessThan", "And"})
_INTEGER = re.compile(r"-?[0-9]{1,19}")


class LifecycleError(Exception):
    """A document S3 refuses: `code` is S3's error code (MalformedXML, InvalidArgument, InvalidRequest,
    NotImplemented), `message` its words; the gateway answers it as is, OM as INVALID_REQUEST."""

    def __init__(self, code: str, message: str = "") -> None:
        super().__init__(message or code)
        self.code = code
        self.message = message


def _malformed() -> LifecycleError:
    return LifecycleError("MalformedXML")


@dataclass(frozen=True, slots=True)
class LifecycleFilter:
    """Which objects a rule applies to: every predicate given must hold. `legacy`: the rule's own
    top-level Prefix (before Filter existed); `conjunction`: the Filter held an And. Both only say how
    GetBucketLifecycleConfiguration writes the filter back."""

    prefix: str = ""
    tags: tuple[tuple[str, str], ...] = ()
    size_greater_than: int | None = None
    size_less_than: int | None = None
    legacy: bool = False
    conjunction: bool = False
    prefix_sent: bool = False
    """The Filter named a Prefix (an empty one too), which GetBucketLifecycleConfiguration answers back."""

    @property
    def by_size(self) -> bool:
        return self.size_greater_than is not None or self.size_less_than is not None

    def matches(self, key: str, size: int, tags: tuple[tuple[str, str], ...]) -> bool:
        if not key.startswith(self.prefix):
            return False
        if self.size_greater_than is not None and not size > self.size_greater_than:
            return False
        if self.size_less_than is not None and not size < self.size_less_than:
            return False
        held = dict(tags)
        return all(held.get(k) == v for k, v in self.tags)


@dataclass(frozen=True, slots=True)
class LifecycleRule:
    id: str
    enabled: bool
    filter: LifecycleFilter
    expiration_days: int | None = None
    expiration_date_ms: int | None = None
    """A midnight UTC: current versions created at any time expire from then on."""
    expired_object_delete_marker: bool | None = None
    noncurrent_days: int | None = None
    newer_noncurrent_versions: int | None = None
    abort_days: int | None = None
    """AbortIncompleteMultipartUpload's DaysAfterInitiation."""


@dataclass(frozen=True, slots=True)
class ObjectFacts:
    """What the rules look at in a version: its key, size, tags and creation time (ms since the epoch)."""

    key: str
    size: int
    tags: tuple[tuple[str, str], ...]
    creation_ms: int


def due_ms(start_ms: int, days: int) -> int:
    """When an action of `days` days falls due for something that started at `start_ms`: the start plus
    the days, rounded up to the next midnight UTC (a midnight stays)."""
    return -(-(start_ms + days * DAY_MS) // DAY_MS) * DAY_MS


@dataclass(frozen=True, slots=True)
class LifecycleConfiguration:
    rules: tuple[LifecycleRule, ...]

    def _enabled(self) -> tuple[LifecycleRule, ...]:
        return tuple(r for r in self.rules if r.enabled)

    def key_prefixes(self) -> tuple[str, ...]:
        """Where the enabled rules acting on objects, versions or markers look: their prefixes, in order, none
        under another (so the key ranges they name are disjoint and in order); () when no rule acts there."""
        return _outermost(
            r.filter.prefix
            for r in self._enabled()
            if r.expiration_days is not None
            or r.expiration_date_ms is not None
            or r.expired_object_delete_marker
            or r.noncurrent_days is not None
        )

    def upload_prefixes(self) -> tuple[str, ...]:
        """As key_prefixes, for the enabled rules aborting incomplete multipart uploads."""
        return _outermost(r.filter.prefix for r in self._enabled() if r.abort_days is not None)

    def current_expires(self, obj: ObjectFacts, now_ms: int) -> bool:
        """Whether an enabled rule's Expiration (Days or Date) has fallen due for the current version."""
        for rule in self._enabled():
            if not rule.filter.matches(obj.key, obj.size, obj.tags):
                continue
            if rule.expiration_days is not None and now_ms >= due_ms(obj.creation_ms, rule.expiration_days):
                return True
            if rule.expiration_date_ms is not None and now_ms >= rule.expiration_date_ms:
                return True
        return False

    def noncurrent_expires(self, obj: ObjectFacts, noncurrent_ms: int, newer: int, now_ms: int) -> bool:
        """Whether an enabled rule's NoncurrentVersionExpiration has fallen due for a version noncurrent
        since `noncurrent_ms` (its successor's creation), with `newer` noncurrent versions newer than it:
        NewerNoncurrentVersions of them are kept whatever their age."""
        for rule in self._enabled():
            if rule.noncurrent_days is None or not rule.filter.matches(obj.key, obj.size, obj.tags):
                continue
            kept = rule.newer_noncurrent_versions
            if (kept is None or newer >= kept) and now_ms >= due_ms(noncurrent_ms, rule.noncurrent_days):
                return True
        return False

    def removes_marker(self, key: str, created_ms: int, now_ms: int) -> bool:
        """Whether an enabled rule removes `key`'s expired object delete marker (one with no version left
        beneath it: the caller knows), created at `created_ms`: ExpiredObjectDeleteMarker at once, and an
        Expiration by Days once the marker is that old, as Amazon's does ("Managing delete markers")."""
        return any(
            r.filter.matches(key, 0, ())
            and (
                bool(r.expired_object_delete_marker)
                or (r.expiration_days is not None and now_ms >= due_ms(created_ms, r.expiration_days))
            )
            for r in self._enabled()
        )

    def upload_aborts(self, key: str, initiated_ms: int, now_ms: int) -> bool:
        """Whether an enabled rule's AbortIncompleteMultipartUpload has fallen due for an upload of `key`
        initiated at `initiated_ms` (such a rule filters by prefix only)."""
        return any(
            r.abort_days is not None and key.startswith(r.filter.prefix)
            and now_ms >= due_ms(initiated_ms, r.abort_days)
            for r in self._enabled()
        )  # fmt: skip


def _outermost(prefixes: Iterable[str]) -> tuple[str, ...]:
    """The prefixes in order without those another of them covers ("" covers every one)."""
    kept: list[str] = []
    for prefix in sorted(set(prefixes)):
        if not kept or not prefix.startswith(kept[-1]):
            kept.append(prefix)
    return tuple(kept)


@dataclass(frozen=True, slots=True)
class LifecycleRun:
    """What one run of OM's lifecycle service did (om/lifecycle.py; runS3Lifecycle answers it)."""

    keys_expired: int = 0
    versions_expired: int = 0
    markers_removed: int = 0
    uploads_aborted: int = 0

    @property
    def actions(self) -> int:
        return self.keys_expired + self.versions_expired + self.markers_removed + self.uploads_aborted


# ------------------------------------------------------------------ the document
def parse(body: bytes, limit: int | None = MAX_CONFIGURATION_BYTES) -> LifecycleConfiguration:
    """PutBucketLifecycleConfiguration's body, checked as S3 checks it: a document that does not follow
    the schema is MalformedXML, a value out of its range InvalidArgument, a rule S3 cannot apply
    InvalidRequest, all in Amazon's words; a transition NotImplemented. A rule without an ID gets one made
    from its content (Amazon makes a random one). `limit` None: a document OM keeps."""
    if limit is not None and len(body) > limit:
        raise LifecycleError(
            "MaxMessageLengthExceeded",
            f"The lifecycle configuration is {len(body)} bytes; at most {limit} are allowed.",
        )
    root = _root(body)
    nodes = list(root)
    if not nodes or any(node.tag != "Rule" for node in nodes):
        raise _malformed()
    if len(nodes) > MAX_RULES:
        raise LifecycleError(
            "InvalidRequest",
            f"The number of lifecycle rules must not exceed the allowed limit of {MAX_RULES} rules.",
        )
    members = [_members(node) for node in nodes]
    _check_ids(members)
    v2 = "Filter" in members[0]
    transitions = False
    rules = []
    for i, m in enumerate(members):
        rules.append(_rule(m, v2, i))
        transitions = transitions or "Transition" in m or "NoncurrentVersionTransition" in m
    if not v2:
        _check_overlaps(members)
    if transitions:
        raise LifecycleError(
            "NotImplemented", "Lifecycle transitions are not implemented: pyozone keeps one storage class."
        )
    return LifecycleConfiguration(tuple(rules))


_V1_ACTIONS = ("Expiration", "NoncurrentVersionExpiration", "AbortIncompleteMultipartUpload")


def _check_overlaps(members: list[dict[str, list[ET.Element]]]) -> None:
    """Before Filter (rules with their own Prefix), two rules with the same action whose prefixes overlap
    (one starts with the other) are refused, as Amazon refuses them; with Filter they may overlap."""
    for action in _V1_ACTIONS:
        prefixes = sorted(_verbatim(m, "Prefix") for m in members if action in m)
        for shorter, longer in pairwise(prefixes):
            if longer.startswith(shorter):
                raise LifecycleError(
                    "InvalidRequest",
                    f"Found overlapping prefixes '{shorter}' and '{longer}' for same action type '{action}'",
                )


def _root(body: bytes) -> ET.Element:
    try:
        element = ET.fromstring(body)  # expat: no external entities, its amplification guard
    except (ET.ParseError, LookupError, ValueError):
        raise _malformed() from None
    for node in element.iter():
        if isinstance(node.tag, str) and "}" in node.tag:
            node.tag = node.tag.rsplit("}", 1)[1]
    if element.tag != ROOT:
        raise _malformed()
    return element


def _members(node: ET.Element) -> dict[str, list[ET.Element]]:
    found: dict[str, list[ET.Element]] = {}
    for child in node:
        if child.tag not in _RULE_MEMBERS:
            raise _malformed()
        found.setdefault(child.tag, []).append(child)
    if any(len(found[name]) > 1 for name in _SINGLE if name in found):
        raise _malformed()
    return found


def _text(m: dict[str, list[ET.Element]], name: str) -> str | None:
    nodes = m.get(name)
    return None if nodes is None else (nodes[0].text or "").strip()


def _verbatim(m: dict[str, list[ET.Element]], name: str) -> str:
    """A key prefix as sent, spaces and all: S3 matches a prefix byte for byte, as the Filter's Prefix."""
    nodes = m.get(name)
    return "" if nodes is None else nodes[0].text or ""


def _check_ids(members: list[dict[str, list[ET.Element]]]) -> None:
    seen: set[str] = set()
    for m in members:
        rule_id = _text(m, "ID")
        if not rule_id:
            continue
        if len(rule_id) > MAX_ID_CHARS:
            raise LifecycleError(
                "InvalidArgument", f"ID length should not exceed allowed limit of {MAX_ID_CHARS}"
            )
        if rule_id in seen:
            raise LifecycleError(
                "InvalidArgument", "Rule ID must be unique. Found same ID for more than one rule"
            )
        seen.add(rule_id)


def _rule(m: dict[str, list[ET.Element]], v2: bool, index: int) -> LifecycleRule:
    status = _text(m, "Status")
    if status not in ("Enabled", "Disabled"):
        raise _malformed()
    has_filter, has_prefix = "Filter" in m, "Prefix" in m
    if has_filter == has_prefix:
        raise _malformed()  # a rule names its objects by exactly one of Filter and its own Prefix
    if v2 and has_prefix:
        raise LifecycleError(
            "InvalidRequest",
            "Base level prefix cannot be used in Lifecycle V2, prefixes are only supported in the Filter.",
        )
    if not v2 and has_filter:
        raise LifecycleError("InvalidRequest", "Filter element can only be used in Lifecycle V2.")
    scope = _filter(m["Filter"][0]) if has_filter else LifecycleFilter(_verbatim(m, "Prefix"), legacy=True)
    actions = ("Expiration", "NoncurrentVersionExpiration", "AbortIncompleteMultipartUpload", "Transition",
               "NoncurrentVersionTransition")  # fmt: skip
    if not any(a in m for a in actions):
        raise LifecycleError("InvalidRequest", "At least one action needs to be specified in a rule")
    days, date, marker = _expiration(m["Expiration"][0]) if "Expiration" in m else (None, None, None)
    noncurrent, newer = (
        _noncurrent(m["NoncurrentVersionExpiration"][0], v2)
        if "NoncurrentVersionExpiration" in m
        else (None, None)
    )
    abort = _abort(m["AbortIncompleteMultipartUpload"][0]) if "AbortIncompleteMultipartUpload" in m else None
    if marker is not None:
        if scope.tags:
            raise LifecycleError("InvalidRequest", "ExpiredObjectDeleteMarker cannot be specified with Tags.")
        if scope.by_size:
            raise LifecycleError(
                "InvalidRequest", "ExpiredObjectDeleteMarker cannot be specified with Object Size."
            )
    if abort is not None:
        if scope.tags:
            raise LifecycleError(
                "InvalidRequest", "AbortIncompleteMultipartUpload cannot be specified with Tags."
            )
        if scope.by_size:
            raise LifecycleError(
                "InvalidRequest", "AbortIncompleteMultipartUpload cannot be specified with Object Size."
            )
    rule = LifecycleRule(
        id=_text(m, "ID") or "", enabled=status == "Enabled", filter=scope, expiration_days=days,
        expiration_date_ms=date, expired_object_delete_marker=marker, noncurrent_days=noncurrent,
        newer_noncurrent_versions=newer, abort_days=abort,
    )  # fmt: skip
    if not rule.id:
        rule = replace(rule, id=hashlib.sha256(f"{index}:{rule!r}".encode()).hexdigest()[:32])
    return rule


def _children(node: ET.Element, allowed: frozenset[str]) -> dict[str, list[ET.Element]]:
    found: dict[str, list[ET.Element]] = {}
    for child in node:
        if child.tag not in allowed:
            raise _malformed()
        found.setdefault(child.tag, []).append(child)
    return found


def _filter(node: ET.Element) -> LifecycleFilter:
    found = _children(node, _FILTER_MEMBERS)
    if sum(len(v) for v in found.values()) > 1:
        raise _malformed()  # more than one predicate belongs in an And
    if "And" in found:
        inner = _children(found["And"][0], frozenset(_FILTER_MEMBERS - {"And"}))
        if any(len(v) > 1 for k, v in inner.items() if k != "Tag"):
            raise _malformed()
        if sum(len(v) for v in inner.values()) < 2:
            raise _malformed()  # Amazon's LifecycleRuleAndOperator: two or more predicates (MinIO too)
        return _predicates(inner, conjunction=True)
    return _predicates(found, conjunction=False)


def _predicates(found: dict[str, list[ET.Element]], conjunction: bool) -> LifecycleFilter:
    tags = tuple(_tag(t) for t in found.get("Tag", []))
    if len({k for k, _ in tags}) != len(tags):
        raise LifecycleError("InvalidRequest", "Duplicate Tag Keys are not allowed.")
    greater = _size(found, "ObjectSizeGreaterThan")
    less = _size(found, "ObjectSizeLessThan")
    if less is not None and less < 1:
        raise LifecycleError("InvalidRequest", "'ObjectSizeLessThan' must be greater than 0.")
    if greater is not None and less is not None and less <= greater:
        raise LifecycleError(
            "InvalidRequest", "'ObjectSizeLessThan' has to be a value greater than 'ObjectSizeGreaterThan'."
        )
    prefix = (found["Prefix"][0].text or "") if "Prefix" in found else ""
    return LifecycleFilter(
        prefix, tags, greater, less, conjunction=conjunction, prefix_sent="Prefix" in found
    )


def _tag(node: ET.Element) -> tuple[str, str]:
    found = _children(node, frozenset({"Key", "Value"}))
    if len(found.get("Key", [])) != 1 or len(found.get("Value", [])) > 1:
        raise _malformed()
    key = found["Key"][0].text or ""
    if not key:
        raise LifecycleError("InvalidArgument", "The TagKey you have provided is invalid")
    return key, (found["Value"][0].text or "") if "Value" in found else ""


def _size(found: dict[str, list[ET.Element]], name: str) -> int | None:
    if name not in found:
        return None
    value = _integer(found[name][0].text)
    if value < 0:
        raise LifecycleError("InvalidRequest", f"'{name}' must be a non-negative integer.")
    return value


def _integer(text: str | None) -> int:
    value = (text or "").strip()
    if not _INTEGER.fullmatch(value):
        raise _malformed()
    return int(value)


def _positive(text: str | None, what: str) -> int:
    """Amazon's Integer members (Days, NoncurrentDays, NewerNoncurrentVersions, DaysAfterInitiation): a
    number beyond a 32-bit int is not one (MalformedXML, as a word is)."""
    value = _integer(text)
    if value > MAX_INTEGER:
        raise _malformed()
    if value <= 0:
        raise LifecycleError("InvalidArgument", f"{what} must be a positive integer")
    return value


def _expiration(node: ET.Element) -> tuple[int | None, int | None, bool | None]:
    found = _children(node, frozenset({"Days", "Date", "ExpiredObjectDeleteMarker"}))
    if sum(len(v) for v in found.values()) != 1:
        raise _malformed()  # exactly one of Days, Date and ExpiredObjectDeleteMarker
    if "Days" in found:
        return _positive(found["Days"][0].text, "'Days' for Expiration action"), None, None
    if "Date" in found:
        return None, _midnight(found["Date"][0].text or ""), None
    text = (found["ExpiredObjectDeleteMarker"][0].text or "").strip()
    if text not in ("true", "false"):
        raise _malformed()
    return None, None, text == "true"


def _midnight(text: str) -> int:
    value = text.strip()
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise _malformed() from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    when = when.astimezone(UTC)
    if (when.hour, when.minute, when.second, when.microsecond) != (0, 0, 0, 0):
        raise LifecycleError("InvalidArgument", "'Date' must be at midnight GMT")  # a fraction too
    return int(when.timestamp()) * 1000


def _noncurrent(node: ET.Element, v2: bool) -> tuple[int, int | None]:
    found = _children(node, frozenset({"NoncurrentDays", "NewerNoncurrentVersions"}))
    if len(found.get("NoncurrentDays", [])) != 1 or len(found.get("NewerNoncurrentVersions", [])) > 1:
        raise _malformed()
    days = _positive(
        found["NoncurrentDays"][0].text, "'NoncurrentDays' for NoncurrentVersionExpiration action"
    )
    newer = None
    if "NewerNoncurrentVersions" in found:
        if not v2:
            raise LifecycleError(
                "InvalidRequest", "NewerNoncurrentVersions element can only be used in Lifecycle V2."
            )
        newer = _positive(
            found["NewerNoncurrentVersions"][0].text,
            "'NewerNoncurrentVersions' for NoncurrentVersionExpiration action",
        )
        if newer > MAX_NEWER_NONCURRENT:
            raise LifecycleError(
                "InvalidArgument", f"'NewerNoncurrentVersions' must not exceed {MAX_NEWER_NONCURRENT}"
            )
    return days, newer


def _abort(node: ET.Element) -> int:
    found = _children(node, frozenset({"DaysAfterInitiation"}))
    if len(found.get("DaysAfterInitiation", [])) != 1:
        raise _malformed()
    return _positive(
        found["DaysAfterInitiation"][0].text,
        "'DaysAfterInitiation' for AbortIncompleteMultipartUpload action",
    )


def document(config: LifecycleConfiguration) -> bytes:
    """The configuration as GetBucketLifecycleConfiguration answers it, and as OM keeps it."""
    root = ET.Element(ROOT, {"xmlns": S3_NAMESPACE})
    root.extend(_rule_element(rule) for rule in config.rules)
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="utf-8")


def _rule_element(rule: LifecycleRule) -> ET.Element:
    element = ET.Element("Rule")
    ET.SubElement(element, "ID").text = rule.id
    scope = rule.filter
    if scope.legacy:
        ET.SubElement(element, "Prefix").text = scope.prefix
    else:
        _filter_element(ET.SubElement(element, "Filter"), scope)
    ET.SubElement(element, "Status").text = "Enabled" if rule.enabled else "Disabled"
    if rule.expiration_days is not None or rule.expiration_date_ms is not None:
        expiration = ET.SubElement(element, "Expiration")
        if rule.expiration_days is not None:
            ET.SubElement(expiration, "Days").text = str(rule.expiration_days)
        else:
            assert rule.expiration_date_ms is not None
            when = datetime.fromtimestamp(rule.expiration_date_ms / 1000, UTC)
            ET.SubElement(expiration, "Date").text = when.strftime("%Y-%m-%dT%H:%M:%S.000Z")
    elif rule.expired_object_delete_marker is not None:
        expiration = ET.SubElement(element, "Expiration")
        ET.SubElement(expiration, "ExpiredObjectDeleteMarker").text = str(
            rule.expired_object_delete_marker
        ).lower()
    if rule.noncurrent_days is not None:
        noncurrent = ET.SubElement(element, "NoncurrentVersionExpiration")
        ET.SubElement(noncurrent, "NoncurrentDays").text = str(rule.noncurrent_days)
        if rule.newer_noncurrent_versions is not None:
            ET.SubElement(noncurrent, "NewerNoncurrentVersions").text = str(rule.newer_noncurrent_versions)
    if rule.abort_days is not None:
        abort = ET.SubElement(element, "AbortIncompleteMultipartUpload")
        ET.SubElement(abort, "DaysAfterInitiation").text = str(rule.abort_days)
    return element


def _filter_element(element: ET.Element, scope: LifecycleFilter) -> None:
    target = ET.SubElement(element, "And") if scope.conjunction else element
    if scope.prefix or scope.prefix_sent:  # as sent: an empty Prefix too (Amazon answers it back)
        ET.SubElement(target, "Prefix").text = scope.prefix
    for key, value in scope.tags:
        tag = ET.SubElement(target, "Tag")
        ET.SubElement(tag, "Key").text = key
        ET.SubElement(tag, "Value").text = value
    if scope.size_greater_than is not None:
        ET.SubElement(target, "ObjectSizeGreaterThan").text = str(scope.size_greater_than)
    if scope.size_less_than is not None:
        ET.SubElement(target, "ObjectSizeLessThan").text = str(scope.size_less_than)
