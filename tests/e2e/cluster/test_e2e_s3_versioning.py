"""S3 versioning through the gateway of a live cluster (issue 33, item 1), tested from Amazon's reference
(PutBucketVersioning, GetBucketVersioning, ListObjectVersions, DeleteObject(s) with versionId, "Working with
delete markers", "Managing objects in a versioning-suspended bucket"): the bucket's state and its
refusals, versioned PUT/GET/HEAD/DELETE, delete markers, DeleteObjects and CopyObject of versions, a
multipart upload's version, `null` versions while Suspended, the version listing's markers, prefixes and
delimiter, its refusals and 1000-entry cap, empty version ids, a 1001-key DeleteObjects, and a bucket
that keeps versions being not empty."""

from __future__ import annotations

import itertools
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.e2e.cluster.s3_cluster import S3Endpoint, getsecret, s3_cluster
from tests.e2e.cluster.s3_raw import RawS3, md5_b64

_names = itertools.count()


@pytest.fixture(scope="module")
def s3(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Endpoint]:
    with s3_cluster(request, tmp_path_factory, "s3-versioning") as endpoint:
        yield endpoint


@pytest.fixture(scope="module")
def client(s3: S3Endpoint):  # type: ignore[no-untyped-def]
    return s3.boto3()


@pytest.fixture
def bucket(client) -> str:  # type: ignore[no-untyped-def]
    """A new bucket with versioning Enabled."""
    name = f"versioned-{next(_names)}"
    client.create_bucket(Bucket=name)
    client.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
    return name


def refusal(call: Any, **kwargs: Any) -> tuple[int, str, dict[str, str]]:
    """(status, code, headers) of a refused call."""
    with pytest.raises(ClientError) as e:
        call(**kwargs)
    error = e.value.response
    metadata = error["ResponseMetadata"]
    return metadata["HTTPStatusCode"], error["Error"].get("Code", ""), metadata["HTTPHeaders"]


def body(client, bucket: str, key: str, **kwargs: Any) -> bytes:  # type: ignore[no-untyped-def]
    return client.get_object(Bucket=bucket, Key=key, **kwargs)["Body"].read()


def versions(client, bucket: str, **kwargs: Any) -> list[tuple[str, str, bool, bool]]:  # type: ignore[no-untyped-def]
    """(key, version id, IsLatest, is a delete marker) of one listing page in the answer's order (boto3
    splits Version and DeleteMarker entries into two lists, so the XML is read as sent)."""
    sent: list[bytes] = []

    def keep(http_response: Any, **_: Any) -> None:
        sent.append(http_response.content)

    client.meta.events.register("after-call.s3.ListObjectVersions", keep)
    try:
        client.list_object_versions(Bucket=bucket, **kwargs)
    finally:
        client.meta.events.unregister("after-call.s3.ListObjectVersions", keep)
    out = []
    for entry in ET.fromstring(sent[-1]):
        tag = entry.tag.rsplit("}", 1)[-1]
        if tag in ("Version", "DeleteMarker"):
            fields = {child.tag.rsplit("}", 1)[-1]: child.text or "" for child in entry}
            out.append(
                (fields["Key"], fields["VersionId"], fields["IsLatest"] == "true", tag == "DeleteMarker")
            )
    return out


# ------------------------------------------------------------------ PutBucketVersioning, GetBucketVersioning
def test_a_new_bucket_answers_an_empty_configuration(client) -> None:  # type: ignore[no-untyped-def]
    client.create_bucket(Bucket="never-versioned")
    answer = client.get_bucket_versioning(Bucket="never-versioned")
    assert "Status" not in answer and "MFADelete" not in answer


def test_versioning_is_enabled_then_suspended(client) -> None:  # type: ignore[no-untyped-def]
    client.create_bucket(Bucket="states")
    for status in ("Enabled", "Suspended", "Enabled"):
        client.put_bucket_versioning(Bucket="states", VersioningConfiguration={"Status": status})
        assert client.get_bucket_versioning(Bucket="states")["Status"] == status


def test_put_bucket_versioning_refusals(client, s3: S3Endpoint) -> None:  # type: ignore[no-untyped-def]
    client.create_bucket(Bucket="refusals")
    put = client.put_bucket_versioning
    assert refusal(put, Bucket="refusals", VersioningConfiguration={"Status": "On"})[:2] == (
        400,
        "MalformedXML",
    )
    mfa = {"Status": "Enabled", "MFADelete": "Enabled"}
    assert refusal(put, Bucket="refusals", VersioningConfiguration=mfa)[:2] == (501, "NotImplemented")
    assert "Status" not in client.get_bucket_versioning(Bucket="refusals")  # nothing was changed
    missing = {"Status": "Enabled"}
    assert refusal(put, Bucket="no-such-bucket", VersioningConfiguration=missing)[:2] == (404, "NoSuchBucket")
    get = client.get_bucket_versioning
    assert refusal(get, Bucket="no-such-bucket")[:2] == (404, "NoSuchBucket")


def test_only_the_owner_reads_or_sets_versioning(client, s3: S3Endpoint) -> None:  # type: ignore[no-untyped-def]
    client.create_bucket(Bucket="owned")
    bob = S3Endpoint(s3.cluster, s3.url, *getsecret(s3.cluster, "bob")).boto3()
    config = {"Status": "Enabled"}
    assert refusal(bob.put_bucket_versioning, Bucket="owned", VersioningConfiguration=config)[:2] == (
        403,
        "AccessDenied",
    )
    assert refusal(bob.get_bucket_versioning, Bucket="owned")[:2] == (403, "AccessDenied")
    assert "Status" not in client.get_bucket_versioning(Bucket="owned")


# ------------------------------------------------------------------ versioned PUT, GET, HEAD
def test_each_put_makes_a_version_read_back_by_its_id(client, bucket: str) -> None:  # type: ignore[no-untyped-def]
    v1 = client.put_object(Bucket=bucket, Key="k", Body=b"one")["VersionId"]
    v2 = client.put_object(Bucket=bucket, Key="k", Body=b"two")["VersionId"]
    assert v1 != v2 and "null" not in (v1, v2)
    assert body(client, bucket, "k") == b"two"
    assert body(client, bucket, "k", VersionId=v1) == b"one"
    got = client.get_object(Bucket=bucket, Key="k", VersionId=v1)
    assert got["VersionId"] == v1
    head = client.head_object(Bucket=bucket, Key="k", VersionId=v1)
    assert (head["ContentLength"], head["VersionId"]) == (3, v1)
    assert client.head_object(Bucket=bucket, Key="k")["VersionId"] == v2


def test_a_version_the_key_lacks_is_no_such_version_and_a_malformed_one_invalid(client, bucket: str) -> None:  # type: ignore[no-untyped-def]
    client.put_object(Bucket=bucket, Key="k", Body=b"x")
    status, code, _ = refusal(client.get_object, Bucket=bucket, Key="k", VersionId="00000000000000ff")
    assert (status, code) == (404, "NoSuchVersion")
    assert refusal(client.get_object, Bucket=bucket, Key="k", VersionId="not-a-version")[:2] == (
        400,
        "InvalidArgument",
    )
    assert refusal(client.head_object, Bucket=bucket, Key="k", VersionId="00000000000000ff")[0] == 404


def test_a_versionid_on_an_operation_without_versions_is_refused(client, bucket: str) -> None:  # type: ignore[no-untyped-def]
    version = client.put_object(Bucket=bucket, Key="k", Body=b"x")["VersionId"]
    status, code, _ = refusal(client.get_object_tagging, Bucket=bucket, Key="k", VersionId=version)
    assert (status, code) == (501, "NotImplemented")


def test_get_object_attributes_of_a_version_and_of_a_marker(client, bucket: str) -> None:  # type: ignore[no-untyped-def]
    first = client.put_object(Bucket=bucket, Key="a", Body=b"first!")
    client.put_object(Bucket=bucket, Key="a", Body=b"second")
    got = client.get_object_attributes(
        Bucket=bucket, Key="a", VersionId=first["VersionId"], ObjectAttributes=["ETag", "ObjectSize"]
    )
    assert (got["ETag"], got["ObjectSize"], got["VersionId"]) == (
        first["ETag"].strip('"'),
        6,
        first["VersionId"],
    )
    marker = client.delete_object(Bucket=bucket, Key="a")["VersionId"]
    status, code, headers = refusal(
        client.get_object_attributes, Bucket=bucket, Key="a", ObjectAttributes=["ETag"]
    )
    assert (status, code, headers["x-amz-delete-marker"]) == (404, "NoSuchKey", "true")
    status, code, _ = refusal(
        client.get_object_attributes, Bucket=bucket, Key="a", VersionId=marker, ObjectAttributes=["ETag"]
    )
    assert (status, code) == (405, "MethodNotAllowed")


# ------------------------------------------------------------------ delete markers
def test_a_delete_puts_a_marker_and_keeps_the_data(client, bucket: str) -> None:  # type: ignore[no-untyped-def]
    v1 = client.put_object(Bucket=bucket, Key="k", Body=b"kept")["VersionId"]
    deleted = client.delete_object(Bucket=bucket, Key="k")
    marker = deleted["VersionId"]
    assert deleted["DeleteMarker"] is True and marker != v1
    status, code, headers = refusal(client.get_object, Bucket=bucket, Key="k")
    assert (status, code) == (404, "NoSuchKey")
    assert (headers["x-amz-delete-marker"], headers["x-amz-version-id"]) == ("true", marker)
    status, _, headers = refusal(client.head_object, Bucket=bucket, Key="k")
    assert (status, headers["x-amz-delete-marker"]) == (404, "true")
    status, code, headers = refusal(client.get_object, Bucket=bucket, Key="k", VersionId=marker)
    assert (status, code, headers["x-amz-delete-marker"]) == (405, "MethodNotAllowed", "true")
    assert "last-modified" in headers
    assert refusal(client.head_object, Bucket=bucket, Key="k", VersionId=marker)[0] == 405
    assert body(client, bucket, "k", VersionId=v1) == b"kept"
    assert versions(client, bucket) == [("k", marker, True, True), ("k", v1, False, False)]
    assert "Contents" not in client.list_objects_v2(Bucket=bucket)


def test_a_delete_of_a_key_that_never_was_still_puts_a_marker(client, bucket: str) -> None:  # type: ignore[no-untyped-def]
    deleted = client.delete_object(Bucket=bucket, Key="ghost")
    assert deleted["DeleteMarker"] is True
    assert versions(client, bucket) == [("ghost", deleted["VersionId"], True, True)]


def test_deleting_a_version_removes_it_for_good(client, bucket: str) -> None:  # type: ignore[no-untyped-def]
    v1 = client.put_object(Bucket=bucket, Key="k", Body=b"one")["VersionId"]
    v2 = client.put_object(Bucket=bucket, Key="k", Body=b"two")["VersionId"]
    answer = client.delete_object(Bucket=bucket, Key="k", VersionId=v2)
    assert answer["VersionId"] == v2 and "DeleteMarker" not in answer
    assert body(client, bucket, "k") == b"one"  # the previous version is current again
    assert refusal(client.get_object, Bucket=bucket, Key="k", VersionId=v2)[:2] == (404, "NoSuchVersion")
    assert versions(client, bucket) == [("k", v1, True, False)]


def test_deleting_the_latest_marker_brings_the_object_back(client, bucket: str) -> None:  # type: ignore[no-untyped-def]
    client.put_object(Bucket=bucket, Key="k", Body=b"back")
    marker = client.delete_object(Bucket=bucket, Key="k")["VersionId"]
    answer = client.delete_object(Bucket=bucket, Key="k", VersionId=marker)
    assert (answer["VersionId"], answer["DeleteMarker"]) == (marker, True)
    assert body(client, bucket, "k") == b"back"


def test_deleting_a_version_the_key_lacks_answers_204(client, bucket: str) -> None:  # type: ignore[no-untyped-def]
    client.put_object(Bucket=bucket, Key="k", Body=b"x")
    answer = client.delete_object(Bucket=bucket, Key="k", VersionId="00000000000000ff")
    assert answer["ResponseMetadata"]["HTTPStatusCode"] == 204
    assert answer["VersionId"] == "00000000000000ff"
    status, code, _ = refusal(client.delete_object, Bucket=bucket, Key="k", VersionId="bad version")
    assert (status, code) == (400, "InvalidArgument")


def test_delete_objects_with_version_ids(client, bucket: str) -> None:  # type: ignore[no-untyped-def]
    v1 = client.put_object(Bucket=bucket, Key="a", Body=b"1")["VersionId"]
    client.put_object(Bucket=bucket, Key="b", Body=b"2")
    answer = client.delete_objects(
        Bucket=bucket, Delete={"Objects": [{"Key": "a", "VersionId": v1}, {"Key": "b"}]}
    )
    deleted = {d["Key"]: d for d in answer["Deleted"]}
    assert deleted["a"]["VersionId"] == v1 and "DeleteMarker" not in deleted["a"]
    assert deleted["b"]["DeleteMarker"] is True
    marker = deleted["b"]["DeleteMarkerVersionId"]
    assert [(k, latest, is_marker) for k, _, latest, is_marker in versions(client, bucket)] == [
        ("b", True, True),
        ("b", False, False),
    ]
    again = client.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "b", "VersionId": marker}]})
    assert (again["Deleted"][0]["DeleteMarker"], again["Deleted"][0]["DeleteMarkerVersionId"]) == (
        True,
        marker,
    )
    assert body(client, bucket, "b") == b"2"


# ------------------------------------------------------------------ CopyObject, multipart uploads
def test_copy_from_a_version(client, bucket: str) -> None:  # type: ignore[no-untyped-def]
    v1 = client.put_object(Bucket=bucket, Key="src", Body=b"old")["VersionId"]
    client.put_object(Bucket=bucket, Key="src", Body=b"new")
    copied = client.copy_object(
        Bucket=bucket, Key="dst", CopySource={"Bucket": bucket, "Key": "src", "VersionId": v1}
    )
    assert copied["CopySourceVersionId"] == v1 and copied["VersionId"] not in (v1, "null")
    assert body(client, bucket, "dst") == b"old"
    marker = client.delete_object(Bucket=bucket, Key="src")["VersionId"]
    source = {"Bucket": bucket, "Key": "src", "VersionId": marker}
    assert refusal(client.copy_object, Bucket=bucket, Key="dst", CopySource=source)[:2] == (
        400,
        "InvalidRequest",
    )
    source = {"Bucket": bucket, "Key": "src"}
    assert refusal(client.copy_object, Bucket=bucket, Key="dst", CopySource=source)[:2] == (404, "NoSuchKey")
    source = {"Bucket": bucket, "Key": "src", "VersionId": "00000000000000ff"}
    assert refusal(client.copy_object, Bucket=bucket, Key="dst", CopySource=source)[:2] == (
        404,
        "NoSuchVersion",
    )


def test_a_completed_multipart_upload_is_a_version(client, bucket: str) -> None:  # type: ignore[no-untyped-def]
    v1 = client.put_object(Bucket=bucket, Key="mp", Body=b"first")["VersionId"]
    upload = client.create_multipart_upload(Bucket=bucket, Key="mp")["UploadId"]
    part = client.upload_part(Bucket=bucket, Key="mp", UploadId=upload, PartNumber=1, Body=b"second")
    done = client.complete_multipart_upload(
        Bucket=bucket, Key="mp", UploadId=upload,
        MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]},
    )  # fmt: skip
    assert done["VersionId"] not in (v1, "null")
    assert body(client, bucket, "mp") == b"second"
    assert body(client, bucket, "mp", VersionId=v1) == b"first"


# ------------------------------------------------------------------ null versions
def test_null_versions_before_enabling_and_while_suspended(client) -> None:  # type: ignore[no-untyped-def]
    client.create_bucket(Bucket="nulls")
    client.put_object(Bucket="nulls", Key="k", Body=b"before")
    client.put_bucket_versioning(Bucket="nulls", VersioningConfiguration={"Status": "Enabled"})
    assert body(client, "nulls", "k", VersionId="null") == b"before"
    v1 = client.put_object(Bucket="nulls", Key="k", Body=b"enabled")["VersionId"]
    client.put_bucket_versioning(Bucket="nulls", VersioningConfiguration={"Status": "Suspended"})
    client.put_object(Bucket="nulls", Key="k", Body=b"suspended")  # replaces the null version
    assert versions(client, "nulls") == [("k", "null", True, False), ("k", v1, False, False)]
    assert body(client, "nulls", "k", VersionId="null") == b"suspended"
    client.put_object(Bucket="nulls", Key="k", Body=b"again")
    assert [v for _, v, _, _ in versions(client, "nulls")] == ["null", v1]
    assert body(client, "nulls", "k") == b"again"
    deleted = client.delete_object(Bucket="nulls", Key="k")
    assert (deleted["DeleteMarker"], deleted["VersionId"]) == (True, "null")
    assert versions(client, "nulls") == [("k", "null", True, True), ("k", v1, False, False)]
    assert body(client, "nulls", "k", VersionId=v1) == b"enabled"


# ------------------------------------------------------------------ ListObjectVersions
def test_list_object_versions_pages_by_key_and_version_marker(client, bucket: str) -> None:  # type: ignore[no-untyped-def]
    a1 = client.put_object(Bucket=bucket, Key="a", Body=b"1")["VersionId"]
    a2 = client.put_object(Bucket=bucket, Key="a", Body=b"22")["VersionId"]
    b1 = client.put_object(Bucket=bucket, Key="b", Body=b"3")["VersionId"]
    first = client.list_object_versions(Bucket=bucket, MaxKeys=1)
    assert first["IsTruncated"] is True
    assert (first["NextKeyMarker"], first["NextVersionIdMarker"]) == ("a", a2)
    second = client.list_object_versions(Bucket=bucket, MaxKeys=1, KeyMarker="a", VersionIdMarker=a2)
    assert [(v["VersionId"], v["IsLatest"], v["Size"]) for v in second["Versions"]] == [(a1, False, 1)]
    assert [v["Key"] for v in client.list_object_versions(Bucket=bucket, KeyMarker="a")["Versions"]] == ["b"]
    pages = client.get_paginator("list_object_versions").paginate(
        Bucket=bucket, PaginationConfig={"PageSize": 1}
    )
    assert [v["VersionId"] for p in pages for v in p.get("Versions", [])] == [a2, a1, b1]
    assert refusal(client.list_object_versions, Bucket=bucket, KeyMarker="a", VersionIdMarker="zz")[:2] == (
        400,
        "InvalidArgument",
    )
    assert refusal(client.list_object_versions, Bucket=bucket, VersionIdMarker=a1)[:2] == (
        400,
        "InvalidArgument",
    )


def test_list_object_versions_prefix_delimiter_and_encoding(client, bucket: str) -> None:  # type: ignore[no-untyped-def]
    for key in ("d/x", "d/x", "d/y", "e f", "top"):
        client.put_object(Bucket=bucket, Key=key, Body=b"")
    client.delete_object(Bucket=bucket, Key="top")
    folded = client.list_object_versions(Bucket=bucket, Delimiter="/")
    assert [p["Prefix"] for p in folded["CommonPrefixes"]] == ["d/"]
    assert [v["Key"] for v in folded["Versions"]] == ["e f", "top"]
    assert [(m["Key"], m["IsLatest"]) for m in folded["DeleteMarkers"]] == [("top", True)]
    assert [v["Key"] for v in client.list_object_versions(Bucket=bucket, Prefix="d/")["Versions"]] == [
        "d/x",
        "d/x",
        "d/y",
    ]
    encoded = client.list_object_versions(Bucket=bucket, Prefix="e", EncodingType="url")
    assert encoded["EncodingType"] == "url" and encoded["Versions"][0]["Key"] == "e%20f"  # as sent
    assert [c["Key"] for c in client.list_objects_v2(Bucket=bucket)["Contents"]] == ["d/x", "d/y", "e f"]


# ------------------------------------------------------------------ DeleteBucket
def test_a_bucket_with_versions_or_markers_is_not_empty(client, bucket: str) -> None:  # type: ignore[no-untyped-def]
    version = client.put_object(Bucket=bucket, Key="k", Body=b"x")["VersionId"]
    marker = client.delete_object(Bucket=bucket, Key="k")["VersionId"]
    assert refusal(client.delete_bucket, Bucket=bucket)[:2] == (409, "BucketNotEmpty")
    client.delete_object(Bucket=bucket, Key="k", VersionId=version)
    assert refusal(client.delete_bucket, Bucket=bucket)[:2] == (409, "BucketNotEmpty")
    client.delete_object(Bucket=bucket, Key="k", VersionId=marker)
    client.delete_bucket(Bucket=bucket)


# ------------------------------------------------------------------ refusals boto3 will not send, big pages
@pytest.fixture(scope="module")
def raw(s3: S3Endpoint) -> RawS3:
    return RawS3(s3, "")


def test_list_object_versions_refusals(client, raw: RawS3, bucket: str) -> None:  # type: ignore[no-untyped-def]
    """ListObjectVersions: a missing bucket is NoSuchBucket; a max-keys not a non-negative integer and an
    encoding-type other than url are InvalidArgument (ListObjectVersions' reference, like ListObjects')."""
    assert refusal(client.list_object_versions, Bucket="no-such-bucket")[:2] == (404, "NoSuchBucket")
    for query in ("max-keys=-1", "max-keys=x", "encoding-type=base64"):
        answer = raw.request("GET", f"/{bucket}?versions&{query}")
        assert answer.is_s3_error(400, "InvalidArgument"), (query, answer)
    assert answer.message == "Invalid Encoding Method specified in Request"


def test_a_page_of_versions_is_at_most_1000(client, bucket: str) -> None:  # type: ignore[no-untyped-def]
    """MaxKeys above 1000 answers 1000 (ListObjectVersions' reference), over 1,001 delete markers."""
    keys = [f"m{n:04}" for n in range(1001)]
    for start in (0, 1000):
        objects = [{"Key": key} for key in keys[start : start + 1000]]
        client.delete_objects(Bucket=bucket, Delete={"Objects": objects, "Quiet": True})
    page = client.list_object_versions(Bucket=bucket, MaxKeys=5000)
    assert (len(page["DeleteMarkers"]), page["IsTruncated"], page["MaxKeys"]) == (1000, True, 1000)
    assert page["NextKeyMarker"] == "m0999"


def test_an_empty_version_id_is_refused(client, raw: RawS3, bucket: str) -> None:  # type: ignore[no-untyped-def]
    """GET, HEAD and DELETE with `versionId=` are InvalidArgument (HEAD without a body) and add no marker;
    in DeleteObjects an empty VersionId is that entry's NoSuchVersion."""
    client.put_object(Bucket=bucket, Key="k", Body=b"x")
    for method in ("GET", "HEAD", "DELETE"):
        answer = raw.request(method, f"/{bucket}/k?versionId=")
        assert answer.status == 400, (method, answer)
        if method != "HEAD":
            assert answer.is_s3_error(400, "InvalidArgument"), (method, answer)
            assert answer.message == "Version id cannot be the empty string", answer
    assert [(k, marker) for k, _, _, marker in versions(client, bucket)] == [("k", False)]
    answer = client.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "k", "VersionId": ""}]})
    assert "Deleted" not in answer
    assert [(e["Key"], e["Code"]) for e in answer["Errors"]] == [("k", "NoSuchVersion")]
    assert body(client, bucket, "k") == b"x"


def test_delete_objects_of_1001_keys_is_malformed_and_quiet_lists_only_errors(client, bucket: str) -> None:  # type: ignore[no-untyped-def]
    """DeleteObjects takes at most 1000 keys (its reference): 1001 are MalformedXML and delete nothing;
    Quiet answers only the entries that failed."""
    version = client.put_object(Bucket=bucket, Key="k", Body=b"x")["VersionId"]
    objects = [{"Key": "k", "VersionId": version}, *({"Key": f"other{n}"} for n in range(1000))]
    assert refusal(client.delete_objects, Bucket=bucket, Delete={"Objects": objects})[:2] == (
        400, "MalformedXML",
    )  # fmt: skip
    assert [(k, v, marker) for k, v, _, marker in versions(client, bucket)] == [("k", version, False)]
    pair = [{"Key": "k", "VersionId": version}, {"Key": "k", "VersionId": ""}]
    quiet = client.delete_objects(Bucket=bucket, Delete={"Objects": pair, "Quiet": True})
    assert "Deleted" not in quiet
    assert [(e["Key"], e["Code"]) for e in quiet.get("Errors", [])] == [("k", "NoSuchVersion")]
    assert versions(client, bucket) == []


def test_put_bucket_versioning_takes_a_body_without_a_digest_and_checks_one_sent(
    raw: RawS3, bucket: str
) -> None:
    """docs/differences.md: Amazon requires Content-MD5 or a checksum here; the gateway takes the body
    without one, and still refuses one that is wrong (BadDigest)."""
    document = (
        b'<VersioningConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
        b"<Status>Suspended</Status></VersioningConfiguration>"
    )
    assert raw.request("PUT", f"/{bucket}?versioning", document).status == 200
    wrong = raw.request("PUT", f"/{bucket}?versioning", document, {"Content-MD5": md5_b64(b"other")})
    assert wrong.is_s3_error(400, "BadDigest"), wrong
