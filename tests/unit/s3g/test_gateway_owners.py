"""Whose a bucket is, through boto3 (issue 28, the review of defect 14): a bucket is made with its owner in
one OM call (never an orphan owned by root, never a race to own it), an access id is its user's name (one
that names no user gets no secret and is refused), x-amz-expected-bucket-owner is checked, the owner shown
is the bucket's everywhere, only the owner writes an ACL, and an anonymous request learns nothing before its
AccessDenied."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from pyozone.client.errors import OzoneClientError
from pyozone.om.metadata import S3_SECRET_TABLE
from pyozone.proto import OmClientProtocol_pb2 as om_pb
from tests.unit.s3g.gateway_thread import GatewayOnThread, refused

BUCKET = "owned"


@pytest.fixture(scope="module")
def alice(gateway: GatewayOnThread):  # type: ignore[no-untyped-def]
    client = gateway.boto3("alice")
    client.create_bucket(Bucket=BUCKET)
    client.put_object(Bucket=BUCKET, Key="k", Body=b"")
    return client


@pytest.fixture(scope="module")
def bob(gateway: GatewayOnThread):  # type: ignore[no-untyped-def]
    return gateway.boto3("bob")


NOT_USER_NAMES = ["@EVIL.ORG", "/x", "/host@REALM", "alice@EVIL.ORG", "alice/anything", "dave smith"]
"""Access ids that name no user (review of round 2): an empty short name made the gateway act as itself,
an OM administrator; a realm or instance dropped made `alice@EVIL.ORG` alice."""


@pytest.mark.parametrize("access_id", NOT_USER_NAMES)
def test_an_access_id_that_is_not_a_user_name_gets_no_secret(
    gateway: GatewayOnThread, access_id: str
) -> None:
    with pytest.raises(OzoneClientError) as error:
        gateway.secret(access_id)
    assert "INVALID_REQUEST" in str(error.value) and "not a valid user name" in str(error.value)


def stored_secret(gateway: GatewayOnThread, access_id: str) -> str:
    """A secret OM stored for `access_id` before it refused such ids (a store of an older pyozone)."""
    secret = "s" * 64
    record = om_pb.S3Secret(kerberosID=access_id, awsSecret=secret).SerializeToString()

    async def write() -> None:
        gateway.om.core.store.write([(S3_SECRET_TABLE, access_id, record)])

    gateway.call(write())
    return secret


@pytest.mark.parametrize("access_id", NOT_USER_NAMES)
def test_a_stored_secret_of_an_access_id_that_is_not_a_user_name_is_refused(  # type: ignore[no-untyped-def]
    gateway: GatewayOnThread, alice, access_id: str
) -> None:
    import boto3
    from botocore.config import Config

    s3 = boto3.client(
        "s3", endpoint_url=gateway.url, aws_access_key_id=access_id,
        aws_secret_access_key=stored_secret(gateway, access_id), region_name="us-east-1",
        config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}),
    )  # fmt: skip
    denied = (403, "InvalidAccessKeyId")
    assert refused(s3.list_buckets) == denied
    assert refused(s3.list_objects_v2, Bucket=BUCKET) == denied
    assert refused(s3.head_bucket, Bucket=BUCKET, ExpectedBucketOwner="alice") == (403, "403")
    assert refused(s3.put_bucket_acl, Bucket=BUCKET, ACL="private") == denied
    assert refused(s3.put_object, Bucket=BUCKET, Key="planted", Body=b"") == denied
    assert refused(s3.create_bucket, Bucket="of-evil") == denied
    assert refused(alice.head_bucket, Bucket="of-evil") == (404, "404")
    assert [o["Key"] for o in alice.list_objects_v2(Bucket=BUCKET)["Contents"]] == ["k"]


def test_the_gateway_never_acts_for_an_empty_user(gateway: GatewayOnThread) -> None:
    assert gateway.gateway.client is not None
    with pytest.raises(ValueError, match="acts for no user"), gateway.gateway.client.acting_for(""):
        pass


def test_concurrent_creates_by_the_owner_all_succeed(gateway: GatewayOnThread) -> None:
    clients = [gateway.boto3("alice") for _ in range(4)]
    for trial in range(5):
        name = f"race-{trial}"
        with ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(lambda c, name=name: c.create_bucket(Bucket=name), clients))
        assert [a["ResponseMetadata"]["HTTPStatusCode"] for a in answers] == [200] * 4
        assert clients[0].get_bucket_acl(Bucket=name)["Owner"]["ID"] == "alice"


def test_expected_bucket_owner_is_checked(alice, bob) -> None:  # type: ignore[no-untyped-def]
    wrong = {"ExpectedBucketOwner": "bob"}
    assert refused(alice.head_object, Bucket=BUCKET, Key="k", **wrong) == (403, "403")
    assert refused(alice.list_objects_v2, Bucket=BUCKET, **wrong) == (403, "AccessDenied")
    assert refused(alice.put_object, Bucket=BUCKET, Key="new", Body=b"", **wrong) == (403, "AccessDenied")
    assert refused(alice.delete_object, Bucket=BUCKET, Key="k", **wrong) == (403, "AccessDenied")
    assert refused(alice.get_bucket_acl, Bucket=BUCKET, **wrong) == (403, "AccessDenied")
    assert refused(
        alice.copy_object,
        Bucket=BUCKET,
        Key="copy",
        CopySource=f"{BUCKET}/k",
        ExpectedSourceBucketOwner="bob",
    ) == (403, "AccessDenied")
    assert [o["Key"] for o in alice.list_objects_v2(Bucket=BUCKET)["Contents"]] == ["k"]
    alice.head_object(Bucket=BUCKET, Key="k", ExpectedBucketOwner="alice")
    alice.copy_object(Bucket=BUCKET, Key="copy", CopySource=f"{BUCKET}/k", ExpectedSourceBucketOwner="alice",
                      ExpectedBucketOwner="alice")  # fmt: skip
    alice.delete_object(Bucket=BUCKET, Key="copy", ExpectedBucketOwner="alice")


def test_the_owner_shown_is_the_buckets_whoever_lists(alice, bob) -> None:  # type: ignore[no-untyped-def]
    assert {v["Owner"]["ID"] for v in bob.list_object_versions(Bucket=BUCKET)["Versions"]} == {"alice"}
    assert {o["Owner"]["ID"] for o in bob.list_objects_v2(Bucket=BUCKET, FetchOwner=True)["Contents"]} == {
        "alice"
    }
    assert {o["Owner"]["ID"] for o in bob.list_objects(Bucket=BUCKET)["Contents"]} == {"alice"}
    assert alice.get_bucket_acl(Bucket=BUCKET)["Owner"]["ID"] == "alice"
    assert alice.get_object_acl(Bucket=BUCKET, Key="k")["Owner"]["ID"] == "alice"
    assert refused(bob.get_bucket_acl, Bucket=BUCKET) == (403, "AccessDenied")  # READ_ACP: the owner's
    assert refused(bob.get_object_acl, Bucket=BUCKET, Key="k") == (403, "AccessDenied")
    upload_id = alice.create_multipart_upload(Bucket=BUCKET, Key="up")["UploadId"]
    [upload] = bob.list_multipart_uploads(Bucket=BUCKET)["Uploads"]
    parts = bob.list_parts(Bucket=BUCKET, Key="up", UploadId=upload_id)
    assert {
        upload["Owner"]["ID"],
        upload["Initiator"]["ID"],
        parts["Owner"]["ID"],
        parts["Initiator"]["ID"],
    } == {"alice"}
    alice.abort_multipart_upload(Bucket=BUCKET, Key="up", UploadId=upload_id)


def test_only_the_owner_writes_an_acl(alice, bob) -> None:  # type: ignore[no-untyped-def]
    assert refused(bob.put_bucket_acl, Bucket=BUCKET, ACL="private") == (403, "AccessDenied")
    assert refused(bob.put_object_acl, Bucket=BUCKET, Key="k", ACL="private") == (403, "AccessDenied")
    alice.put_bucket_acl(Bucket=BUCKET, ACL="private")
    alice.put_object_acl(Bucket=BUCKET, Key="k", ACL="private")


def test_an_anonymous_request_is_refused_before_anything_else(gateway: GatewayOnThread, alice) -> None:  # type: ignore[no-untyped-def]
    status, text = gateway.signed_request("PUT", "/no-such-bucket", user=None)
    assert status == 403 and "<Code>AccessDenied</Code>" in text
    status, text = gateway.signed_request("GET", f"/{BUCKET}/k?versionId=abc", user=None)
    assert status == 403 and "<Code>AccessDenied</Code>" in text
    status, text = gateway.signed_request("GET", f"/{BUCKET}/k?versionId=00000000000000ff", user="alice")
    assert status == 404 and "<Code>NoSuchVersion</Code>" in text
    for method, target in (("PUT", f"/{BUCKET}?website"), ("DELETE", f"/{BUCKET}/k?acl")):
        status, text = gateway.signed_request(method, target, user=None)
        assert status == 403 and "<Code>AccessDenied</Code>" in text
    assert gateway.signed_request("PUT", f"/{BUCKET}?website", user="alice")[0] == 501
