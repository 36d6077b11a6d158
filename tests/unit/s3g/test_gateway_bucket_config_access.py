"""Who may manage a bucket's configuration through the gateway (issue 33, item 5): an administrator
(ozone.administrators; here the login user, OM's default) may read and remove another user's policy and
PublicAccessBlock, as OM lets them (R34's F8); a bucket policy's Allow of a configuration action (CORS,
lifecycle, versioning, ownership controls, ACLs) to another user is honoured, as Amazon honours it, but
never for the policy and PublicAccessBlock themselves, which Amazon keeps to the owner's account (R34's
F10)."""

from __future__ import annotations

import json

import pytest

from pyozone.hdds.security.users import login_user
from tests.unit.s3g.gateway_thread import GatewayOnThread, refused

BUCKET = "config-access"


@pytest.fixture(scope="module")
def alice(gateway: GatewayOnThread):  # type: ignore[no-untyped-def]
    client = gateway.boto3("alice")
    client.create_bucket(Bucket=BUCKET)
    return client


def allow_bob(*actions: str) -> str:
    statement = {"Effect": "Allow", "Principal": {"AWS": "bob"}, "Action": list(actions),
                 "Resource": f"arn:aws:s3:::{BUCKET}"}  # fmt: skip
    return json.dumps({"Version": "2012-10-17", "Statement": [statement]})


def test_an_administrator_reads_and_removes_a_policy_and_block(gateway: GatewayOnThread, alice) -> None:  # type: ignore[no-untyped-def]
    admin, bob = gateway.boto3(login_user()), gateway.boto3("bob")
    alice.put_bucket_policy(Bucket=BUCKET, Policy=allow_bob("s3:GetBucketCORS"))
    alice.put_public_access_block(Bucket=BUCKET, PublicAccessBlockConfiguration={"BlockPublicAcls": True})
    assert refused(bob.get_bucket_policy, Bucket=BUCKET) == (403, "AccessDenied")
    assert refused(bob.delete_public_access_block, Bucket=BUCKET) == (403, "AccessDenied")
    assert json.loads(admin.get_bucket_policy(Bucket=BUCKET)["Policy"]) == json.loads(
        allow_bob("s3:GetBucketCORS")
    )
    assert admin.get_public_access_block(Bucket=BUCKET)["PublicAccessBlockConfiguration"]["BlockPublicAcls"]
    admin.delete_bucket_policy(Bucket=BUCKET)
    admin.delete_public_access_block(Bucket=BUCKET)
    assert refused(alice.get_bucket_policy, Bucket=BUCKET) == (404, "NoSuchBucketPolicy")
    assert refused(alice.get_public_access_block, Bucket=BUCKET) == (
        404,
        "NoSuchPublicAccessBlockConfiguration",
    )


def test_a_policy_grants_configuration_actions_but_not_the_policy(gateway: GatewayOnThread, alice) -> None:  # type: ignore[no-untyped-def]
    bob = gateway.boto3("bob")
    cors = {"CORSRules": [{"AllowedOrigins": ["https://a.example"], "AllowedMethods": ["GET"]}]}
    assert refused(bob.put_bucket_cors, Bucket=BUCKET, CORSConfiguration=cors) == (403, "AccessDenied")
    alice.put_bucket_policy(
        Bucket=BUCKET,
        Policy=allow_bob(
            "s3:PutBucketCORS", "s3:GetBucketCORS", "s3:GetBucketVersioning", "s3:PutBucketVersioning",
            "s3:GetBucketOwnershipControls", "s3:GetBucketPolicy", "s3:DeleteBucketPolicy",
            "s3:GetBucketPublicAccessBlock",
        ),
    )  # fmt: skip
    try:
        bob.put_bucket_cors(Bucket=BUCKET, CORSConfiguration=cors)
        assert bob.get_bucket_cors(Bucket=BUCKET)["CORSRules"] == cors["CORSRules"]
        bob.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"})
        assert bob.get_bucket_versioning(Bucket=BUCKET)["Status"] == "Enabled"
        assert bob.get_bucket_ownership_controls(Bucket=BUCKET)["OwnershipControls"]["Rules"]
        assert refused(bob.get_bucket_policy, Bucket=BUCKET) == (403, "AccessDenied")
        assert refused(bob.delete_bucket_policy, Bucket=BUCKET) == (403, "AccessDenied")
        assert refused(bob.get_public_access_block, Bucket=BUCKET) == (403, "AccessDenied")
        bob.delete_bucket_cors(Bucket=BUCKET)  # Amazon's action for it: s3:PutBucketCORS
    finally:
        alice.delete_bucket_policy(Bucket=BUCKET)
    assert refused(alice.get_bucket_cors, Bucket=BUCKET) == (404, "NoSuchCORSConfiguration")
    assert refused(bob.get_bucket_versioning, Bucket=BUCKET) == (403, "AccessDenied")


def test_an_administrator_reads_and_writes_acls(gateway: GatewayOnThread, alice) -> None:  # type: ignore[no-untyped-def]
    """R37's F14: an administrator, whom OM lets getAcl / setAcl, repairs a bucket's or object's ACL."""
    admin = gateway.boto3(login_user())
    alice.create_bucket(Bucket="admin-acls", ObjectOwnership="ObjectWriter")
    alice.put_object(Bucket="admin-acls", Key="k", Body=b"")
    assert admin.get_bucket_acl(Bucket="admin-acls")["Owner"]["ID"] == "alice"
    assert admin.get_object_acl(Bucket="admin-acls", Key="k")["Grants"][0]["Permission"] == "FULL_CONTROL"
    admin.put_bucket_acl(Bucket="admin-acls", ACL="private")
    admin.put_object_acl(Bucket="admin-acls", Key="k", ACL="private")
