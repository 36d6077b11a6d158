"""s3g/sse.customer_key: each SSE-C header missing is refused in Amazon's words for that header (issue 33,
item 7; A1's gap 10: a missing key-MD5 was answered as a wrong one)."""

from __future__ import annotations

import base64
import hashlib
import os

import pytest

from pyozone.s3g.errors import S3Error, S3ErrorCode
from pyozone.s3g.sse import CUSTOMER, customer_key

KEY = os.urandom(32)
HEADERS = {
    CUSTOMER + "algorithm": "AES256",
    CUSTOMER + "key": base64.b64encode(KEY).decode(),
    CUSTOMER + "key-md5": base64.b64encode(hashlib.md5(KEY).digest()).decode(),
}
REQUESTS = "Requests specifying Server Side Encryption with Customer provided keys must "


def refusal(headers: dict[str, str]) -> tuple[S3ErrorCode, str]:
    with pytest.raises(S3Error) as e:
        customer_key(headers, CUSTOMER, secure=True, require_https=True)
    return e.value.code, e.value.message


def test_all_three_headers_give_the_key() -> None:
    assert customer_key(HEADERS, CUSTOMER, secure=True, require_https=True) == KEY


@pytest.mark.parametrize(
    ("missing", "message"),
    [
        ("algorithm", REQUESTS + "provide a valid encryption algorithm."),
        ("key", REQUESTS + "provide an appropriate secret key."),
        ("key-md5", REQUESTS + "provide the client calculated MD5 of the secret key."),
    ],
)
def test_a_missing_header_is_named(missing: str, message: str) -> None:
    headers = {k: v for k, v in HEADERS.items() if k != CUSTOMER + missing}
    assert refusal(headers) == (S3ErrorCode.InvalidArgument, message)


def test_a_wrong_md5_and_a_short_key_are_told_apart() -> None:
    other = base64.b64encode(hashlib.md5(b"other").digest()).decode()
    assert refusal({**HEADERS, CUSTOMER + "key-md5": other}) == (
        S3ErrorCode.InvalidArgument,
        "The calculated MD5 hash of the key did not match the hash that was provided.",
    )
    short = {**HEADERS, CUSTOMER + "key": base64.b64encode(KEY[:16]).decode()}
    assert refusal(short) == (
        S3ErrorCode.InvalidArgument,
        "The secret key was invalid for the specified algorithm.",
    )


def test_over_plain_http_the_transport_is_refused_first() -> None:
    with pytest.raises(S3Error) as e:
        customer_key({CUSTOMER + "key": "x"}, CUSTOMER, secure=False, require_https=True)
    assert e.value.code is S3ErrorCode.InvalidRequest and "secure connection" in e.value.message
