"""Anonymous requests served by an ACL (issue 33, item 5): an unsigned GET or HEAD of an object whose ACL
grants AllUsers READ is served (the bucket need not be public, as Amazon's), a listing of a bucket whose
ACL does, and nothing else; IgnorePublicAcls turns it off. OM here has ozone.acl.enabled false: its
anonymous caller is checked against WORLD entries all the same."""

from __future__ import annotations

import pytest
from botocore import UNSIGNED
from botocore.config import Config

from tests.unit.s3g.gateway_thread import GatewayOnThread, refused

BUCKET = "acl-public"


@pytest.fixture(scope="module")
def alice(gateway: GatewayOnThread):  # type: ignore[no-untyped-def]
    client = gateway.boto3("alice")
    client.create_bucket(Bucket=BUCKET, ObjectOwnership="ObjectWriter")
    client.put_object(Bucket=BUCKET, Key="public", Body=b"", ACL="public-read")
    client.put_object(Bucket=BUCKET, Key="private", Body=b"")
    return client


@pytest.fixture(scope="module")
def anonymous(gateway: GatewayOnThread):  # type: ignore[no-untyped-def]
    import boto3

    config = Config(signature_version=UNSIGNED, s3={"addressing_style": "path"}, retries={"max_attempts": 1})
    return boto3.client("s3", endpoint_url=gateway.url, region_name="us-east-1", config=config)


def test_a_public_read_object_is_served_and_nothing_else(alice, anonymous) -> None:  # type: ignore[no-untyped-def]
    assert anonymous.get_object(Bucket=BUCKET, Key="public")["Body"].read() == b""
    assert anonymous.head_object(Bucket=BUCKET, Key="public")["ContentLength"] == 0
    denied = (403, "AccessDenied")
    assert refused(anonymous.get_object, Bucket=BUCKET, Key="private") == denied
    assert refused(anonymous.get_object, Bucket=BUCKET, Key="missing") == denied
    assert refused(anonymous.list_objects_v2, Bucket=BUCKET) == denied
    assert refused(anonymous.put_object, Bucket=BUCKET, Key="public", Body=b"x") == denied
    assert refused(anonymous.delete_object, Bucket=BUCKET, Key="public") == denied
    assert refused(anonymous.get_object_acl, Bucket=BUCKET, Key="public") == denied


def test_a_public_read_bucket_is_listed(alice, anonymous) -> None:  # type: ignore[no-untyped-def]
    alice.put_bucket_acl(Bucket=BUCKET, ACL="public-read")
    try:
        assert [o["Key"] for o in anonymous.list_objects_v2(Bucket=BUCKET)["Contents"]] == [
            "private",
            "public",
        ]
        assert refused(anonymous.get_object, Bucket=BUCKET, Key="private") == (403, "AccessDenied")
    finally:
        alice.put_bucket_acl(Bucket=BUCKET, ACL="private")


def test_ignore_public_acls(alice, anonymous) -> None:  # type: ignore[no-untyped-def]
    alice.put_public_access_block(Bucket=BUCKET, PublicAccessBlockConfiguration={"IgnorePublicAcls": True})
    try:
        assert refused(anonymous.get_object, Bucket=BUCKET, Key="public") == (403, "AccessDenied")
    finally:
        alice.delete_public_access_block(Bucket=BUCKET)
    assert anonymous.get_object(Bucket=BUCKET, Key="public")["Body"].read() == b""


def test_acls_disabled_grant_nothing(alice, anonymous) -> None:  # type: ignore[no-untyped-def]
    """BucketOwnerEnforced: "ACLs no longer affect permissions", the object's public-read included."""
    enforced = {"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]}
    alice.put_bucket_ownership_controls(Bucket=BUCKET, OwnershipControls=enforced)
    try:
        assert refused(anonymous.get_object, Bucket=BUCKET, Key="public") == (403, "AccessDenied")
    finally:
        alice.delete_bucket_ownership_controls(Bucket=BUCKET)
    assert anonymous.get_object(Bucket=BUCKET, Key="public")["Body"].read() == b""


def test_the_expected_owner_of_a_public_object(alice, anonymous) -> None:  # type: ignore[no-untyped-def]
    """R37's F18: the right x-amz-expected-bucket-owner was AccessDenied to an anonymous reader."""
    assert (
        anonymous.get_object(Bucket=BUCKET, Key="public", ExpectedBucketOwner="alice")["Body"].read() == b""
    )
    assert refused(anonymous.get_object, Bucket=BUCKET, Key="public", ExpectedBucketOwner="bob") == (
        403,
        "AccessDenied",
    )


def test_an_unsigned_read_learns_no_lock_or_tag_count(gateway: GatewayOnThread, anonymous) -> None:  # type: ignore[no-untyped-def]
    """R37's F13: Amazon answers x-amz-object-lock-* and x-amz-tagging-count to whom s3:GetObjectRetention /
    s3:GetObjectTagging allow, which no unsigned request is."""
    alice = gateway.boto3("alice")
    alice.create_bucket(Bucket="acl-locked", ObjectLockEnabledForBucket=True, ObjectOwnership="ObjectWriter")
    alice.put_object(
        Bucket="acl-locked", Key="l", Body=b"", ACL="public-read", Tagging="secret=yes",
        ObjectLockLegalHoldStatus="ON", ContentMD5="1B2M2Y8AsgTpgAmY7PhCfg==",
    )  # fmt: skip
    headers = anonymous.head_object(Bucket="acl-locked", Key="l")["ResponseMetadata"]["HTTPHeaders"]
    assert not [h for h in headers if h.startswith(("x-amz-object-lock", "x-amz-tagging"))]
    signed = alice.head_object(Bucket="acl-locked", Key="l")["ResponseMetadata"]["HTTPHeaders"]
    assert signed["x-amz-object-lock-legal-hold"] == "ON" and signed["x-amz-tagging-count"] == "1"
