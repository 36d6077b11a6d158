"""S3 Object Lock through the gateway of a live cluster (issue 33, item 6), tested from Amazon's reference
("Locking objects with Object Lock", PutObjectLockConfiguration, GetObjectLockConfiguration,
PutObjectRetention, GetObjectRetention, PutObjectLegalHold, GetObjectLegalHold, PutObject's
x-amz-object-lock-* headers, x-amz-bypass-governance-retention): every operation with its errors, data
kept through deletes and overwrites, CopyObject and a multipart upload getting their own retention,
delete markers and unknown versions, writes without a body digest, out-of-range values, and OM's
enforcement reaching a native `pyozone sh key delete`."""

from __future__ import annotations

import datetime
import itertools
from collections.abc import Iterator
from typing import Any

import pytest
from botocore import xform_name
from botocore.exceptions import ClientError

from tests.e2e.cluster.s3_cluster import S3Endpoint, s3_cluster
from tests.e2e.cluster.s3_raw import before_sign, strip_digests

_names = itertools.count()
DAY = datetime.timedelta(days=1)
PART = 5 * 1024 * 1024


@pytest.fixture(scope="module")
def s3(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Endpoint]:
    with s3_cluster(request, tmp_path_factory, "s3-object-lock") as endpoint:
        yield endpoint


@pytest.fixture(scope="module")
def client(s3: S3Endpoint):  # type: ignore[no-untyped-def]
    return s3.boto3()


@pytest.fixture
def bucket(client) -> str:  # type: ignore[no-untyped-def]
    """A new bucket created with Object Lock."""
    name = f"locked-{next(_names)}"
    client.create_bucket(Bucket=name, ObjectLockEnabledForBucket=True)
    return name


def refusal(call: Any, **kwargs: Any) -> tuple[int, str]:
    with pytest.raises(ClientError) as e:
        call(**kwargs)
    return e.value.response["ResponseMetadata"]["HTTPStatusCode"], e.value.response["Error"]["Code"]


def until(days: float = 1) -> datetime.datetime:
    return (datetime.datetime.now(datetime.UTC) + days * DAY).replace(microsecond=0)


def body(client, bucket: str, key: str, version: str) -> bytes:  # type: ignore[no-untyped-def]
    return client.get_object(Bucket=bucket, Key=key, VersionId=version)["Body"].read()


def test_create_bucket_with_object_lock_and_its_configuration(client, bucket: str) -> None:  # type: ignore[no-untyped-def]
    assert client.get_bucket_versioning(Bucket=bucket)["Status"] == "Enabled"
    assert refusal(
        client.put_bucket_versioning, Bucket=bucket, VersioningConfiguration={"Status": "Suspended"}
    ) == (409, "InvalidBucketState")
    config = {
        "ObjectLockEnabled": "Enabled",
        "Rule": {"DefaultRetention": {"Mode": "COMPLIANCE", "Years": 1}},
    }
    client.put_object_lock_configuration(Bucket=bucket, ObjectLockConfiguration=config)
    assert client.get_object_lock_configuration(Bucket=bucket)["ObjectLockConfiguration"] == config
    for wrong in (
        {
            "ObjectLockEnabled": "Enabled",
            "Rule": {"DefaultRetention": {"Mode": "COMPLIANCE", "Days": 1, "Years": 1}},
        },
        {"ObjectLockEnabled": "Enabled", "Rule": {"DefaultRetention": {"Mode": "COMPLIANCE"}}},
    ):
        assert refusal(
            client.put_object_lock_configuration, Bucket=bucket, ObjectLockConfiguration=wrong
        ) == (
            400,
            "MalformedXML",
        )
    negative = {
        "ObjectLockEnabled": "Enabled",
        "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": -1}},
    }
    assert refusal(client.put_object_lock_configuration, Bucket=bucket, ObjectLockConfiguration=negative) == (
        400,
        "InvalidArgument",
    )
    client.create_bucket(Bucket=f"{bucket}-plain")
    assert refusal(client.get_object_lock_configuration, Bucket=f"{bucket}-plain") == (
        404,
        "ObjectLockConfigurationNotFoundError",
    )
    assert refusal(
        client.put_object_lock_configuration, Bucket=f"{bucket}-plain", ObjectLockConfiguration=config
    ) == (409, "InvalidBucketState")


def test_default_retention_applies_to_a_put_naming_none(client, bucket: str) -> None:  # type: ignore[no-untyped-def]
    config = {"ObjectLockEnabled": "Enabled", "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 2}}}
    client.put_object_lock_configuration(Bucket=bucket, ObjectLockConfiguration=config)
    put = client.put_object(Bucket=bucket, Key="k", Body=b"data")
    head = client.head_object(Bucket=bucket, Key="k")
    assert head["ObjectLockMode"] == "GOVERNANCE"
    expected = head["LastModified"] + 2 * DAY
    assert abs((head["ObjectLockRetainUntilDate"] - expected).total_seconds()) < 2
    assert refusal(client.delete_object, Bucket=bucket, Key="k", VersionId=put["VersionId"]) == (
        403,
        "AccessDenied",
    )


def test_a_compliance_version_survives_deletes_overwrites_and_the_bypass(client, bucket: str) -> None:  # type: ignore[no-untyped-def]
    put = client.put_object(
        Bucket=bucket, Key="k", Body=b"kept", ObjectLockMode="COMPLIANCE", ObjectLockRetainUntilDate=until()
    )
    version = put["VersionId"]
    client.put_object(Bucket=bucket, Key="k", Body=b"newer")  # an overwrite: a new version
    marker = client.delete_object(Bucket=bucket, Key="k")  # a delete marker
    assert marker["DeleteMarker"] is True
    for bypass in (False, True):
        assert refusal(
            client.delete_object, Bucket=bucket, Key="k", VersionId=version, BypassGovernanceRetention=bypass
        ) == (403, "AccessDenied")
    errors = client.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "k", "VersionId": version}]})[
        "Errors"
    ]
    assert [(e["Key"], e["Code"]) for e in errors] == [("k", "AccessDenied")]
    assert body(client, bucket, "k", version) == b"kept"
    shorter = {"Mode": "COMPLIANCE", "RetainUntilDate": until(0.5)}
    assert refusal(
        client.put_object_retention, Bucket=bucket, Key="k", VersionId=version, Retention=shorter,
        BypassGovernanceRetention=True,
    ) == (403, "AccessDenied")  # fmt: skip
    longer = {"Mode": "COMPLIANCE", "RetainUntilDate": until(2)}
    client.put_object_retention(Bucket=bucket, Key="k", VersionId=version, Retention=longer)
    assert client.get_object_retention(Bucket=bucket, Key="k", VersionId=version)["Retention"] == longer
    assert refusal(client.delete_bucket, Bucket=bucket) == (409, "BucketNotEmpty")


def test_governance_yields_to_the_owner_s_bypass(client, bucket: str) -> None:  # type: ignore[no-untyped-def]
    version = client.put_object(
        Bucket=bucket, Key="g", Body=b"x", ObjectLockMode="GOVERNANCE", ObjectLockRetainUntilDate=until()
    )["VersionId"]
    assert refusal(client.delete_object, Bucket=bucket, Key="g", VersionId=version) == (403, "AccessDenied")
    shorter = {"Mode": "GOVERNANCE", "RetainUntilDate": until(0.5)}
    assert refusal(
        client.put_object_retention, Bucket=bucket, Key="g", VersionId=version, Retention=shorter
    ) == (
        403,
        "AccessDenied",
    )
    client.put_object_retention(
        Bucket=bucket, Key="g", VersionId=version, Retention=shorter, BypassGovernanceRetention=True
    )
    deleted = client.delete_objects(
        Bucket=bucket,
        Delete={"Objects": [{"Key": "g", "VersionId": version}]},
        BypassGovernanceRetention=True,
    )
    assert [d["VersionId"] for d in deleted["Deleted"]] == [version]


def test_legal_hold(client, bucket: str) -> None:  # type: ignore[no-untyped-def]
    version = client.put_object(Bucket=bucket, Key="h", Body=b"x", ObjectLockLegalHoldStatus="ON")[
        "VersionId"
    ]
    assert client.head_object(Bucket=bucket, Key="h")["ObjectLockLegalHoldStatus"] == "ON"
    bypass = {"Bucket": bucket, "Key": "h", "VersionId": version, "BypassGovernanceRetention": True}
    assert refusal(client.delete_object, **bypass) == (403, "AccessDenied")
    client.put_object_legal_hold(Bucket=bucket, Key="h", VersionId=version, LegalHold={"Status": "OFF"})
    assert client.get_object_legal_hold(Bucket=bucket, Key="h", VersionId=version)["LegalHold"] == {
        "Status": "OFF"
    }
    client.delete_object(Bucket=bucket, Key="h", VersionId=version)
    plain = client.put_object(Bucket=bucket, Key="p", Body=b"x")["VersionId"]
    assert refusal(client.get_object_legal_hold, Bucket=bucket, Key="p", VersionId=plain) == (
        404,
        "NoSuchObjectLockConfiguration",
    )
    assert refusal(client.get_object_retention, Bucket=bucket, Key="p", VersionId=plain) == (
        404,
        "NoSuchObjectLockConfiguration",
    )
    assert refusal(client.put_object_legal_hold, Bucket=bucket, Key="p", LegalHold={"Status": "MAYBE"}) == (
        400,
        "MalformedXML",
    )


def test_write_header_errors(client, bucket: str) -> None:  # type: ignore[no-untyped-def]
    past = until(-1)
    assert refusal(
        client.put_object,
        Bucket=bucket,
        Key="x",
        Body=b"x",
        ObjectLockMode="GOVERNANCE",
        ObjectLockRetainUntilDate=past,
    ) == (400, "InvalidArgument")
    assert refusal(
        client.put_object, Bucket=bucket, Key="x", Body=b"x", ObjectLockRetainUntilDate=until()
    ) == (
        400,
        "InvalidArgument",
    )
    client.create_bucket(Bucket=f"{bucket}-plain")
    lock = {"ObjectLockMode": "GOVERNANCE", "ObjectLockRetainUntilDate": until()}
    assert refusal(client.put_object, Bucket=f"{bucket}-plain", Key="x", Body=b"x", **lock) == (
        400,
        "InvalidRequest",
    )
    client.put_object(Bucket=f"{bucket}-plain", Key="x", Body=b"x")
    assert refusal(
        client.put_object_retention,
        Bucket=f"{bucket}-plain",
        Key="x",
        Retention={"Mode": "GOVERNANCE", "RetainUntilDate": until()},
    ) == (400, "InvalidRequest")


def test_copy_and_multipart_upload_get_their_own_retention(client, bucket: str) -> None:  # type: ignore[no-untyped-def]
    source = client.put_object(
        Bucket=bucket, Key="src", Body=b"s", ObjectLockMode="COMPLIANCE", ObjectLockRetainUntilDate=until()
    )
    copied = {"Bucket": bucket, "Key": "src", "VersionId": source["VersionId"]}
    copy = client.copy_object(Bucket=bucket, Key="dst", CopySource=copied, ObjectLockLegalHoldStatus="ON")
    head = client.head_object(Bucket=bucket, Key="dst", VersionId=copy["VersionId"])
    assert head["ObjectLockLegalHoldStatus"] == "ON" and "ObjectLockMode" not in head  # not the source's
    retained = until(3)
    upload = client.create_multipart_upload(
        Bucket=bucket, Key="mp", ObjectLockMode="GOVERNANCE", ObjectLockRetainUntilDate=retained
    )
    part = client.upload_part(
        Bucket=bucket, Key="mp", UploadId=upload["UploadId"], PartNumber=1, Body=b"p" * PART
    )
    done = client.complete_multipart_upload(
        Bucket=bucket, Key="mp", UploadId=upload["UploadId"],
        MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]},
    )  # fmt: skip
    retention = client.get_object_retention(Bucket=bucket, Key="mp", VersionId=done["VersionId"])["Retention"]
    assert retention == {"Mode": "GOVERNANCE", "RetainUntilDate": retained}
    assert refusal(client.delete_object, Bucket=bucket, Key="mp", VersionId=done["VersionId"]) == (
        403,
        "AccessDenied",
    )


def test_a_native_delete_of_a_locked_key_keeps_its_data(s3: S3Endpoint, client, bucket: str) -> None:  # type: ignore[no-untyped-def]
    """OM enforces the lock: `pyozone sh key delete` (no version) adds a delete marker; the version stays."""
    version = client.put_object(
        Bucket=bucket, Key="native", Body=b"n", ObjectLockMode="COMPLIANCE", ObjectLockRetainUntilDate=until()
    )["VersionId"]
    result = s3.cluster.pyozone(
        "sh", "key", "delete", f"/s3v/{bucket}/native", "--conf", str(s3.cluster.conf_dir)
    )
    assert result.code == 0, result
    listed = client.list_object_versions(Bucket=bucket, Prefix="native")
    assert [m["IsLatest"] for m in listed["DeleteMarkers"]] == [True]
    assert body(client, bucket, "native", version) == b"n"


# ------------------------------------------------------------------ markers, unknown versions, digests, edges
LOCK_READS_AND_WRITES = {
    "get_object_retention": {},
    "put_object_retention": {"Retention": {"Mode": "GOVERNANCE", "RetainUntilDate": until(2)}},
    "get_object_legal_hold": {},
    "put_object_legal_hold": {"LegalHold": {"Status": "ON"}},
}


@pytest.mark.parametrize("operation", LOCK_READS_AND_WRITES)
def test_a_marker_or_an_unknown_version_has_no_lock(client, bucket: str, operation: str) -> None:  # type: ignore[no-untyped-def]
    """Retention and legal hold name a version: a delete marker's is MethodNotAllowed, the latest (a marker)
    NoSuchKey, a version the key never had NoSuchVersion (Amazon's DeleteMarker and versionId errors)."""
    version = client.put_object(Bucket=bucket, Key="k", Body=b"x")["VersionId"]
    marker = client.delete_object(Bucket=bucket, Key="k")["VersionId"]
    call = getattr(client, operation)
    named = {"Bucket": bucket, "Key": "k", **LOCK_READS_AND_WRITES[operation]}
    assert refusal(call, VersionId=marker, **named) == (405, "MethodNotAllowed")
    assert refusal(call, **named) == (404, "NoSuchKey")
    assert refusal(call, VersionId="00000000000000ff", **named) == (404, "NoSuchVersion")
    assert "ObjectLockMode" not in client.head_object(Bucket=bucket, Key="k", VersionId=version)


def without_digests(client, operation: str, **kwargs: Any) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    with before_sign(client, operation, strip_digests), pytest.raises(ClientError) as e:
        getattr(client, xform_name(operation))(**kwargs)
    error = e.value.response
    return error["ResponseMetadata"]["HTTPStatusCode"], error["Error"]["Code"], error["Error"]["Message"]


def test_lock_writes_require_a_body_digest(client, bucket: str) -> None:  # type: ignore[no-untyped-def]
    """PutObjectRetention, PutObjectLegalHold and PutObjectLockConfiguration require Content-MD5 or a
    checksum (each reference: "Content-MD5 ... is required for any request to upload an object with a
    retention period"; botocore's httpChecksumRequired); without one nothing changes."""
    version = client.put_object(Bucket=bucket, Key="d", Body=b"x")["VersionId"]
    missing = (
        400,
        "InvalidRequest",
        "Missing required header for this request: Content-MD5 OR x-amz-checksum-*",
    )
    named = {"Bucket": bucket, "Key": "d", "VersionId": version}
    retention = {"Mode": "GOVERNANCE", "RetainUntilDate": until()}
    assert without_digests(client, "PutObjectRetention", Retention=retention, **named) == missing
    assert without_digests(client, "PutObjectLegalHold", LegalHold={"Status": "ON"}, **named) == missing
    rule = {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 1}}
    configuration = {"ObjectLockEnabled": "Enabled", "Rule": rule}
    assert without_digests(
        client, "PutObjectLockConfiguration", Bucket=bucket, ObjectLockConfiguration=configuration
    ) == missing  # fmt: skip
    head = client.head_object(**named)
    assert "ObjectLockMode" not in head and "ObjectLockLegalHoldStatus" not in head
    assert "Rule" not in client.get_object_lock_configuration(Bucket=bucket)["ObjectLockConfiguration"]


def test_lock_value_edges(client, bucket: str) -> None:  # type: ignore[no-untyped-def]
    """A legal hold other than ON or OFF on PutObject, a default retention over 100 years, a retention
    date in the past: InvalidArgument each, nothing stored or changed."""

    def maybe(request: Any, **_: Any) -> None:
        request.headers["x-amz-object-lock-legal-hold"] = "MAYBE"

    client.meta.events.register("before-sign.s3.PutObject", maybe)
    try:
        assert refusal(client.put_object, Bucket=bucket, Key="maybe", Body=b"x") == (400, "InvalidArgument")
    finally:
        client.meta.events.unregister("before-sign.s3.PutObject", maybe)
    assert client.list_object_versions(Bucket=bucket).get("Versions", []) == []
    centuries = {
        "ObjectLockEnabled": "Enabled",
        "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Years": 101}},
    }
    put_configuration = client.put_object_lock_configuration
    assert refusal(put_configuration, Bucket=bucket, ObjectLockConfiguration=centuries) == (
        400,
        "InvalidArgument",
    )
    assert "Rule" not in client.get_object_lock_configuration(Bucket=bucket)["ObjectLockConfiguration"]
    version = client.put_object(Bucket=bucket, Key="late", Body=b"x")["VersionId"]
    past = {"Mode": "GOVERNANCE", "RetainUntilDate": until(-1)}
    assert refusal(
        client.put_object_retention, Bucket=bucket, Key="late", VersionId=version, Retention=past
    ) == (400, "InvalidArgument")  # fmt: skip
    assert "ObjectLockMode" not in client.head_object(Bucket=bucket, Key="late", VersionId=version)
