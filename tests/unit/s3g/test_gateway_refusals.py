"""What the gateway does not do it refuses, through boto3 (issue 28 defects 10, 12, 19): SSE-KMS and ACL
grants are NotImplemented (501) instead of accepted and ignored, SSE-C over plain HTTP is refused as Amazon
refuses it, versioning cannot be switched on, and a DeleteObjects body must carry its MD5 or checksum as
Amazon requires."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import pytest

from tests.unit.s3g.gateway_thread import GatewayOnThread, refused

BUCKET = "refusals"
SSE_C = {"SSECustomerAlgorithm": "AES256", "SSECustomerKey": "k" * 32}
COPY_SSE_C = {"CopySourceSSECustomerAlgorithm": "AES256", "CopySourceSSECustomerKey": "k" * 32}
SSE_KMS = [
    {"ServerSideEncryption": "aws:kms"},
    {"ServerSideEncryption": "aws:kms:dsse"},
    {"ServerSideEncryption": "aws:kms", "SSEKMSKeyId": "key-1"},
    {"SSEKMSEncryptionContext": base64.b64encode(b'{"a":"b"}').decode()},
    {"BucketKeyEnabled": True},
]
PLAIN_HTTP = (400, "InvalidRequest")
"""SSE-C over plain HTTP: "Requests specifying Server Side Encryption with Customer provided keys must be
made over a secure connection." (the gateway on a thread speaks HTTP)."""
ACLS = [
    {"ACL": "public-read"},
    {"ACL": "authenticated-read"},
    {"GrantRead": 'id="bob"'},
    {"GrantFullControl": 'id="bob"'},
    {"GrantReadACP": 'id="bob"'},
    {"GrantWriteACP": 'id="bob"'},
]


@pytest.fixture(scope="module")
def s3(gateway: GatewayOnThread):  # type: ignore[no-untyped-def]
    client = gateway.boto3()
    client.create_bucket(Bucket=BUCKET)
    client.put_object(Bucket=BUCKET, Key="source", Body=b"")
    return client


def upload(s3: Any, key: str) -> str:
    return s3.create_multipart_upload(Bucket=BUCKET, Key=key)["UploadId"]


def keys(s3: Any) -> list[str]:
    return [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])]


@pytest.mark.parametrize("headers", SSE_KMS, ids=lambda h: "+".join(h))
def test_sse_kms_on_writes_is_not_implemented(s3, headers: dict[str, Any]) -> None:  # type: ignore[no-untyped-def]
    assert refused(s3.put_object, Bucket=BUCKET, Key="sse", Body=b"", **headers) == (501, "NotImplemented")
    assert refused(s3.copy_object, Bucket=BUCKET, Key="sse", CopySource=f"{BUCKET}/source", **headers) == (
        501,
        "NotImplemented",
    )
    assert refused(s3.create_multipart_upload, Bucket=BUCKET, Key="sse", **headers) == (501, "NotImplemented")
    assert "sse" not in keys(s3)


def test_sse_c_over_plain_http_is_refused_everywhere(s3) -> None:  # type: ignore[no-untyped-def]
    assert refused(s3.put_object, Bucket=BUCKET, Key="sse", Body=b"", **SSE_C) == PLAIN_HTTP
    copy = {"Bucket": BUCKET, "Key": "sse", "CopySource": f"{BUCKET}/source"}
    assert refused(s3.copy_object, **copy, **SSE_C) == PLAIN_HTTP
    assert refused(s3.copy_object, **copy, **COPY_SSE_C) == PLAIN_HTTP
    assert refused(s3.create_multipart_upload, Bucket=BUCKET, Key="sse", **SSE_C) == PLAIN_HTTP
    upload_id = upload(s3, "parts")
    part = {"Bucket": BUCKET, "Key": "parts", "UploadId": upload_id, "PartNumber": 1}
    assert refused(s3.upload_part, Body=b"", **part, **SSE_C) == PLAIN_HTTP
    assert refused(s3.upload_part_copy, CopySource=f"{BUCKET}/source", **part, **COPY_SSE_C) == PLAIN_HTTP
    assert s3.list_parts(Bucket=BUCKET, Key="parts", UploadId=upload_id).get("Parts", []) == []
    assert refused(s3.get_object, Bucket=BUCKET, Key="source", **SSE_C) == PLAIN_HTTP
    assert refused(s3.head_object, Bucket=BUCKET, Key="source", **SSE_C)[0] == 400
    assert "sse" not in keys(s3)


def test_default_encryption_with_kms_is_not_implemented(s3) -> None:  # type: ignore[no-untyped-def]
    rule = {"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "aws:kms"}}
    assert refused(
        s3.put_bucket_encryption, Bucket=BUCKET, ServerSideEncryptionConfiguration={"Rules": [rule]}
    ) == (501, "NotImplemented")
    assert refused(s3.get_bucket_encryption, Bucket=BUCKET) == (
        404,
        "ServerSideEncryptionConfigurationNotFoundError",
    )


@pytest.mark.parametrize("headers", ACLS, ids=lambda h: "+".join(f"{k}={v}" for k, v in h.items()))
def test_acl_grants_are_not_supported_where_acls_are_disabled(s3, headers: dict[str, Any]) -> None:  # type: ignore[no-untyped-def]
    unsupported = (400, "AccessControlListNotSupported")  # BucketOwnerEnforced, a new bucket's
    assert refused(s3.put_object, Bucket=BUCKET, Key="acl", Body=b"", **headers) == unsupported
    assert (
        refused(s3.copy_object, Bucket=BUCKET, Key="acl", CopySource=f"{BUCKET}/source", **headers)
        == unsupported
    )
    assert refused(s3.create_multipart_upload, Bucket=BUCKET, Key="acl", **headers) == unsupported
    unmapped = headers.get("ACL") == "authenticated-read"  # no Ozone grantee: refused before anything
    assert refused(s3.create_bucket, Bucket="acl-bucket", **headers) == (
        (501, "NotImplemented") if unmapped else (400, "InvalidBucketAclWithObjectOwnership")
    )
    assert "acl" not in keys(s3)
    assert "acl-bucket" not in [b["Name"] for b in s3.list_buckets()["Buckets"]]


def test_the_private_canned_acl_is_the_default_and_accepted(s3) -> None:  # type: ignore[no-untyped-def]
    s3.put_object(Bucket=BUCKET, Key="private", Body=b"", ACL="private")
    s3.create_multipart_upload(Bucket=BUCKET, Key="private", ACL="private")
    s3.create_bucket(Bucket="private-bucket", ACL="private")
    s3.put_object_acl(Bucket=BUCKET, Key="private", ACL="private")
    s3.put_bucket_acl(Bucket=BUCKET, ACL="private")


def test_acl_writes_grant_only_the_owner_full_control(s3) -> None:  # type: ignore[no-untyped-def]
    owner = s3.get_bucket_acl(Bucket=BUCKET)["Owner"]
    own = {"Grantee": {"Type": "CanonicalUser", "ID": owner["ID"]}, "Permission": "FULL_CONTROL"}
    s3.put_bucket_acl(Bucket=BUCKET, AccessControlPolicy={"Owner": owner, "Grants": [own]})
    s3.put_object_acl(Bucket=BUCKET, Key="source", AccessControlPolicy={"Owner": owner, "Grants": [own]})
    acl = s3.get_object_acl(Bucket=BUCKET, Key="source")
    assert acl["Owner"]["ID"] == owner["ID"]
    assert [g["Permission"] for g in acl["Grants"]] == ["FULL_CONTROL"]
    everyone = {"Grantee": {"Type": "Group", "URI": "http://acs.amazonaws.com/groups/global/AllUsers"},
                "Permission": "READ"}  # fmt: skip
    bob = {"Grantee": {"Type": "CanonicalUser", "ID": "bob"}, "Permission": "READ"}
    own_read = {"Grantee": {"Type": "CanonicalUser", "ID": owner["ID"]}, "Permission": "READ"}
    unsupported = (400, "AccessControlListNotSupported")  # BucketOwnerEnforced, a new bucket's
    for grants in ([own, everyone], [bob], [own_read]):
        policy = {"Owner": owner, "Grants": grants}
        assert refused(s3.put_bucket_acl, Bucket=BUCKET, AccessControlPolicy=policy) == unsupported
        assert (
            refused(s3.put_object_acl, Bucket=BUCKET, Key="source", AccessControlPolicy=policy) == unsupported
        )
    assert refused(s3.put_object_acl, Bucket=BUCKET, Key="source", ACL="public-read") == unsupported
    assert refused(s3.put_bucket_acl, Bucket=BUCKET, GrantRead='id="bob"') == unsupported


def test_mfa_delete_cannot_be_enabled(s3) -> None:  # type: ignore[no-untyped-def]
    config = {"Status": "Enabled", "MFADelete": "Enabled"}
    assert refused(s3.put_bucket_versioning, Bucket=BUCKET, VersioningConfiguration=config) == (
        501,
        "NotImplemented",
    )
    assert "Status" not in s3.get_bucket_versioning(Bucket=BUCKET)


def _delete_body(key: str) -> bytes:
    return f"<Delete><Object><Key>{key}</Key></Object></Delete>".encode()


def test_delete_objects_needs_a_content_md5_or_a_checksum(gateway: GatewayOnThread, s3) -> None:  # type: ignore[no-untyped-def]
    """Amazon: "the Content-MD5 or x-amz-sdk-checksum-algorithm header is required for all Multi-Object
    Delete requests". boto3 always adds one, so the request is sent raw (signed by botocore's signer)."""
    s3.put_object(Bucket=BUCKET, Key="doomed", Body=b"")
    body = _delete_body("doomed")
    status, text = gateway.signed_request("POST", f"/{BUCKET}?delete", body)
    assert status == 400 and "<Code>InvalidRequest</Code>" in text
    assert "Content-MD5" in text
    assert "doomed" in keys(s3)
    md5 = base64.b64encode(hashlib.md5(body).digest()).decode()
    status, text = gateway.signed_request("POST", f"/{BUCKET}?delete", body, {"Content-MD5": md5})
    assert status == 200, text
    assert "doomed" not in keys(s3)
    s3.put_object(Bucket=BUCKET, Key="doomed", Body=b"")
    sha256 = base64.b64encode(hashlib.sha256(body).digest()).decode()
    status, text = gateway.signed_request(
        "POST", f"/{BUCKET}?delete", body, {"x-amz-checksum-sha256": sha256}
    )
    assert status == 200, text
    assert "doomed" not in keys(s3)
    s3.put_object(Bucket=BUCKET, Key="doomed", Body=b"")
    status, text = gateway.signed_request(
        "POST", f"/{BUCKET}?delete", body, {"x-amz-checksum-sha256": base64.b64encode(b"x" * 32).decode()}
    )
    assert status == 400 and "<Code>BadDigest</Code>" in text
    assert "doomed" in keys(s3)
