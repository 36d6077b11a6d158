"""Reads the gateway decides by Amazon's actions rather than Ozone's ACLs (issue 33, item 5; A1's gaps 8
and 20): an unsigned ListObjectVersions of a public-read bucket lists it (bucket READ grants
s3:ListBucketVersions), and Object Lock reads are the bucket owner's or a policy grantee's, never an
ACL's. The live cases, with ACLs on: tests/e2e/security/test_e2e_s3_access.py."""

from __future__ import annotations

import datetime
import json

import pytest
from botocore import UNSIGNED
from botocore.config import Config

from tests.unit.s3g.gateway_thread import GatewayOnThread, refused

DENIED = (403, "AccessDenied")


def test_an_unsigned_listing_of_versions_follows_the_bucket_s_acl(gateway: GatewayOnThread) -> None:
    import boto3

    alice = gateway.boto3("alice")
    alice.create_bucket(Bucket="versions-acl", ObjectOwnership="ObjectWriter")
    alice.put_bucket_versioning(Bucket="versions-acl", VersioningConfiguration={"Status": "Enabled"})
    version = alice.put_object(Bucket="versions-acl", Key="k", Body=b"")["VersionId"]
    config = Config(signature_version=UNSIGNED, s3={"addressing_style": "path"}, retries={"max_attempts": 1})
    anonymous = boto3.client("s3", endpoint_url=gateway.url, region_name="us-east-1", config=config)
    assert refused(anonymous.list_object_versions, Bucket="versions-acl") == DENIED
    alice.put_bucket_acl(Bucket="versions-acl", ACL="public-read")
    listed = anonymous.list_object_versions(Bucket="versions-acl")["Versions"]
    assert [(v["Key"], v["VersionId"]) for v in listed] == [("k", version)]
    alice.put_public_access_block(
        Bucket="versions-acl", PublicAccessBlockConfiguration={"IgnorePublicAcls": True}
    )
    assert refused(anonymous.list_object_versions, Bucket="versions-acl") == DENIED


BUCKET = "lock-reads"


@pytest.fixture(scope="module")
def locked(gateway: GatewayOnThread) -> dict[str, str]:
    """alice's Object Lock bucket with one version under GOVERNANCE retention and a legal hold."""
    alice = gateway.boto3("alice")
    alice.create_bucket(Bucket=BUCKET, ObjectLockEnabledForBucket=True)
    until = datetime.datetime.now(datetime.UTC) + datetime.timedelta(days=1)
    version = alice.put_object(
        Bucket=BUCKET, Key="k", Body=b"", ObjectLockMode="GOVERNANCE", ObjectLockRetainUntilDate=until,
        ObjectLockLegalHoldStatus="ON",
    )["VersionId"]  # fmt: skip
    return {"Bucket": BUCKET, "Key": "k", "VersionId": version}


@pytest.mark.parametrize(
    "call",
    [
        lambda c, d: c.get_object_lock_configuration(Bucket=d["Bucket"]),
        lambda c, d: c.get_object_retention(**d),
        lambda c, d: c.get_object_legal_hold(**d),
    ],
    ids=["configuration", "retention", "legal-hold"],
)
def test_object_lock_reads_are_the_owner_s_or_the_policy_s(gateway: GatewayOnThread, locked, call) -> None:  # type: ignore[no-untyped-def]
    alice, bob = gateway.boto3("alice"), gateway.boto3("bob")
    call(alice, locked)
    assert refused(lambda: call(bob, locked)) == DENIED
    actions = ["s3:GetBucketObjectLockConfiguration", "s3:GetObjectRetention", "s3:GetObjectLegalHold"]
    grant = {"Effect": "Allow", "Principal": {"AWS": "bob"}, "Action": actions,
             "Resource": [f"arn:aws:s3:::{BUCKET}", f"arn:aws:s3:::{BUCKET}/*"]}  # fmt: skip
    alice.put_bucket_policy(Bucket=BUCKET, Policy=json.dumps({"Version": "2012-10-17", "Statement": [grant]}))
    try:
        call(bob, locked)
    finally:
        alice.delete_bucket_policy(Bucket=BUCKET)


def test_get_and_head_answer_the_lock_to_whom_its_reads_are_allowed(
    gateway: GatewayOnThread, locked: dict[str, str]
) -> None:
    """GET and HEAD answer x-amz-object-lock-mode and -retain-until-date to a holder of
    s3:GetObjectRetention and -legal-hold to one of s3:GetObjectLegalHold, as Amazon's: the owner sees
    both, a reader a policy lets read the object alone sees neither, and each as its action is allowed."""
    alice, bob = gateway.boto3("alice"), gateway.boto3("bob")
    retention = ("ObjectLockMode", "ObjectLockRetainUntilDate")

    def lock_seen(client: object) -> set[str]:
        head = client.head_object(**locked)  # type: ignore[attr-defined]
        got = client.get_object(**locked)  # type: ignore[attr-defined]
        got["Body"].read()
        fields = {*retention, "ObjectLockLegalHoldStatus"}
        assert {f for f in fields if f in head} == {f for f in fields if f in got}
        return {f for f in fields if f in head}

    assert lock_seen(alice) == {*retention, "ObjectLockLegalHoldStatus"}
    for actions, seen in (
        ([], set()),
        (["s3:GetObjectRetention"], set(retention)),
        (["s3:GetObjectLegalHold"], {"ObjectLockLegalHoldStatus"}),
    ):
        grant = {"Effect": "Allow", "Principal": {"AWS": "bob"},
                 "Action": ["s3:GetObject", "s3:GetObjectVersion", *actions],
                 "Resource": f"arn:aws:s3:::{BUCKET}/*"}  # fmt: skip
        alice.put_bucket_policy(
            Bucket=BUCKET, Policy=json.dumps({"Version": "2012-10-17", "Statement": [grant]})
        )
        try:
            assert lock_seen(bob) == seen, actions
        finally:
            alice.delete_bucket_policy(Bucket=BUCKET)


def test_an_unsigned_bypass_of_governance_is_judged_as_unsigned(gateway: GatewayOnThread) -> None:
    """An unsigned DELETE of a GOVERNANCE-retained version with x-amz-bypass-governance-retention is judged
    as the anonymous request it is (no aws:username, no signature keys): a policy's Deny of the bypass
    to unsigned callers holds, and an Allow of it to signed requests only does not let it through. It was
    judged as a signed user named "" and the version deleted (R3's F1)."""
    import boto3

    alice = gateway.boto3("alice")
    config = Config(signature_version=UNSIGNED, s3={"addressing_style": "path"}, retries={"max_attempts": 1})
    anonymous = boto3.client("s3", endpoint_url=gateway.url, region_name="us-east-1", config=config)
    until = datetime.datetime.now(datetime.UTC) + datetime.timedelta(days=1)
    resource = "arn:aws:s3:::unsigned-bypass/*"
    alice.create_bucket(Bucket="unsigned-bypass", ObjectLockEnabledForBucket=True)
    version = alice.put_object(
        Bucket="unsigned-bypass",
        Key="k",
        Body=b"",
        ObjectLockMode="GOVERNANCE",
        ObjectLockRetainUntilDate=until,
    )["VersionId"]
    delete = {"Effect": "Allow", "Principal": "*", "Action": "s3:DeleteObjectVersion", "Resource": resource}
    for bypass in (
        {"Effect": "Deny", "Principal": "*", "Action": "s3:BypassGovernanceRetention", "Resource": resource,
         "Condition": {"Null": {"aws:username": "true"}}},
        {"Effect": "Allow", "Principal": "*", "Action": "s3:BypassGovernanceRetention", "Resource": resource,
         "Condition": {"StringEquals": {"s3:signatureversion": "AWS4-HMAC-SHA256"}}},
    ):  # fmt: skip
        statements = [delete, bypass] if bypass["Effect"] == "Allow" else [
            {**delete, "Action": ["s3:DeleteObjectVersion", "s3:BypassGovernanceRetention"]}, bypass
        ]  # fmt: skip
        policy = json.dumps({"Version": "2012-10-17", "Statement": statements})
        alice.put_bucket_policy(Bucket="unsigned-bypass", Policy=policy)
        assert refused(
            anonymous.delete_object, Bucket="unsigned-bypass", Key="k", VersionId=version,
            BypassGovernanceRetention=True,
        ) == DENIED, bypass  # fmt: skip
        listed = alice.list_object_versions(Bucket="unsigned-bypass")["Versions"]
        assert [v["VersionId"] for v in listed] == [version]
    alice.delete_bucket_policy(Bucket="unsigned-bypass")
