"""Presigned URLs as the SDKs make them (issue 28 round 3, review finding 3): every query parameter SigV4
presigning defines is read (aws-sdk-js-v3 and the Go and Java SDKs put X-Amz-Content-Sha256=UNSIGNED-PAYLOAD
there), and x-amz-checksum-* / x-amz-sdk-checksum-algorithm in the query are checked as their headers."""

from __future__ import annotations

import base64
import urllib.error
import urllib.request
import zlib

import pytest

from tests.unit.s3g.gateway_thread import GatewayOnThread

BUCKET = "presigned"
BODY = b""  # no datanodes behind gateway_thread: objects are empty
CRC32 = base64.b64encode(zlib.crc32(BODY).to_bytes(4, "big")).decode()
WRONG_CRC32 = base64.b64encode(zlib.crc32(b"other").to_bytes(4, "big")).decode()


@pytest.fixture(scope="module")
def s3(gateway: GatewayOnThread):  # type: ignore[no-untyped-def]
    client = gateway.boto3()
    client.create_bucket(Bucket=BUCKET)
    return client


def presigned(
    gateway: GatewayOnThread, method: str, target: str, headers: dict[str, str] | None = None
) -> str:
    from botocore.auth import S3SigV4QueryAuth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    request = AWSRequest(method, gateway.url + target, data=b"", headers=headers or {})
    S3SigV4QueryAuth(Credentials(*gateway.secret("tester")), "s3", "us-east-1", expires=300).add_auth(request)
    return request.url


def send(
    url: str, method: str, body: bytes | None = None, headers: dict[str, str] | None = None
) -> tuple[int, bytes, dict[str, str]]:
    request = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=20) as response:
            return response.status, response.read(), dict(response.headers.items())
    except urllib.error.HTTPError as e:
        return e.code, e.read(), dict(e.headers.items())


@pytest.mark.parametrize(
    "query",
    ["X-Amz-Content-Sha256=UNSIGNED-PAYLOAD&x-id=PutObject", "x-id=PutObject",
     "X-Amz-Content-Sha256=UNSIGNED-PAYLOAD&X-Amz-Security-Token=token"],
)  # fmt: skip
def test_the_sdks_presigned_urls_are_served(gateway: GatewayOnThread, s3, query: str) -> None:  # type: ignore[no-untyped-def]
    status, text, _ = send(presigned(gateway, "PUT", f"/{BUCKET}/k?{query}"), "PUT", BODY)
    assert status == 200, text
    url = presigned(gateway, "GET", f"/{BUCKET}/k?X-Amz-Content-Sha256=UNSIGNED-PAYLOAD&x-id=GetObject")
    assert send(url, "GET")[:2] == (200, BODY)


def test_a_checksum_in_the_query_is_checked_as_its_header(gateway: GatewayOnThread, s3) -> None:  # type: ignore[no-untyped-def]
    algorithm = "x-amz-sdk-checksum-algorithm=CRC32&x-id=PutObject"
    good = presigned(gateway, "PUT", f"/{BUCKET}/sum?x-amz-checksum-crc32={CRC32}&{algorithm}")
    status, text, headers = send(good, "PUT", BODY)
    assert status == 200, text
    assert headers.get("x-amz-checksum-crc32") == CRC32
    wrong = presigned(gateway, "PUT", f"/{BUCKET}/bad?x-amz-checksum-crc32={WRONG_CRC32}&{algorithm}")
    status, text, _ = send(wrong, "PUT", BODY)
    assert status == 400 and b"<Code>BadDigest</Code>" in text
    header = {"x-amz-checksum-crc32": CRC32}  # signed, and in the query too: which one would count?
    both = presigned(gateway, "PUT", f"/{BUCKET}/twice?x-amz-checksum-crc32={CRC32}", header)
    status, text, _ = send(both, "PUT", BODY, header)
    assert status == 400 and b"x-amz-checksum-crc32" in text
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET)["Contents"]]
    assert "bad" not in keys and "twice" not in keys
