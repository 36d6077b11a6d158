"""S3's header rules: stored metadata, tags, byte ranges and preconditions."""

from __future__ import annotations

import pytest

from pyozone.hdds.ids import RATIS_ONE, RATIS_THREE, ReplicationConfig
from pyozone.s3g.errors import S3Error, S3ErrorCode
from pyozone.s3g.headers import (
    ByteRange,
    Precondition,
    byte_range,
    object_metadata,
    precondition,
    storage_class,
    storage_class_name,
    tagging_header,
)
from pyozone.s3g.multipart import multipart_etag

SIZE = 1000


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (None, None),
        ("bytes=0-0", ByteRange(0, 0)),
        ("bytes=10-19", ByteRange(10, 19)),
        ("bytes=990-", ByteRange(990, 999)),
        ("bytes=-10", ByteRange(990, 999)),
        ("bytes=-5000", ByteRange(0, 999)),
        ("bytes=900-5000", ByteRange(900, 999)),
        ("bytes=20-10", None),  # unsatisfiable syntax: the whole object, as S3 answers
        ("bytes=a-b", None),
        ("items=0-1", None),
        ("bytes=0-1,5-6", None),
    ],
)
def test_byte_range(header: str | None, expected: ByteRange | None) -> None:
    assert byte_range(header, SIZE) == expected


@pytest.mark.parametrize("header", ["bytes=1000-", "bytes=5000-6000", "bytes=-0"])
def test_a_range_past_the_end_is_invalid_range(header: str) -> None:
    with pytest.raises(S3Error) as e:
        byte_range(header, SIZE)
    assert e.value.code is S3ErrorCode.InvalidRange and e.value.code.status == 416


def test_metadata_keeps_stored_headers_and_user_metadata() -> None:
    headers = {
        "Content-Type": "text/plain",
        "Content-Encoding": "gzip,aws-chunked",
        "X-Amz-Meta-Colour": "blue",
        "Authorization": "AWS4-HMAC-SHA256 ...",
    }
    assert object_metadata(headers) == {
        "Content-Type": "text/plain",
        "Content-Encoding": "gzip",
        "x-amz-meta-colour": "blue",
    }


def test_user_metadata_is_bounded() -> None:
    with pytest.raises(S3Error) as e:
        object_metadata({"x-amz-meta-big": "x" * 2100})
    assert e.value.code is S3ErrorCode.MetadataTooLarge


@pytest.mark.parametrize("value", ["a\rb", "a\nb", "a\x00b", "a\x0bb", "a\x7fb", "a\udcffb"])
def test_stored_values_a_header_cannot_carry_are_refused(value: str) -> None:
    """Review R28 F8: a POST form's fields are not headers; what is kept is sent back as one."""
    for name in ("Content-Type", "Expires", "x-amz-meta-note"):
        with pytest.raises(S3Error) as e:
            object_metadata({name: value}, from_form=True)
        assert (e.value.code, e.value.extra) == (S3ErrorCode.InvalidArgument, {"ArgumentName": name})
    assert object_metadata({"x-amz-meta-note": "a\tb é"}, from_form=True) == {"x-amz-meta-note": "a\tb é"}


@pytest.mark.parametrize("name", ["x-amz-meta-a b", "x-amz-meta-a:b", "x-amz-meta-é", "x-amz-meta-a\x00b"])
def test_stored_names_a_header_cannot_carry_are_refused(name: str) -> None:
    """R30's P5: a form's field name became a metadata name no header can carry (`x-amz-meta-a:b` came
    back as `x-amz-meta-a: b: v`); a request's own header names are tokens already."""
    with pytest.raises(S3Error) as e:
        object_metadata({name: "v"}, from_form=True)
    assert (e.value.code, e.value.extra) == (S3ErrorCode.InvalidArgument, {"ArgumentName": name})
    assert object_metadata({"x-amz-meta-a_b.c~1": "v"}, from_form=True) == {"x-amz-meta-a_b.c~1": "v"}


def test_storage_classes() -> None:
    assert storage_class({}) is None
    assert storage_class({"x-amz-storage-class": "REDUCED_REDUNDANCY"}) == RATIS_ONE
    assert storage_class({"x-amz-storage-class": "STANDARD"}) is None  # the bucket's
    with pytest.raises(S3Error) as e:
        storage_class({"x-amz-storage-class": "GLACIER"})
    assert e.value.code is S3ErrorCode.InvalidStorageClass


def test_storage_class_names_answered() -> None:
    assert storage_class_name(RATIS_ONE) == "REDUCED_REDUNDANCY"
    assert storage_class_name(RATIS_THREE) == "STANDARD"
    assert storage_class_name(ReplicationConfig.parse("rs-3-2-1024k")) == "STANDARD"


def test_tagging_header_rules() -> None:
    assert tagging_header("a=1&b=&c%20d=e%2Ff") == {"a": "1", "b": "", "c d": "e/f"}
    for bad in ("a=1&a=2", "&".join(f"k{i}=v" for i in range(11)), "x" * 129 + "=v", "k=" + "v" * 257):
        with pytest.raises(S3Error) as e:
            tagging_header(bad)
        assert e.value.code is S3ErrorCode.InvalidTag


ETAG, MODIFIED_MS = "abc", 1_700_000_000_000
EARLIER = "Mon, 13 Nov 2023 00:00:00 GMT"
LATER = "Wed, 15 Nov 2023 00:00:00 GMT"


@pytest.mark.parametrize(
    ("headers", "outcome"),
    [
        ({}, Precondition.OK),
        ({"if-match": '"abc"'}, Precondition.OK),
        ({"if-match": "*"}, Precondition.OK),
        ({"if-match": '"other"'}, Precondition.FAILED),
        ({"if-none-match": '"abc"'}, Precondition.NOT_MODIFIED),
        ({"if-none-match": '"other"'}, Precondition.OK),
        ({"if-modified-since": LATER}, Precondition.NOT_MODIFIED),
        ({"if-modified-since": EARLIER}, Precondition.OK),
        ({"if-unmodified-since": EARLIER}, Precondition.FAILED),
        ({"if-unmodified-since": LATER}, Precondition.OK),
        ({"if-match": '"abc"', "if-unmodified-since": EARLIER}, Precondition.OK),  # If-Match wins
        ({"if-none-match": '"other"', "if-modified-since": LATER}, Precondition.OK),  # If-None-Match wins
        ({"if-modified-since": "not a date"}, Precondition.OK),
    ],
)
def test_preconditions(headers: dict[str, str], outcome: int) -> None:
    assert precondition(headers, ETAG, MODIFIED_MS) == outcome


def test_a_copy_source_precondition_fails_rather_than_not_modified() -> None:
    headers = {"x-amz-copy-source-if-none-match": '"abc"'}
    assert precondition(headers, ETAG, MODIFIED_MS, "x-amz-copy-source-") == Precondition.FAILED


def test_multipart_etag_is_md5_of_md5s_and_the_part_count() -> None:
    import hashlib

    parts = [hashlib.md5(b"one").hexdigest(), hashlib.md5(b"two").hexdigest()]
    joined = hashlib.md5(b"one").digest() + hashlib.md5(b"two").digest()
    assert multipart_etag(parts) == f"{hashlib.md5(joined).hexdigest()}-2"
    with pytest.raises(S3Error) as e:
        multipart_etag(["not-hex"])
    assert e.value.code is S3ErrorCode.InvalidPart
