"""What a header or query parameter asks the gateway does, or the request is refused (issue 28, the review
of defects 10-14): Object Lock on a bucket without it, object ownership, website redirects and MFA delete
are never accepted and ignored; x-amz-* parameters in the query string and a single-valued header sent
twice are refused rather than read half."""

from __future__ import annotations

import datetime
import http.client
from collections.abc import Callable
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.unit.s3g.gateway_thread import GatewayOnThread

BUCKET = "promises"
LOCK = [
    {"ObjectLockMode": "GOVERNANCE", "ObjectLockRetainUntilDate": datetime.datetime(2030, 1, 1)},
    {"ObjectLockMode": "COMPLIANCE", "ObjectLockRetainUntilDate": datetime.datetime(2030, 1, 1)},
    {"ObjectLockLegalHoldStatus": "ON"},
]
MISSING_LOCK = (400, "InvalidRequest", "Bucket is missing Object Lock Configuration")


@pytest.fixture(scope="module")
def s3(gateway: GatewayOnThread):  # type: ignore[no-untyped-def]
    client = gateway.boto3()
    client.create_bucket(Bucket=BUCKET)
    client.put_object(Bucket=BUCKET, Key="source", Body=b"")
    return client


def refused(call: Callable[..., Any], **kwargs: Any) -> tuple[int, str, str]:
    with pytest.raises(ClientError) as e:
        call(**kwargs)
    error = e.value.response["Error"]
    return e.value.response["ResponseMetadata"]["HTTPStatusCode"], error["Code"], error.get("Message", "")


def keys(s3: Any) -> list[str]:
    return [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])]


def buckets(s3: Any) -> list[str]:
    return [b["Name"] for b in s3.list_buckets()["Buckets"]]


@pytest.mark.parametrize("lock", LOCK, ids=lambda h: "+".join(h))
def test_object_lock_on_writes_is_a_bucket_without_object_lock(s3, lock: dict[str, Any]) -> None:  # type: ignore[no-untyped-def]
    assert refused(s3.put_object, Bucket=BUCKET, Key="locked", Body=b"", **lock) == MISSING_LOCK
    assert refused(s3.copy_object, Bucket=BUCKET, Key="locked", CopySource=f"{BUCKET}/source", **lock) == (
        MISSING_LOCK
    )
    assert refused(s3.create_multipart_upload, Bucket=BUCKET, Key="locked", **lock) == MISSING_LOCK
    assert "locked" not in keys(s3)
    assert s3.list_multipart_uploads(Bucket=BUCKET).get("Uploads", []) == []

    assert "worm" not in buckets(s3)
    s3.create_bucket(
        Bucket="enforced", ObjectOwnership="BucketOwnerEnforced", ObjectLockEnabledForBucket=False
    )
    assert "enforced" in buckets(s3)


def test_redirects_mfa_delete_appends_and_copy_checksums_are_not_implemented(gateway, s3) -> None:  # type: ignore[no-untyped-def]
    redirect = {"WebsiteRedirectLocation": "/elsewhere"}
    assert refused(s3.put_object, Bucket=BUCKET, Key="web", Body=b"", **redirect)[:2] == (
        501,
        "NotImplemented",
    )
    assert refused(s3.copy_object, Bucket=BUCKET, Key="web", CopySource=f"{BUCKET}/source", **redirect)[
        :2
    ] == (501, "NotImplemented")
    assert refused(s3.create_multipart_upload, Bucket=BUCKET, Key="web", **redirect)[:2] == (
        501,
        "NotImplemented",
    )
    assert "web" not in keys(s3)
    assert refused(s3.delete_object, Bucket=BUCKET, Key="source", MFA="serial 123456")[:2] == (
        501,
        "NotImplemented",
    )
    assert "source" in keys(s3)
    assert refused(
        s3.copy_object, Bucket=BUCKET, Key="sum", CopySource=f"{BUCKET}/source", ChecksumAlgorithm="SHA256"
    )[:2] == (501, "NotImplemented")
    for header in ("x-amz-write-offset-bytes", "x-amz-mp-object-size"):
        status, text = gateway.signed_request("PUT", f"/{BUCKET}/appended", b"", {header: "0"})
        assert status == 501 and "<Code>NotImplemented</Code>" in text
    assert not {"sum", "appended"} & set(keys(s3))


@pytest.mark.parametrize(
    "query",
    ["x-amz-acl=public-read", "X-Amz-Acl=public-read", "x-amz-grant-read=id%3Dbob",
     "x-amz-server-side-encryption=AES256", "X-Amz-Server-Side-Encryption=AES256",
     "x-amz-server-side-encryption-customer-algorithm=AES256", "x-amz-meta-colour=red",
     "x-amz-storage-class=REDUCED_REDUNDANCY"],
)  # fmt: skip
def test_headers_moved_into_the_query_are_not_implemented(gateway: GatewayOnThread, s3, query: str) -> None:  # type: ignore[no-untyped-def]
    """A presigned URL carries x-amz-* in its query; the gateway reads headers only, so it refuses them."""
    status, text = gateway.signed_request("PUT", f"/{BUCKET}/queried?{query}")
    assert status == 501 and "<Code>NotImplemented</Code>" in text
    assert "queried" not in keys(s3)


@pytest.mark.parametrize(
    ("name", "first", "second"),
    [("x-amz-acl", "private", "public-read"), ("Content-Disposition", "inline", "attachment")],
)
def test_a_single_valued_header_sent_twice_is_refused(  # type: ignore[no-untyped-def]
    gateway: GatewayOnThread, s3, name: str, first: str, second: str
) -> None:
    """Two signed values of one header (x-amz-acl private, then public-read): refused, not read by the
    first alone."""
    from botocore.auth import S3SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    request = AWSRequest("PUT", f"{gateway.url}/{BUCKET}/twice", data=b"")
    request.headers[name] = first
    request.headers[name] = second  # botocore's headers keep both
    S3SigV4Auth(Credentials(*gateway.secret("tester")), "s3", "us-east-1").add_auth(request)
    connection = http.client.HTTPConnection("127.0.0.1", gateway.gateway.port, timeout=20)
    try:
        connection.putrequest("PUT", f"/{BUCKET}/twice", skip_host=True, skip_accept_encoding=True)
        for header, value in request.headers.items():
            connection.putheader(header, value)
        connection.putheader("Host", f"127.0.0.1:{gateway.gateway.port}")
        connection.putheader("Content-Length", "0")
        connection.endheaders()
        response = connection.getresponse()
        text = response.read().decode()
    finally:
        connection.close()
    assert response.status == 400 and "<Code>InvalidArgument</Code>" in text
    assert "twice" not in keys(s3)
