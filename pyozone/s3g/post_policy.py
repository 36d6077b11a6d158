"""A POST Object policy (Amazon's "Creating a POST policy", "POST policy conditions"): the base64 JSON
document a browser form carries, decoded and checked against the form's fields, pure functions.

The document has an `expiration` (ISO 8601, UTC) and `conditions`: exact matches (`{"key": "v"}` or
`["eq", "$key", "v"]`), prefixes (`["starts-with", "$key", "p"]`; `""` matches anything; a Content-Type
list, comma-separated, matches when each of its types does) and `["content-length-range", min, max]` on the
file's size. Field names compare case-insensitively, values exactly. Every form field but the signature,
the policy, the file and `x-ignore-*` must be named by a condition ("Extra input fields"), and every
condition must hold, else 403 AccessDenied "Invalid according to Policy: ...", as Amazon answers.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from pyozone.s3g.errors import S3Error, S3ErrorCode
from pyozone.s3g.numbers import decimal

BUCKET = "bucket"
CONTENT_TYPE = "content-type"
LENGTH_RANGE = "content-length-range"
UNCONDITIONED = frozenset({"x-amz-signature", "policy", "file"})
"""Form fields no condition needs to name (Amazon's rule), besides those starting with IGNORED_PREFIX."""
IGNORED_PREFIX = "x-ignore-"


@dataclass(frozen=True, slots=True)
class Exact:
    name: str  # as the policy writes it, without the `$`
    value: str

    def holds(self, value: str | None) -> bool:
        return value == self.value

    def __str__(self) -> str:
        return json.dumps(["eq", f"${self.name}", self.value])


@dataclass(frozen=True, slots=True)
class StartsWith:
    name: str
    prefix: str

    def holds(self, value: str | None) -> bool:
        if value is None:
            return False
        if self.name.lower() == CONTENT_TYPE:
            return all(each.strip().startswith(self.prefix) for each in value.split(","))
        return value.startswith(self.prefix)

    def __str__(self) -> str:
        return json.dumps(["starts-with", f"${self.name}", self.prefix])


@dataclass(frozen=True, slots=True)
class LengthRange:
    low: int
    high: int


Condition = Exact | StartsWith


@dataclass(frozen=True, slots=True)
class PostPolicy:
    expiration: datetime
    conditions: tuple[Condition, ...]
    length: LengthRange | None
    """The file's size bounds (the intersection of every content-length-range; None: only S3's own)."""

    def named(self) -> frozenset[str]:
        """The lower-case field names the conditions cover."""
        return frozenset(condition.name.lower() for condition in self.conditions)


def invalid(detail: str) -> S3Error:
    return S3Error(S3ErrorCode.InvalidPolicyDocument, f"Invalid Policy: {detail}")


def denied(detail: str) -> S3Error:
    return S3Error(S3ErrorCode.AccessDenied, f"Invalid according to Policy: {detail}")


def decode(encoded: str) -> PostPolicy:
    """The policy field's document; a malformed one is InvalidPolicyDocument."""
    try:
        text = base64.b64decode(encoded.encode("ascii"), validate=True).decode("utf-8")
    except (UnicodeError, binascii.Error, ValueError):
        raise invalid("Invalid Base64 Encoding.") from None
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: nested deeper than json can read
        raise invalid("Invalid JSON.") from None
    if not isinstance(document, dict):
        raise invalid("Invalid JSON.")
    if "expiration" not in document:
        raise invalid("Policy missing expiration.")
    if "conditions" not in document:
        raise invalid("Policy missing conditions.")
    expiration = _expiration(document["expiration"])
    raw_conditions = document["conditions"]
    if not isinstance(raw_conditions, list):
        raise invalid("Invalid 'conditions' value: must be a list.")
    conditions: list[Condition] = []
    length: LengthRange | None = None
    for raw in raw_conditions:
        if isinstance(raw, list) and raw and isinstance(raw[0], str) and raw[0].lower() == LENGTH_RANGE:
            bounds = _length_range(raw)
            length = bounds if length is None else LengthRange(max(length.low, bounds.low),
                                                               min(length.high, bounds.high))  # fmt: skip
        else:
            conditions.extend(_conditions(raw))
    return PostPolicy(expiration, tuple(conditions), length)


def check(policy: PostPolicy, fields: Mapping[str, str], bucket: str, now: datetime) -> None:
    """Refuses unless the policy is unexpired, each of its conditions holds of `fields` (lower-case names;
    `bucket` is the request's, whatever the form says) and each field is named by one."""
    if now >= policy.expiration:
        raise denied("Policy expired.")
    values = {**fields, BUCKET: bucket}
    for condition in policy.conditions:
        if not condition.holds(values.get(condition.name.lower())):
            raise denied(f"Policy Condition failed: {condition}")
    named = policy.named()
    extra = [
        name
        for name in fields
        if name not in UNCONDITIONED and not name.startswith(IGNORED_PREFIX) and name not in named
    ]
    if extra:
        raise denied(f"Extra input fields: {', '.join(extra)}")


def _expiration(value: object) -> datetime:
    try:
        if not isinstance(value, str) or not value.endswith("Z"):
            raise ValueError(value)
        when = datetime.fromisoformat(value)
    except ValueError:
        raise invalid(f"Invalid 'expiration' value: '{value}'") from None
    return when.astimezone(UTC)


def _conditions(raw: object) -> list[Condition]:
    if isinstance(raw, dict):
        if not raw or not all(isinstance(v, str) for v in raw.values()):
            raise invalid(f"Invalid Simple-Condition: {json.dumps(raw)}")
        return [Exact(str(name), value) for name, value in raw.items()]
    if not isinstance(raw, list) or len(raw) != 3 or not all(isinstance(each, str) for each in raw):
        raise invalid(f"Invalid Condition: {json.dumps(raw)}")
    operator, name, value = raw
    if not name.startswith("$"):
        raise invalid(f"Invalid Condition: field names must begin with '$': {json.dumps(raw)}")
    if operator.lower() == "eq":
        return [Exact(name[1:], value)]
    if operator.lower() == "starts-with":
        return [StartsWith(name[1:], value)]
    raise invalid(f"Invalid Condition: unknown operation '{operator}'")


def _length_range(raw: list[object]) -> LengthRange:
    if len(raw) != 3:
        raise invalid(f"Invalid Condition: {json.dumps(raw)}")
    low, high = (_size(each) for each in raw[1:])
    if low is None or high is None or low > high:
        raise invalid(f"Invalid 'content-length-range' value: {json.dumps(raw)}")
    return LengthRange(low, high)


def _size(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, str):
        return decimal(value)  # a number written as a string; thousands of digits are no 500 (R30's P2)
    return None
