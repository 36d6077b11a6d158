"""GET/HEAD by partNumber and GetObjectAttributes over the key's info, without a server (parts.py,
attributes.py), as Amazon's GetObject, HeadObject and GetObjectAttributes references describe them."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from pyozone.hdds.ids import RATIS_THREE
from pyozone.hdds.om_views import KeyInfo
from pyozone.s3g.attributes import attributes_document, max_parts, part_number_marker, requested_attributes
from pyozone.s3g.errors import S3Error, S3ErrorCode
from pyozone.s3g.headers import ByteRange
from pyozone.s3g.parts import PartSpan, part_number, part_span

MB = 1024 * 1024
PARTS = ((1, 5 * MB), (2, 5 * MB), (3, 7))
NS = "{http://s3.amazonaws.com/doc/2006-03-01/}"


def key(
    parts: tuple[tuple[int, int], ...] = PARTS,
    size: int | None = None,
    checksums: tuple[str, ...] = (),
    **metadata: str,
) -> KeyInfo:
    total = sum(s for _, s in parts) if size is None else size
    return KeyInfo(
        "v", "b", "k", total, 0, 0, RATIS_THREE, metadata={"ETag": "abc-3", **metadata}, parts=parts,
        part_checksums=checksums,
    )  # fmt: skip


def code(e: pytest.ExceptionInfo[S3Error]) -> S3ErrorCode:
    return e.value.code


@pytest.mark.parametrize(
    ("number", "span"),
    [
        ("1", ByteRange(0, 5 * MB - 1)),
        ("2", ByteRange(5 * MB, 10 * MB - 1)),
        ("3", ByteRange(10 * MB, 10 * MB + 6)),
    ],
)
def test_a_part_is_its_bytes_and_the_parts_count(number: str, span: ByteRange) -> None:
    assert part_span(number, False, key()) == PartSpan(span, 3)
    assert part_span(number, False, key(checksums=("a", "b", "c"))).checksum == "abc"[int(number) - 1]


def test_part_numbers_are_those_the_upload_completed_with() -> None:
    """Parts 1 and 3 completed: 3 is the second span, 2 is none of them."""
    gapped = key(((1, 5 * MB), (3, 10)))
    assert part_span("3", False, gapped) == PartSpan(ByteRange(5 * MB, 5 * MB + 9), 2)
    with pytest.raises(S3Error) as e:
        part_span("2", False, gapped)
    assert code(e) is S3ErrorCode.InvalidPartNumber


def test_an_empty_last_part_is_no_bytes_not_the_whole_object() -> None:
    """H11's note: an empty last part of a non-empty object was answered as the whole object."""
    part = part_span("2", False, key(((1, 5 * MB), (2, 0))))
    assert part.span is not None and part.span.length == 0 and part.count == 2


def test_a_part_beyond_the_last_is_not_satisfiable() -> None:
    with pytest.raises(S3Error) as e:
        part_span("4", False, key())
    assert code(e) is S3ErrorCode.InvalidPartNumber and e.value.code.value[0] == 416


def test_an_object_of_one_put_is_its_one_part() -> None:
    single = key((), size=10)
    assert part_span("1", False, single) == PartSpan(ByteRange(0, 9), None)
    assert part_span("1", False, key((), size=0)) == PartSpan(None, None)
    with pytest.raises(S3Error) as e:
        part_span("2", False, single)
    assert code(e) is S3ErrorCode.InvalidPartNumber


@pytest.mark.parametrize("raw", ["0", "10001", "-1", "one", ""])
def test_a_part_number_outside_1_to_10000_is_an_invalid_argument(raw: str) -> None:
    with pytest.raises(S3Error) as e:
        part_span(raw, False, key())
    assert code(e) is S3ErrorCode.InvalidArgument


def test_a_part_number_with_a_range_is_an_invalid_request() -> None:
    with pytest.raises(S3Error) as e:
        part_span("1", True, key())
    assert code(e) is S3ErrorCode.InvalidRequest


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, S3ErrorCode.InvalidRequest), ("", S3ErrorCode.InvalidRequest),
     ("ETag,Colour", S3ErrorCode.InvalidArgument), ("etag", S3ErrorCode.InvalidArgument)],
)  # fmt: skip
def test_object_attributes_missing_empty_or_unknown_are_refused(
    value: str | None, expected: S3ErrorCode
) -> None:
    with pytest.raises(S3Error) as e:
        requested_attributes(value)
    assert code(e) is expected


def test_every_attribute_may_be_asked_at_once() -> None:
    names = requested_attributes("ETag, Checksum,ObjectParts,StorageClass,ObjectSize")
    assert names == {"ETag", "Checksum", "ObjectParts", "StorageClass", "ObjectSize"}


def test_a_max_parts_or_marker_that_is_no_count_is_an_invalid_argument() -> None:
    """R31's I1 and F1: a max-parts that is no count was read as the default, and a superscript, another
    script's digit or 5,000 digits were a 500 (or read as a number)."""
    assert (max_parts(None), max_parts("2"), max_parts("5000")) == (1000, 2, 1000)
    assert max_parts("9" * 5000) == 1000
    assert part_number_marker(None) == 0 and part_number_marker("2") == 2
    for bad in ("x", "-1", "\u00b2", "\u0661", " 2"):
        with pytest.raises(S3Error) as e:
            max_parts(bad)
        assert code(e) is S3ErrorCode.InvalidArgument
    for bad in ("x", "-1", "10001", "\u00b2", "\u0661", "1" * 5000):
        with pytest.raises(S3Error) as e:
            part_number_marker(bad)
        assert code(e) is S3ErrorCode.InvalidArgument
    for bad in ("\u00b2", "\u0661", "1" * 5000, "+1"):
        with pytest.raises(S3Error) as e:
            part_number(bad)
        assert code(e) is S3ErrorCode.InvalidArgument


def document(info: KeyInfo, names: str, limit: int = 1000, marker: int = 0) -> ET.Element:
    return ET.fromstring(attributes_document(info, requested_attributes(names), limit, marker))


def test_attributes_are_the_ones_asked() -> None:
    root = document(key(**{"x-amz-checksum-crc32": "AAAAAA=="}), "ObjectSize,ETag")
    assert root.tag == f"{NS}GetObjectAttributesResponse"
    assert [(c.tag, c.text) for c in root] == [(f"{NS}ETag", "abc-3"), (f"{NS}ObjectSize", str(10 * MB + 7))]


def test_the_checksum_names_its_type() -> None:
    full = document(key(**{"x-amz-checksum-crc32c": "AAAAAA=="}), "Checksum").find(f"{NS}Checksum")
    assert full is not None
    assert (full.findtext(f"{NS}ChecksumCRC32C"), full.findtext(f"{NS}ChecksumType")) == (
        "AAAAAA==",
        "FULL_OBJECT",
    )
    composite = document(key(**{"x-amz-checksum-sha1": "AAAAAAAAAAAAAAAAAAAAAAAAAAA=-3"}), "Checksum")
    assert composite.findtext(f"{NS}Checksum/{NS}ChecksumType") == "COMPOSITE"
    assert document(key(), "Checksum").find(f"{NS}Checksum") is None


def test_object_parts_page_by_marker_and_max_parts() -> None:
    parts = document(key(**{"x-amz-checksum-crc32": "AAAAAA=="}), "ObjectParts", limit=2, marker=0).find(
        f"{NS}ObjectParts"
    )
    assert parts is not None
    names = ("PartsCount", "PartNumberMarker", "NextPartNumberMarker", "MaxParts", "IsTruncated")
    assert [parts.findtext(f"{NS}{n}") for n in names] == ["3", "0", "2", "2", "true"]
    shown = [(p.findtext(f"{NS}PartNumber"), p.findtext(f"{NS}Size")) for p in parts.findall(f"{NS}Part")]
    assert shown == [("1", str(5 * MB)), ("2", str(5 * MB))]
    kept = key(checksums=("AQAAAA==", "AgAAAA==", "AwAAAA=="), **{"x-amz-checksum-crc32": "AAAAAA==-3"})
    listed = document(kept, "ObjectParts").iter(f"{NS}Part")
    assert [p.findtext(f"{NS}ChecksumCRC32") for p in listed] == ["AQAAAA==", "AgAAAA==", "AwAAAA=="]
    rest = document(key(**{"x-amz-checksum-crc32": "AAAAAA=="}), "ObjectParts", limit=2, marker=2)
    assert [p.findtext(f"{NS}PartNumber") for p in rest.iter(f"{NS}Part")] == ["3"]
    assert rest.findtext(f"{NS}ObjectParts/{NS}IsTruncated") == "false"


def test_object_parts_lists_no_part_without_a_checksum_and_is_absent_for_a_single_put() -> None:
    """Amazon: without an additional checksum the response has no Part element."""
    parts = document(key(), "ObjectParts").find(f"{NS}ObjectParts")
    assert parts is not None and parts.findtext(f"{NS}PartsCount") == "3" and not parts.findall(f"{NS}Part")
    assert document(key((), size=5), "ObjectParts").find(f"{NS}ObjectParts") is None
