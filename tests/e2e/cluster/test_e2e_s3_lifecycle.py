"""S3 bucket lifecycle through the gateway of a live cluster (issue 33, item 4), from Amazon's reference
(PutBucketLifecycleConfiguration, GetBucketLifecycleConfiguration, DeleteBucketLifecycle, "Lifecycle
configuration elements"): the configuration's round trip and its errors, owner-only access, and OM's
lifecycle service carrying the rules out (days, dates, sizes, tags, noncurrent versions, markers,
uploads). The service's days are made to pass by runS3Lifecycle, the administrators' OM call that runs it
now, judged at a given time."""

from __future__ import annotations

import itertools
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.exceptions import ClientError

from pyozone.hdds.s3_lifecycle import DAY_MS, LifecycleRun
from tests.e2e.cluster.cluster_helpers import ozone_client
from tests.e2e.cluster.s3_cluster import REGION, S3Endpoint, getsecret, s3_cluster
from tests.e2e.cluster.s3_raw import before_sign, strip_digests

_names = itertools.count()
EXPIRE_1 = {"ID": "expire", "Filter": {"Prefix": ""}, "Status": "Enabled", "Expiration": {"Days": 1}}


@pytest.fixture(scope="module")
def s3(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Endpoint]:
    # runS3Lifecycle judged days later: a test's, as ozone.om.s3.lifecycle.time.override.enabled says
    overrides = {"ozone.om.s3.lifecycle.time.override.enabled": "true"}
    with s3_cluster(request, tmp_path_factory, "s3-lifecycle", overrides=overrides) as endpoint:
        yield endpoint


@pytest.fixture(scope="module")
def client(s3: S3Endpoint):  # type: ignore[no-untyped-def]
    return s3.boto3()


@pytest.fixture
def bucket(client) -> str:  # type: ignore[no-untyped-def]
    name = f"lifecycle-{next(_names)}"
    client.create_bucket(Bucket=name)
    return name


def refusal(call: Any, **kwargs: Any) -> tuple[int, str, str]:
    with pytest.raises(ClientError) as e:
        call(**kwargs)
    error = e.value.response
    return (
        error["ResponseMetadata"]["HTTPStatusCode"],
        error["Error"].get("Code", ""),
        error["Error"].get("Message", ""),
    )


def put(client, bucket: str, *rules: dict[str, Any]) -> None:  # type: ignore[no-untyped-def]
    client.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration={"Rules": list(rules)})


def run_lifecycle(s3: S3Endpoint, after_days: float) -> LifecycleRun:
    """OM's lifecycle service, run now as if `after_days` had passed."""
    om = ozone_client(s3.cluster)
    try:
        now = time.time_ns() // 1_000_000 + int(after_days * DAY_MS)
        return om.run(om.async_client.om.run_s3_lifecycle(now))
    finally:
        om.close()


# ------------------------------------------------------------------ the configuration
def test_put_get_delete_round_trip(client, bucket: str) -> None:  # type: ignore[no-untyped-def]
    assert refusal(client.get_bucket_lifecycle_configuration, Bucket=bucket)[:2] == (
        404,
        "NoSuchLifecycleConfiguration",
    )
    rules = [
        EXPIRE_1,
        {
            "ID": "tagged",
            "Filter": {
                "And": {"Prefix": "logs/", "Tags": [{"Key": "tmp", "Value": "1"}], "ObjectSizeGreaterThan": 5}
            },
            "Status": "Disabled",
            "Expiration": {"Date": datetime(2030, 1, 1, tzinfo=UTC)},
            "NoncurrentVersionExpiration": {"NoncurrentDays": 3, "NewerNoncurrentVersions": 2},
        },
        {
            "ID": "markers-and-uploads",
            "Filter": {"Prefix": "up/"},
            "Status": "Enabled",
            "Expiration": {"ExpiredObjectDeleteMarker": True},
            "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 7},
        },
    ]
    put(client, bucket, *rules)
    got = client.get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"]
    assert [r["ID"] for r in got] == ["expire", "tagged", "markers-and-uploads"]
    assert got[0] == EXPIRE_1  # an empty Prefix answered back as sent (review R33 F9)
    assert got[1]["Filter"]["And"]["Tags"] == [{"Key": "tmp", "Value": "1"}]
    assert got[1]["Expiration"]["Date"] == datetime(2030, 1, 1, tzinfo=UTC)
    assert got[1]["NoncurrentVersionExpiration"] == {"NoncurrentDays": 3, "NewerNoncurrentVersions": 2}
    assert got[2]["Expiration"] == {"ExpiredObjectDeleteMarker": True}
    assert got[2]["AbortIncompleteMultipartUpload"] == {"DaysAfterInitiation": 7}
    put(client, bucket, EXPIRE_1)  # replaces the whole configuration
    assert len(client.get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"]) == 1
    assert client.delete_bucket_lifecycle(Bucket=bucket)["ResponseMetadata"]["HTTPStatusCode"] == 204
    assert client.delete_bucket_lifecycle(Bucket=bucket)["ResponseMetadata"]["HTTPStatusCode"] == 204
    assert (
        refusal(client.get_bucket_lifecycle_configuration, Bucket=bucket)[1] == "NoSuchLifecycleConfiguration"
    )


@pytest.mark.parametrize(
    ("rules", "status", "code", "message"),
    [
        ([{**EXPIRE_1, "Expiration": {"Days": 0}}], 400, "InvalidArgument",
         "'Days' for Expiration action must be a positive integer"),
        ([{**EXPIRE_1, "Expiration": {"Date": datetime(2030, 1, 1, 10, tzinfo=UTC)}}], 400, "InvalidArgument",
         "'Date' must be at midnight GMT"),
        ([EXPIRE_1, EXPIRE_1], 400, "InvalidArgument",
         "Rule ID must be unique. Found same ID for more than one rule"),
        ([{"ID": "none", "Filter": {"Prefix": ""}, "Status": "Enabled"}], 400, "InvalidRequest",
         "At least one action needs to be specified in a rule"),
        ([{**EXPIRE_1, "Expiration": {"Days": 1, "ExpiredObjectDeleteMarker": True}}], 400, "MalformedXML",
         ""),
        ([{**EXPIRE_1, "Transitions": [{"Days": 30, "StorageClass": "GLACIER"}]}], 501, "NotImplemented", ""),
        ([{**EXPIRE_1, "ID": "i" * 256}], 400, "InvalidArgument",
         "ID length should not exceed allowed limit of 255"),
        ([{**EXPIRE_1, "NoncurrentVersionExpiration": {"NoncurrentDays": 0}}], 400, "InvalidArgument",
         "'NoncurrentDays' for NoncurrentVersionExpiration action must be a positive integer"),
        ([{**EXPIRE_1, "NoncurrentVersionExpiration": {"NoncurrentDays": 1, "NewerNoncurrentVersions": 101}}],
         400, "InvalidArgument", "'NewerNoncurrentVersions' must not exceed 100"),
        ([{**EXPIRE_1, "Filter": {"Tag": {"Key": "tmp", "Value": "1"}},
           "Expiration": {"ExpiredObjectDeleteMarker": True}}], 400, "InvalidRequest",
         "ExpiredObjectDeleteMarker cannot be specified with Tags."),
        ([{**EXPIRE_1, "Filter": {"And": {"ObjectSizeGreaterThan": 10, "ObjectSizeLessThan": 10}}}], 400,
         "InvalidRequest", "'ObjectSizeLessThan' has to be a value greater than 'ObjectSizeGreaterThan'."),
        ([{**EXPIRE_1, "Filter": {"And": {"Tags": [{"Key": "t", "Value": "1"}, {"Key": "t", "Value": "2"}]}}}
          ], 400, "InvalidRequest", "Duplicate Tag Keys are not allowed."),
    ],
)  # fmt: skip
def test_refusals_in_amazon_s_words(  # type: ignore[no-untyped-def]
    client, bucket: str, rules: list[dict[str, Any]], status: int, code: str, message: str
) -> None:
    got = refusal(
        client.put_bucket_lifecycle_configuration, Bucket=bucket, LifecycleConfiguration={"Rules": rules}
    )
    assert got[:2] == (status, code)
    assert message in got[2] and (not message or got[2] == message)
    assert (
        refusal(client.get_bucket_lifecycle_configuration, Bucket=bucket)[1] == "NoSuchLifecycleConfiguration"
    )


def test_the_legacy_api_and_its_top_level_prefix(client, bucket: str) -> None:  # type: ignore[no-untyped-def]
    """PutBucketLifecycle / GetBucketLifecycle (deprecated, the same `?lifecycle`): a rule's own Prefix."""
    rule = {"ID": "v1", "Prefix": "old/", "Status": "Enabled", "Expiration": {"Days": 2}}
    client.put_bucket_lifecycle(Bucket=bucket, LifecycleConfiguration={"Rules": [rule]})
    assert client.get_bucket_lifecycle(Bucket=bucket)["Rules"] == [rule]
    assert client.get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"][0]["Prefix"] == "old/"


def test_a_legacy_prefix_with_a_space_expires_only_the_keys_it_names(
    s3: S3Endpoint, client, bucket: str
) -> None:  # type: ignore[no-untyped-def]
    """Review R33 F1 through boto3: `Prefix " tmp/"` was stripped to "tmp/", read back so, and the run
    expired "tmp/keep-me" while " tmp/expire-me" stayed."""
    rule = {"ID": "space-tmp", "Prefix": " tmp/", "Status": "Enabled", "Expiration": {"Days": 30}}
    client.put_bucket_lifecycle(Bucket=bucket, LifecycleConfiguration={"Rules": [rule]})
    assert client.get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"][0]["Prefix"] == " tmp/"
    for key in ("tmp/keep-me", " tmp/expire-me"):
        client.put_object(Bucket=bucket, Key=key, Body=b"x")
    assert run_lifecycle(s3, 31).keys_expired == 1
    assert keys(client, bucket) == ["tmp/keep-me"]
    client.delete_bucket_lifecycle(Bucket=bucket)


@pytest.mark.parametrize("and_filter", [{"Tags": []}, {"Prefix": "logs/"}])
def test_an_and_of_fewer_than_two_predicates_is_malformed_xml(
    client, bucket: str, and_filter: dict[str, Any]
) -> None:  # type: ignore[no-untyped-def]
    """Review R33 F4 through boto3: an And from an empty tag list was a rule over the whole bucket."""
    rule = {"ID": "a", "Filter": {"And": and_filter}, "Status": "Enabled", "Expiration": {"Days": 1}}
    got = refusal(
        client.put_bucket_lifecycle_configuration, Bucket=bucket, LifecycleConfiguration={"Rules": [rule]}
    )
    assert got[:2] == (400, "MalformedXML")


def test_more_than_1000_rules_are_refused(client, bucket: str) -> None:  # type: ignore[no-untyped-def]
    rules = [{**EXPIRE_1, "ID": f"r{i}"} for i in range(1001)]
    assert refusal(
        client.put_bucket_lifecycle_configuration, Bucket=bucket, LifecycleConfiguration={"Rules": rules}
    )[:2] == (400, "InvalidRequest")


def test_a_body_digest_is_required(client, bucket: str) -> None:  # type: ignore[no-untyped-def]
    with before_sign(client, "PutBucketLifecycleConfiguration", strip_digests):
        status, code, message = refusal(
            client.put_bucket_lifecycle_configuration,
            Bucket=bucket,
            LifecycleConfiguration={"Rules": [EXPIRE_1]},
        )
    assert (status, code) == (400, "InvalidRequest") and "Content-MD5" in message


def test_only_the_owner_reads_or_changes_it(s3: S3Endpoint, client, bucket: str) -> None:  # type: ignore[no-untyped-def]
    bob = S3Endpoint(s3.cluster, s3.url, *getsecret(s3.cluster, "bob")).boto3()
    put(client, bucket, EXPIRE_1)
    for call, kwargs in (
        (bob.get_bucket_lifecycle_configuration, {}),
        (bob.put_bucket_lifecycle_configuration, {"LifecycleConfiguration": {"Rules": [EXPIRE_1]}}),
        (bob.delete_bucket_lifecycle, {}),
    ):
        assert refusal(call, Bucket=bucket, **kwargs)[:2] == (403, "AccessDenied")
    assert client.get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"][0]["ID"] == "expire"


def test_the_configuration_goes_with_its_bucket(client, bucket: str) -> None:  # type: ignore[no-untyped-def]
    put(client, bucket, EXPIRE_1)
    client.delete_bucket(Bucket=bucket)
    client.create_bucket(Bucket=bucket)
    assert (
        refusal(client.get_bucket_lifecycle_configuration, Bucket=bucket)[1] == "NoSuchLifecycleConfiguration"
    )


def test_lifecycle_on_an_object_is_not_implemented(s3: S3Endpoint, bucket: str) -> None:
    """`?lifecycle` is a bucket's subresource: on a key it is NotImplemented, as before (a signed GET)."""
    request = AWSRequest(method="GET", url=f"{s3.url}/{bucket}/key?lifecycle")
    S3SigV4Auth(Credentials(s3.access_key, s3.secret_key), "s3", REGION).add_auth(request)
    sent = urllib.request.Request(request.url, headers=dict(request.headers.items()), method="GET")
    with pytest.raises(urllib.error.HTTPError) as error:
        urllib.request.urlopen(sent, timeout=30)
    assert error.value.code == 501 and b"<Code>NotImplemented</Code>" in error.value.read()


# ------------------------------------------------------------------ the service
def keys(client, bucket: str) -> list[str]:  # type: ignore[no-untyped-def]
    return [o["Key"] for o in client.list_objects_v2(Bucket=bucket).get("Contents", [])]


def test_the_service_expires_objects_versions_markers_and_uploads(s3: S3Endpoint, client) -> None:  # type: ignore[no-untyped-def]
    plain, versioned = f"lifecycle-{next(_names)}", f"lifecycle-{next(_names)}"
    for name in (plain, versioned):
        client.create_bucket(Bucket=name)
    client.put_bucket_versioning(Bucket=versioned, VersioningConfiguration={"Status": "Enabled"})
    put(
        client, plain,
        {"ID": "logs", "Filter": {"Prefix": "logs/"}, "Status": "Enabled", "Expiration": {"Days": 1}},
        {"ID": "uploads", "Filter": {"Prefix": ""}, "Status": "Enabled",
         "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 1}},
    )  # fmt: skip
    put(
        client, versioned,
        {"ID": "tagged", "Filter": {"Tag": {"Key": "tmp", "Value": "1"}}, "Status": "Enabled",
         "Expiration": {"Days": 1}},
        {"ID": "old", "Filter": {}, "Status": "Enabled",
         "NoncurrentVersionExpiration": {"NoncurrentDays": 1}},
        {"ID": "markers", "Filter": {"Prefix": ""}, "Status": "Enabled",
         "Expiration": {"ExpiredObjectDeleteMarker": True}},
    )  # fmt: skip
    for key in ("logs/a", "logs/b", "data/c"):
        client.put_object(Bucket=plain, Key=key, Body=b"x")
    upload = client.create_multipart_upload(Bucket=plain, Key="big")["UploadId"]
    client.put_object(Bucket=versioned, Key="t", Body=b"1", Tagging="tmp=1")
    client.put_object(Bucket=versioned, Key="k", Body=b"old")
    client.put_object(Bucket=versioned, Key="k", Body=b"new")
    client.put_object(Bucket=versioned, Key="gone", Body=b"v")
    client.delete_object(Bucket=versioned, Key="gone")  # a marker over its version

    assert run_lifecycle(s3, 0) == LifecycleRun()  # nothing is a day old yet
    first = run_lifecycle(s3, 3)
    assert first == LifecycleRun(keys_expired=3, versions_expired=2, uploads_aborted=1)
    assert keys(client, plain) == ["data/c"]
    assert client.list_multipart_uploads(Bucket=plain).get("Uploads", []) == []
    with pytest.raises(ClientError):
        client.list_parts(Bucket=plain, Key="big", UploadId=upload)
    assert keys(client, versioned) == ["k"]
    assert client.get_object(Bucket=versioned, Key="k")["Body"].read() == b"new"
    listed = client.list_object_versions(Bucket=versioned)
    assert [v["Key"] for v in listed.get("Versions", [])] == ["k", "t"]  # t kept under its marker
    assert sorted(m["Key"] for m in listed.get("DeleteMarkers", [])) == ["gone", "t"]
    # "gone"'s marker is alone now: the next run removes it; t's version became noncurrent when the first
    # run put a marker over it, so it goes now, and its marker, then alone, the run after
    assert run_lifecycle(s3, 3) == LifecycleRun(versions_expired=1, markers_removed=1)
    assert run_lifecycle(s3, 3) == LifecycleRun(markers_removed=1)
    listed = client.list_object_versions(Bucket=versioned)
    assert [v["Key"] for v in listed.get("Versions", [])] == ["k"]
    assert listed.get("DeleteMarkers", []) == []


def test_a_missing_bucket_is_no_such_bucket(client) -> None:  # type: ignore[no-untyped-def]
    rules = {"Rules": [EXPIRE_1]}
    for call, named in (
        (client.put_bucket_lifecycle_configuration, {"LifecycleConfiguration": rules}),
        (client.get_bucket_lifecycle_configuration, {}),
        (client.delete_bucket_lifecycle, {}),
    ):
        assert refusal(call, Bucket="no-such-bucket", **named)[:2] == (404, "NoSuchBucket")


def versions_of(client, bucket: str) -> tuple[list[tuple[str, str]], list[tuple[str, str, bool]]]:  # type: ignore[no-untyped-def]
    """(versions as (key, id), markers as (key, id, is latest)) of a bucket."""
    listed = client.list_object_versions(Bucket=bucket)
    return (
        [(v["Key"], v["VersionId"]) for v in listed.get("Versions", [])],
        [(m["Key"], m["VersionId"], m["IsLatest"]) for m in listed.get("DeleteMarkers", [])],
    )


def test_the_service_by_date_size_newer_noncurrent_and_a_suspended_null(s3: S3Endpoint, client) -> None:  # type: ignore[no-untyped-def]
    """An Expiration Date already past expires every current key under its filter at the next run; an
    ObjectSizeGreaterThan filter only the larger key; NewerNoncurrentVersions 1 keeps the newest noncurrent
    version; in a Suspended bucket the expired `null` version gives way to a `null` delete marker
    ("Lifecycle configuration elements", "Managing objects in a versioning-suspended bucket")."""
    plain, versioned, suspended = (f"lifecycle-{next(_names)}" for _ in range(3))
    for name in (plain, versioned, suspended):
        client.create_bucket(Bucket=name)
    put(
        client, plain,
        {"ID": "dated", "Filter": {"Prefix": "old/"}, "Status": "Enabled",
         "Expiration": {"Date": datetime(2020, 1, 1, tzinfo=UTC)}},
        {"ID": "large", "Filter": {"ObjectSizeGreaterThan": 10}, "Status": "Enabled",
         "Expiration": {"Days": 1}},
    )  # fmt: skip
    for key, size in (("old/a", 1), ("old/b", 1), ("small", 5), ("large", 20)):
        client.put_object(Bucket=plain, Key=key, Body=b"x" * size)
    client.put_bucket_versioning(Bucket=versioned, VersioningConfiguration={"Status": "Enabled"})
    newer = {"NoncurrentDays": 1, "NewerNoncurrentVersions": 1}
    put(
        client,
        versioned,
        {"ID": "newer", "Filter": {}, "Status": "Enabled", "NoncurrentVersionExpiration": newer},
    )
    ids = [client.put_object(Bucket=versioned, Key="k", Body=b"%d" % n)["VersionId"] for n in range(3)]
    client.put_bucket_versioning(Bucket=suspended, VersioningConfiguration={"Status": "Enabled"})
    kept = client.put_object(Bucket=suspended, Key="k", Body=b"versioned")["VersionId"]
    client.put_bucket_versioning(Bucket=suspended, VersioningConfiguration={"Status": "Suspended"})
    assert client.put_object(Bucket=suspended, Key="k", Body=b"null").get("VersionId", "null") == "null"
    put(client, suspended, EXPIRE_1)

    run_lifecycle(s3, 0)
    assert keys(client, plain) == ["large", "small"]  # the date has passed; a day has not
    run_lifecycle(s3, 3)
    assert keys(client, plain) == ["small"]
    assert versions_of(client, versioned) == ([("k", ids[2]), ("k", ids[1])], [])
    assert versions_of(client, suspended) == ([("k", kept)], [("k", "null", True)])
