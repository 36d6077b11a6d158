"""S3 Object Lock through the gateway with boto3 (issue 33, item 6), each operation and its Amazon errors
(Amazon's PutObjectLockConfiguration, PutObjectRetention, PutObjectLegalHold and their Get calls, PutObject's
x-amz-object-lock-* headers, DeleteObject's x-amz-bypass-governance-retention). Empty objects: the OM here
has no datanodes (the e2e test writes data)."""

from __future__ import annotations

import base64
import datetime
import hashlib
import json
from dataclasses import replace

import pytest

from pyozone.hdds.s3_object_lock import Retention, RetentionMode
from pyozone.om.object_lock import ObjectLocks
from tests.unit.s3g.gateway_thread import GatewayOnThread, refused

LOCKED = "worm"
PLAIN = "plain-bucket"
DAY = datetime.timedelta(days=1)


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


@pytest.fixture(scope="module")
def s3(gateway: GatewayOnThread):  # type: ignore[no-untyped-def]
    client = gateway.boto3()
    client.create_bucket(Bucket=LOCKED, ObjectLockEnabledForBucket=True)
    client.create_bucket(Bucket=PLAIN)
    return client


def test_a_bucket_created_with_object_lock_is_versioned_for_good(s3) -> None:  # type: ignore[no-untyped-def]
    assert s3.get_bucket_versioning(Bucket=LOCKED)["Status"] == "Enabled"
    assert s3.get_object_lock_configuration(Bucket=LOCKED)["ObjectLockConfiguration"] == {
        "ObjectLockEnabled": "Enabled"
    }
    suspend = {"Bucket": LOCKED, "VersioningConfiguration": {"Status": "Suspended"}}
    assert refused(s3.put_bucket_versioning, **suspend) == (409, "InvalidBucketState")
    assert refused(s3.get_object_lock_configuration, Bucket=PLAIN) == (
        404,
        "ObjectLockConfigurationNotFoundError",
    )


def test_put_object_lock_configuration_and_its_errors(s3) -> None:  # type: ignore[no-untyped-def]
    rule = {"ObjectLockEnabled": "Enabled", "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 1}}}
    s3.put_object_lock_configuration(Bucket=LOCKED, ObjectLockConfiguration=rule)
    assert s3.get_object_lock_configuration(Bucket=LOCKED)["ObjectLockConfiguration"] == rule
    both = {
        "ObjectLockEnabled": "Enabled",
        "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 1, "Years": 1}},
    }
    assert refused(s3.put_object_lock_configuration, Bucket=LOCKED, ObjectLockConfiguration=both) == (
        400,
        "MalformedXML",
    )
    zero = {"ObjectLockEnabled": "Enabled", "Rule": {"DefaultRetention": {"Mode": "COMPLIANCE", "Days": 0}}}
    assert refused(s3.put_object_lock_configuration, Bucket=LOCKED, ObjectLockConfiguration=zero) == (
        400,
        "InvalidArgument",
    )
    assert refused(s3.put_object_lock_configuration, Bucket=PLAIN, ObjectLockConfiguration=rule) == (
        409,
        "InvalidBucketState",
    )
    s3.put_object_lock_configuration(Bucket=LOCKED, ObjectLockConfiguration={"ObjectLockEnabled": "Enabled"})


def test_put_object_lock_configuration_needs_a_digest(gateway: GatewayOnThread, s3) -> None:  # type: ignore[no-untyped-def]
    body = (
        b"<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled></ObjectLockConfiguration>"
    )
    status, text = gateway.signed_request("PUT", f"/{LOCKED}?object-lock", body)
    assert status == 400 and "<Code>InvalidRequest</Code>" in text


def test_a_versioned_bucket_may_get_object_lock(s3) -> None:  # type: ignore[no-untyped-def]
    s3.create_bucket(Bucket="later")
    s3.put_bucket_versioning(Bucket="later", VersioningConfiguration={"Status": "Enabled"})
    s3.put_object_lock_configuration(Bucket="later", ObjectLockConfiguration={"ObjectLockEnabled": "Enabled"})
    assert s3.get_object_lock_configuration(Bucket="later")["ObjectLockConfiguration"][
        "ObjectLockEnabled"
    ] == ("Enabled")


def test_a_write_s_lock_headers_are_kept_and_answered(s3) -> None:  # type: ignore[no-untyped-def]
    until = (_now() + DAY).replace(microsecond=0)
    put = s3.put_object(
        Bucket=LOCKED, Key="k", Body=b"", ObjectLockMode="COMPLIANCE", ObjectLockRetainUntilDate=until,
        ObjectLockLegalHoldStatus="ON",
    )  # fmt: skip
    head = s3.head_object(Bucket=LOCKED, Key="k", VersionId=put["VersionId"])
    assert head["ObjectLockMode"] == "COMPLIANCE"
    assert head["ObjectLockRetainUntilDate"] == until
    assert head["ObjectLockLegalHoldStatus"] == "ON"
    assert "x-amz-meta-" not in str(head["Metadata"])
    retention = s3.get_object_retention(Bucket=LOCKED, Key="k", VersionId=put["VersionId"])["Retention"]
    assert retention == {"Mode": "COMPLIANCE", "RetainUntilDate": until}
    assert s3.get_object_legal_hold(Bucket=LOCKED, Key="k")["LegalHold"] == {"Status": "ON"}


def test_write_header_errors(s3) -> None:  # type: ignore[no-untyped-def]
    past = _now() - DAY
    assert refused(
        s3.put_object,
        Bucket=LOCKED,
        Key="p",
        Body=b"",
        ObjectLockMode="GOVERNANCE",
        ObjectLockRetainUntilDate=past,
    ) == (400, "InvalidArgument")
    assert refused(s3.put_object, Bucket=LOCKED, Key="p", Body=b"", ObjectLockMode="GOVERNANCE") == (
        400,
        "InvalidArgument",
    )
    assert refused(s3.put_object, Bucket=PLAIN, Key="p", Body=b"", ObjectLockLegalHoldStatus="ON") == (
        400,
        "InvalidRequest",
    )
    upload = {"ObjectLockMode": "GOVERNANCE", "ObjectLockRetainUntilDate": _now() + DAY}
    assert refused(s3.create_multipart_upload, Bucket=PLAIN, Key="p", **upload) == (400, "InvalidRequest")
    s3.create_multipart_upload(Bucket=LOCKED, Key="mp", **upload)


def test_a_locked_version_is_refused_by_version_and_governance_yields_to_the_bypass(s3) -> None:  # type: ignore[no-untyped-def]
    until = _now() + DAY
    gov = s3.put_object(
        Bucket=LOCKED, Key="g", Body=b"", ObjectLockMode="GOVERNANCE", ObjectLockRetainUntilDate=until
    )["VersionId"]
    assert refused(s3.delete_object, Bucket=LOCKED, Key="g", VersionId=gov) == (403, "AccessDenied")
    marker = s3.delete_object(Bucket=LOCKED, Key="g")  # a delete marker: allowed, the data kept
    assert marker["DeleteMarker"] is True
    result = s3.delete_objects(Bucket=LOCKED, Delete={"Objects": [{"Key": "g", "VersionId": gov}]})
    assert result["Errors"][0]["Code"] == "AccessDenied"
    s3.delete_object(Bucket=LOCKED, Key="g", VersionId=gov, BypassGovernanceRetention=True)
    comp = s3.put_object(
        Bucket=LOCKED, Key="c", Body=b"", ObjectLockMode="COMPLIANCE", ObjectLockRetainUntilDate=until
    )["VersionId"]
    bypass = {"Bucket": LOCKED, "Key": "c", "VersionId": comp, "BypassGovernanceRetention": True}
    assert refused(s3.delete_object, **bypass) == (403, "AccessDenied")


def test_retention_and_legal_hold_changes(s3) -> None:  # type: ignore[no-untyped-def]
    until = (_now() + DAY).replace(microsecond=0)
    vid = s3.put_object(Bucket=LOCKED, Key="r", Body=b"")["VersionId"]
    assert refused(s3.get_object_retention, Bucket=LOCKED, Key="r") == (404, "NoSuchObjectLockConfiguration")
    assert refused(s3.get_object_legal_hold, Bucket=LOCKED, Key="r") == (404, "NoSuchObjectLockConfiguration")
    s3.put_object_retention(
        Bucket=LOCKED, Key="r", VersionId=vid, Retention={"Mode": "GOVERNANCE", "RetainUntilDate": until}
    )
    shorter = {"Mode": "GOVERNANCE", "RetainUntilDate": until - datetime.timedelta(hours=1)}
    assert refused(s3.put_object_retention, Bucket=LOCKED, Key="r", Retention=shorter) == (
        403,
        "AccessDenied",
    )
    s3.put_object_retention(Bucket=LOCKED, Key="r", Retention=shorter, BypassGovernanceRetention=True)
    assert (
        s3.get_object_retention(Bucket=LOCKED, Key="r")["Retention"]["RetainUntilDate"]
        == shorter["RetainUntilDate"]
    )
    past = {"Mode": "GOVERNANCE", "RetainUntilDate": _now() - DAY}
    assert refused(s3.put_object_retention, Bucket=LOCKED, Key="r", Retention=past) == (
        400,
        "InvalidArgument",
    )
    s3.put_object_legal_hold(Bucket=LOCKED, Key="r", LegalHold={"Status": "OFF"})
    assert s3.get_object_legal_hold(Bucket=LOCKED, Key="r")["LegalHold"] == {"Status": "OFF"}
    s3.put_object(Bucket=PLAIN, Key="r", Body=b"")
    assert refused(s3.put_object_legal_hold, Bucket=PLAIN, Key="r", LegalHold={"Status": "ON"}) == (
        400,
        "InvalidRequest",
    )
    assert refused(s3.get_object_retention, Bucket=PLAIN, Key="r") == (400, "InvalidRequest")
    assert refused(
        s3.put_object_retention, Bucket=LOCKED, Key="r", VersionId="00000000000000ff", Retention=past
    )[1] in ("InvalidArgument", "NoSuchVersion")


def test_the_bypass_follows_the_bucket_policy(gateway: GatewayOnThread, s3) -> None:  # type: ignore[no-untyped-def]
    """s3:BypassGovernanceRetention: a policy's Deny takes it from the owner; its Allow gives it to another
    user (whose request then runs as the owner, this OM having no ACLs)."""
    bucket = "bypass-policy"
    s3.create_bucket(Bucket=bucket, ObjectLockEnabledForBucket=True)
    lock = {"ObjectLockMode": "GOVERNANCE", "ObjectLockRetainUntilDate": _now() + DAY}
    first = s3.put_object(Bucket=bucket, Key="k", Body=b"", **lock)["VersionId"]
    second = s3.put_object(Bucket=bucket, Key="k", Body=b"", **lock)["VersionId"]
    arn = f"arn:aws:s3:::{bucket}/*"
    deny = {
        "Effect": "Deny",
        "Principal": {"AWS": ["tester"]},
        "Action": "s3:BypassGovernanceRetention",
        "Resource": arn,
    }
    allow = {"Effect": "Allow", "Principal": {"AWS": ["dave"]}, "Action": ["s3:DeleteObjectVersion",
             "s3:BypassGovernanceRetention"], "Resource": arn}  # fmt: skip
    s3.put_bucket_policy(
        Bucket=bucket, Policy=json.dumps({"Version": "2012-10-17", "Statement": [deny, allow]})
    )
    bypass = {"Bucket": bucket, "Key": "k", "BypassGovernanceRetention": True}
    assert refused(s3.delete_object, VersionId=first, **bypass) == (403, "AccessDenied")
    dave = gateway.boto3("dave")
    dave.delete_object(VersionId=first, **bypass)
    assert refused(dave.delete_object, Bucket=bucket, Key="k", VersionId=second) == (403, "AccessDenied")


def _md5(body: bytes) -> dict[str, str]:
    return {"Content-MD5": base64.b64encode(hashlib.md5(body).digest()).decode()}


def test_a_date_past_9999_is_refused_and_a_kept_one_never_fails_a_read(gateway: GatewayOnThread, s3) -> None:  # type: ignore[no-untyped-def]
    """R35's F2 (fails before its fix): 9999-12-31T23:59:59-23:59 is year 10000 in UTC: refused on
    PutObject and PutObjectRetention; a version that kept such a date (before the fix) still answers
    HEAD, GET and GetObjectRetention, with the latest date there is."""
    until = "9999-12-31T23:59:59-23:59"
    lock = {"x-amz-object-lock-mode": "COMPLIANCE", "x-amz-object-lock-retain-until-date": until}
    status, text = gateway.signed_request("PUT", f"/{LOCKED}/y10k", b"", lock | _md5(b""))
    assert status == 400 and "<Code>InvalidArgument</Code>" in text
    vid = s3.put_object(Bucket=LOCKED, Key="y10k", Body=b"")["VersionId"]
    body = (
        b"<Retention><Mode>COMPLIANCE</Mode><RetainUntilDate>"
        + until.encode()
        + b"</RetainUntilDate></Retention>"
    )
    status, text = gateway.signed_request(
        "PUT", f"/{LOCKED}/y10k?retention&versionId={vid}", body, _md5(body)
    )
    assert status == 400 and "<Code>InvalidArgument</Code>" in text
    assert gateway.om.core is not None
    ObjectLocks(gateway.om.core)._change(  # as a version kept before the fix
        "s3v",
        LOCKED,
        "y10k",
        vid,
        lambda record: replace(record, retention=Retention(RetentionMode.COMPLIANCE, 253_402_387_139_000)),
    )
    latest = datetime.datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=datetime.UTC)
    assert s3.head_object(Bucket=LOCKED, Key="y10k", VersionId=vid)["ObjectLockRetainUntilDate"] == latest
    assert s3.get_object(Bucket=LOCKED, Key="y10k")["Body"].read() == b""
    retention = s3.get_object_retention(Bucket=LOCKED, Key="y10k", VersionId=vid)["Retention"]
    assert retention == {"Mode": "COMPLIANCE", "RetainUntilDate": latest}


def test_a_put_with_lock_headers_needs_a_digest(gateway: GatewayOnThread, s3) -> None:  # type: ignore[no-untyped-def]
    """R35's F4 (fails before its fix): Amazon's InvalidRequest for a PutObject with Object Lock parameters
    and neither Content-MD5 nor a checksum; with Content-MD5 it is stored."""
    until = (_now() + DAY).strftime("%Y-%m-%dT%H:%M:%SZ")
    for lock in (
        {"x-amz-object-lock-mode": "GOVERNANCE", "x-amz-object-lock-retain-until-date": until},
        {"x-amz-object-lock-legal-hold": "ON"},
    ):
        status, text = gateway.signed_request("PUT", f"/{LOCKED}/no-digest", b"", lock)
        assert status == 400 and "<Code>InvalidRequest</Code>" in text
        assert "required for Put Object requests with Object Lock parameters" in text
        assert gateway.signed_request("PUT", f"/{LOCKED}/no-digest", b"", lock | _md5(b""))[0] == 200
    status, _ = gateway.signed_request("PUT", f"/{LOCKED}/no-digest", b"")
    assert status == 200  # no lock parameters: no digest needed


def test_a_write_s_lock_headers_follow_the_bucket_policy(gateway: GatewayOnThread, s3) -> None:  # type: ignore[no-untyped-def]
    """R35's F3 (fails before its fix): a policy's Deny of s3:PutObjectRetention / s3:PutObjectLegalHold
    refuses PutObject, CopyObject and CreateMultipartUpload that set them, not only the Put*Retention
    calls; the same writes without lock headers stay allowed."""
    bucket = "deny-locks"
    s3.create_bucket(Bucket=bucket, ObjectLockEnabledForBucket=True)
    s3.put_object(Bucket=bucket, Key="src", Body=b"")
    deny = {"Effect": "Deny", "Principal": "*", "Action": ["s3:PutObjectRetention", "s3:PutObjectLegalHold"],
            "Resource": f"arn:aws:s3:::{bucket}/*"}  # fmt: skip
    s3.put_bucket_policy(Bucket=bucket, Policy=json.dumps({"Version": "2012-10-17", "Statement": [deny]}))
    retention = {"ObjectLockMode": "COMPLIANCE", "ObjectLockRetainUntilDate": _now() + DAY}
    hold = {"ObjectLockLegalHoldStatus": "ON"}
    source = {"CopySource": {"Bucket": bucket, "Key": "src"}}
    for lock in (retention, hold):
        assert refused(s3.put_object, Bucket=bucket, Key="p", Body=b"", **lock) == (403, "AccessDenied")
        assert refused(s3.copy_object, Bucket=bucket, Key="c", **source, **lock) == (403, "AccessDenied")
        assert refused(s3.create_multipart_upload, Bucket=bucket, Key="m", **lock) == (403, "AccessDenied")
    s3.put_object(Bucket=bucket, Key="p", Body=b"")
    s3.copy_object(Bucket=bucket, Key="c", **source)
    s3.create_multipart_upload(Bucket=bucket, Key="m")


def test_recreating_one_s_bucket_with_object_lock_it_lacks_is_refused(s3) -> None:  # type: ignore[no-untyped-def]
    """R35's F5 (fails before its fix): 200 would promise Object Lock the bucket has not; a plain re-create
    stays 200 (us-east-1), and so does re-creating a bucket that has it."""
    assert refused(s3.create_bucket, Bucket=PLAIN, ObjectLockEnabledForBucket=True) == (
        409,
        "InvalidBucketState",
    )
    assert "Status" not in s3.get_bucket_versioning(Bucket=PLAIN)
    assert (
        refused(s3.get_object_lock_configuration, Bucket=PLAIN)[1] == "ObjectLockConfigurationNotFoundError"
    )
    s3.create_bucket(Bucket=PLAIN)
    s3.create_bucket(Bucket=LOCKED, ObjectLockEnabledForBucket=True)
