"""A multipart upload's checksums, through boto3 (issue 28, the review of defects 10-14): S3's COMPOSITE
checksum is built from the part checksums verified at each part's upload, the parts' checksums a
completion names are compared with those, and a checksum of the completion's x-amz-checksum-* header with
the composite one, never with the completion's XML body. (boto3's upload_file creates every multipart
upload with ChecksumAlgorithm=CRC32, so refusing COMPOSITE would refuse every large upload.)"""

from __future__ import annotations

import base64
import zlib
from collections.abc import Callable
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.unit.s3g.gateway_thread import GatewayOnThread, refused

BUCKET = "checksummed"
EMPTY_CRC32 = base64.b64encode(zlib.crc32(b"").to_bytes(4, "big")).decode()


@pytest.fixture(scope="module")
def s3(gateway: GatewayOnThread):  # type: ignore[no-untyped-def]
    client = gateway.boto3()
    client.create_bucket(Bucket=BUCKET)
    return client


def composite(part_checksums: list[str]) -> str:
    raw = b"".join(base64.b64decode(c) for c in part_checksums)
    return f"{base64.b64encode(zlib.crc32(raw).to_bytes(4, 'big')).decode()}-{len(part_checksums)}"


def keys(s3: Any) -> list[str]:
    return [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])]


def upload_one_part(s3: Any, key: str) -> tuple[str, dict[str, Any]]:
    created = s3.create_multipart_upload(Bucket=BUCKET, Key=key, ChecksumAlgorithm="CRC32")
    assert (created["ChecksumAlgorithm"], created["ChecksumType"]) == ("CRC32", "COMPOSITE")
    upload_id = created["UploadId"]
    part = s3.upload_part(
        Bucket=BUCKET, Key=key, UploadId=upload_id, PartNumber=1, Body=b"", ChecksumAlgorithm="CRC32"
    )
    assert part["ChecksumCRC32"] == EMPTY_CRC32
    return upload_id, {"PartNumber": 1, "ETag": part["ETag"], "ChecksumCRC32": part["ChecksumCRC32"]}


def test_a_composite_checksum_is_the_checksum_of_the_verified_part_checksums(s3) -> None:  # type: ignore[no-untyped-def]
    upload_id, part = upload_one_part(s3, "composite")
    listed = s3.list_parts(Bucket=BUCKET, Key="composite", UploadId=upload_id)["Parts"]
    assert [p["ChecksumCRC32"] for p in listed] == [EMPTY_CRC32]
    done = s3.complete_multipart_upload(
        Bucket=BUCKET, Key="composite", UploadId=upload_id, MultipartUpload={"Parts": [part]}
    )
    assert done["ChecksumCRC32"] == composite([EMPTY_CRC32])
    head = s3.head_object(Bucket=BUCKET, Key="composite", ChecksumMode="ENABLED")
    assert head["ChecksumCRC32"] == composite([EMPTY_CRC32])


def test_a_part_checksum_other_than_the_uploaded_one_is_an_invalid_part(s3) -> None:  # type: ignore[no-untyped-def]
    upload_id, part = upload_one_part(s3, "lying")
    wrong = {**part, "ChecksumCRC32": base64.b64encode(b"\x01\x02\x03\x04").decode()}
    assert refused(
        s3.complete_multipart_upload, Bucket=BUCKET, Key="lying", UploadId=upload_id,
        MultipartUpload={"Parts": [wrong]},
    ) == (400, "InvalidPart")  # fmt: skip
    assert "lying" not in keys(s3)


def test_the_completions_checksum_header_is_compared_with_the_composite_checksum(s3) -> None:  # type: ignore[no-untyped-def]
    upload_id, part = upload_one_part(s3, "headed")
    assert refused(
        s3.complete_multipart_upload, Bucket=BUCKET, Key="headed", UploadId=upload_id,
        ChecksumCRC32=base64.b64encode(b"\x01\x02\x03\x04").decode(), MultipartUpload={"Parts": [part]},
    ) == (400, "BadDigest")  # fmt: skip
    assert "headed" not in keys(s3)
    done = s3.complete_multipart_upload(
        Bucket=BUCKET, Key="headed", UploadId=upload_id, ChecksumCRC32=composite([EMPTY_CRC32]),
        MultipartUpload={"Parts": [part]},
    )  # fmt: skip
    assert done["ChecksumCRC32"] == composite([EMPTY_CRC32])


def test_a_full_object_checksum_of_one_part_is_its_crc(s3) -> None:  # type: ignore[no-untyped-def]
    """FULL_OBJECT: the CRC of the whole object, no `-N`, named so by the completion and by HEAD."""
    created = s3.create_multipart_upload(
        Bucket=BUCKET, Key="full", ChecksumAlgorithm="CRC32", ChecksumType="FULL_OBJECT"
    )
    assert (created["ChecksumAlgorithm"], created["ChecksumType"]) == ("CRC32", "FULL_OBJECT")
    upload_id = created["UploadId"]
    part = s3.upload_part(
        Bucket=BUCKET, Key="full", UploadId=upload_id, PartNumber=1, Body=b"", ChecksumAlgorithm="CRC32"
    )
    done = s3.complete_multipart_upload(
        Bucket=BUCKET, Key="full", UploadId=upload_id, ChecksumCRC32=EMPTY_CRC32, ChecksumType="FULL_OBJECT",
        MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]},
    )  # fmt: skip
    assert (done["ChecksumCRC32"], done["ChecksumType"]) == (EMPTY_CRC32, "FULL_OBJECT")
    head = s3.head_object(Bucket=BUCKET, Key="full", ChecksumMode="ENABLED")
    assert (head["ChecksumCRC32"], head["ChecksumType"]) == (EMPTY_CRC32, "FULL_OBJECT")


def test_crc64nvme_uploads_are_full_object_by_default(s3) -> None:  # type: ignore[no-untyped-def]
    created = s3.create_multipart_upload(Bucket=BUCKET, Key="nvme", ChecksumAlgorithm="CRC64NVME")
    assert (created["ChecksumAlgorithm"], created["ChecksumType"]) == ("CRC64NVME", "FULL_OBJECT")


def test_a_wrong_full_object_checksum_is_a_bad_digest(s3) -> None:  # type: ignore[no-untyped-def]
    created = s3.create_multipart_upload(
        Bucket=BUCKET, Key="badfull", ChecksumAlgorithm="CRC32C", ChecksumType="FULL_OBJECT"
    )
    upload_id = created["UploadId"]
    part = s3.upload_part(
        Bucket=BUCKET, Key="badfull", UploadId=upload_id, PartNumber=1, Body=b"", ChecksumAlgorithm="CRC32C"
    )
    assert refused(
        s3.complete_multipart_upload, Bucket=BUCKET, Key="badfull", UploadId=upload_id,
        ChecksumCRC32C=base64.b64encode(b"\x01\x02\x03\x04").decode(),
        MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]},
    ) == (400, "BadDigest")  # fmt: skip
    assert "badfull" not in keys(s3)


@pytest.mark.parametrize(
    ("algorithm", "checksum_type"),
    [("SHA1", "FULL_OBJECT"), ("SHA256", "FULL_OBJECT"), ("CRC64NVME", "COMPOSITE")],
)
def test_amazons_impossible_pairs_of_algorithm_and_type_are_invalid_requests(
    s3, algorithm: str, checksum_type: str
) -> None:  # type: ignore[no-untyped-def]
    assert refused(
        s3.create_multipart_upload, Bucket=BUCKET, Key="pair", ChecksumAlgorithm=algorithm,
        ChecksumType=checksum_type,
    ) == (400, "InvalidRequest")  # fmt: skip


def test_a_checksum_type_without_an_algorithm_or_of_no_known_name_is_an_invalid_request(s3) -> None:  # type: ignore[no-untyped-def]
    assert refused(s3.create_multipart_upload, Bucket=BUCKET, Key="t", ChecksumType="FULL_OBJECT") == (
        400,
        "InvalidRequest",
    )
    assert refused(
        s3.create_multipart_upload, Bucket=BUCKET, Key="t", ChecksumAlgorithm="CRC32", ChecksumType="WHOLE"
    ) == (400, "InvalidRequest")  # fmt: skip


def test_a_completion_of_another_checksum_type_is_an_invalid_request(s3) -> None:  # type: ignore[no-untyped-def]
    upload_id, part = upload_one_part(s3, "mode")
    assert refused(
        s3.complete_multipart_upload, Bucket=BUCKET, Key="mode", UploadId=upload_id,
        ChecksumType="FULL_OBJECT", MultipartUpload={"Parts": [part]},
    ) == (400, "InvalidRequest")  # fmt: skip


def test_a_retried_completion_naming_part_checksums_answers_as_the_first(s3) -> None:  # type: ignore[no-untyped-def]
    """boto3's retry after a lost answer: the same request again, part checksums and all."""
    upload_id, part = upload_one_part(s3, "retried")
    request = dict(
        Bucket=BUCKET, Key="retried", UploadId=upload_id, ChecksumCRC32=composite([EMPTY_CRC32]),
        MultipartUpload={"Parts": [part]},
    )  # fmt: skip
    first = s3.complete_multipart_upload(**request)
    again = s3.complete_multipart_upload(**request)
    assert (again["ETag"], again["ChecksumCRC32"]) == (first["ETag"], first["ChecksumCRC32"])
    assert again["ChecksumCRC32"] == composite([EMPTY_CRC32])


MISSING_PART_CHECKSUM = (
    "The upload was created using a crc32 checksum. The complete request must include the checksum for each "
    "part. It was missing for part 1 in the request."
)


def refusal(call: Callable[..., Any], **kwargs: Any) -> tuple[int, str, str]:
    with pytest.raises(ClientError) as e:
        call(**kwargs)
    error = e.value.response["Error"]
    return e.value.response["ResponseMetadata"]["HTTPStatusCode"], error["Code"], error.get("Message", "")


def test_an_uploads_algorithm_is_required_of_its_parts(gateway: GatewayOnThread, s3) -> None:  # type: ignore[no-untyped-def]
    """Amazon's answers when an upload created with CRC32 gets a part without it, or with another one."""
    upload_id = s3.create_multipart_upload(Bucket=BUCKET, Key="typed", ChecksumAlgorithm="CRC32")["UploadId"]
    status, text = gateway.signed_request("PUT", f"/{BUCKET}/typed?partNumber=1&uploadId={upload_id}")
    assert status == 400 and "<Code>InvalidRequest</Code>" in text
    assert (
        "Checksum Type mismatch occurred, expected checksum Type: crc32, actual checksum Type: null" in text
    )
    assert refusal(
        s3.upload_part, Bucket=BUCKET, Key="typed", UploadId=upload_id, PartNumber=1, Body=b"",
        ChecksumAlgorithm="SHA256",
    ) == (400, "InvalidRequest", "Checksum Type mismatch occurred, expected checksum Type: crc32, actual "
          "checksum Type: sha256")  # fmt: skip
    assert s3.list_parts(Bucket=BUCKET, Key="typed", UploadId=upload_id).get("Parts", []) == []


def test_an_uploads_algorithm_is_required_of_its_completion(s3) -> None:  # type: ignore[no-untyped-def]
    upload_id, part = upload_one_part(s3, "unnamed")
    bare = {k: v for k, v in part.items() if k != "ChecksumCRC32"}
    other = bare | {"ChecksumSHA256": "A" * 43 + "="}
    for named in (bare, other):
        assert refusal(
            s3.complete_multipart_upload, Bucket=BUCKET, Key="unnamed", UploadId=upload_id,
            MultipartUpload={"Parts": [named]},
        ) == (400, "InvalidRequest", MISSING_PART_CHECKSUM)  # fmt: skip
    assert "unnamed" not in keys(s3)
    done = s3.complete_multipart_upload(
        Bucket=BUCKET, Key="unnamed", UploadId=upload_id, MultipartUpload={"Parts": [part]}
    )
    assert done["ChecksumCRC32"] == composite([EMPTY_CRC32])


def test_a_copied_part_of_an_upload_with_an_algorithm_gets_its_checksum(s3) -> None:  # type: ignore[no-untyped-def]
    s3.put_object(Bucket=BUCKET, Key="source", Body=b"")
    upload_id = s3.create_multipart_upload(Bucket=BUCKET, Key="copied", ChecksumAlgorithm="CRC32")["UploadId"]
    copied = s3.upload_part_copy(
        Bucket=BUCKET, Key="copied", UploadId=upload_id, PartNumber=1, CopySource=f"{BUCKET}/source"
    )["CopyPartResult"]
    assert copied["ChecksumCRC32"] == EMPTY_CRC32
    part = {"PartNumber": 1, "ETag": copied["ETag"], "ChecksumCRC32": copied["ChecksumCRC32"]}
    done = s3.complete_multipart_upload(
        Bucket=BUCKET, Key="copied", UploadId=upload_id, MultipartUpload={"Parts": [part]}
    )
    assert done["ChecksumCRC32"] == composite([EMPTY_CRC32])
