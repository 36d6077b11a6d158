"""The POST policy (post_policy.py) from Amazon's "Creating a POST policy" and "POST policy conditions":
decoding and its InvalidPolicyDocument refusals, each condition's matching (property tests of exact,
starts-with and Content-Type lists), content-length-range, expiration and the extra-fields rule."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyozone.s3g import post_policy
from pyozone.s3g.errors import S3Error, S3ErrorCode
from pyozone.s3g.post_policy import Exact, LengthRange, StartsWith

NOW = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)
LATER = "2026-12-07T13:00:00.000Z"


def encode(document: Any) -> str:
    return base64.b64encode(json.dumps(document).encode()).decode()


def refusal(call: Any, *args: Any) -> tuple[S3ErrorCode, str]:
    with pytest.raises(S3Error) as e:
        call(*args)
    return e.value.code, e.value.message


def test_boto3_s_document_decodes() -> None:
    policy = post_policy.decode(
        encode(
            {
                "expiration": "2026-12-07T13:00:00Z",
                "conditions": [
                    {"bucket": "b"},
                    ["starts-with", "$key", "up/"],
                    ["eq", "$Content-Type", "text/plain"],
                    ["content-length-range", 1, 10],
                    {"x-amz-algorithm": "AWS4-HMAC-SHA256"},
                ],
            }
        )
    )
    assert policy.expiration == datetime(2026, 12, 7, 13, 0, tzinfo=UTC)
    assert policy.conditions == (
        Exact("bucket", "b"),
        StartsWith("key", "up/"),
        Exact("Content-Type", "text/plain"),
        Exact("x-amz-algorithm", "AWS4-HMAC-SHA256"),
    )
    assert policy.length == LengthRange(1, 10)
    assert policy.named() == {"bucket", "key", "content-type", "x-amz-algorithm"}


def test_length_ranges_intersect() -> None:
    conditions = [["content-length-range", 0, 100], ["content-length-range", "5", 50]]
    assert post_policy.decode(encode({"expiration": LATER, "conditions": conditions})).length == LengthRange(
        5, 50
    )


def test_a_bound_of_thousands_of_digits_is_beyond_any_size() -> None:
    """R30's P2: int() refuses a string of more than 4,300 digits (a 500); leading zeros are no size."""
    conditions = [["content-length-range", "0" * 5000 + "7", "9" * 5000]]
    policy = post_policy.decode(encode({"expiration": LATER, "conditions": conditions}))
    assert policy.length is not None and policy.length.low == 7 and policy.length.high > 5 * 2**40


@pytest.mark.parametrize(
    ("encoded", "message"),
    [
        ("not base64!", "Invalid Policy: Invalid Base64 Encoding."),
        (base64.b64encode(b"{nope").decode(), "Invalid Policy: Invalid JSON."),
        (  # review R28 F7: deeper than json reads (RecursionError), not a 500
            base64.b64encode(b'{"conditions": ' + b"[" * 5000 + b"]" * 5000 + b"}").decode(),
            "Invalid Policy: Invalid JSON.",
        ),
        (encode({"conditions": []}), "Invalid Policy: Policy missing expiration."),
        (encode({"expiration": LATER}), "Invalid Policy: Policy missing conditions."),
        (
            encode({"expiration": "tomorrow", "conditions": []}),
            "Invalid Policy: Invalid 'expiration' value: 'tomorrow'",
        ),
        (
            encode({"expiration": LATER, "conditions": [["ends-with", "$key", "x"]]}),
            "Invalid Policy: Invalid Condition: unknown operation 'ends-with'",
        ),
        (
            encode({"expiration": LATER, "conditions": [["eq", "key", "x"]]}),
            'Invalid Policy: Invalid Condition: field names must begin with \'$\': ["eq", "key", "x"]',
        ),
        (
            encode({"expiration": LATER, "conditions": [["content-length-range", 10, 1]]}),
            "Invalid Policy: Invalid 'content-length-range' value: [\"content-length-range\", 10, 1]",
        ),
        (
            encode({"expiration": LATER, "conditions": [["content-length-range", -1, 1]]}),
            "Invalid Policy: Invalid 'content-length-range' value: [\"content-length-range\", -1, 1]",
        ),
        (
            encode({"expiration": LATER, "conditions": [{"key": 1}]}),
            'Invalid Policy: Invalid Simple-Condition: {"key": 1}',
        ),
    ],
)
def test_malformed_documents_are_invalid_policy_documents(encoded: str, message: str) -> None:
    assert refusal(post_policy.decode, encoded) == (S3ErrorCode.InvalidPolicyDocument, message)


@given(st.text(), st.text())
def test_exact_holds_only_of_its_value(expected: str, value: str) -> None:
    assert Exact("key", expected).holds(value) == (value == expected)
    assert Exact("key", expected).holds(expected)
    assert not Exact("key", expected).holds(None)


@given(st.text(), st.text())
def test_starts_with_holds_of_every_extension_of_its_prefix(prefix: str, rest: str) -> None:
    assert StartsWith("key", prefix).holds(prefix + rest)
    assert StartsWith("key", "").holds(rest)  # "" matches any content
    assert StartsWith("key", prefix).holds(rest) == rest.startswith(prefix)
    assert not StartsWith("key", prefix).holds(None)


@given(st.lists(st.text(alphabet="abcxyz/", min_size=1), min_size=1), st.sampled_from(["a", "x/", ""]))
def test_a_content_type_list_matches_when_each_type_does(types: list[str], prefix: str) -> None:
    condition = StartsWith("Content-Type", prefix)
    assert condition.holds(", ".join(types)) == all(t.startswith(prefix) for t in types)


def check(conditions: list[Any], fields: dict[str, str], now: datetime = NOW) -> None:
    post_policy.check(
        post_policy.decode(encode({"expiration": LATER, "conditions": conditions})), fields, "b", now
    )


def test_every_field_must_be_named_and_every_condition_hold() -> None:
    check(
        [{"bucket": "b"}, ["starts-with", "$KEY", "up/"]],
        {"key": "up/x", "policy": "p", "x-amz-signature": "s", "file": "", "x-ignore-note": "n"},
    )
    assert refusal(check, [["starts-with", "$key", ""]], {"key": "k", "x-amz-meta-a": "1"}) == (
        S3ErrorCode.AccessDenied,
        "Invalid according to Policy: Extra input fields: x-amz-meta-a",
    )
    assert refusal(check, [{"bucket": "other"}], {}) == (
        S3ErrorCode.AccessDenied,
        'Invalid according to Policy: Policy Condition failed: ["eq", "$bucket", "other"]',
    )
    assert refusal(check, [["starts-with", "$x-amz-meta-a", ""]], {}) == (  # a named field must be there
        S3ErrorCode.AccessDenied,
        'Invalid according to Policy: Policy Condition failed: ["starts-with", "$x-amz-meta-a", ""]',
    )
    assert refusal(check, [], {}, NOW + timedelta(hours=1)) == (
        S3ErrorCode.AccessDenied,
        "Invalid according to Policy: Policy expired.",
    )
