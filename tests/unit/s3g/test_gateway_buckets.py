"""Smaller S3 mismatches, through boto3 and raw requests (issue 28 defect 14): a bucket is its creator's
(another user's name is BucketAlreadyExists, your own is 200 in us-east-1, its ACL names the S3 user), a
missing bucket is 404 with or without credentials, a completed upload completes again with the same answer,
a wrong checksum is BadDigest, and Expect: 100-continue is answered only once the request is authenticated."""

from __future__ import annotations

import base64
import hashlib
import socket
from typing import Any

import pytest
from botocore.exceptions import ClientError

from pyozone.s3g.auth import checksums
from tests.unit.s3g.gateway_thread import GatewayOnThread


def error_of(call: Any, **kwargs: Any) -> tuple[int, str]:
    with pytest.raises(ClientError) as e:
        call(**kwargs)
    return e.value.response["ResponseMetadata"]["HTTPStatusCode"], e.value.response["Error"]["Code"]


def test_a_bucket_name_taken_by_another_user_is_bucket_already_exists(gateway: GatewayOnThread) -> None:
    alice, bob = gateway.boto3("alice"), gateway.boto3("bob")
    alice.create_bucket(Bucket="alices")
    assert error_of(bob.create_bucket, Bucket="alices") == (409, "BucketAlreadyExists")
    alice.create_bucket(Bucket="alices")  # your own again: 200 in us-east-1, as Amazon answers
    assert gateway.om.core is not None
    assert gateway.om.core.bucket_info("s3v", "alices").owner == "alice"


def test_get_bucket_acl_names_the_s3_user_who_created_it(gateway: GatewayOnThread) -> None:
    carol = gateway.boto3("carol")
    carol.create_bucket(Bucket="carols")
    acl = carol.get_bucket_acl(Bucket="carols")
    assert (acl["Owner"]["ID"], acl["Owner"]["DisplayName"]) == ("carol", "carol")
    assert [(g["Grantee"]["ID"], g["Permission"]) for g in acl["Grants"]] == [("carol", "FULL_CONTROL")]


def test_a_missing_bucket_is_404_with_or_without_credentials(gateway: GatewayOnThread) -> None:
    gateway.boto3().create_bucket(Bucket="present")
    for user in ("tester", None):
        status, body = gateway.signed_request("GET", "/no-such-bucket", user=user)
        assert status == 404 and "<Code>NoSuchBucket</Code>" in body, (user, body)
    status, body = gateway.signed_request("GET", "/present", user=None)
    assert status == 403 and "<Code>AccessDenied</Code>" in body
    status, body = gateway.signed_request("GET", "/no-such-bucket/key", user=None)
    assert status == 404 and "<Code>NoSuchBucket</Code>" in body


def test_a_repeated_complete_answers_as_the_first(gateway: GatewayOnThread) -> None:
    s3 = gateway.boto3()
    s3.create_bucket(Bucket="completed")
    upload_id = s3.create_multipart_upload(Bucket="completed", Key="k")["UploadId"]
    etag = s3.upload_part(Bucket="completed", Key="k", UploadId=upload_id, PartNumber=1, Body=b"")["ETag"]
    parts = {"Parts": [{"PartNumber": 1, "ETag": etag}]}
    first = s3.complete_multipart_upload(
        Bucket="completed", Key="k", UploadId=upload_id, MultipartUpload=parts
    )
    again = s3.complete_multipart_upload(
        Bucket="completed", Key="k", UploadId=upload_id, MultipartUpload=parts
    )
    assert [again[f] for f in ("Location", "Bucket", "Key", "ETag")] == [
        first[f] for f in ("Location", "Bucket", "Key", "ETag")
    ]
    other = {"Parts": [{"PartNumber": 1, "ETag": '"' + "0" * 32 + '"'}]}
    assert error_of(
        s3.complete_multipart_upload, Bucket="completed", Key="k", UploadId=upload_id, MultipartUpload=other
    ) == (404, "NoSuchUpload")
    assert error_of(
        s3.complete_multipart_upload,
        Bucket="completed",
        Key="k",
        UploadId="not-an-upload",
        MultipartUpload=parts,
    ) == (404, "NoSuchUpload")
    assert s3.head_object(Bucket="completed", Key="k")["ETag"] == first["ETag"]


WRONG = {
    "ChecksumCRC32": base64.b64encode(b"\x01\x02\x03\x04").decode(),
    "ChecksumCRC32C": base64.b64encode(b"\x01\x02\x03\x04").decode(),
    "ChecksumCRC64NVME": base64.b64encode(b"\x01" * 8).decode(),
    "ChecksumSHA1": base64.b64encode(b"\x01" * 20).decode(),
    "ChecksumSHA256": base64.b64encode(b"\x01" * 32).decode(),
}


@pytest.mark.parametrize("field", WRONG)
def test_a_wrong_checksum_is_bad_digest(gateway: GatewayOnThread, field: str) -> None:
    s3 = gateway.boto3()
    s3.create_bucket(Bucket="digests")
    value = {field: WRONG[field]}
    assert error_of(s3.put_object, Bucket="digests", Key="k", Body=b"", **value) == (400, "BadDigest")
    upload_id = s3.create_multipart_upload(Bucket="digests", Key="k")["UploadId"]
    part = {"Bucket": "digests", "Key": "k", "UploadId": upload_id, "PartNumber": 1}
    assert error_of(s3.upload_part, Body=b"", **part, **value) == (400, "BadDigest")
    assert "Contents" not in s3.list_objects_v2(Bucket="digests")
    assert s3.list_parts(Bucket="digests", Key="k", UploadId=upload_id).get("Parts", []) == []


def test_a_checksum_the_gateway_cannot_compute_is_not_implemented(
    gateway: GatewayOnThread, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CRC64NVME needs awscrt: without it the value cannot be verified, so it is refused, never stored."""
    monkeypatch.setattr(checksums, "crt_checksums", None)
    s3 = gateway.boto3()
    s3.create_bucket(Bucket="nvme")
    right = {"ChecksumCRC64NVME": base64.b64encode(b"\x00" * 8).decode()}  # the CRC64NVME of nothing
    assert error_of(s3.put_object, Bucket="nvme", Key="k", Body=b"", **right) == (501, "NotImplemented")
    assert "Contents" not in s3.list_objects_v2(Bucket="nvme")


def _raw_put_with_expect(gateway: GatewayOnThread, headers: dict[str, str], body: bytes) -> bytes:
    """Sends the head only, then reads what the gateway answers before the body is sent."""
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    with socket.create_connection(("127.0.0.1", gateway.gateway.port), timeout=10) as sock:
        sock.sendall(f"POST /expect?delete HTTP/1.1\r\n{head}\r\n".encode())
        first = sock.recv(65536)
        if first.startswith(b"HTTP/1.1 100"):
            sock.sendall(body)
            answer = first
            while b"</DeleteResult>" not in answer and (more := sock.recv(65536)):
                answer += more
            return answer
        return first


def test_expect_100_continue_is_answered_after_authentication(gateway: GatewayOnThread) -> None:
    gateway.boto3().create_bucket(Bucket="expect")
    body = b"<Delete><Object><Key>k</Key></Object></Delete>"
    md5 = base64.b64encode(hashlib.md5(body).digest()).decode()
    headers = gateway.signed_headers(
        "POST", "/expect?delete", body, {"Content-MD5": md5, "Expect": "100-continue"}
    )
    headers["Host"] = f"127.0.0.1:{gateway.gateway.port}"
    headers["Content-Length"] = str(len(body))
    good = _raw_put_with_expect(gateway, headers, body)
    assert good.startswith(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200"), good
    bad = dict(headers, Authorization=headers["Authorization"][:-4] + "0000")
    refused = _raw_put_with_expect(gateway, bad, body)
    assert refused.startswith(b"HTTP/1.1 403"), refused
    assert b"SignatureDoesNotMatch" in refused
    assert b"100 Continue" not in refused
