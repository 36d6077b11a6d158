"""S3 Object Lock (Amazon's "Locking objects with Object Lock"): a bucket's lock configuration, a version's
retention and legal hold, their documents and headers, and the rules that decide whether a version may be
deleted or its retention changed at a given time. Sans-IO and in the kernel because both sides read it:
OM enforces the rules against its own clock (om/object_lock.py), the S3 gateway answers S3's errors with
the same parsers before it asks OM (s3g/object_lock.py).

The rules:
- a version under legal hold, or under retention whose RetainUntilDate has not passed, is not deleted by
  version id; GOVERNANCE retention gives way to a request that bypasses it (x-amz-bypass-governance-
  retention: true from a caller allowed to), COMPLIANCE retention and a legal hold to nothing;
- COMPLIANCE retention in force may be extended, never shortened, removed or made GOVERNANCE; GOVERNANCE
  retention in force is shortened, removed or changed to another mode only with the bypass; retention
  that has passed binds nothing.
A delete without version id (a delete marker) and an overwrite (a new version) remove no version: always
allowed.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import Enum

S3_NAMESPACE = "http://s3.amazonaws.com/doc/2006-03-01/"
DAY_MS = 86_400_000
YEAR_DAYS = 365
"""A default retention's Years count 365 days each (Amazon names no calendar; leap days are not added)."""
MAX_DAYS = 36_500
"""The longest default retention pyozone keeps (100 years): RetainUntilDate stays a date every client
reads."""
MAX_DOCUMENT_BYTES = 16 * 1024
ENABLED = "Enabled"

MODE_HEADER = "x-amz-object-lock-mode"
UNTIL_HEADER = "x-amz-object-lock-retain-until-date"
LEGAL_HOLD_HEADER = "x-amz-object-lock-legal-hold"
BYPASS_HEADER = "x-amz-bypass-governance-retention"
MISSING_CONFIGURATION = "Bucket is missing Object Lock Configuration"
"""Amazon's InvalidRequest for lock headers on a write to a bucket without Object Lock."""
MISSING_CONFIGURATION_ON_OBJECT = "Bucket is missing ObjectLockConfiguration"
"""Amazon's InvalidRequest for Put/GetObjectRetention and Put/GetObjectLegalHold there."""
VERSIONING_REQUIRED = "Versioning must be 'Enabled' on the bucket to apply a Object Lock configuration"
LOCK_NOT_RECREATED = (
    "The bucket exists, yours, without Object Lock: creating it again does not enable Object Lock "
    "(enable versioning, then PutObjectLockConfiguration)."
)
"""CreateBucket with x-amz-bucket-object-lock-enabled: true of one's own bucket without Object Lock (R35's F5:
us-east-1's 200 would promise a WORM bucket it is not; Ceph's and SeaweedFS's gateways refuse a re-create
whose Object Lock differs too)."""
VERSIONING_LOCKED = (
    "An Object Lock configuration is present on this bucket, so the versioning state cannot be changed."
)


class ObjectLockError(Exception):
    """What S3 refuses: `code` is S3's error code (MalformedXML, InvalidArgument, InvalidRequest,
    AccessDenied, InvalidBucketState), `message` its words; the gateway answers it as is."""

    def __init__(self, code: str, message: str = "") -> None:
        super().__init__(f"{code}: {message}" if message else code)
        self.code = code
        self.message = message


class RetentionMode(Enum):
    GOVERNANCE = "GOVERNANCE"
    COMPLIANCE = "COMPLIANCE"


@dataclass(frozen=True, slots=True)
class Retention:
    """A version's retention: `mode` until `until_ms` (epoch milliseconds)."""

    mode: RetentionMode
    until_ms: int

    def binds(self, now_ms: int) -> bool:
        return now_ms < self.until_ms


@dataclass(frozen=True, slots=True)
class DefaultRetention:
    """A bucket's default retention: `mode` for `days` or `years` (exactly one of them positive)."""

    mode: RetentionMode
    days: int = 0
    years: int = 0

    def retention(self, created_ms: int) -> Retention:
        """The retention a version created at `created_ms` gets (until = creation + the period)."""
        days = self.days or self.years * YEAR_DAYS
        return Retention(self.mode, created_ms + days * DAY_MS)


@dataclass(frozen=True, slots=True)
class ObjectLockConfiguration:
    """A bucket's Object Lock: always Enabled (a bucket without Object Lock has none), with an optional
    default retention."""

    default: DefaultRetention | None = None


@dataclass(frozen=True, slots=True)
class LockRequest:
    """What a write's x-amz-object-lock-* headers ask for (None: not named)."""

    retention: Retention | None = None
    legal_hold: bool | None = None

    @property
    def named(self) -> bool:
        return self.retention is not None or self.legal_hold is not None


# ------------------------------------------------------------------ the rules
def delete_refusal(retention: Retention | None, legal_hold: bool | None, now_ms: int, bypass: bool) -> str:
    """Why the version may not be deleted by version id at `now_ms` ("": it may). `bypass`: the request
    bypasses GOVERNANCE retention and its caller may."""
    if legal_hold:
        return "the object version is under legal hold"
    if retention is None or not retention.binds(now_ms):
        return ""
    if retention.mode is RetentionMode.COMPLIANCE:
        return "the object version is under COMPLIANCE retention"
    return "" if bypass else "the object version is under GOVERNANCE retention"


def change_refusal(old: Retention | None, new: Retention | None, now_ms: int, bypass: bool) -> str:
    """Why a version's retention may not go from `old` to `new` at `now_ms` ("": it may)."""
    if old is None or not old.binds(now_ms):
        return ""
    weaker = new is None or new.mode is not old.mode or new.until_ms < old.until_ms
    if not weaker:
        return ""
    if old.mode is RetentionMode.COMPLIANCE:
        return "COMPLIANCE retention may be extended, never shortened, removed or changed"
    return "" if bypass else "shortening, removing or changing GOVERNANCE retention needs the bypass"


def check_future(retention: Retention, now_ms: int) -> None:
    if retention.until_ms <= now_ms:
        raise ObjectLockError("InvalidArgument", "The retain until date must be in the future!")


# ------------------------------------------------------------------ dates and headers
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?")


_EPOCH = datetime.fromtimestamp(0, UTC)
LATEST_MS = 253_402_300_799_999
"""9999-12-31T23:59:59.999Z, the latest RetainUntilDate: every later one (9999-12-31 with a negative
offset is year 10000 in UTC) has no date a client or iso_date writes (R35's F2)."""
BEYOND_LATEST = "The retain until date must be no later than 9999-12-31T23:59:59.999Z"


def parse_date(text: str) -> int:
    """An ISO 8601 date-time (a date alone: its midnight UTC; no zone: UTC) in epoch milliseconds;
    ValueError if it is none, ObjectLockError InvalidArgument if it is later than LATEST_MS."""
    text = text.strip()
    if not _DATE.fullmatch(text):
        raise ValueError(text)
    if "." in text:  # Python reads at most microseconds
        head, _, tail = text.partition(".")
        digits = re.match(r"\d+", tail)
        assert digits is not None
        text = head + "." + digits.group()[:6].ljust(6, "0") + tail[digits.end() :]
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    ms = (moment - _EPOCH) // timedelta(milliseconds=1)  # exact: a float timestamp loses a millisecond
    if ms > LATEST_MS:
        raise ObjectLockError("InvalidArgument", BEYOND_LATEST)
    return ms


_EARLIEST_MS = -62_135_596_800_000
"""0001-01-01T00:00:00.000Z, the earliest date Python writes."""


def iso_date(ms: int) -> str:
    """As Amazon writes RetainUntilDate: 2026-12-07T18:10:00.000Z. Total: a value past LATEST_MS (kept
    before parse_date refused them) is written as LATEST_MS, never an error on every read of its version;
    it binds as long either way."""
    ms = min(max(ms, _EARLIEST_MS), LATEST_MS)
    moment = _EPOCH + timedelta(milliseconds=ms)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def lock_request(mode: str | None, until: str | None, legal_hold: str | None) -> LockRequest:
    """The x-amz-object-lock-* headers of a PutObject, CopyObject or CreateMultipartUpload (None: absent):
    mode and date together or neither (InvalidArgument). Whether the date is in the future is OM's to
    check, against its own clock."""
    if (mode is None) != (until is None):
        raise ObjectLockError("InvalidArgument", f"{UNTIL_HEADER} and {MODE_HEADER} must both be supplied")
    retention = None
    if mode is not None and until is not None:
        try:
            chosen = RetentionMode(mode)
        except ValueError:
            raise ObjectLockError("InvalidArgument", "Unknown wormMode directive.") from None
        try:
            retention = Retention(chosen, parse_date(until))
        except ValueError:
            raise ObjectLockError(
                "InvalidArgument", f"The {UNTIL_HEADER} header is not a valid ISO 8601 date"
            ) from None
    hold = None
    if legal_hold is not None:
        if legal_hold not in ("ON", "OFF"):
            raise ObjectLockError("InvalidArgument", "Legal Hold must be either of 'ON' or 'OFF'")
        hold = legal_hold == "ON"
    return LockRequest(retention, hold)


def bypass_requested(value: str | None) -> bool:
    return value is not None and value.strip().lower() == "true"


# ------------------------------------------------------------------ documents
def _root(body: bytes, name: str) -> ET.Element:
    if len(body) > MAX_DOCUMENT_BYTES:
        raise ObjectLockError("MalformedXML")
    try:
        element = ET.fromstring(body)  # expat: no external entities
    except (ET.ParseError, LookupError, ValueError):
        raise ObjectLockError("MalformedXML") from None
    for node in element.iter():
        if isinstance(node.tag, str) and "}" in node.tag:
            node.tag = node.tag.rsplit("}", 1)[1]
    if element.tag != name:
        raise ObjectLockError("MalformedXML")
    return element


def _members(node: ET.Element, allowed: frozenset[str]) -> dict[str, str | ET.Element]:
    found: dict[str, str | ET.Element] = {}
    for child in node:
        if child.tag not in allowed or child.tag in found:
            raise ObjectLockError("MalformedXML")
        found[child.tag] = child if len(child) else (child.text or "").strip()
    return found


def _period(text: str | ET.Element, name: str) -> int:
    if not isinstance(text, str) or not re.fullmatch(r"-?\d{1,10}", text):
        raise ObjectLockError("MalformedXML")
    value = int(text)
    if value <= 0:
        raise ObjectLockError("InvalidArgument", "Default retention period must be a positive integer value.")
    if value * (YEAR_DAYS if name == "Years" else 1) > MAX_DAYS:
        raise ObjectLockError(
            "InvalidArgument", f"Default retention period must be at most {MAX_DAYS} days (100 years)."
        )
    return value


def parse_configuration(body: bytes) -> ObjectLockConfiguration:
    """PutObjectLockConfiguration's document: ObjectLockEnabled Enabled and an optional Rule with one
    DefaultRetention of a Mode and Days or Years (both, or neither: MalformedXML)."""
    root = _members(_root(body, "ObjectLockConfiguration"), frozenset({"ObjectLockEnabled", "Rule"}))
    if root.get("ObjectLockEnabled") != ENABLED:
        raise ObjectLockError("MalformedXML")
    rule = root.get("Rule")
    if rule is None:
        return ObjectLockConfiguration()
    if not isinstance(rule, ET.Element):
        raise ObjectLockError("MalformedXML")
    inner = _members(rule, frozenset({"DefaultRetention"})).get("DefaultRetention")
    if not isinstance(inner, ET.Element):
        raise ObjectLockError("MalformedXML")
    found = _members(inner, frozenset({"Mode", "Days", "Years"}))
    if ("Days" in found) == ("Years" in found) or "Mode" not in found:
        raise ObjectLockError("MalformedXML")
    try:
        mode = RetentionMode(found["Mode"])
    except ValueError:
        raise ObjectLockError("MalformedXML") from None
    if "Days" in found:
        return ObjectLockConfiguration(DefaultRetention(mode, days=_period(found["Days"], "Days")))
    return ObjectLockConfiguration(DefaultRetention(mode, years=_period(found["Years"], "Years")))


def _document(root: ET.Element) -> bytes:
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="utf-8")


def configuration_document(config: ObjectLockConfiguration) -> bytes:
    """As GetObjectLockConfiguration answers it."""
    root = ET.Element("ObjectLockConfiguration", {"xmlns": S3_NAMESPACE})
    ET.SubElement(root, "ObjectLockEnabled").text = ENABLED
    if config.default is not None:
        default = ET.SubElement(ET.SubElement(root, "Rule"), "DefaultRetention")
        ET.SubElement(default, "Mode").text = config.default.mode.value
        if config.default.days:
            ET.SubElement(default, "Days").text = str(config.default.days)
        else:
            ET.SubElement(default, "Years").text = str(config.default.years)
    return _document(root)


def parse_retention(body: bytes) -> Retention | None:
    """PutObjectRetention's document: Mode and RetainUntilDate together (None: neither, the retention
    removed)."""
    found = _members(_root(body, "Retention"), frozenset({"Mode", "RetainUntilDate"}))
    if not found:
        return None
    if len(found) != 2 or not all(isinstance(v, str) for v in found.values()):
        raise ObjectLockError("MalformedXML")
    try:
        mode = RetentionMode(found["Mode"])
        return Retention(mode, parse_date(str(found["RetainUntilDate"])))
    except ValueError:
        raise ObjectLockError("MalformedXML") from None


def retention_document(retention: Retention) -> bytes:
    root = ET.Element("Retention", {"xmlns": S3_NAMESPACE})
    ET.SubElement(root, "Mode").text = retention.mode.value
    ET.SubElement(root, "RetainUntilDate").text = iso_date(retention.until_ms)
    return _document(root)


def parse_legal_hold(body: bytes) -> bool:
    """PutObjectLegalHold's document: Status ON or OFF."""
    found = _members(_root(body, "LegalHold"), frozenset({"Status"}))
    if found.get("Status") not in ("ON", "OFF"):
        raise ObjectLockError("MalformedXML")
    return found["Status"] == "ON"


def legal_hold_document(on: bool) -> bytes:
    root = ET.Element("LegalHold", {"xmlns": S3_NAMESPACE})
    ET.SubElement(root, "Status").text = "ON" if on else "OFF"
    return _document(root)
