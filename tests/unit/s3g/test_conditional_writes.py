"""S3's conditional writes through boto3 (issue 28, defect 11): If-None-Match: * and If-Match on PutObject,
CopyObject and CompleteMultipartUpload, If-Match on DeleteObject, answered 412 when they do not hold and
checked by OM in the step that commits or deletes the key. Empty objects: OM and the gateway, no datanodes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.unit.s3g.gateway_harness import with_gateway

EMPTY_ETAG = '"d41d8cd98f00b204e9800998ecf8427e"'


def refusal(call: Callable[[], object]) -> tuple[int, str, str]:
    from botocore.exceptions import ClientError

    with pytest.raises(ClientError) as e:
        call()
    error = e.value.response["Error"]
    return e.value.response["ResponseMetadata"]["HTTPStatusCode"], error["Code"], error.get("Condition", "")


def version(s3: Any, key: str) -> str:
    return s3.head_object(Bucket="bkt", Key=key)["Metadata"].get("v", "")


def test_put_object_if_none_match_refuses_an_existing_key(tmp_path: Path) -> None:
    def calls(s3: Any) -> None:
        s3.put_object(Bucket="bkt", Key="k", Body=b"", Metadata={"v": "1"}, IfNoneMatch="*")
        assert refusal(
            lambda: s3.put_object(Bucket="bkt", Key="k", Body=b"", Metadata={"v": "2"}, IfNoneMatch="*")
        ) == (412, "PreconditionFailed", "If-None-Match")
        assert version(s3, "k") == "1"
        assert refusal(lambda: s3.put_object(Bucket="bkt", Key="k", Body=b"", IfNoneMatch='"abc"'))[:2] == (
            501,
            "NotImplemented",
        )

    with_gateway(tmp_path, calls)


def test_put_object_if_match_needs_the_current_etag(tmp_path: Path) -> None:
    def calls(s3: Any) -> None:
        assert refusal(lambda: s3.put_object(Bucket="bkt", Key="k", Body=b"", IfMatch=EMPTY_ETAG)) == (
            412,
            "PreconditionFailed",
            "If-Match",
        )
        s3.put_object(Bucket="bkt", Key="k", Body=b"", Metadata={"v": "1"})
        assert refusal(
            lambda: s3.put_object(Bucket="bkt", Key="k", Body=b"", Metadata={"v": "2"}, IfMatch='"0123"')
        )[:2] == (412, "PreconditionFailed")
        assert version(s3, "k") == "1"
        s3.put_object(Bucket="bkt", Key="k", Body=b"", Metadata={"v": "3"}, IfMatch=EMPTY_ETAG)
        assert version(s3, "k") == "3"

    with_gateway(tmp_path, calls)


def test_delete_object_if_match(tmp_path: Path) -> None:
    def calls(s3: Any) -> None:
        s3.put_object(Bucket="bkt", Key="k", Body=b"")
        assert refusal(lambda: s3.delete_object(Bucket="bkt", Key="k", IfMatch='"0123"'))[:2] == (
            412,
            "PreconditionFailed",
        )
        assert version(s3, "k") == ""  # still there
        s3.delete_object(Bucket="bkt", Key="k", IfMatch=EMPTY_ETAG)
        assert refusal(lambda: s3.head_object(Bucket="bkt", Key="k"))[0] == 404
        # Amazon: a missing key with If-Match is NoSuchKey, without it 204
        assert refusal(lambda: s3.delete_object(Bucket="bkt", Key="k", IfMatch="*"))[:2] == (404, "NoSuchKey")
        s3.delete_object(Bucket="bkt", Key="k")

    with_gateway(tmp_path, calls)


def test_copy_object_destination_conditions(tmp_path: Path) -> None:
    def calls(s3: Any) -> None:
        s3.put_object(Bucket="bkt", Key="src", Body=b"", Metadata={"v": "src"})
        s3.put_object(Bucket="bkt", Key="dst", Body=b"", Metadata={"v": "dst"})
        source = {"Bucket": "bkt", "Key": "src"}
        assert refusal(lambda: s3.copy_object(Bucket="bkt", Key="dst", CopySource=source, IfNoneMatch="*"))[
            :2
        ] == (412, "PreconditionFailed")
        assert refusal(lambda: s3.copy_object(Bucket="bkt", Key="dst", CopySource=source, IfMatch='"0"'))[
            :2
        ] == (412, "PreconditionFailed")
        assert version(s3, "dst") == "dst"
        s3.copy_object(Bucket="bkt", Key="dst", CopySource=source, IfMatch=EMPTY_ETAG)
        assert version(s3, "dst") == "src"
        s3.copy_object(Bucket="bkt", Key="new", CopySource=source, IfNoneMatch="*")
        assert version(s3, "new") == "src"

    with_gateway(tmp_path, calls)


def test_complete_multipart_upload_conditions(tmp_path: Path) -> None:
    def calls(s3: Any) -> None:
        s3.put_object(Bucket="bkt", Key="k", Body=b"", Metadata={"v": "1"})
        upload = s3.create_multipart_upload(Bucket="bkt", Key="k", Metadata={"v": "2"})["UploadId"]
        etag = s3.upload_part(Bucket="bkt", Key="k", UploadId=upload, PartNumber=1, Body=b"")["ETag"]
        parts = {"Parts": [{"PartNumber": 1, "ETag": etag}]}

        def complete(**condition: str) -> object:
            return s3.complete_multipart_upload(
                Bucket="bkt", Key="k", UploadId=upload, MultipartUpload=parts, **condition
            )

        assert refusal(lambda: complete(IfNoneMatch="*")) == (412, "PreconditionFailed", "If-None-Match")
        assert refusal(lambda: complete(IfMatch='"0123"'))[:2] == (412, "PreconditionFailed")
        assert version(s3, "k") == "1"
        complete(IfMatch=EMPTY_ETAG)  # the upload is still there after a refusal
        assert version(s3, "k") == "2"

    with_gateway(tmp_path, calls)


def test_a_condition_that_failed_only_at_commit_met_a_concurrent_write() -> None:
    """OM checks the condition at openKey too: one that held then and fails at the commit means another
    write landed meanwhile, which Amazon answers 409 ConditionalRequestConflict (retry)."""
    from types import SimpleNamespace

    from pyozone.client.errors import OMException
    from pyozone.s3g.errors import S3ErrorCode
    from pyozone.s3g.objects import conditional_error

    s3 = SimpleNamespace(bucket="bkt", key="k")
    exists = OMException("KEY_ALREADY_EXISTS", "key /s3v/bkt/k exists (If-None-Match: *)")
    changed = OMException("ETAG_MISMATCH", "key /s3v/bkt/k has ETag 'b', not 'a' (If-Match)")
    assert conditional_error(exists, s3).extra == {"Condition": "If-None-Match"}  # type: ignore[arg-type]
    assert conditional_error(changed, s3).extra == {"Condition": "If-Match"}  # type: ignore[arg-type]
    for refusal in (exists, changed):
        error = conditional_error(refusal, s3, committing=True)  # type: ignore[arg-type]
        assert (error.code, error.code.status) == (S3ErrorCode.ConditionalRequestConflict, 409)
    missing = conditional_error(OMException("KEY_NOT_FOUND", "k"), s3)  # type: ignore[arg-type]
    assert missing.code is S3ErrorCode.NoSuchKey
