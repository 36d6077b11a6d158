"""S3's bucket policy (PutBucketPolicy's JSON document): its checks, and how a request is decided by it.
Sans-IO and in the kernel because both sides read it: OM checks every document before it keeps one
(om/bucket_documents.py), and the S3 gateway decides each request with it (s3g/policy.py).

The document (IAM's "JSON policy element reference", S3's "Bucket policy examples"): Version 2012-10-17 or
2008-10-17; Id; Statement, one object or a list; each with Sid (unique), Effect Allow|Deny, Principal,
Action or NotAction, Resource or NotResource, Condition. At most 20 KB as sent.

Principals: `"*"` or `{"AWS": "*"}` is everyone, anonymous requests included; an S3 user (its access id,
which is its Ozone user name) is named `{"AWS": "arn:aws:iam:::user/NAME"}`, `{"AWS": "NAME"}` or
`{"CanonicalUser": "NAME"}` (GetBucketAcl's Owner ID is the user name too). pyozone has one account, so
an ARN's account field must be empty. Actions: `s3:NAME` (any case) or `*`, with `*` and `?` wildcards;
a name without one must be one of S3's. Resources: `arn:aws:s3:::BUCKET` or `arn:aws:s3:::BUCKET/KEY`,
with wildcards, the bucket part naming this bucket. Conditions: the string operators, IpAddress /
NotIpAddress, Bool and Null, each with `IfExists`, on the keys of CONDITION_KEYS; other operators and keys
Amazon has (Numeric*, Date*, Arn*, ForAnyValue:, s3:ExistingObjectTag/...) are NotImplemented, never
accepted and ignored, and so are NotPrincipal and policy variables (`${aws:username}`).

Evaluation ("Policy evaluation logic"): a statement applies when its principal, action, resource and every
condition match; an applicable Deny decides DENY, else an applicable Allow ALLOW, else DEFAULT (what the
owner's ACLs say). Wildcards are matched by a two-pointer scan, never a backtracking expression.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache

MAX_POLICY_BYTES = 20 * 1024
"""Of the document as sent (Amazon's bucket policy size limit)."""
VERSIONS = frozenset({"2012-10-17", "2008-10-17"})
RESOURCE_PREFIX = "arn:aws:s3:::"
USER_ARN_PREFIX = "arn:aws:iam:::user/"
"""How a policy names an S3 user by ARN: pyozone has one account, whose id is empty."""
EVERYONE = "*"

BUCKET_ACTIONS = frozenset(
    {"s3:ListBucket", "s3:ListBucketVersions", "s3:ListBucketMultipartUploads", "s3:GetBucketLocation",
     "s3:GetBucketVersioning", "s3:PutBucketVersioning", "s3:GetBucketAcl", "s3:PutBucketAcl",
     "s3:GetBucketCORS", "s3:PutBucketCORS", "s3:GetBucketPolicy", "s3:PutBucketPolicy",
     "s3:DeleteBucketPolicy", "s3:GetBucketPolicyStatus", "s3:GetBucketPublicAccessBlock",
     "s3:PutBucketPublicAccessBlock", "s3:GetBucketOwnershipControls", "s3:PutBucketOwnershipControls",
     "s3:DeleteBucket", "s3:GetBucketTagging", "s3:PutBucketTagging", "s3:GetLifecycleConfiguration",
     "s3:PutLifecycleConfiguration", "s3:GetEncryptionConfiguration", "s3:PutEncryptionConfiguration",
     "s3:GetBucketObjectLockConfiguration", "s3:PutBucketObjectLockConfiguration",
     "s3:GetBucketWebsite", "s3:PutBucketWebsite", "s3:DeleteBucketWebsite", "s3:GetBucketLogging",
     "s3:PutBucketLogging", "s3:GetBucketNotification", "s3:PutBucketNotification",
     "s3:GetReplicationConfiguration", "s3:PutReplicationConfiguration", "s3:GetBucketRequestPayment",
     "s3:PutBucketRequestPayment", "s3:GetAccelerateConfiguration", "s3:PutAccelerateConfiguration",
     "s3:GetAnalyticsConfiguration", "s3:PutAnalyticsConfiguration", "s3:GetInventoryConfiguration",
     "s3:PutInventoryConfiguration", "s3:GetMetricsConfiguration", "s3:PutMetricsConfiguration",
     "s3:GetIntelligentTieringConfiguration", "s3:PutIntelligentTieringConfiguration",
     "s3:ListBucketByTags", "s3:CreateBucket"}
)  # fmt: skip
"""S3's actions on a bucket (arn:aws:s3:::BUCKET): "Actions, resources, and condition keys for S3"."""
OBJECT_ACTIONS = frozenset(
    {"s3:GetObject", "s3:GetObjectVersion", "s3:PutObject", "s3:DeleteObject", "s3:DeleteObjectVersion",
     "s3:GetObjectAcl", "s3:GetObjectVersionAcl", "s3:PutObjectAcl", "s3:PutObjectVersionAcl",
     "s3:GetObjectTagging", "s3:GetObjectVersionTagging", "s3:PutObjectTagging",
     "s3:PutObjectVersionTagging", "s3:DeleteObjectTagging", "s3:DeleteObjectVersionTagging",
     "s3:GetObjectAttributes", "s3:GetObjectVersionAttributes", "s3:AbortMultipartUpload",
     "s3:ListMultipartUploadParts", "s3:RestoreObject", "s3:GetObjectRetention", "s3:PutObjectRetention",
     "s3:GetObjectLegalHold", "s3:PutObjectLegalHold", "s3:BypassGovernanceRetention",
     "s3:GetObjectTorrent", "s3:ReplicateObject", "s3:ReplicateDelete", "s3:ReplicateTags"}
)  # fmt: skip
"""S3's actions on an object (arn:aws:s3:::BUCKET/KEY)."""
_ACTIONS = {a.lower(): a for a in BUCKET_ACTIONS | OBJECT_ACTIONS}

CONDITION_KEYS = frozenset(
    {"aws:sourceip", "aws:securetransport", "aws:referer", "aws:useragent", "aws:username", "aws:userid",
     "s3:prefix", "s3:delimiter", "s3:max-keys", "s3:x-amz-acl", "s3:signatureversion", "s3:authtype",
     "s3:x-amz-content-sha256"}
)  # fmt: skip
"""The condition keys the gateway gives every request (lowercase: keys match without regard to case)."""

_STRING_OPERATORS = frozenset(
    {"StringEquals", "StringNotEquals", "StringEqualsIgnoreCase", "StringNotEqualsIgnoreCase", "StringLike",
     "StringNotLike"}
)  # fmt: skip
OPERATORS = _STRING_OPERATORS | {"IpAddress", "NotIpAddress", "Bool", "Null"}
_NEGATED = frozenset({"StringNotEquals", "StringNotEqualsIgnoreCase", "StringNotLike", "NotIpAddress"})
_UNBUILT_OPERATORS = frozenset(
    {"NumericEquals", "NumericNotEquals", "NumericLessThan", "NumericLessThanEquals", "NumericGreaterThan",
     "NumericGreaterThanEquals", "DateEquals", "DateNotEquals", "DateLessThan", "DateLessThanEquals",
     "DateGreaterThan", "DateGreaterThanEquals", "BinaryEquals", "ArnEquals", "ArnLike", "ArnNotEquals",
     "ArnNotLike"}
)  # fmt: skip
_STATEMENT_FIELDS = frozenset(
    {"Sid", "Effect", "Principal", "NotPrincipal", "Action", "NotAction", "Resource", "NotResource",
     "Condition"}
)  # fmt: skip


class PolicyError(Exception):
    """A document S3 refuses: `code` is S3's (MalformedPolicy, or NotImplemented for what Amazon has and
    pyozone does not), `message` its words; the gateway answers it as is, OM as INVALID_REQUEST."""

    def __init__(self, message: str, code: str = "MalformedPolicy") -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _unbuilt(message: str) -> PolicyError:
    return PolicyError(message, "NotImplemented")


class Effect(Enum):
    ALLOW = "Allow"
    DENY = "Deny"


class Decision(Enum):
    ALLOW = "Allow"
    DENY = "Deny"
    DEFAULT = "Default"
    """No statement applies: the owner's ACLs decide (an anonymous request is refused)."""


@dataclass(frozen=True, slots=True)
class Condition:
    operator: str
    """Without IfExists: one of OPERATORS."""
    key: str
    """Lowercase."""
    values: tuple[str, ...]
    if_exists: bool


@dataclass(frozen=True, slots=True)
class Statement:
    sid: str
    effect: Effect
    principals: frozenset[str]
    """User names, or EVERYONE."""
    actions: tuple[str, ...]
    """Lowercase patterns."""
    not_action: bool
    resources: tuple[str, ...]
    not_resource: bool
    conditions: tuple[Condition, ...]


@dataclass(frozen=True, slots=True)
class Policy:
    statements: tuple[Statement, ...]


@dataclass(frozen=True, slots=True)
class RequestContext:
    """What a policy decides about: who (None: an anonymous request), the action, its resource ARN, and
    the condition keys' values (lowercase names; a key absent or with no value is not in the request)."""

    user: str | None
    action: str
    resource: str
    values: Mapping[str, tuple[str, ...]]


def bucket_arn(bucket: str) -> str:
    return RESOURCE_PREFIX + bucket


def object_arn(bucket: str, key: str) -> str:
    return f"{RESOURCE_PREFIX}{bucket}/{key}"


# ------------------------------------------------------------------ parsing
def parse(body: bytes, bucket: str, limit: int | None = MAX_POLICY_BYTES) -> Policy:
    """The document PutBucketPolicy sent for `bucket`; PolicyError with Amazon's words otherwise.
    `limit`: None reads what OM kept, checked when it was put."""
    if limit is not None and len(body) > limit:
        raise PolicyError(f"Policies must be less than {limit // 1024} KB; this one is {len(body)} bytes.")
    try:
        document = json.loads(body, object_pairs_hook=_no_duplicates)
    except (ValueError, UnicodeDecodeError, RecursionError):  # nesting past Python's stack: R34's F6
        raise PolicyError("Policies must be valid JSON and the first byte must be '{'") from None
    if not isinstance(document, dict):
        raise PolicyError("Policies must be valid JSON and the first byte must be '{'")
    for name in document:
        if name not in ("Version", "Id", "Statement"):
            raise PolicyError(f"Unknown field {name}")
    version = document.get("Version", "2008-10-17")
    if version not in VERSIONS:
        raise PolicyError("The policy must contain a valid version string")
    if "Id" in document and not isinstance(document["Id"], str):
        raise PolicyError("Id must be a string")
    if "Statement" not in document:
        raise PolicyError("Missing required field Statement")
    raw = document["Statement"]
    raws = [raw] if isinstance(raw, dict) else raw
    if not isinstance(raws, list) or not all(isinstance(s, dict) for s in raws):
        raise PolicyError("Statements must be either a JSON object or a JSON list of objects")
    if not raws:
        raise PolicyError("Could not parse the policy: Statement is empty!")
    statements = tuple(_statement(s, bucket, version) for s in raws)
    sids = [s.sid for s in statements if s.sid]
    if len(sids) != len(set(sids)):
        raise PolicyError("Statement IDs (SID) in a single policy must be unique.")
    return Policy(statements)


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    found = dict(pairs)
    if len(found) != len(pairs):
        raise ValueError("a name twice in one object")
    return found


def _strings(value: object, what: str) -> tuple[str, ...]:
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
        raise PolicyError(f"Policy has invalid {what}")
    return tuple(values)


def _statement(raw: dict[str, object], bucket: str, version: str) -> Statement:
    for name in raw:
        if name not in _STATEMENT_FIELDS:
            raise PolicyError(f"Unknown field {name}")
    sid = raw.get("Sid", "")
    if not isinstance(sid, str):
        raise PolicyError("Sid must be a string")
    if "Effect" not in raw:
        raise PolicyError("Missing required field Effect")
    try:
        effect = Effect(raw["Effect"])
    except ValueError:
        raise PolicyError(f"Invalid effect: {raw['Effect']}") from None
    if "NotPrincipal" in raw:
        raise _unbuilt("NotPrincipal is not implemented.")
    if "Principal" not in raw:
        raise PolicyError("Missing required field Principal")
    principals = _principals(raw["Principal"])
    if ("Action" in raw) == ("NotAction" in raw):
        missing = "Action" not in raw
        raise PolicyError("Missing required field Action" if missing else "Policy has invalid action")
    not_action = "NotAction" in raw
    actions = tuple(_action(a) for a in _strings(raw["NotAction" if not_action else "Action"], "action"))
    if ("Resource" in raw) == ("NotResource" in raw):
        raise PolicyError(
            "Missing required field Resource" if "Resource" not in raw else "Policy has invalid resource"
        )
    not_resource = "NotResource" in raw
    resources = _strings(raw["NotResource" if not_resource else "Resource"], "resource")
    for resource in resources:
        _check_resource(resource, bucket, version)
    if not not_action and not not_resource and not _applies(actions, resources):
        raise PolicyError("Action does not apply to any resource(s) in statement")
    conditions = _conditions(raw.get("Condition", {}), version)
    return Statement(sid, effect, principals, actions, not_action, resources, not_resource, conditions)


def _principals(raw: object) -> frozenset[str]:
    if raw == EVERYONE:
        return frozenset({EVERYONE})
    if not isinstance(raw, dict) or not raw:
        raise PolicyError("Invalid principal in policy")
    names: set[str] = set()
    for kind, value in raw.items():
        if kind not in ("AWS", "CanonicalUser"):
            raise PolicyError("Invalid principal in policy")
        values = [value] if isinstance(value, str) else value
        if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
            raise PolicyError("Invalid principal in policy")
        for name in values:
            if kind == "AWS" and name == EVERYONE:
                names.add(EVERYONE)
                continue
            name = name.removeprefix(USER_ARN_PREFIX) if kind == "AWS" else name
            if not _is_user_name(name):
                raise PolicyError("Invalid principal in policy")
            names.add(name)
    return frozenset(names)


def _is_user_name(name: str) -> bool:
    """As hdds/security/x509.check_user_name: an access id is a user name, never an ARN or a list."""
    return 0 < len(name) <= 64 and name.isprintable() and not any(c in name for c in "@,/ \\=+;:*?")


def _action(raw: str) -> str:
    action = raw.lower()
    if action == "*":
        return action
    if not action.startswith("s3:") or len(action) == 3:
        raise PolicyError("Policy has invalid action")
    if "*" not in action and "?" not in action and action not in _ACTIONS:
        raise PolicyError("Policy has invalid action")
    return action


def _check_resource(resource: str, bucket: str, version: str) -> None:
    if not resource.startswith(RESOURCE_PREFIX):
        raise PolicyError("Policy has invalid resource")
    if version == "2012-10-17" and "${" in resource:
        raise _unbuilt("Policy variables are not implemented.")
    named, _, _ = resource[len(RESOURCE_PREFIX) :].partition("/")
    if not named or not glob_match(named, bucket):
        raise PolicyError("Policy has invalid resource")


def _applies(actions: tuple[str, ...], resources: tuple[str, ...]) -> bool:
    """Some action names a kind (bucket or object) some resource may be: a wildcard action may be either,
    and so may a wildcard resource without a `/` (`arn:aws:s3:::b*` matches `b/key` too)."""
    kinds: set[str] = set()
    for resource in resources:
        path = resource[len(RESOURCE_PREFIX) :]
        kinds |= {"object"} if "/" in path else {"bucket", "object"} if "*" in path else {"bucket"}
    for action in actions:
        if "*" in action or "?" in action:
            return True
        kind = "object" if _ACTIONS[action] in OBJECT_ACTIONS else "bucket"
        if kind in kinds:
            return True
    return False


def _conditions(raw: object, version: str) -> tuple[Condition, ...]:
    if not isinstance(raw, dict):
        raise PolicyError("Policy has an invalid condition block")
    found: list[Condition] = []
    for name, block in raw.items():
        if not isinstance(name, str) or not isinstance(block, dict) or not block:
            raise PolicyError("Policy has an invalid condition block")
        if name.startswith(("ForAnyValue:", "ForAllValues:")):
            raise _unbuilt(f"Condition operator {name} is not implemented.")
        operator = name.removesuffix("IfExists")
        if operator in _UNBUILT_OPERATORS:
            raise _unbuilt(f"Condition operator {name} is not implemented.")
        if operator not in OPERATORS:
            raise PolicyError(f"Invalid Condition type : {name}")
        for key, value in block.items():
            found.append(_condition(operator, name != operator, key, value, version))
    return tuple(found)


def _condition(operator: str, if_exists: bool, key: str, raw: object, version: str) -> Condition:
    lowered = key.lower()
    if lowered not in CONDITION_KEYS:
        if lowered.startswith(("aws:", "s3:")) and len(lowered.partition(":")[2]) > 0:
            raise _unbuilt(f"Condition key {key} is not implemented.")
        raise PolicyError("Policy has an invalid condition key")
    values = [raw] if not isinstance(raw, list) else raw
    if not values or not all(isinstance(v, str | bool | int | float) for v in values):
        raise PolicyError(f"Invalid Condition value for {operator}: {key}")
    texts = tuple(str(v).lower() if isinstance(v, bool) else str(v) for v in values)
    if version == "2012-10-17" and any("${" in t for t in texts):
        raise _unbuilt("Policy variables are not implemented.")
    if operator in ("IpAddress", "NotIpAddress"):
        for text in texts:
            try:
                ipaddress.ip_network(text, strict=False)
            except ValueError:
                raise PolicyError(f"Invalid IP address in condition: {text}") from None
    if operator in ("Bool", "Null") and any(t.lower() not in ("true", "false") for t in texts):
        raise PolicyError(f"Invalid Condition value for {operator}: {key}")
    if operator in ("Bool", "Null"):
        texts = tuple(t.lower() for t in texts)
    return Condition(operator, lowered, texts, if_exists)


# ------------------------------------------------------------------ evaluation
def glob_match(pattern: str, text: str) -> bool:
    """`*` any run of characters (none included), `?` one. The pieces between the `*`s are found in order,
    leftmost first (exact for `*`: a later piece can only gain from an earlier start), each by one C-level
    search: a character-by-character scan was pattern x text Python steps, seconds of the event loop for an
    18 KB policy and a long key (R34's F1)."""
    pieces = pattern.split("*")
    if len(pieces) == 1:
        return len(pattern) == len(text) and _piece_at(pattern, text, 0)
    head, *middle, tail = pieces
    end = len(text) - len(tail)
    if end < len(head) or not _piece_at(head, text, 0) or not _piece_at(tail, text, end):
        return False
    at = len(head)
    for piece in middle:
        if piece:
            found = _piece_search(piece).search(text, at, end)
            if found is None:
                return False
            at = found.end()
    return True


def _piece_at(piece: str, text: str, at: int) -> bool:
    """Whether `piece` (its `?`s any character) stands in `text` at `at`."""
    if "?" not in piece:
        return text.startswith(piece, at)
    return at + len(piece) <= len(text) and _piece_search(piece).match(text, at) is not None


@lru_cache(maxsize=4096)
def _piece_search(piece: str) -> re.Pattern[str]:
    """A piece as an expression of literal characters and `.`: no repetition, so no backtracking."""
    return re.compile("".join("." if c == "?" else re.escape(c) for c in piece), re.DOTALL)


def _any_glob(patterns: Iterable[str], text: str) -> bool:
    return any(glob_match(p, text) for p in patterns)


def evaluate(policy: Policy | None, request: RequestContext) -> Decision:
    """An applicable Deny wins, then an applicable Allow; else DEFAULT."""
    if policy is None:
        return Decision.DEFAULT
    allowed = False
    for statement in policy.statements:
        if applies(statement, request):
            if statement.effect is Effect.DENY:
                return Decision.DENY
            allowed = True
    return Decision.ALLOW if allowed else Decision.DEFAULT


def applies(statement: Statement, request: RequestContext) -> bool:
    if EVERYONE not in statement.principals and (
        request.user is None or request.user not in statement.principals
    ):
        return False
    if _any_glob(statement.actions, request.action.lower()) == statement.not_action:
        return False
    if _any_glob(statement.resources, request.resource) == statement.not_resource:
        return False
    return all(_holds(c, request.values.get(c.key, ())) for c in statement.conditions)


def _holds(condition: Condition, values: tuple[str, ...]) -> bool:
    operator = condition.operator
    if operator == "Null":
        return (not values) == (condition.values[0] == "true") if len(condition.values) == 1 else False
    if not values:
        return condition.if_exists or operator in _NEGATED
    matched = any(_matches(operator, wanted, value) for wanted in condition.values for value in values)
    return not matched if operator in _NEGATED else matched


def _matches(operator: str, wanted: str, value: str) -> bool:
    if operator in ("StringEquals", "StringNotEquals"):
        return wanted == value
    if operator in ("StringEqualsIgnoreCase", "StringNotEqualsIgnoreCase"):
        return wanted.casefold() == value.casefold()
    if operator in ("StringLike", "StringNotLike"):
        return glob_match(wanted, value)
    if operator == "Bool":
        return wanted == value.lower()
    try:  # IpAddress, NotIpAddress
        return ipaddress.ip_address(value) in ipaddress.ip_network(wanted, strict=False)
    except (ValueError, TypeError):
        return False


def is_public(policy: Policy) -> bool:
    """Amazon's "The meaning of public": some Allow grants everyone, unless a condition limits it to
    fixed CIDRs (aws:SourceIp; not /0, which is every address) or fixed users (aws:username / aws:userid,
    without a wildcard)."""
    return any(
        s.effect is Effect.ALLOW and EVERYONE in s.principals and not _fixed(s.conditions)
        for s in policy.statements
    )


def _some_cidrs(values: tuple[str, ...]) -> bool:
    """Whether the CIDRs leave some addresses out: together, not every address of a family (0.0.0.0/1 and
    128.0.0.0/1 are 0.0.0.0/0: R34's F4)."""
    networks = [ipaddress.ip_network(v, strict=False) for v in values]
    for version in (4, 6):
        same = [n for n in networks if n.version == version]
        if any(n.prefixlen == 0 for n in ipaddress.collapse_addresses(same)):  # type: ignore[type-var]
            return False
    return True


def _fixed(conditions: tuple[Condition, ...]) -> bool:
    for c in conditions:
        if (
            c.operator == "IpAddress"
            and c.key == "aws:sourceip"
            and not c.if_exists
            and _some_cidrs(c.values)
        ):
            return True
        if (
            c.operator in ("StringEquals", "StringEqualsIgnoreCase")
            and c.key in ("aws:username", "aws:userid")
            and not c.if_exists
            and not any("*" in v or "?" in v for v in c.values)
        ):
            return True
    return False
