"""A completed multipart object's parts as S3 shows them: GET and HEAD by `partNumber` answer one part's
bytes, GetObjectAttributes lists them. OM keeps each completed upload's part numbers and sizes with the key
(KeyInfo.parts, as Ozone's blocks carry their part number); any other key is S3's one part. Pure
functions of the request's values and the key's info."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pyozone.hdds.om_views import KeyInfo
from pyozone.s3g.errors import S3Error, S3ErrorCode
from pyozone.s3g.headers import COMPOSITE, FULL_OBJECT, ByteRange
from pyozone.s3g.numbers import decimal

MAX_PART_NUMBER = 10_000
PARTS_COUNT = "x-amz-mp-parts-count"
"""GET/HEAD by partNumber of a multipart object: how many parts it has (absent for any other object)."""


def part_number(raw: str) -> int:
    """A partNumber query value: 1 to 10,000 (S3's InvalidArgument otherwise)."""
    number = decimal(raw)
    if number is None or not 1 <= number <= MAX_PART_NUMBER:
        raise S3Error(
            S3ErrorCode.InvalidArgument,
            f"Part number must be an integer between 1 and {MAX_PART_NUMBER}, inclusive",
            ArgumentName="partNumber",
            ArgumentValue=raw,
        )
    return number


def check_part_number(query: Mapping[str, str]) -> None:
    """A GET's or HEAD's partNumber is checked before the key is looked up, as S3 does."""
    if "partNumber" in query:
        part_number(query["partNumber"])


@dataclass(frozen=True, slots=True)
class PartSpan:
    """What GET/HEAD ?partNumber answers: the part's bytes (None: all of an empty object; an empty last
    part of a multipart object is a span of no bytes, answered 200 without a Content-Range), the object's
    parts count (None: not a multipart object) and the part's own checksum if OM kept it ("": none)."""

    span: ByteRange | None
    count: int | None
    checksum: str = ""


def part_span(raw: str, ranged: bool, info: KeyInfo) -> PartSpan:
    """Part `raw` of the key. A Range with it is InvalidRequest; a part the object lacks is 416
    InvalidPartNumber. Any other object is one part: partNumber=1 is all of it (206 with its
    Content-Range)."""
    number = part_number(raw)
    if ranged:
        raise S3Error(
            S3ErrorCode.InvalidRequest, "Cannot specify both Range header and partNumber query parameter."
        )
    if not info.parts:
        if number != 1:
            raise S3Error(S3ErrorCode.InvalidPartNumber)
        return PartSpan(ByteRange(0, info.data_size - 1) if info.data_size else None, None)
    start = 0
    for index, (listed, size) in enumerate(info.parts):
        if listed == number:
            checksum = info.part_checksums[index] if index < len(info.part_checksums) else ""
            return PartSpan(ByteRange(start, start + size - 1), len(info.parts), checksum)
        start += size
    raise S3Error(S3ErrorCode.InvalidPartNumber)


def checksum_type(value: str) -> str:
    """A stored checksum's type: a COMPOSITE one ends in `-N` (base64 has no `-`), a FULL_OBJECT one not."""
    return COMPOSITE if "-" in value else FULL_OBJECT
