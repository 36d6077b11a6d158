"""GetObjectAttributes (`GET /bucket/key?attributes`): the attributes x-amz-object-attributes names, read
from the key's info alone (no data is read). ObjectParts comes from the part numbers and sizes OM keeps
with a completed multipart key (parts.py); it is absent for any other object, as in S3."""

from __future__ import annotations

from aiohttp import web

from pyozone.hdds.om_views import KeyInfo
from pyozone.s3g import sse, xml
from pyozone.s3g.auth.checksums import ChecksumAlgorithm
from pyozone.s3g.buckets import xml_response
from pyozone.s3g.errors import S3Error, S3ErrorCode
from pyozone.s3g.headers import ETAG, storage_class_name
from pyozone.s3g.numbers import decimal
from pyozone.s3g.objects import version_headers, version_info
from pyozone.s3g.parts import MAX_PART_NUMBER, checksum_type
from pyozone.s3g.request import MAX_LIST_ENTRIES, S3Request

ATTRIBUTES = frozenset({"ETag", "Checksum", "ObjectParts", "StorageClass", "ObjectSize"})
OBJECT_ATTRIBUTES = "x-amz-object-attributes"
MAX_PARTS = "x-amz-max-parts"
PART_NUMBER_MARKER = "x-amz-part-number-marker"


def requested_attributes(value: str | None) -> frozenset[str]:
    """x-amz-object-attributes: a comma-separated list of ATTRIBUTES (case-sensitive, as S3 reads them);
    missing or empty is InvalidRequest, an unknown name InvalidArgument."""
    names = frozenset(n.strip() for n in (value or "").split(",") if n.strip())
    if not names:
        raise S3Error(
            S3ErrorCode.InvalidRequest,
            "The x-amz-object-attributes header specifying the attributes to be retrieved is either missing "
            "or empty",
        )
    if not names <= ATTRIBUTES:
        raise S3Error(S3ErrorCode.InvalidArgument, "Invalid attribute name specified.")
    return names


def max_parts(value: str | None) -> int:
    """x-amz-max-parts: at most 1000, the default; a value that is no count is InvalidArgument (R31's I1:
    it was read as the default)."""
    if value is None or value == "":
        return MAX_LIST_ENTRIES
    count = decimal(value)
    if count is None:
        raise S3Error(
            S3ErrorCode.InvalidArgument,
            "Provided max-parts not an integer or within integer range",
            ArgumentName=MAX_PARTS,
            ArgumentValue=value,
        )
    return min(count, MAX_LIST_ENTRIES)


def part_number_marker(value: str | None) -> int:
    """x-amz-part-number-marker: 0 (the default) to 10,000, else InvalidArgument."""
    if value is None or value == "":
        return 0
    marker = decimal(value)
    if marker is None or marker > MAX_PART_NUMBER:
        raise S3Error(
            S3ErrorCode.InvalidArgument,
            f"Part number marker must be an integer between 0 and {MAX_PART_NUMBER}, inclusive",
            ArgumentName=PART_NUMBER_MARKER,
            ArgumentValue=value,
        )
    return marker


def attributes_document(info: KeyInfo, names: frozenset[str], limit: int, marker: int) -> bytes:
    """The GetObjectAttributesResponse of `names`, in S3's order."""
    checksums = [(a, v) for a in ChecksumAlgorithm if (v := info.metadata.get(a.header))]
    children: list[xml.ET.Element | None] = []
    if "ETag" in names and ETAG in info.metadata:
        children.append(xml.el("ETag", info.metadata[ETAG]))
    if "Checksum" in names and checksums:
        children.append(
            xml.el(
                "Checksum",
                None,
                *(xml.el(f"Checksum{a.value}", v) for a, v in checksums),
                xml.el("ChecksumType", checksum_type(checksums[0][1])),
            )
        )
    if "ObjectParts" in names and info.parts:
        children.append(_object_parts(info, limit, marker, checksums[0][0] if checksums else None))
    if "StorageClass" in names:
        children.append(xml.el("StorageClass", storage_class_name(info.replication)))
    if "ObjectSize" in names:
        children.append(xml.el("ObjectSize", info.data_size))
    return xml.document("GetObjectAttributesResponse", *children)


def _object_parts(
    info: KeyInfo, limit: int, marker: int, algorithm: ChecksumAlgorithm | None
) -> xml.ET.Element:
    """The parts after `marker`, at most `limit`. S3 lists them (Part elements, each with its checksum)
    only for an object with an additional checksum (`algorithm`)."""
    checksums = info.part_checksums or ("",) * len(info.parts)
    after = [(n, size, c) for (n, size), c in zip(info.parts, checksums, strict=True) if n > marker]
    page = after[:limit]
    return xml.el(
        "ObjectParts",
        None,
        xml.el("PartsCount", len(info.parts)),
        xml.el("PartNumberMarker", marker),
        xml.el("NextPartNumberMarker", page[-1][0] if page else marker),
        xml.el("MaxParts", limit),
        xml.el("IsTruncated", len(after) > len(page) > 0),  # never with an empty page (R31's I1: max 0)
        *(
            xml.el(
                "Part",
                None,
                xml.el("PartNumber", n),
                xml.el("Size", size),
                xml.el(f"Checksum{algorithm.value}", checksum)
                if algorithm is not None and checksum
                else None,
            )
            for n, size, checksum in (page if algorithm is not None else ())
        ),
    )


async def get_object_attributes(s3: S3Request) -> web.Response:
    names = requested_attributes(s3.headers.get(OBJECT_ATTRIBUTES))
    limit = max_parts(s3.headers.get(MAX_PARTS))
    marker = part_number_marker(s3.headers.get(PART_NUMBER_MARKER))
    sse.refuse_sse_s3_on_read(s3.headers)
    key = sse.request_key(s3)
    info = await version_info(s3)
    sse.check_read_key(info.encryption, key)  # an SSE-C object's attributes need its key, as its data
    body = attributes_document(info, names, limit, marker)
    return xml_response(
        body, **{"Last-Modified": xml.http_time(info.modification_time), **version_headers(info)}
    )
