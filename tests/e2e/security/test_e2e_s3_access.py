"""Issue 33's security acceptance for the S3 paths it added: every one is decided by the secure cluster's
ACL and policy checks, and an anonymous request reaches only what a policy or an ACL makes public.

Versions read anonymously, SSE-C over HTTPS alone (ozone.s3g.sse.customer.require.https at its default)
and its refusals, SSE-S3 data keys given only to a key's readers, bucket default encryption, the policy
conditions a request carries (aws:SecureTransport, aws:Referer, s3:prefix), object ACLs written by
another user, ownership controls, PublicAccessBlock, and Object Lock read by another user. Each test runs
on both of test_e2e_acls.py's clusters (its `users` fixture: ACLs on over plain HTTP, and the secure one
over HTTPS with mutual TLS), with boto3 as users have it; a before-sign hook sends what boto3 would not.
The answers are Amazon's S3 API reference's.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.e2e.cluster.s3_raw import before_sign
from tests.e2e.security.test_e2e_acls import Users, s3_client, users

__all__ = ["users"]  # the module's clusters: test_e2e_acls.py's fixture, started again for this module

KEY = os.urandom(32)
OTHER = os.urandom(32)
MiB = 1 << 20
DENIED = (403, "AccessDenied")
HTTPS_ONLY = (
    "Requests specifying Server Side Encryption with Customer provided keys must be made over a secure "
    "connection."
)
DIGESTS = ("content-md5", "x-amz-sdk-checksum-algorithm", "x-amz-trailer")


def customer(key: bytes = KEY, prefix: str = "") -> dict[str, str]:
    return {
        f"{prefix}SSECustomerAlgorithm": "AES256",
        f"{prefix}SSECustomerKey": base64.b64encode(key).decode(),
        f"{prefix}SSECustomerKeyMD5": base64.b64encode(hashlib.md5(key).digest()).decode(),
    }


def refused(call: Callable[..., Any], **kwargs: Any) -> tuple[int, str]:
    """The status and error code of a call S3 refuses (a HEAD's code is its status: it has no body)."""
    return refusal(call, **kwargs)[:2]


def refusal(call: Callable[..., Any], **kwargs: Any) -> tuple[int, str, str]:
    with pytest.raises(ClientError) as e:
        call(**kwargs)
    error = e.value.response
    return (
        error["ResponseMetadata"]["HTTPStatusCode"],
        error["Error"]["Code"],
        error["Error"].get("Message", ""),
    )


def without(*names: str) -> Callable[[Any], None]:
    """The request without the headers `names` (lower case)."""

    def strip(request: Any) -> None:
        for name in list(request.headers.keys()):
            if name.lower() in names:
                del request.headers[name]

    return strip


def no_digest(request: Any) -> None:
    """The request without Content-MD5 and any checksum botocore computed."""
    without(*DIGESTS)(request)
    for name in list(request.headers.keys()):
        if name.lower().startswith("x-amz-checksum-"):
            del request.headers[name]


def adding(headers: dict[str, str]) -> Callable[[Any], None]:
    def add(request: Any) -> None:
        for name, value in headers.items():
            request.headers[name] = value

    return add


def with_body(body: bytes) -> Callable[[Any], None]:
    """The request's body replaced by `body`, with its Content-MD5 (and no other digest)."""

    def replace(request: Any) -> None:
        no_digest(request)
        without("content-length")(request)
        request.data = body
        request.headers["Content-MD5"] = base64.b64encode(hashlib.md5(body).digest()).decode()

    return replace


def public_s3(users: Users) -> None:
    """Anyone may make buckets in S3 (the gateway's volume)."""
    users.ok(users.admin, "volume", "addacl", "-a", "world::rwl", "/s3v")


def policy(*statements: dict[str, Any]) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


BOB = {"AWS": "arn:aws:iam:::user/bob"}


# ---------------------------------------------------------------------------------------------- gap 8
def test_s3_anonymous_reads_of_versions(users: Users) -> None:
    """An unsigned GET of a public-read object reads its current version; naming a versionId it is
    refused (pyozone keeps the ACL per key, not per version: docs/s3.md), unless the bucket's policy allows
    s3:GetObjectVersion (s3:GetObject alone does not, as Amazon's actions have it). An unsigned
    ListObjectVersions of a public-read bucket lists it, as Amazon's bucket READ grants
    s3:ListBucketVersions; of a private one it is AccessDenied."""
    public_s3(users)
    alice = s3_client(users, "alice")
    alice.create_bucket(Bucket="public-history", ObjectOwnership="ObjectWriter")
    alice.put_bucket_versioning(Bucket="public-history", VersioningConfiguration={"Status": "Enabled"})
    put = alice.put_object(Bucket="public-history", Key="page", Body=b"open", ACL="public-read")
    version = put["VersionId"]
    assert users.http("GET", "/public-history/page", {})[::2] == (200, b"open")
    assert users.http("GET", f"/public-history/page?versionId={version}", {})[0] == 403
    assert users.http("HEAD", f"/public-history/page?versionId={version}", {})[0] == 403
    assert users.http("GET", "/public-history?versions", {})[0] == 403  # the bucket is private
    alice.put_bucket_acl(Bucket="public-history", ACL="public-read")
    status, _, listing = users.http("GET", "/public-history?versions", {})
    assert status == 200 and f"<VersionId>{version}</VersionId>".encode() in listing, listing
    anonymous = users.s3("alice", None, None)
    assert [v["VersionId"] for v in anonymous.list_object_versions(Bucket="public-history")["Versions"]] == [
        version
    ]
    everyone = {"Effect": "Allow", "Principal": "*", "Resource": "arn:aws:s3:::public-history/*"}
    alice.put_bucket_policy(Bucket="public-history", Policy=policy({**everyone, "Action": "s3:GetObject"}))
    assert users.http("GET", f"/public-history/page?versionId={version}", {})[0] == 403
    alice.put_bucket_policy(
        Bucket="public-history", Policy=policy({**everyone, "Action": "s3:GetObjectVersion"})
    )
    assert users.http("GET", f"/public-history/page?versionId={version}", {})[::2] == (200, b"open")
    assert (
        anonymous.get_object(Bucket="public-history", Key="page", VersionId=version)["Body"].read() == b"open"
    )
    alice.delete_bucket_policy(Bucket="public-history")


# ---------------------------------------------------------------------------------------------- gap 9
def test_s3_sse_c_is_taken_over_https_alone(users: Users) -> None:
    """ozone.s3g.sse.customer.require.https at its default (true): over HTTPS (the secure cluster) SSE-C
    works for PUT, GET, HEAD, CopyObject under a new key, and a multipart upload with UploadPart and
    UploadPartCopy; over plain HTTP every one of them is 400 InvalidRequest in Amazon's words, and nothing
    is stored."""
    public_s3(users)
    alice = s3_client(users, "alice")
    alice.create_bucket(Bucket="customer-keys")
    data = os.urandom(5 * MiB + 11)
    base = {"Bucket": "customer-keys"}
    if not users.secure:
        for call, kwargs in (
            (alice.put_object, {"Key": "c", "Body": b"x", **customer()}),
            (alice.create_multipart_upload, {"Key": "c", **customer()}),
        ):
            assert refusal(call, **base, **kwargs) == (400, "InvalidRequest", HTTPS_ONLY)
        alice.put_object(**base, Key="plain", Body=b"x")
        upload = alice.create_multipart_upload(**base, Key="parts")["UploadId"]
        source = {"CopySource": "customer-keys/plain"}
        for call, kwargs in (
            (alice.get_object, {"Key": "plain", **customer()}),
            (alice.copy_object, {"Key": "copy", **source, **customer(prefix="CopySource")}),
            (
                alice.upload_part,
                {"Key": "parts", "UploadId": upload, "PartNumber": 1, "Body": b"x", **customer()},
            ),
        ):
            assert refusal(call, **base, **kwargs) == (400, "InvalidRequest", HTTPS_ONLY)
        assert refused(alice.head_object, **base, Key="plain", **customer()) == (400, "400")
        assert [o["Key"] for o in alice.list_objects_v2(**base)["Contents"]] == ["plain"]
        assert alice.list_parts(**base, Key="parts", UploadId=upload).get("Parts", []) == []
        alice.abort_multipart_upload(**base, Key="parts", UploadId=upload)
        return
    put = alice.put_object(**base, Key="c", Body=data, **customer())
    assert put["SSECustomerKeyMD5"] == customer()["SSECustomerKeyMD5"]
    assert alice.get_object(**base, Key="c", **customer())["Body"].read() == data
    assert alice.head_object(**base, Key="c", **customer())["ContentLength"] == len(data)
    alice.copy_object(
        **base, Key="c2", CopySource="customer-keys/c", **customer(prefix="CopySource"), **customer(OTHER)
    )
    assert alice.get_object(**base, Key="c2", **customer(OTHER))["Body"].read() == data
    assert refused(alice.get_object, **base, Key="c2", **customer()) == DENIED
    upload = alice.create_multipart_upload(**base, Key="m", **customer())["UploadId"]
    first = alice.upload_part(**base, Key="m", UploadId=upload, PartNumber=1, Body=data, **customer())
    second = alice.upload_part_copy(
        **base, Key="m", UploadId=upload, PartNumber=2, CopySource="customer-keys/c2",
        CopySourceRange="bytes=0-99", **customer(OTHER, "CopySource"), **customer(),
    )  # fmt: skip
    parts = [
        {"PartNumber": 1, "ETag": first["ETag"]},
        {"PartNumber": 2, "ETag": second["CopyPartResult"]["ETag"]},
    ]
    alice.complete_multipart_upload(
        **base, Key="m", UploadId=upload, MultipartUpload={"Parts": parts}, **customer()
    )
    assert alice.get_object(**base, Key="m", **customer())["Body"].read() == data + data[:100]


# ---------------------------------------------------------------------------------------------- gap 10
def test_s3_sse_header_refusals(users: Users) -> None:
    """Amazon's refusals of SSE headers: SSE-C without its key's MD5, or without its algorithm, is 400
    InvalidArgument naming what is missing; x-amz-server-side-encryption on HeadObject or UploadPart is 400
    (it belongs to the writes that make an object); an SSE-C key on the completion of an upload that is not
    SSE-C is 400 (InvalidRequest: the next test); UploadPartCopy with another key than its source's is 403
    AccessDenied. Over plain HTTP each SSE-C request is refused for its transport first (InvalidRequest)."""
    public_s3(users)
    alice = s3_client(users, "alice")
    alice.create_bucket(Bucket="sse-refusals")
    base = {"Bucket": "sse-refusals"}
    alice.put_object(**base, Key="plain", Body=b"x")
    upload = alice.create_multipart_upload(**base, Key="parts")["UploadId"]
    part = {"Key": "parts", "UploadId": upload, "PartNumber": 1}
    sse = adding({"x-amz-server-side-encryption": "AES256"})
    with before_sign(alice, "HeadObject", sse):
        assert refused(alice.head_object, **base, Key="plain") == (400, "400")
    with before_sign(alice, "UploadPart", sse):
        assert refused(alice.upload_part, **base, **part, Body=b"x") == (400, "InvalidArgument")
    no_md5 = without("x-amz-server-side-encryption-customer-key-md5")
    with before_sign(alice, "PutObject", no_md5):
        status, code, message = refusal(alice.put_object, **base, Key="c", Body=b"x", **customer())
    no_algorithm = {k: v for k, v in customer().items() if k != "SSECustomerAlgorithm"}
    status2, code2, message2 = refusal(alice.put_object, **base, Key="c", Body=b"x", **no_algorithm)
    etag = alice.upload_part(**base, **part, Body=b"x")["ETag"]
    completion = {**part, "MultipartUpload": {"Parts": [{"PartNumber": 1, "ETag": etag}]}}
    del completion["PartNumber"]
    complete_keyed = refusal(alice.complete_multipart_upload, **base, **completion, **customer())
    if not users.secure:
        for answer in ((status, code, message), (status2, code2, message2), complete_keyed):
            assert answer == (400, "InvalidRequest", HTTPS_ONLY)
        alice.abort_multipart_upload(**base, Key="parts", UploadId=upload)
        return
    assert (status, code, message) == (
        400, "InvalidArgument",
        "Requests specifying Server Side Encryption with Customer provided keys must provide the client "
        "calculated MD5 of the secret key.",
    )  # fmt: skip
    assert (status2, code2) == (400, "InvalidArgument") and "encryption algorithm" in message2
    # the upload is not SSE-C: the key named is refused (test_an_sse_c_key_on_a_plain_upload_s_completion)
    assert complete_keyed[0] == 400 and alice.list_parts(**base, Key="parts", UploadId=upload)["Parts"]
    alice.abort_multipart_upload(**base, Key="parts", UploadId=upload)
    alice.put_object(**base, Key="keyed", Body=b"y" * 100, **customer())
    keyed = alice.create_multipart_upload(**base, Key="keyed-copy", **customer())["UploadId"]
    assert refused(
        alice.upload_part_copy, **base, Key="keyed-copy", UploadId=keyed, PartNumber=1,
        CopySource="sse-refusals/keyed", **customer(OTHER, "CopySource"), **customer(),
    ) == DENIED  # fmt: skip
    assert alice.list_parts(**base, Key="keyed-copy", UploadId=keyed).get("Parts", []) == []
    alice.abort_multipart_upload(**base, Key="keyed-copy", UploadId=keyed)
    assert [o["Key"] for o in alice.list_objects_v2(**base)["Contents"]] == ["keyed", "plain"]


def test_an_sse_c_key_on_a_plain_upload_s_completion(users: Users) -> None:
    """An SSE-C key on the completion of an upload that is not SSE-C is 400 InvalidRequest, as Amazon
    answers SSE-C parameters for an object not written with them ("The encryption parameters are not
    applicable to this object."), named by OM's INVALID_REQUEST (om/multipart.check_customer_key)."""
    if not users.secure:
        pytest.skip("over plain HTTP the key is refused for its transport (test_s3_sse_header_refusals)")
    public_s3(users)
    alice = s3_client(users, "alice")
    alice.create_bucket(Bucket="plain-completion")
    base = {"Bucket": "plain-completion", "Key": "k"}
    upload = alice.create_multipart_upload(**base)["UploadId"]
    etag = alice.upload_part(**base, UploadId=upload, PartNumber=1, Body=b"x")["ETag"]
    parts = {"Parts": [{"PartNumber": 1, "ETag": etag}]}
    answer = refused(
        alice.complete_multipart_upload, **base, UploadId=upload, MultipartUpload=parts, **customer()
    )
    alice.abort_multipart_upload(**base, UploadId=upload)
    assert answer == (400, "InvalidRequest")


# ---------------------------------------------------------------------------------------------- gap 11
def test_s3_bucket_default_encryption_is_the_owner_s_or_the_policy_s(users: Users) -> None:
    """Get/Put/DeleteBucketEncryption by bob on alice's bucket are AccessDenied (Amazon's
    s3:GetEncryptionConfiguration, s3:PutEncryptionConfiguration: the owner's unless a policy grants
    them; no ACL does) and leave her configuration; a policy allowing both lets bob do all three (Delete
    is s3:PutEncryptionConfiguration). PutBucketEncryption without Content-MD5 or a checksum is 400
    InvalidRequest; all three on a missing bucket NoSuchBucket."""
    public_s3(users)
    alice, bob = s3_client(users, "alice"), s3_client(users, "bob")
    alice.create_bucket(Bucket="defaults")
    sse_s3 = {"Rules": [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]}
    alice.put_bucket_encryption(Bucket="defaults", ServerSideEncryptionConfiguration=sse_s3)
    users.ok("alice", "bucket", "addacl", "-a", "user:bob:a", "/s3v/defaults")  # no Ozone ACL grants it
    for call, kwargs in (
        (bob.get_bucket_encryption, {}),
        (bob.put_bucket_encryption, {"ServerSideEncryptionConfiguration": sse_s3}),
        (bob.delete_bucket_encryption, {}),
    ):
        assert refused(call, Bucket="defaults", **kwargs) == DENIED
    got = alice.get_bucket_encryption(Bucket="defaults")["ServerSideEncryptionConfiguration"]
    assert got["Rules"][0]["ApplyServerSideEncryptionByDefault"] == {"SSEAlgorithm": "AES256"}
    actions = ["s3:PutEncryptionConfiguration", "s3:GetEncryptionConfiguration"]
    grant = {"Effect": "Allow", "Principal": BOB, "Action": actions, "Resource": "arn:aws:s3:::defaults"}
    alice.put_bucket_policy(Bucket="defaults", Policy=policy(grant))
    bob.delete_bucket_encryption(Bucket="defaults")
    bob.put_bucket_encryption(Bucket="defaults", ServerSideEncryptionConfiguration=sse_s3)
    got = bob.get_bucket_encryption(Bucket="defaults")["ServerSideEncryptionConfiguration"]
    assert got["Rules"][0]["ApplyServerSideEncryptionByDefault"] == {"SSEAlgorithm": "AES256"}
    alice.delete_bucket_policy(Bucket="defaults")
    with before_sign(alice, "PutBucketEncryption", no_digest):
        assert refusal(
            alice.put_bucket_encryption, Bucket="defaults", ServerSideEncryptionConfiguration=sse_s3
        ) == (
            400,
            "InvalidRequest",
            "Missing required header for this request: Content-MD5 OR x-amz-checksum-*",
        )
    for call, kwargs in (
        (alice.get_bucket_encryption, {}),
        (alice.put_bucket_encryption, {"ServerSideEncryptionConfiguration": sse_s3}),
        (alice.delete_bucket_encryption, {}),
    ):
        assert refused(call, Bucket="no-such-defaults", **kwargs) == (404, "NoSuchBucket")


# ---------------------------------------------------------------------------------------------- gap 12
def test_s3_sse_s3_data_keys_go_only_to_readers(users: Users, tmp_path: Path) -> None:
    """An SSE-S3 object's data key is handed out with a read OM allows: bob, with no ACL on alice's key,
    gets AccessDenied through the gateway and PERMISSION_DENIED from `sh key get`, which writes no file;
    once `key addacl user:bob:r` lets him, both read the plaintext."""
    public_s3(users)
    alice, bob = s3_client(users, "alice"), s3_client(users, "bob")
    alice.create_bucket(Bucket="sealed")
    data = os.urandom(70_000)
    alice.put_object(Bucket="sealed", Key="k", Body=data, ServerSideEncryption="AES256")
    users.ok("alice", "bucket", "addacl", "-a", "user:bob:r", "/s3v/sealed")  # the bucket, not the key
    assert refused(bob.get_object, Bucket="sealed", Key="k") == DENIED
    out = tmp_path / "got"
    users.refused("bob", "key", "get", "/s3v/sealed/k", str(out))
    assert not out.exists()
    users.ok("alice", "key", "addacl", "-a", "user:bob:r", "/s3v/sealed/k")
    got = bob.get_object(Bucket="sealed", Key="k")
    assert got["Body"].read() == data and got["ServerSideEncryption"] == "AES256"
    users.ok("bob", "key", "get", "/s3v/sealed/k", str(out))
    assert out.read_bytes() == data


# ---------------------------------------------------------------------------------------------- gap 13
def test_s3_policy_conditions_the_request_carries(users: Users) -> None:
    """aws:SecureTransport: a Deny of GETs not over TLS refuses the owner over plain HTTP and lets her
    read over HTTPS. aws:Referer: an Allow for pages of one site serves an unsigned GET whose Referer is
    one of them, and no other. s3:prefix: an Allow of ListBucket with one prefix lets bob list it, and not
    the bucket's other keys."""
    public_s3(users)
    alice, bob = s3_client(users, "alice"), s3_client(users, "bob")
    alice.create_bucket(Bucket="conditions")
    alice.put_object(Bucket="conditions", Key="page", Body=b"text")
    alice.put_object(Bucket="conditions", Key="shared/one", Body=b"1")
    alice.put_object(Bucket="conditions", Key="private/two", Body=b"2")
    objects = "arn:aws:s3:::conditions/*"
    insecure = {
        "Effect": "Deny", "Principal": "*", "Action": "s3:GetObject", "Resource": objects,
        "Condition": {"Bool": {"aws:SecureTransport": "false"}},
    }  # fmt: skip
    alice.put_bucket_policy(Bucket="conditions", Policy=policy(insecure))
    if users.secure:
        assert alice.get_object(Bucket="conditions", Key="page")["Body"].read() == b"text"
    else:
        assert refused(alice.get_object, Bucket="conditions", Key="page") == DENIED
    referred = {
        "Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": objects,
        "Condition": {"StringLike": {"aws:Referer": "https://app.example/*"}},
    }  # fmt: skip
    alice.put_bucket_policy(Bucket="conditions", Policy=policy(referred))
    assert users.http("GET", "/conditions/page", {"Referer": "https://app.example/page"})[::2] == (
        200,
        b"text",
    )
    assert users.http("GET", "/conditions/page", {"Referer": "https://evil.example/page"})[0] == 403
    assert users.http("GET", "/conditions/page", {})[0] == 403
    listing = {
        "Effect": "Allow", "Principal": BOB, "Action": "s3:ListBucket", "Resource": "arn:aws:s3:::conditions",
        "Condition": {"StringEquals": {"s3:prefix": "shared/"}},
    }  # fmt: skip
    alice.put_bucket_policy(Bucket="conditions", Policy=policy(listing))
    listed = bob.list_objects_v2(Bucket="conditions", Prefix="shared/")
    assert [o["Key"] for o in listed["Contents"]] == ["shared/one"]
    assert refused(bob.list_objects_v2, Bucket="conditions", Prefix="private/") == DENIED
    assert refused(bob.list_objects_v2, Bucket="conditions") == DENIED
    alice.delete_bucket_policy(Bucket="conditions")


# ---------------------------------------------------------------------------------------------- gap 15
def test_s3_object_acls_are_read_and_written_by_their_grantees(users: Users) -> None:
    """GetObjectAcl and PutObjectAcl by bob on alice's object are AccessDenied until its ACL grants him
    READ_ACP and WRITE_ACP and he may read the bucket (Ozone's parent right, which Amazon does not ask:
    docs/s3.md); then he reads the ACL and makes the object public-read, which `key getacl` shows as
    WORLD READ."""
    public_s3(users)
    alice, bob = s3_client(users, "alice"), s3_client(users, "bob")
    alice.create_bucket(Bucket="object-acls", ObjectOwnership="ObjectWriter")
    alice.put_object(Bucket="object-acls", Key="doc", Body=b"d")
    doc = {"Bucket": "object-acls", "Key": "doc"}
    assert refused(bob.get_object_acl, **doc) == DENIED
    assert refused(bob.put_object_acl, **doc, ACL="public-read") == DENIED
    alice.put_object_acl(
        **doc, GrantReadACP='id="bob"', GrantWriteACP='id="bob"', GrantFullControl='id="alice"'
    )
    assert refused(bob.get_object_acl, **doc) == DENIED  # no READ on the bucket: OM's parent check
    users.ok("alice", "bucket", "addacl", "-a", "user:bob:r", "/s3v/object-acls")
    grants = [(g["Grantee"].get("ID"), g["Permission"]) for g in bob.get_object_acl(**doc)["Grants"]]
    assert ("bob", "READ_ACP") in grants and ("bob", "WRITE_ACP") in grants, grants
    bob.put_object_acl(**doc, ACL="public-read")
    acls = users.ok("alice", "key", "getacl", "/s3v/object-acls/doc").json()
    assert {"type": "WORLD", "name": "WORLD", "aclScope": "ACCESS", "aclList": ["READ"]} in acls
    assert users.http("GET", "/object-acls/doc", {})[::2] == (200, b"d")


# ---------------------------------------------------------------------------------------------- gap 16
def test_s3_ownership_controls(users: Users) -> None:
    """Ownership controls are the owner's: bob's Put/Get/DeleteBucketOwnershipControls are AccessDenied.
    An ObjectOwnership not Amazon's is MalformedXML (CreateBucket's header: InvalidArgument);
    BucketOwnerEnforced over an ACL granting bob READ is InvalidBucketAclWithObjectOwnership until the ACL
    is private again; BucketOwnerPreferred is kept and read back."""
    public_s3(users)
    alice, bob = s3_client(users, "alice"), s3_client(users, "bob")
    assert refused(alice.create_bucket, Bucket="bogus-owner", ObjectOwnership="Bogus") == (
        400,
        "InvalidArgument",
    )
    alice.create_bucket(Bucket="owned", ObjectOwnership="ObjectWriter")
    controls = {"Rules": [{"ObjectOwnership": "BucketOwnerPreferred"}]}
    for call, kwargs in (
        (bob.get_bucket_ownership_controls, {}),
        (bob.put_bucket_ownership_controls, {"OwnershipControls": controls}),
        (bob.delete_bucket_ownership_controls, {}),
    ):
        assert refused(call, Bucket="owned", **kwargs) == DENIED
    got = alice.get_bucket_ownership_controls(Bucket="owned")["OwnershipControls"]["Rules"]
    assert got == [{"ObjectOwnership": "ObjectWriter"}]
    nope = b"<OwnershipControls><Rule><ObjectOwnership>Nope</ObjectOwnership></Rule></OwnershipControls>"
    with before_sign(alice, "PutBucketOwnershipControls", with_body(nope)):
        assert refused(alice.put_bucket_ownership_controls, Bucket="owned", OwnershipControls=controls) == (
            400, "MalformedXML",
        )  # fmt: skip
    alice.put_bucket_acl(Bucket="owned", GrantRead='id="bob"', GrantFullControl='id="alice"')
    enforced = {"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]}
    assert refused(alice.put_bucket_ownership_controls, Bucket="owned", OwnershipControls=enforced) == (
        400, "InvalidBucketAclWithObjectOwnership",
    )  # fmt: skip
    alice.put_bucket_acl(Bucket="owned", ACL="private")
    alice.put_bucket_ownership_controls(Bucket="owned", OwnershipControls=enforced)
    alice.put_bucket_ownership_controls(Bucket="owned", OwnershipControls=controls)
    got = alice.get_bucket_ownership_controls(Bucket="owned")["OwnershipControls"]["Rules"]
    assert got == [{"ObjectOwnership": "BucketOwnerPreferred"}]


# ---------------------------------------------------------------------------------------------- gap 17
def test_s3_public_access_block(users: Users) -> None:
    """IgnorePublicAcls keeps an unsigned GET from a public-read object (the owner's signed GET reads it)
    until the block is deleted; a document not Amazon's is MalformedXML; bob's
    Put/Get/DeletePublicAccessBlock on alice's bucket are AccessDenied."""
    public_s3(users)
    alice, bob = s3_client(users, "alice"), s3_client(users, "bob")
    alice.create_bucket(Bucket="blocked", ObjectOwnership="ObjectWriter")
    alice.put_object(Bucket="blocked", Key="pub", Body=b"p", ACL="public-read")
    assert users.http("GET", "/blocked/pub", {})[::2] == (200, b"p")
    ignore = {"IgnorePublicAcls": True}
    alice.put_public_access_block(Bucket="blocked", PublicAccessBlockConfiguration=ignore)
    assert users.http("GET", "/blocked/pub", {})[0] == 403
    assert alice.get_object(Bucket="blocked", Key="pub")["Body"].read() == b"p"
    for call, kwargs in (
        (bob.get_public_access_block, {}),
        (bob.put_public_access_block, {"PublicAccessBlockConfiguration": {}}),
        (bob.delete_public_access_block, {}),
    ):
        assert refused(call, Bucket="blocked", **kwargs) == DENIED
    got = alice.get_public_access_block(Bucket="blocked")["PublicAccessBlockConfiguration"]
    assert got["IgnorePublicAcls"] is True
    with before_sign(alice, "PutPublicAccessBlock", with_body(b"<Nope/>")):
        answer = refused(
            alice.put_public_access_block, Bucket="blocked", PublicAccessBlockConfiguration=ignore
        )
    assert answer == (400, "MalformedXML")
    alice.delete_public_access_block(Bucket="blocked")
    assert users.http("GET", "/blocked/pub", {})[::2] == (200, b"p")


# ---------------------------------------------------------------------------------------------- gap 20
def test_s3_object_lock_is_read_by_the_owner_or_whom_the_policy_allows(users: Users) -> None:
    """GetObjectLockConfiguration, GetObjectRetention and GetObjectLegalHold are Amazon's
    s3:GetBucketObjectLockConfiguration, s3:GetObjectRetention and s3:GetObjectLegalHold, which no ACL
    grants: bob, with no rights and then with READ on the bucket and the key (he reads the object), is
    AccessDenied for each; a policy allowing them lets him read all three."""
    public_s3(users)
    alice, bob = s3_client(users, "alice"), s3_client(users, "bob")
    alice.create_bucket(Bucket="locked-reads", ObjectLockEnabledForBucket=True)
    until = datetime.datetime.now(datetime.UTC).replace(microsecond=0) + datetime.timedelta(days=1)
    version = alice.put_object(
        Bucket="locked-reads", Key="doc", Body=b"kept", ObjectLockMode="GOVERNANCE",
        ObjectLockRetainUntilDate=until, ObjectLockLegalHoldStatus="ON",
    )["VersionId"]  # fmt: skip
    doc = {"Bucket": "locked-reads", "Key": "doc", "VersionId": version}

    def reads() -> list[tuple[int, str]]:
        return [
            refused(bob.get_object_lock_configuration, Bucket="locked-reads"),
            refused(bob.get_object_retention, **doc),
            refused(bob.get_object_legal_hold, **doc),
        ]

    assert reads() == [DENIED] * 3
    users.ok("alice", "bucket", "addacl", "-a", "user:bob:rl", "/s3v/locked-reads")
    users.ok("alice", "key", "addacl", "-a", "user:bob:r", "/s3v/locked-reads/doc")
    assert bob.get_object(**doc)["Body"].read() == b"kept"
    assert reads() == [DENIED] * 3
    actions = ["s3:GetBucketObjectLockConfiguration", "s3:GetObjectRetention", "s3:GetObjectLegalHold"]
    resources = ["arn:aws:s3:::locked-reads", "arn:aws:s3:::locked-reads/*"]
    alice.put_bucket_policy(
        Bucket="locked-reads",
        Policy=policy({"Effect": "Allow", "Principal": BOB, "Action": actions, "Resource": resources}),
    )
    assert (
        bob.get_object_lock_configuration(Bucket="locked-reads")["ObjectLockConfiguration"][
            "ObjectLockEnabled"
        ]
        == "Enabled"
    )
    assert bob.get_object_retention(**doc)["Retention"] == {"Mode": "GOVERNANCE", "RetainUntilDate": until}
    assert bob.get_object_legal_hold(**doc)["LegalHold"] == {"Status": "ON"}
    alice.delete_bucket_policy(Bucket="locked-reads")
    alice.put_object_legal_hold(**doc, LegalHold={"Status": "OFF"})
    alice.delete_object(**doc, BypassGovernanceRetention=True)
