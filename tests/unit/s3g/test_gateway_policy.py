"""Bucket policies through the gateway (issue 33, item 5; objects are empty: no datanodes), with boto3
and unsigned requests (botocore's UNSIGNED, as a browser or curl sends them): Put/Get/DeleteBucketPolicy
and GetBucketPolicyStatus with their refusals, a public-read policy read anonymously while everything else
stays refused, an anonymous write a policy allows, a Deny on a prefix (DeleteObjects per key too), SourceIp,
a copy whose source the policy denies, and an owner who can always repair a policy that denies everything."""

from __future__ import annotations

import json
from typing import Any

import pytest
from botocore import UNSIGNED

from tests.unit.s3g.gateway_thread import GatewayOnThread, refused

BUCKET = "gallery"
OTHER = "vault"


def policy(*statements: dict[str, Any]) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def statement(
    effect: str = "Allow", action: Any = "s3:GetObject", resource: Any = None, **more: Any
) -> dict[str, Any]:
    return {"Effect": effect, "Principal": "*", "Action": action,
            "Resource": resource or f"arn:aws:s3:::{BUCKET}/*", **more}  # fmt: skip


PUBLIC_READ = policy(statement(Sid="PublicRead"))


@pytest.fixture(scope="module")
def alice(gateway: GatewayOnThread):  # type: ignore[no-untyped-def]
    client = gateway.boto3("alice")
    for bucket in (BUCKET, OTHER):
        client.create_bucket(Bucket=bucket)
        client.put_object(Bucket=bucket, Key="public/a.jpg", Body=b"")
        client.put_object(Bucket=bucket, Key="private/b.txt", Body=b"")
    return client


@pytest.fixture
def owner(alice):  # type: ignore[no-untyped-def]
    """alice's boto3, her bucket with no policy after the test."""
    yield alice
    alice.delete_bucket_policy(Bucket=BUCKET)


@pytest.fixture(scope="module")
def anonymous(gateway: GatewayOnThread):  # type: ignore[no-untyped-def]
    import boto3
    from botocore.config import Config

    config = Config(signature_version=UNSIGNED, s3={"addressing_style": "path"}, retries={"max_attempts": 1})
    return boto3.client("s3", endpoint_url=gateway.url, region_name="us-east-1", config=config)


def test_a_policy_is_put_read_back_as_sent_and_deleted(owner) -> None:  # type: ignore[no-untyped-def]
    assert refused(owner.get_bucket_policy, Bucket=BUCKET) == (404, "NoSuchBucketPolicy")
    assert refused(owner.get_bucket_policy_status, Bucket=BUCKET) == (404, "NoSuchBucketPolicy")
    answer = owner.put_bucket_policy(Bucket=BUCKET, Policy=PUBLIC_READ)
    assert answer["ResponseMetadata"]["HTTPStatusCode"] == 204
    assert owner.get_bucket_policy(Bucket=BUCKET)["Policy"] == PUBLIC_READ
    assert owner.get_bucket_policy_status(Bucket=BUCKET)["PolicyStatus"] == {"IsPublic": True}
    owner.delete_bucket_policy(Bucket=BUCKET)
    assert refused(owner.get_bucket_policy, Bucket=BUCKET) == (404, "NoSuchBucketPolicy")
    assert owner.delete_bucket_policy(Bucket=BUCKET)["ResponseMetadata"]["HTTPStatusCode"] == 204
    fixed = policy(statement(Condition={"IpAddress": {"aws:SourceIp": "192.0.2.0/24"}}))
    owner.put_bucket_policy(Bucket=BUCKET, Policy=fixed)
    assert owner.get_bucket_policy_status(Bucket=BUCKET)["PolicyStatus"] == {"IsPublic": False}
    assert refused(owner.get_bucket_policy, Bucket="no-such-bucket") == (404, "NoSuchBucket")


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ("{", (400, "MalformedPolicy")),
        (policy(statement(resource="arn:aws:s3:::elsewhere/*")), (400, "MalformedPolicy")),
        (policy(statement(action="s3:Teleport")), (400, "MalformedPolicy")),
        (policy(statement(Condition={"DateLessThan": {"aws:CurrentTime": "2030-01-01T00:00:00Z"}})),
         (501, "NotImplemented")),
        (policy(statement(Sid="x" * 21 * 1024)), (400, "MalformedPolicy")),
    ],
)  # fmt: skip
def test_a_policy_s3_refuses_is_not_kept(owner, document: str, expected: tuple[int, str]) -> None:  # type: ignore[no-untyped-def]
    assert refused(owner.put_bucket_policy, Bucket=BUCKET, Policy=document) == expected
    assert refused(owner.get_bucket_policy, Bucket=BUCKET) == (404, "NoSuchBucketPolicy")


def test_only_the_owner_reads_or_changes_the_policy(gateway: GatewayOnThread, owner) -> None:  # type: ignore[no-untyped-def]
    bob = gateway.boto3("bob")
    owner.put_bucket_policy(Bucket=BUCKET, Policy=PUBLIC_READ)
    for call in (bob.get_bucket_policy, bob.delete_bucket_policy, bob.get_bucket_policy_status):
        assert refused(call, Bucket=BUCKET) == (403, "AccessDenied")
    assert refused(bob.put_bucket_policy, Bucket=BUCKET, Policy=PUBLIC_READ) == (403, "AccessDenied")


def test_public_read_lets_anyone_get_what_it_names_and_nothing_else(owner, anonymous) -> None:  # type: ignore[no-untyped-def]
    assert refused(anonymous.get_object, Bucket=BUCKET, Key="public/a.jpg") == (403, "AccessDenied")
    owner.put_bucket_policy(Bucket=BUCKET, Policy=PUBLIC_READ)
    assert anonymous.get_object(Bucket=BUCKET, Key="public/a.jpg")["Body"].read() == b""
    assert anonymous.head_object(Bucket=BUCKET, Key="private/b.txt")["ContentLength"] == 0
    assert refused(anonymous.get_object, Bucket=BUCKET, Key="missing") == (404, "NoSuchKey")
    assert refused(anonymous.put_object, Bucket=BUCKET, Key="public/new", Body=b"") == (403, "AccessDenied")
    assert refused(anonymous.delete_object, Bucket=BUCKET, Key="public/a.jpg") == (403, "AccessDenied")
    assert refused(anonymous.list_objects_v2, Bucket=BUCKET) == (403, "AccessDenied")
    assert refused(anonymous.get_object_acl, Bucket=BUCKET, Key="public/a.jpg") == (403, "AccessDenied")
    assert refused(anonymous.get_bucket_policy, Bucket=BUCKET) == (403, "AccessDenied")
    assert refused(anonymous.get_object, Bucket=OTHER, Key="public/a.jpg") == (403, "AccessDenied")
    assert refused(anonymous.get_object, Bucket="no-such-bucket", Key="k") == (404, "NoSuchBucket")
    assert refused(anonymous.list_buckets) == (403, "AccessDenied")
    owner.delete_bucket_policy(Bucket=BUCKET)
    assert refused(anonymous.get_object, Bucket=BUCKET, Key="public/a.jpg") == (403, "AccessDenied")


def test_a_listing_under_a_prefix_only(owner, anonymous) -> None:  # type: ignore[no-untyped-def]
    listing = statement(action="s3:ListBucket", resource=f"arn:aws:s3:::{BUCKET}",
                        Condition={"StringLike": {"s3:prefix": "public/*"}})  # fmt: skip
    owner.put_bucket_policy(Bucket=BUCKET, Policy=policy(listing))
    keys = anonymous.list_objects_v2(Bucket=BUCKET, Prefix="public/")["Contents"]
    assert [k["Key"] for k in keys] == ["public/a.jpg"]
    assert refused(anonymous.list_objects_v2, Bucket=BUCKET, Prefix="private/") == (403, "AccessDenied")
    assert refused(anonymous.list_objects_v2, Bucket=BUCKET) == (403, "AccessDenied")


def test_an_anonymous_write_a_policy_allows_is_made(owner, anonymous) -> None:  # type: ignore[no-untyped-def]
    drop = statement(action="s3:PutObject", resource=f"arn:aws:s3:::{BUCKET}/dropbox/*")
    owner.put_bucket_policy(Bucket=BUCKET, Policy=policy(drop))
    anonymous.put_object(Bucket=BUCKET, Key="dropbox/note", Body=b"")
    assert owner.get_object(Bucket=BUCKET, Key="dropbox/note")["Body"].read() == b""
    assert refused(anonymous.put_object, Bucket=BUCKET, Key="elsewhere", Body=b"") == (403, "AccessDenied")
    owner.delete_object(Bucket=BUCKET, Key="dropbox/note")


def test_a_deny_on_a_prefix_holds_for_everyone_and_each_key_of_a_multi_delete(owner) -> None:  # type: ignore[no-untyped-def]
    guard = statement("Deny", ["s3:GetObject", "s3:DeleteObject"], f"arn:aws:s3:::{BUCKET}/private/*")
    owner.put_bucket_policy(Bucket=BUCKET, Policy=policy(guard))
    assert refused(owner.get_object, Bucket=BUCKET, Key="private/b.txt") == (403, "AccessDenied")
    assert owner.get_object(Bucket=BUCKET, Key="public/a.jpg")["Body"].read() == b""
    owner.put_object(Bucket=BUCKET, Key="public/tmp", Body=b"")
    answer = owner.delete_objects(
        Bucket=BUCKET, Delete={"Objects": [{"Key": "private/b.txt"}, {"Key": "public/tmp"}]}
    )
    assert [d["Key"] for d in answer["Deleted"]] == ["public/tmp"]
    assert [(e["Key"], e["Code"]) for e in answer["Errors"]] == [("private/b.txt", "AccessDenied")]
    copy = {"Bucket": BUCKET, "Key": "public/leak", "CopySource": {"Bucket": BUCKET, "Key": "private/b.txt"}}
    assert refused(owner.copy_object, **copy) == (403, "AccessDenied")
    owner.delete_bucket_policy(Bucket=BUCKET)
    assert owner.get_object(Bucket=BUCKET, Key="private/b.txt")["Body"].read() == b""


def test_source_ip(owner, anonymous) -> None:  # type: ignore[no-untyped-def]
    """The gateway's tests come from 127.0.0.1."""
    here = statement(Condition={"IpAddress": {"aws:SourceIp": "127.0.0.0/8"}})
    owner.put_bucket_policy(Bucket=BUCKET, Policy=policy(here))
    assert anonymous.get_object(Bucket=BUCKET, Key="public/a.jpg")["Body"].read() == b""
    elsewhere = statement(Condition={"IpAddress": {"aws:SourceIp": "192.0.2.0/24"}})
    owner.put_bucket_policy(Bucket=BUCKET, Policy=policy(elsewhere))
    assert refused(anonymous.get_object, Bucket=BUCKET, Key="public/a.jpg") == (403, "AccessDenied")
    only_there = statement("Deny", "s3:*", [f"arn:aws:s3:::{BUCKET}", f"arn:aws:s3:::{BUCKET}/*"],
                           Condition={"NotIpAddress": {"aws:SourceIp": "192.0.2.0/24"}})  # fmt: skip
    owner.put_bucket_policy(Bucket=BUCKET, Policy=policy(only_there))
    assert refused(owner.list_objects_v2, Bucket=BUCKET) == (403, "AccessDenied")
    assert refused(owner.head_bucket, Bucket=BUCKET) == (403, "403")


def test_the_owner_can_always_repair_a_policy_that_denies_everything(owner) -> None:  # type: ignore[no-untyped-def]
    everything = statement("Deny", "s3:*", [f"arn:aws:s3:::{BUCKET}", f"arn:aws:s3:::{BUCKET}/*"])
    owner.put_bucket_policy(Bucket=BUCKET, Policy=policy(everything))
    assert refused(owner.get_object, Bucket=BUCKET, Key="public/a.jpg") == (403, "AccessDenied")
    assert json.loads(owner.get_bucket_policy(Bucket=BUCKET)["Policy"]) == json.loads(policy(everything))
    assert owner.get_bucket_policy_status(Bucket=BUCKET)["PolicyStatus"] == {"IsPublic": False}
    owner.delete_bucket_policy(Bucket=BUCKET)
    assert owner.get_object(Bucket=BUCKET, Key="public/a.jpg")["Body"].read() == b""


def test_a_named_user_is_granted_as_the_owner_and_others_are_not(gateway: GatewayOnThread, owner) -> None:  # type: ignore[no-untyped-def]
    """bob, named by ARN; carol is not named and gets OM's ACLs (here: none enforced) as herself."""
    grant = statement(action="s3:GetObject", Principal={"AWS": "arn:aws:iam:::user/bob"})
    owner.put_bucket_policy(Bucket=BUCKET, Policy=policy(grant))
    bob = gateway.boto3("bob")
    assert bob.get_object(Bucket=BUCKET, Key="public/a.jpg")["Body"].read() == b""
    deny_carol = statement("Deny", "s3:GetObject", Principal={"AWS": "carol"})
    owner.put_bucket_policy(Bucket=BUCKET, Policy=policy(grant, deny_carol))
    carol = gateway.boto3("carol")
    assert refused(carol.get_object, Bucket=BUCKET, Key="public/a.jpg") == (403, "AccessDenied")
    assert bob.get_object(Bucket=BUCKET, Key="public/a.jpg")["Body"].read() == b""


def test_a_bucket_made_again_has_no_policy(owner, anonymous) -> None:  # type: ignore[no-untyped-def]
    owner.create_bucket(Bucket="again")
    owner.put_bucket_policy(Bucket="again", Policy=PUBLIC_READ.replace(BUCKET, "again"))
    owner.delete_bucket(Bucket="again")
    owner.create_bucket(Bucket="again")
    owner.put_object(Bucket="again", Key="k", Body=b"")
    assert refused(anonymous.get_object, Bucket="again", Key="k") == (403, "AccessDenied")
    assert refused(owner.get_bucket_policy, Bucket="again") == (404, "NoSuchBucketPolicy")


def test_a_form_upload_is_decided_as_a_put(gateway: GatewayOnThread, owner) -> None:  # type: ignore[no-untyped-def]
    """POST Object is s3:PutObject: a Deny on the key refuses the signed form."""
    from tests.unit.s3g.test_gateway_post_object import encode, send

    signer = gateway.boto3("alice", signature_version="s3v4")

    def post(key: str) -> int:
        fields = signer.generate_presigned_post(BUCKET, key)["fields"]
        body, content_type = encode(list(fields.items()), ("a.txt", b""))
        return send(gateway, body, content_type, f"/{BUCKET}")[0]

    guard = statement("Deny", "s3:PutObject", f"arn:aws:s3:::{BUCKET}/locked/*")
    owner.put_bucket_policy(Bucket=BUCKET, Policy=policy(guard))
    assert post("open/form") == 204
    assert post("locked/form") == 403


def test_a_form_upload_is_post_for_auth_type_and_an_unsigned_one_is_refused(
    gateway: GatewayOnThread, owner
) -> None:  # type: ignore[no-untyped-def]
    """R34's F11: a signed form was s3:authType REST-HEADER, never POST; F3: an unsigned form to a bucket
    whose policy allows s3:* was a 500."""
    from tests.unit.s3g.test_gateway_post_object import encode, send

    signer = gateway.boto3("alice", signature_version="s3v4")
    fields = signer.generate_presigned_post(BUCKET, "form")["fields"]
    body, content_type = encode(list(fields.items()), ("a.txt", b""))
    no_forms = statement("Deny", "s3:PutObject", Condition={"StringEquals": {"s3:authType": "POST"}})
    owner.put_bucket_policy(Bucket=BUCKET, Policy=policy(no_forms))
    assert send(gateway, body, content_type, f"/{BUCKET}")[0] == 403
    everything = statement(action="s3:*", resource=[f"arn:aws:s3:::{BUCKET}", f"arn:aws:s3:::{BUCKET}/*"])
    owner.put_bucket_policy(Bucket=BUCKET, Policy=policy(everything))
    body, content_type = encode([("key", "anon")], ("a.txt", b""))
    status, _, text = send(gateway, body, content_type, f"/{BUCKET}")
    assert status == 403 and "<Code>AccessDenied</Code>" in text


def test_an_anonymous_get_sets_no_answer_headers(owner, anonymous) -> None:  # type: ignore[no-untyped-def]
    """R34's F12: `?response-content-type=text/html` on a public object served it as HTML."""
    owner.put_bucket_policy(Bucket=BUCKET, Policy=PUBLIC_READ)
    assert refused(
        anonymous.get_object, Bucket=BUCKET, Key="public/a.jpg", ResponseContentType="text/html"
    ) == (400, "InvalidRequest")
    assert anonymous.get_object(Bucket=BUCKET, Key="public/a.jpg")["Body"].read() == b""


def test_a_tagging_deny_holds_for_the_tags_a_put_sets(owner) -> None:  # type: ignore[no-untyped-def]
    """R34's F13: a PUT with x-amz-tagging stored tags a Deny of s3:PutObjectTagging refuses."""
    owner.put_bucket_policy(Bucket=BUCKET, Policy=policy(statement("Deny", "s3:PutObjectTagging")))
    assert refused(owner.put_object, Bucket=BUCKET, Key="tagged", Body=b"", Tagging="a=b") == (
        403, "AccessDenied",
    )  # fmt: skip
    owner.put_object(Bucket=BUCKET, Key="untagged", Body=b"")


def test_a_copy_of_a_version_is_read_as_get_object_version(gateway: GatewayOnThread, owner) -> None:  # type: ignore[no-untyped-def]
    """R34's F2: a copy checked its source as s3:GetObject even when it named a versionId, so a Deny of
    s3:GetObjectVersion refused the GET of an old version but not its copy."""
    owner.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"})
    old = owner.put_object(Bucket=BUCKET, Key="draft", Body=b"")["VersionId"]
    owner.put_object(Bucket=BUCKET, Key="draft", Body=b"")
    owner.put_bucket_policy(Bucket=BUCKET, Policy=policy(statement("Deny", "s3:GetObjectVersion")))
    assert refused(owner.get_object, Bucket=BUCKET, Key="draft", VersionId=old) == (403, "AccessDenied")
    source = {"Bucket": BUCKET, "Key": "draft", "VersionId": old}
    assert refused(owner.copy_object, Bucket=BUCKET, Key="copied", CopySource=source) == (403, "AccessDenied")
    owner.copy_object(Bucket=BUCKET, Key="copied", CopySource={"Bucket": BUCKET, "Key": "draft"})


def test_an_ipv4_peer_written_as_ipv6_meets_ipv4_conditions() -> None:
    """R34's F5: a dual-stack socket's ::ffff:a.b.c.d escaped an IPv4 SourceIp condition."""
    from pyozone.s3g.policy import _source_ip

    assert _source_ip("::ffff:192.0.2.7") == "192.0.2.7"
    assert (_source_ip("2001:db8::1"), _source_ip("192.0.2.7")) == ("2001:db8::1", "192.0.2.7")


SETTINGS = ("BlockPublicAcls", "IgnorePublicAcls", "BlockPublicPolicy", "RestrictPublicBuckets")
ALL_BLOCKED = dict.fromkeys(SETTINGS, True)


@pytest.fixture
def blocked(owner):  # type: ignore[no-untyped-def]
    """alice's boto3, her bucket with no PublicAccessBlock after the test."""
    yield owner
    owner.delete_public_access_block(Bucket=BUCKET)


def test_a_public_access_block_is_put_read_back_and_deleted(gateway: GatewayOnThread, blocked) -> None:  # type: ignore[no-untyped-def]
    assert refused(blocked.get_public_access_block, Bucket=BUCKET) == (
        404,
        "NoSuchPublicAccessBlockConfiguration",
    )
    blocked.put_public_access_block(Bucket=BUCKET, PublicAccessBlockConfiguration={"BlockPublicPolicy": True})
    expected = {**dict.fromkeys(SETTINGS, False), "BlockPublicPolicy": True}
    assert blocked.get_public_access_block(Bucket=BUCKET)["PublicAccessBlockConfiguration"] == expected
    bob = gateway.boto3("bob")
    assert refused(bob.get_public_access_block, Bucket=BUCKET) == (403, "AccessDenied")
    assert refused(bob.delete_public_access_block, Bucket=BUCKET) == (403, "AccessDenied")
    answer = blocked.delete_public_access_block(Bucket=BUCKET)
    assert answer["ResponseMetadata"]["HTTPStatusCode"] == 204
    assert refused(blocked.get_public_access_block, Bucket=BUCKET) == (
        404,
        "NoSuchPublicAccessBlockConfiguration",
    )
    status, text = gateway.signed_request("PUT", f"/{BUCKET}?publicAccessBlock", b"<Nope/>", user="alice")
    assert status == 400 and "<Code>MalformedXML</Code>" in text


def test_block_public_policy_refuses_a_public_policy_but_not_a_fixed_one(blocked) -> None:  # type: ignore[no-untyped-def]
    blocked.put_public_access_block(Bucket=BUCKET, PublicAccessBlockConfiguration={"BlockPublicPolicy": True})
    assert refused(blocked.put_bucket_policy, Bucket=BUCKET, Policy=PUBLIC_READ) == (403, "AccessDenied")
    fixed = policy(statement(Condition={"IpAddress": {"aws:SourceIp": "127.0.0.0/8"}}))
    blocked.put_bucket_policy(Bucket=BUCKET, Policy=fixed)


def test_restrict_public_buckets_grants_anonymous_requests_nothing(
    gateway: GatewayOnThread, blocked, anonymous
) -> None:  # type: ignore[no-untyped-def]
    everyone = statement(action=["s3:GetObject", "s3:PutObject"])
    blocked.put_bucket_policy(Bucket=BUCKET, Policy=policy(everyone))
    assert anonymous.get_object(Bucket=BUCKET, Key="public/a.jpg")["Body"].read() == b""
    blocked.put_public_access_block(
        Bucket=BUCKET, PublicAccessBlockConfiguration={"RestrictPublicBuckets": True}
    )
    assert refused(anonymous.get_object, Bucket=BUCKET, Key="public/a.jpg") == (403, "AccessDenied")
    assert gateway.boto3("bob").get_object(Bucket=BUCKET, Key="public/a.jpg")["Body"].read() == b""


def test_block_public_acls_refuses_a_public_acl_as_access_denied(blocked) -> None:  # type: ignore[no-untyped-def]
    assert refused(blocked.put_object, Bucket=BUCKET, Key="k", Body=b"", ACL="public-read") == (
        400,
        "AccessControlListNotSupported",  # a new bucket's ACLs are disabled (BucketOwnerEnforced)
    )
    blocked.put_public_access_block(Bucket=BUCKET, PublicAccessBlockConfiguration=ALL_BLOCKED)
    for acl in ("public-read", "public-read-write", "authenticated-read"):
        assert refused(blocked.put_object, Bucket=BUCKET, Key="k", Body=b"", ACL=acl) == (403, "AccessDenied")
    grant = 'uri="http://acs.amazonaws.com/groups/global/AllUsers"'
    assert refused(blocked.put_object, Bucket=BUCKET, Key="k", Body=b"", GrantRead=grant) == (
        403,
        "AccessDenied",
    )
    assert refused(blocked.put_bucket_acl, Bucket=BUCKET, ACL="public-read") == (403, "AccessDenied")
    blocked.put_object(Bucket=BUCKET, Key="k", Body=b"", ACL="private")


@pytest.mark.parametrize("user", ["alice", None])
def test_a_bucket_name_om_refuses_is_answered_as_the_handler_would(
    gateway: GatewayOnThread, user: str | None
) -> None:
    """The policy's read of the bucket answers OM's refusal with S3's code, never a 500."""
    status, _ = gateway.signed_request("HEAD", "/" + "a" * 64, user=user)
    assert status == 400
