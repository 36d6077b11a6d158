"""S3 listings through boto3 (issue 28 defects 13, 7 and 14): ListObjectVersions of an unversioned bucket
(every version `null` and current) and the generic "empty the bucket" loop tools run on it, every listing
capped at 1000 entries whatever max-keys asks, and ListObjects V1's Prefix as sent."""

from __future__ import annotations

import re
from typing import Any

import pytest
from botocore.exceptions import ClientError

from pyozone.s3g import request
from tests.unit.s3g.gateway_thread import GatewayOnThread

BUCKET = "versions"
KEYS = ["a", "d/x", "d/y", "e+f g", "z"]


@pytest.fixture(scope="module")
def s3(gateway: GatewayOnThread):  # type: ignore[no-untyped-def]
    client = gateway.boto3()
    client.create_bucket(Bucket=BUCKET)
    for key in KEYS:
        client.put_object(Bucket=BUCKET, Key=key, Body=b"")
    return client


def versions(pages: list[dict[str, Any]]) -> list[str]:
    return [v["Key"] for page in pages for v in page.get("Versions", [])]


def test_every_object_is_one_null_version_and_the_latest(s3) -> None:  # type: ignore[no-untyped-def]
    listing = s3.list_object_versions(Bucket=BUCKET)
    assert [v["Key"] for v in listing["Versions"]] == KEYS
    assert {v["VersionId"] for v in listing["Versions"]} == {"null"}
    assert all(v["IsLatest"] for v in listing["Versions"])
    assert {v["ETag"] for v in listing["Versions"]} == {'"d41d8cd98f00b204e9800998ecf8427e"'}
    assert {v["Size"] for v in listing["Versions"]} == {0}
    assert "DeleteMarkers" not in listing
    assert listing["IsTruncated"] is False
    assert "NextKeyMarker" not in listing


def test_prefix_delimiter_and_markers(s3) -> None:  # type: ignore[no-untyped-def]
    listing = s3.list_object_versions(Bucket=BUCKET, Delimiter="/")
    assert [v["Key"] for v in listing["Versions"]] == ["a", "e+f g", "z"]
    assert [p["Prefix"] for p in listing["CommonPrefixes"]] == ["d/"]
    listing = s3.list_object_versions(Bucket=BUCKET, Prefix="d/")
    assert [v["Key"] for v in listing["Versions"]] == ["d/x", "d/y"]
    assert listing["Prefix"] == "d/"
    listing = s3.list_object_versions(Bucket=BUCKET, KeyMarker="d/x", VersionIdMarker="null")
    assert [v["Key"] for v in listing["Versions"]] == ["d/y", "e+f g", "z"]
    listing = s3.list_object_versions(Bucket=BUCKET, KeyMarker="d/x")
    assert [v["Key"] for v in listing["Versions"]] == ["d/y", "e+f g", "z"]


def test_pages_continue_from_the_next_markers(s3) -> None:  # type: ignore[no-untyped-def]
    first = s3.list_object_versions(Bucket=BUCKET, MaxKeys=2)
    assert first["IsTruncated"] is True and first["MaxKeys"] == 2
    assert [v["Key"] for v in first["Versions"]] == ["a", "d/x"]
    # d/x's null version: its place as an id (R32's F3), so the next page resumes there even if it goes
    assert first["NextKeyMarker"] == "d/x" and first["Versions"][-1]["VersionId"] == "null"
    assert re.fullmatch("[0-9a-f]{16}", first["NextVersionIdMarker"])
    pages = list(
        s3.get_paginator("list_object_versions").paginate(Bucket=BUCKET, PaginationConfig={"PageSize": 2})
    )
    assert versions(pages) == KEYS
    pages = list(
        s3.get_paginator("list_object_versions").paginate(
            Bucket=BUCKET, Delimiter="/", PaginationConfig={"PageSize": 1}
        )
    )
    assert versions(pages) == ["a", "e+f g", "z"]
    assert [p["Prefix"] for page in pages for p in page.get("CommonPrefixes", [])] == ["d/"]


def test_bad_markers_are_invalid_argument(s3) -> None:  # type: ignore[no-untyped-def]
    for kwargs in ({"VersionIdMarker": "null"}, {"KeyMarker": "a", "VersionIdMarker": "3HL4kqtJlcpXroDTDmJ"}):
        with pytest.raises(ClientError) as e:
            s3.list_object_versions(Bucket=BUCKET, **kwargs)
        assert e.value.response["Error"]["Code"] == "InvalidArgument"
    with pytest.raises(ClientError) as e:
        s3.list_object_versions(Bucket="no-such-bucket")
    assert e.value.response["Error"]["Code"] == "NoSuchBucket"


def test_the_generic_empty_the_bucket_loop_empties_it(gateway: GatewayOnThread) -> None:
    """What s3-tests' cleanup, `aws s3 rb --force` and rclone purge do on any bucket."""
    s3 = gateway.boto3()
    s3.create_bucket(Bucket="emptied")
    for key in KEYS:
        s3.put_object(Bucket="emptied", Key=key, Body=b"")
    for page in s3.get_paginator("list_object_versions").paginate(
        Bucket="emptied", PaginationConfig={"PageSize": 2}
    ):
        objects = [
            {"Key": v["Key"], "VersionId": v["VersionId"]}
            for v in page.get("Versions", []) + page.get("DeleteMarkers", [])
        ]
        if objects:
            deleted = s3.delete_objects(Bucket="emptied", Delete={"Objects": objects})
            assert [(d["Key"], d["VersionId"]) for d in deleted["Deleted"]] == [
                (o["Key"], o["VersionId"]) for o in objects
            ]
    assert "Versions" not in s3.list_object_versions(Bucket="emptied")
    s3.delete_bucket(Bucket="emptied")


def test_a_version_other_than_null_is_not_deleted(gateway: GatewayOnThread) -> None:
    """Amazon answers a version the key lacks as deleted (204, its id echoed) and a malformed id
    InvalidArgument; the key stays either way."""
    s3 = gateway.boto3()
    s3.create_bucket(Bucket="kept")
    s3.put_object(Bucket="kept", Key="k", Body=b"")
    absent = "00000000000000ff"
    answer = s3.delete_objects(Bucket="kept", Delete={"Objects": [{"Key": "k", "VersionId": absent}]})
    assert [(d["Key"], d["VersionId"]) for d in answer["Deleted"]] == [("k", absent)]
    assert s3.delete_object(Bucket="kept", Key="k", VersionId=absent)["VersionId"] == absent
    answer = s3.delete_objects(Bucket="kept", Delete={"Objects": [{"Key": "k", "VersionId": "3HL4kqtJlcpX"}]})
    assert [(e["Key"], e["Code"]) for e in answer["Errors"]] == [("k", "InvalidArgument")]
    with pytest.raises(ClientError) as e:
        s3.delete_object(Bucket="kept", Key="k", VersionId="3HL4kqtJlcpX")
    assert e.value.response["Error"]["Code"] == "InvalidArgument"
    assert [v["Key"] for v in s3.list_object_versions(Bucket="kept")["Versions"]] == ["k"]
    s3.delete_object(Bucket="kept", Key="k", VersionId="null")
    assert "Versions" not in s3.list_object_versions(Bucket="kept")


def test_list_objects_v1_returns_the_prefix_as_sent(s3) -> None:  # type: ignore[no-untyped-def]
    """boto3 asks for encoding-type=url and decodes Keys, Marker and Delimiter but not V1's Prefix."""
    for prefix in ("e+f g", "\n", "d/"):
        assert s3.list_objects(Bucket=BUCKET, Prefix=prefix)["Prefix"] == prefix
        assert s3.list_objects_v2(Bucket=BUCKET, Prefix=prefix)["Prefix"] == prefix
        assert s3.list_object_versions(Bucket=BUCKET, Prefix=prefix)["Prefix"] == prefix
    assert [o["Key"] for o in s3.list_objects(Bucket=BUCKET, Prefix="e+f g")["Contents"]] == ["e+f g"]


def test_every_listing_returns_at_most_its_cap(s3, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """Whatever max-keys / max-uploads / max-parts ask, a page holds at most MAX_LIST_ENTRIES (Amazon's
    1000; lowered to 3 here so that a few keys show it)."""
    assert request.MAX_LIST_ENTRIES == 1000
    monkeypatch.setattr(request, "MAX_LIST_ENTRIES", 3)
    huge = 2**31 - 1
    for i in range(4):
        s3.create_multipart_upload(Bucket=BUCKET, Key=f"upload{i}")
    upload_id = s3.create_multipart_upload(Bucket=BUCKET, Key="parts")["UploadId"]
    for part in range(1, 5):
        s3.upload_part(Bucket=BUCKET, Key="parts", UploadId=upload_id, PartNumber=part, Body=b"")
    v1 = s3.list_objects(Bucket=BUCKET, MaxKeys=huge)
    assert (len(v1["Contents"]), v1["MaxKeys"], v1["IsTruncated"]) == (3, 3, True)
    v2 = s3.list_objects_v2(Bucket=BUCKET, MaxKeys=huge)
    assert (len(v2["Contents"]), v2["MaxKeys"], v2["IsTruncated"]) == (3, 3, True)
    ov = s3.list_object_versions(Bucket=BUCKET, MaxKeys=huge)
    assert (len(ov["Versions"]), ov["MaxKeys"], ov["IsTruncated"]) == (3, 3, True)
    uploads = s3.list_multipart_uploads(Bucket=BUCKET, MaxUploads=huge)
    assert (len(uploads["Uploads"]), uploads["MaxUploads"], uploads["IsTruncated"]) == (3, 3, True)
    parts = s3.list_parts(Bucket=BUCKET, Key="parts", UploadId=upload_id, MaxParts=huge)
    assert (len(parts["Parts"]), parts["MaxParts"], parts["IsTruncated"]) == (3, 3, True)
    assert versions(list(s3.get_paginator("list_object_versions").paginate(Bucket=BUCKET))) == KEYS
    s3.abort_multipart_upload(Bucket=BUCKET, Key="parts", UploadId=upload_id)
    for i in range(4):
        listed = s3.list_multipart_uploads(Bucket=BUCKET, Prefix=f"upload{i}")["Uploads"]
        s3.abort_multipart_upload(Bucket=BUCKET, Key=f"upload{i}", UploadId=listed[0]["UploadId"])


def test_entries_name_their_checksum(gateway: GatewayOnThread) -> None:
    """Amazon's Object and ObjectVersion carry ChecksumAlgorithm and ChecksumType; an object stored
    without a checksum lists neither."""
    client = gateway.boto3(request_checksum_calculation="when_required")
    client.create_bucket(Bucket="summed")
    client.put_object(Bucket="summed", Key="sha1", Body=b"", ChecksumAlgorithm="SHA1")  # no datanodes here
    client.put_object(Bucket="summed", Key="bare", Body=b"")
    expected = {"bare": ([], None), "sha1": (["SHA1"], "FULL_OBJECT")}
    for entries in (
        client.list_objects(Bucket="summed")["Contents"],
        client.list_objects_v2(Bucket="summed")["Contents"],
        client.list_object_versions(Bucket="summed")["Versions"],
    ):
        assert {
            e["Key"]: (e.get("ChecksumAlgorithm", []), e.get("ChecksumType")) for e in entries
        } == expected
