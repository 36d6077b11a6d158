"""GetObjectAttributes and GET/HEAD by partNumber through boto3 against an OM and the gateway (empty objects:
no datanodes), as Amazon's references have them; the parts' arithmetic is test_parts.py's."""

from __future__ import annotations

import pytest

from tests.unit.s3g.gateway_thread import GatewayOnThread, refused

BUCKET = "attributed"
EVERY = ["ETag", "Checksum", "ObjectParts", "StorageClass", "ObjectSize"]


@pytest.fixture(scope="module")
def s3(gateway: GatewayOnThread):  # type: ignore[no-untyped-def]
    client = gateway.boto3()
    client.create_bucket(Bucket=BUCKET)
    client.put_object(Bucket=BUCKET, Key="single", Body=b"", ChecksumAlgorithm="CRC32")
    upload_id = client.create_multipart_upload(Bucket=BUCKET, Key="multi", ChecksumAlgorithm="CRC32")[
        "UploadId"
    ]
    part = client.upload_part(
        Bucket=BUCKET, Key="multi", UploadId=upload_id, PartNumber=1, Body=b"", ChecksumAlgorithm="CRC32"
    )
    named = {"PartNumber": 1, "ETag": part["ETag"], "ChecksumCRC32": part["ChecksumCRC32"]}
    client.complete_multipart_upload(
        Bucket=BUCKET, Key="multi", UploadId=upload_id, MultipartUpload={"Parts": [named]}
    )
    return client


def test_every_attribute_of_a_single_put(s3) -> None:  # type: ignore[no-untyped-def]
    head = s3.head_object(Bucket=BUCKET, Key="single", ChecksumMode="ENABLED")
    got = s3.get_object_attributes(Bucket=BUCKET, Key="single", ObjectAttributes=EVERY)
    assert got["ETag"] == head["ETag"].strip('"')
    assert got["Checksum"] == {"ChecksumCRC32": head["ChecksumCRC32"], "ChecksumType": "FULL_OBJECT"}
    assert (got["StorageClass"], got["ObjectSize"]) == ("STANDARD", 0)
    assert "ObjectParts" not in got
    assert got["LastModified"] == head["LastModified"]


def test_object_parts_of_a_multipart_object(s3) -> None:  # type: ignore[no-untyped-def]
    got = s3.get_object_attributes(Bucket=BUCKET, Key="multi", ObjectAttributes=["ObjectParts", "Checksum"])
    assert got["Checksum"]["ChecksumType"] == "COMPOSITE"
    parts = got["ObjectParts"]
    assert (parts["TotalPartsCount"], parts["IsTruncated"], parts["MaxParts"]) == (1, False, 1000)
    assert [(p["PartNumber"], p["Size"], p["ChecksumCRC32"]) for p in parts["Parts"]] == [(1, 0, "AAAAAA==")]


def test_attribute_errors(gateway: GatewayOnThread, s3) -> None:  # type: ignore[no-untyped-def]
    status, text = gateway.signed_request("GET", f"/{BUCKET}/single?attributes")
    assert status == 400 and "<Code>InvalidRequest</Code>" in text  # no x-amz-object-attributes
    assert refused(s3.get_object_attributes, Bucket=BUCKET, Key="single", ObjectAttributes=["Colour"]) == (
        400, "InvalidArgument",
    )  # fmt: skip
    assert refused(s3.get_object_attributes, Bucket=BUCKET, Key="none", ObjectAttributes=["ETag"]) == (
        404, "NoSuchKey",
    )  # fmt: skip
    assert refused(
        s3.get_object_attributes, Bucket=BUCKET, Key="single", ObjectAttributes=["ETag"],
        VersionId="00000000000000a2",
    ) == (404, "NoSuchVersion")  # fmt: skip
    got = s3.get_object_attributes(Bucket=BUCKET, Key="single", ObjectAttributes=["ETag"], VersionId="null")
    assert "ETag" in got


def test_part_number_of_objects(s3) -> None:  # type: ignore[no-untyped-def]
    multi = s3.head_object(Bucket=BUCKET, Key="multi", PartNumber=1)
    assert (multi["PartsCount"], multi["ContentLength"]) == (1, 0)
    single = s3.get_object(Bucket=BUCKET, Key="single", PartNumber=1)
    assert single["Body"].read() == b"" and "PartsCount" not in single
    assert refused(s3.get_object, Bucket=BUCKET, Key="multi", PartNumber=2) == (416, "InvalidPartNumber")
    assert refused(s3.get_object, Bucket=BUCKET, Key="single", PartNumber=2) == (416, "InvalidPartNumber")
    assert refused(s3.get_object, Bucket=BUCKET, Key="multi", PartNumber=1, Range="bytes=0-0") == (
        400, "InvalidRequest",
    )  # fmt: skip
    assert refused(s3.get_object, Bucket=BUCKET, Key="multi", PartNumber=0)[0] == 400
