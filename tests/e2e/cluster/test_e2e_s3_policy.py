"""Bucket policies through the S3 gateway of a live cluster (issue 33, item 5), with boto3 as an
application uses it and botocore's UNSIGNED client as an anonymous reader: put/get/delete_bucket_policy
and get_bucket_policy_status with their Amazon errors (MalformedPolicy, NoSuchBucketPolicy, another
user's AccessDenied), a public-read policy read anonymously while everything else stays refused, a Deny on
a prefix holding for the owner and in a multi-object delete, aws:SourceIp, a copy whose source is denied,
a named user granted by ARN, the policy kept across a restart of OM and the gateway, ownership controls,
and PutBucketAcl / PutObjectAcl refusals."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from botocore import UNSIGNED
from botocore.config import Config
from botocore.exceptions import ClientError, EndpointConnectionError

from tests.e2e.cluster.s3_cluster import REGION, S3Endpoint, getsecret, s3_cluster
from tests.e2e.cluster.s3_raw import RawS3, md5_b64

BUCKET = "media"


def policy(*statements: dict[str, Any]) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def statement(
    effect: str = "Allow", action: Any = "s3:GetObject", resource: Any = None, **more: Any
) -> dict[str, Any]:
    return {"Effect": effect, "Principal": "*", "Action": action,
            "Resource": resource or f"arn:aws:s3:::{BUCKET}/*", **more}  # fmt: skip


PUBLIC_READ = policy(statement(Sid="PublicRead"))


def refused(call: Callable[..., Any], **kwargs: Any) -> tuple[int, str]:
    with pytest.raises(ClientError) as e:
        call(**kwargs)
    return e.value.response["ResponseMetadata"]["HTTPStatusCode"], e.value.response["Error"]["Code"]


@pytest.fixture(scope="module")
def s3(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Endpoint]:
    with s3_cluster(request, tmp_path_factory, "s3-policy") as endpoint:
        client = endpoint.boto3()
        client.create_bucket(Bucket=BUCKET)
        client.put_object(Bucket=BUCKET, Key="public/cat.jpg", Body=b"meow")
        client.put_object(Bucket=BUCKET, Key="private/diary.txt", Body=b"dear diary")
        yield endpoint


@pytest.fixture
def owner(s3: S3Endpoint):  # type: ignore[no-untyped-def]
    client = s3.boto3()
    yield client
    client.delete_bucket_policy(Bucket=BUCKET)


@pytest.fixture(scope="module")
def anonymous(s3: S3Endpoint):  # type: ignore[no-untyped-def]
    import boto3

    config = Config(signature_version=UNSIGNED, s3={"addressing_style": "path"}, retries={"max_attempts": 1})
    return boto3.client("s3", endpoint_url=s3.url, region_name=REGION, config=config)


def test_put_get_delete_and_status(owner) -> None:  # type: ignore[no-untyped-def]
    assert refused(owner.get_bucket_policy, Bucket=BUCKET) == (404, "NoSuchBucketPolicy")
    assert (
        owner.put_bucket_policy(Bucket=BUCKET, Policy=PUBLIC_READ)["ResponseMetadata"]["HTTPStatusCode"]
        == 204
    )
    assert owner.get_bucket_policy(Bucket=BUCKET)["Policy"] == PUBLIC_READ
    assert owner.get_bucket_policy_status(Bucket=BUCKET)["PolicyStatus"]["IsPublic"] is True
    owner.delete_bucket_policy(Bucket=BUCKET)
    assert refused(owner.get_bucket_policy_status, Bucket=BUCKET) == (404, "NoSuchBucketPolicy")
    assert refused(owner.put_bucket_policy, Bucket="nobucket", Policy=PUBLIC_READ) == (404, "NoSuchBucket")


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ("", "Policies must be valid JSON and the first byte must be '{'"),
        (json.dumps({"Version": "2012-10-17"}), "Missing required field Statement"),
        (policy(statement(Effect="Maybe")), "Invalid effect: Maybe"),
        (policy({"Effect": "Allow", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{BUCKET}/*"}),
         "Missing required field Principal"),
        (policy(statement(Principal={"AWS": "arn:aws:iam::111122223333:root"})),
         "Invalid principal in policy"),
        (policy(statement(action="s3:GetObjects")), "Policy has invalid action"),
        (policy(statement(resource="arn:aws:s3:::another-bucket/*")), "Policy has invalid resource"),
        (policy(statement(action="s3:ListBucket")), "Action does not apply to any resource(s) in statement"),
    ],
)  # fmt: skip
def test_malformed_policies_are_refused_in_amazon_s_words(owner, document: str, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ClientError) as e:
        owner.put_bucket_policy(Bucket=BUCKET, Policy=document)
    assert e.value.response["Error"]["Code"] == "MalformedPolicy"
    assert e.value.response["Error"]["Message"] == message
    assert refused(owner.get_bucket_policy, Bucket=BUCKET) == (404, "NoSuchBucketPolicy")


def test_another_user_cannot_read_or_change_it(s3: S3Endpoint, owner) -> None:  # type: ignore[no-untyped-def]
    bob = S3Endpoint(s3.cluster, s3.url, *getsecret(s3.cluster, "bob")).boto3()
    owner.put_bucket_policy(Bucket=BUCKET, Policy=PUBLIC_READ)
    assert refused(bob.get_bucket_policy, Bucket=BUCKET) == (403, "AccessDenied")
    assert refused(bob.put_bucket_policy, Bucket=BUCKET, Policy=PUBLIC_READ) == (403, "AccessDenied")
    assert refused(bob.delete_bucket_policy, Bucket=BUCKET) == (403, "AccessDenied")


def test_public_read_is_read_anonymously_and_nothing_else_is(owner, anonymous) -> None:  # type: ignore[no-untyped-def]
    assert refused(anonymous.get_object, Bucket=BUCKET, Key="public/cat.jpg") == (403, "AccessDenied")
    owner.put_bucket_policy(Bucket=BUCKET, Policy=PUBLIC_READ)
    assert anonymous.get_object(Bucket=BUCKET, Key="public/cat.jpg")["Body"].read() == b"meow"
    assert (
        anonymous.get_object(Bucket=BUCKET, Key="public/cat.jpg", Range="bytes=1-2")["Body"].read() == b"eo"
    )
    assert anonymous.head_object(Bucket=BUCKET, Key="private/diary.txt")["ContentLength"] == 10
    for call, kwargs in (
        (anonymous.put_object, {"Key": "public/dog.jpg", "Body": b"woof"}),
        (anonymous.delete_object, {"Key": "public/cat.jpg"}),
        (anonymous.list_objects_v2, {}),
        (anonymous.get_object_tagging, {"Key": "public/cat.jpg"}),
        (anonymous.get_bucket_acl, {}),
        (anonymous.get_bucket_policy, {}),
        (anonymous.create_multipart_upload, {"Key": "public/big"}),
    ):
        assert refused(call, Bucket=BUCKET, **kwargs) == (403, "AccessDenied"), call
    assert refused(anonymous.list_buckets) == (403, "AccessDenied")
    assert refused(anonymous.get_object, Bucket="no-such-bucket", Key="k") == (404, "NoSuchBucket")
    owner.delete_bucket_policy(Bucket=BUCKET)
    assert refused(anonymous.get_object, Bucket=BUCKET, Key="public/cat.jpg") == (403, "AccessDenied")


def test_a_deny_on_a_prefix(owner) -> None:  # type: ignore[no-untyped-def]
    guard = statement("Deny", ["s3:GetObject", "s3:DeleteObject"], f"arn:aws:s3:::{BUCKET}/private/*")
    owner.put_bucket_policy(Bucket=BUCKET, Policy=policy(guard))
    assert refused(owner.get_object, Bucket=BUCKET, Key="private/diary.txt") == (403, "AccessDenied")
    assert owner.get_object(Bucket=BUCKET, Key="public/cat.jpg")["Body"].read() == b"meow"
    answer = owner.delete_objects(Bucket=BUCKET, Delete={"Objects": [{"Key": "private/diary.txt"}]})
    assert [(e["Key"], e["Code"]) for e in answer["Errors"]] == [("private/diary.txt", "AccessDenied")]
    source = {"Bucket": BUCKET, "Key": "private/diary.txt"}
    assert refused(owner.copy_object, Bucket=BUCKET, Key="public/leak", CopySource=source) == (
        403,
        "AccessDenied",
    )
    owner.delete_bucket_policy(Bucket=BUCKET)
    assert owner.get_object(Bucket=BUCKET, Key="private/diary.txt")["Body"].read() == b"dear diary"


def test_source_ip(owner, anonymous) -> None:  # type: ignore[no-untyped-def]
    """The tests reach the gateway from 127.0.0.1."""
    here = statement(Condition={"IpAddress": {"aws:SourceIp": ["127.0.0.0/8", "::1/128"]}})
    owner.put_bucket_policy(Bucket=BUCKET, Policy=policy(here))
    assert owner.get_bucket_policy_status(Bucket=BUCKET)["PolicyStatus"]["IsPublic"] is False
    assert anonymous.get_object(Bucket=BUCKET, Key="public/cat.jpg")["Body"].read() == b"meow"
    elsewhere = statement(Condition={"IpAddress": {"aws:SourceIp": "203.0.113.0/24"}})
    owner.put_bucket_policy(Bucket=BUCKET, Policy=policy(elsewhere))
    assert refused(anonymous.get_object, Bucket=BUCKET, Key="public/cat.jpg") == (403, "AccessDenied")


def test_a_user_named_by_arn_is_granted(s3: S3Endpoint, owner) -> None:  # type: ignore[no-untyped-def]
    carol = S3Endpoint(s3.cluster, s3.url, *getsecret(s3.cluster, "carol")).boto3()
    grant = statement("Allow", ["s3:PutObject", "s3:GetObject"], f"arn:aws:s3:::{BUCKET}/shared/*",
                      Principal={"AWS": ["arn:aws:iam:::user/carol"]})  # fmt: skip
    deny = statement("Deny", "s3:GetObject", f"arn:aws:s3:::{BUCKET}/private/*", Principal={"AWS": "carol"})
    owner.put_bucket_policy(Bucket=BUCKET, Policy=policy(grant, deny))
    carol.put_object(Bucket=BUCKET, Key="shared/note", Body=b"from carol")
    assert owner.get_object(Bucket=BUCKET, Key="shared/note")["Body"].read() == b"from carol"
    assert refused(carol.get_object, Bucket=BUCKET, Key="private/diary.txt") == (403, "AccessDenied")
    assert owner.get_object(Bucket=BUCKET, Key="private/diary.txt")["Body"].read() == b"dear diary"


def test_the_policy_outlives_a_restart_of_om_and_the_gateway(s3: S3Endpoint, owner, anonymous) -> None:  # type: ignore[no-untyped-def]
    owner.put_bucket_policy(Bucket=BUCKET, Policy=PUBLIC_READ)
    for daemon in ("s3g", "om"):
        s3.cluster.kill(daemon)
    for daemon in ("om", "s3g"):
        s3.cluster.start(daemon)
    deadline = time.monotonic() + 60
    while True:
        try:
            kept = owner.get_bucket_policy(Bucket=BUCKET)["Policy"]
            break
        except (ClientError, EndpointConnectionError):  # OM or the gateway not serving yet
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)
    assert kept == PUBLIC_READ
    assert anonymous.get_object(Bucket=BUCKET, Key="public/cat.jpg")["Body"].read() == b"meow"


# ------------------------------------------------------------------ PublicAccessBlock
def test_a_public_access_block_refuses_a_public_policy_and_restricts_a_kept_one(owner, anonymous) -> None:  # type: ignore[no-untyped-def]
    assert refused(owner.get_public_access_block, Bucket=BUCKET) == (
        404,
        "NoSuchPublicAccessBlockConfiguration",
    )
    owner.put_bucket_policy(Bucket=BUCKET, Policy=PUBLIC_READ)
    settings = {"BlockPublicPolicy": True, "RestrictPublicBuckets": True, "BlockPublicAcls": True}
    owner.put_public_access_block(Bucket=BUCKET, PublicAccessBlockConfiguration=settings)
    try:
        kept = owner.get_public_access_block(Bucket=BUCKET)["PublicAccessBlockConfiguration"]
        assert kept == {**settings, "IgnorePublicAcls": False}
        assert refused(owner.put_bucket_policy, Bucket=BUCKET, Policy=PUBLIC_READ) == (403, "AccessDenied")
        assert owner.get_bucket_policy(Bucket=BUCKET)["Policy"] == PUBLIC_READ  # kept, as Amazon keeps it
        assert refused(anonymous.get_object, Bucket=BUCKET, Key="public/cat.jpg") == (403, "AccessDenied")
        acl = {"Bucket": BUCKET, "Key": "public/dog.jpg", "Body": b"woof", "ACL": "public-read"}
        assert refused(owner.put_object, **acl) == (403, "AccessDenied")
    finally:
        owner.delete_public_access_block(Bucket=BUCKET)
    assert anonymous.get_object(Bucket=BUCKET, Key="public/cat.jpg")["Body"].read() == b"meow"


# ------------------------------------------------------------------ ownership controls
def test_ownership_controls_are_kept_and_enforced(owner) -> None:  # type: ignore[no-untyped-def]
    """A new bucket is BucketOwnerEnforced (ACLs disabled: bucket-owner-full-control accepted, public-read
    AccessControlListNotSupported); ObjectWriter is kept; Delete leaves none (R34's F9)."""
    enforced = {"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]}
    assert owner.get_bucket_ownership_controls(Bucket=BUCKET)["OwnershipControls"] == enforced
    owner.put_object(Bucket=BUCKET, Key="owned", Body=b"x", ACL="bucket-owner-full-control")
    assert refused(owner.put_object, Bucket=BUCKET, Key="owned", Body=b"x", ACL="public-read") == (
        400,
        "AccessControlListNotSupported",
    )
    grants = owner.get_object_acl(Bucket=BUCKET, Key="owned")["Grants"]
    assert [g["Permission"] for g in grants] == ["FULL_CONTROL"]
    writer = {"Rules": [{"ObjectOwnership": "ObjectWriter"}]}
    owner.put_bucket_ownership_controls(Bucket=BUCKET, OwnershipControls=writer)
    assert owner.get_bucket_ownership_controls(Bucket=BUCKET)["OwnershipControls"] == writer
    owner.delete_bucket_ownership_controls(Bucket=BUCKET)
    assert refused(owner.get_bucket_ownership_controls, Bucket=BUCKET) == (
        404,
        "OwnershipControlsNotFoundError",
    )
    owner.put_bucket_ownership_controls(Bucket=BUCKET, OwnershipControls=enforced)
    owner.delete_object(Bucket=BUCKET, Key="owned")


# ------------------------------------------------------------------ ACL refusals
def test_acl_refusals_in_amazon_s_codes(s3: S3Endpoint, owner) -> None:  # type: ignore[no-untyped-def]
    """PutBucketAcl and PutObjectAcl on an ObjectWriter bucket, from their references: an unknown canned
    ACL InvalidArgument, a canned ACL with grants InvalidRequest, a canned ACL with a body
    UnexpectedContent, neither MissingSecurityHeader; grants by email and the authenticated-read canned
    ACL are refused as not built (NotImplemented); the object calls on a missing key NoSuchKey. The
    bucket's ACL is unchanged."""
    owner.create_bucket(Bucket="acls", ObjectOwnership="ObjectWriter")
    before = owner.get_bucket_acl(Bucket="acls")["Grants"]
    assert refused(owner.put_bucket_acl, Bucket="acls", ACL="public") == (400, "InvalidArgument")
    assert refused(owner.put_bucket_acl, Bucket="acls", ACL="private", GrantRead='id="bob"') == (
        400, "InvalidRequest",
    )  # fmt: skip
    assert refused(owner.put_bucket_acl, Bucket="acls", GrantRead='emailAddress="a@b.c"') == (
        501,
        "NotImplemented",
    )
    assert refused(owner.put_bucket_acl, Bucket="acls", ACL="authenticated-read") == (501, "NotImplemented")
    raw = RawS3(s3, "acls")
    body = owner.get_bucket_acl(Bucket="acls")  # a well-formed AccessControlPolicy to send back
    document = (
        '<AccessControlPolicy xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Owner><ID>'
        f"{body['Owner']['ID']}</ID></Owner><AccessControlList/></AccessControlPolicy>"
    ).encode()
    both = raw.request(
        "PUT", "/acls?acl", document, {"x-amz-acl": "private", "Content-MD5": md5_b64(document)}
    )
    assert both.is_s3_error(400, "UnexpectedContent"), both
    neither = raw.request("PUT", "/acls?acl", b"", {"Content-MD5": md5_b64(b"")})
    assert neither.is_s3_error(400, "MissingSecurityHeader"), neither
    assert owner.get_bucket_acl(Bucket="acls")["Grants"] == before
    assert refused(owner.put_object_acl, Bucket="acls", Key="absent", ACL="private") == (404, "NoSuchKey")
    assert refused(owner.get_object_acl, Bucket="acls", Key="absent") == (404, "NoSuchKey")
