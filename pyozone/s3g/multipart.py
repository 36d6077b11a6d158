"""Multipart uploads: each part is a key write of its own that OM records under the upload, and the
completion commits the object atomically in OM (parts are never copied). The object's ETag is S3's
`md5-of-md5s-N`: the MD5 of the parts' binary MD5s, then the number of parts.

Checksums are S3's: each part's is verified when it is uploaded and kept with the part; the completion
compares the part checksums its XML names with the kept ones. The object's COMPOSITE checksum is the
algorithm over the parts' raw checksums, then `-N`; its FULL_OBJECT one (a CRC) the CRC of the whole
object, combined from the parts' CRCs and sizes (crc_combine.py) without reading the data again. A checksum
in the completion's x-amz-checksum-* header is compared with it (BadDigest)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import replace

from aiohttp import web

from pyozone.client.errors import OzoneClientError
from pyozone.hdds.om_views import UPLOAD_ALGORITHM, KeyInfo, PartInfo
from pyozone.hdds.security.sse import SseKeyError
from pyozone.s3g import sse, xml
from pyozone.s3g.acls import bucket_owner
from pyozone.s3g.auth.checksums import BY_HEADER, ChecksumAlgorithm, decode_checksum, mismatch
from pyozone.s3g.auth.crc_combine import crc32_combine, crc32c_combine, crc64nvme_combine
from pyozone.s3g.buckets import owner, xml_response
from pyozone.s3g.errors import S3Error, S3ErrorCode
from pyozone.s3g.headers import (
    CHECKSUM_TYPE,
    COMPOSITE,
    ETAG,
    FULL_OBJECT,
    ByteRange,
    object_metadata,
    storage_class,
    storage_class_name,
    tagging_header,
    write_condition,
)
from pyozone.s3g.lock_headers import lock_metadata
from pyozone.s3g.numbers import decimal
from pyozone.s3g.objects import (
    checksum_headers,
    conditional_error,
    open_copy_source,
    read_range,
    version_headers,
    write_body,
)
from pyozone.s3g.om_errors import s3_error
from pyozone.s3g.parts import MAX_PART_NUMBER, checksum_type, part_number
from pyozone.s3g.request import MAX_LIST_ENTRIES, S3Request

CHECKSUM_ALGORITHM = "x-amz-checksum-algorithm"
UPLOAD_CHECKSUM_TYPE = "s3.multipart.checksumType"
"""Kept beside UPLOAD_ALGORITHM: COMPOSITE or FULL_OBJECT, as the upload was created."""
COMPOSITE_ALGORITHMS = (ChecksumAlgorithm.CRC32, ChecksumAlgorithm.CRC32C, ChecksumAlgorithm.SHA1,
                        ChecksumAlgorithm.SHA256)  # fmt: skip
"""Amazon's COMPOSITE algorithms (CRC64NVME is FULL_OBJECT only)."""
COMBINE = {
    ChecksumAlgorithm.CRC32: crc32_combine,
    ChecksumAlgorithm.CRC32C: crc32c_combine,
    ChecksumAlgorithm.CRC64NVME: crc64nvme_combine,
}
"""Amazon's FULL_OBJECT algorithms, the CRCs (a SHA of the whole cannot be had from its parts')."""
UPLOAD_ID = "s3.multipart.uploadId"
"""Kept in a completed key's metadata (never returned as a header): a repeated completion is recognised."""
MAX_PART_BYTES = 5 * 1024**3


def multipart_etag(part_etags: Sequence[str]) -> str:
    """S3's ETag of a completed upload; a part ETag that is not an MD5 is InvalidPart."""
    digest = hashlib.md5(usedforsecurity=False)
    for etag in part_etags:
        try:
            digest.update(bytes.fromhex(etag))
        except ValueError:
            raise S3Error(S3ErrorCode.InvalidPart) from None
    return f"{digest.hexdigest()}-{len(part_etags)}"


def _upload_id(s3: S3Request) -> str:
    upload_id = s3.query.get("uploadId", "")
    if not upload_id:
        raise S3Error(S3ErrorCode.NoSuchUpload, UploadId=upload_id)
    return upload_id


def _part_number(s3: S3Request) -> int:
    return part_number(s3.query.get("partNumber", ""))


def check_checksum_type(algorithm: ChecksumAlgorithm, checksum_type: str) -> None:
    """Amazon's pairs: CRC32 and CRC32C are either type, CRC64NVME only FULL_OBJECT, SHA1 and SHA256 only
    COMPOSITE (400 InvalidRequest otherwise)."""
    allowed = COMBINE if checksum_type == FULL_OBJECT else COMPOSITE_ALGORITHMS
    if algorithm not in allowed:
        raise S3Error(
            S3ErrorCode.InvalidRequest,
            f"The {checksum_type} checksum type cannot be used with the {algorithm.value.lower()} checksum "
            "algorithm.",
        )


def _upload_checksum(headers: Mapping[str, str]) -> tuple[ChecksumAlgorithm, str] | None:
    """CreateMultipartUpload's x-amz-checksum-algorithm and x-amz-checksum-type: the type defaults to
    COMPOSITE, but for CRC64NVME (FULL_OBJECT only); a type without an algorithm is InvalidRequest."""
    name, asked = headers.get(CHECKSUM_ALGORITHM), headers.get(CHECKSUM_TYPE)
    if name is None:
        if asked is not None:
            raise S3Error(
                S3ErrorCode.InvalidRequest,
                "The x-amz-checksum-type header can only be used with the x-amz-checksum-algorithm header.",
            )
        return None
    try:
        algorithm = ChecksumAlgorithm(name.upper())
    except ValueError:
        raise S3Error(S3ErrorCode.InvalidRequest, f"Checksum algorithm {name!r} is invalid.") from None
    default = FULL_OBJECT if algorithm is ChecksumAlgorithm.CRC64NVME else COMPOSITE
    checksum_type = asked.upper() if asked is not None else default
    check_checksum_type(algorithm, checksum_type)
    return algorithm, checksum_type


async def create_multipart_upload(s3: S3Request) -> web.Response:
    metadata = object_metadata(s3.headers) | lock_metadata(s3.headers)
    headers = {}
    if (checksum := _upload_checksum(s3.headers)) is not None:
        algorithm, checksum_type = checksum
        metadata[UPLOAD_ALGORITHM] = algorithm.value
        metadata[UPLOAD_CHECKSUM_TYPE] = checksum_type
        headers = {CHECKSUM_ALGORITHM: algorithm.value, CHECKSUM_TYPE: checksum_type}
    encryption = sse.requested(s3)
    try:
        started = await s3.gateway.client.start_multipart_upload(
            s3.gateway.volume, s3.bucket, s3.key, replication=storage_class(s3.headers),
            metadata=metadata, tags=tagging_header(s3.headers.get("x-amz-tagging")),
            sse_s3=encryption.sse_s3, customer_key=encryption.customer_key,
        )  # fmt: skip
    except OzoneClientError as e:
        raise s3_error(e, BucketName=s3.bucket, Key=s3.key) from None
    headers.update(sse.started_headers(encryption, started.algorithm))
    body = xml.document(
        "InitiateMultipartUploadResult",
        xml.el("Bucket", s3.bucket),
        xml.el("Key", s3.key),
        xml.el("UploadId", started.upload_id),
    )
    return xml_response(body, **headers)


async def upload_part(s3: S3Request) -> web.Response:
    upload_id, part_number = _upload_id(s3), _part_number(s3)
    size = s3.body.require_length()
    if size is not None and size > MAX_PART_BYTES:
        raise S3Error(S3ErrorCode.EntityTooLarge, MaxSizeAllowed=str(MAX_PART_BYTES), ProposedSize=str(size))
    required = (await _upload_algorithm(s3, upload_id))[0]
    sent = s3.body.checksum_algorithm
    if required is not None and sent is not required:
        raise S3Error(
            S3ErrorCode.InvalidRequest,
            f"Checksum Type mismatch occurred, expected checksum Type: {required.value.lower()}, actual "
            f"checksum Type: {sent.value.lower() if sent is not None else 'null'}",
        )
    sse.refuse_sse_s3_on_read(s3.headers)  # a part is encrypted as its upload is
    key = sse.request_key(s3)
    try:
        out = await s3.gateway.client.create_multipart_key(
            s3.gateway.volume, s3.bucket, s3.key, upload_id, part_number, size_hint=size or 0,
            datastream=None if size is not None else True, customer_key=key,
        )  # fmt: skip
        encryption = await sse.check_part_key(out, key)
        async with out:
            stored = await write_body(s3, out)
            stored[ETAG] = sse.etag(stored[ETAG], key)  # SSE-C: keyed as a single PUT's (R36 F6)
            out.metadata.update(stored)
    except OzoneClientError as e:
        raise s3_error(e, BucketName=s3.bucket, Key=s3.key, UploadId=upload_id) from None
    except SseKeyError as e:
        raise sse.key_error(e, "part") from None
    headers = {"ETag": f'"{stored[ETAG]}"', **checksum_headers(stored), **sse.answer_headers(encryption)}
    return web.Response(status=200, headers=headers)


def _copy_range(value: str | None, size: int) -> ByteRange:
    """x-amz-copy-source-range: `bytes=first-last`, both given and within the source (S3's rule)."""
    if value is None:
        return ByteRange(0, size - 1)
    unit, _, spec = value.partition("=")
    first, dash, last = spec.partition("-")
    start, end = decimal(first), decimal(last)
    if unit != "bytes" or not dash or start is None or end is None or start > end:
        message = (
            "The x-amz-copy-source-range value must be of the form bytes=first-last where first and last "
            "are the zero-based offsets of the first and last bytes to copy"
        )
        raise S3Error(
            S3ErrorCode.InvalidArgument, message, ArgumentName="x-amz-copy-source-range", ArgumentValue=value
        )
    if end >= size:
        raise S3Error(
            S3ErrorCode.InvalidRange, f"Range specified is not valid for source object of size: {size}"
        )
    return ByteRange(start, end)


async def upload_part_copy(s3: S3Request) -> web.Response:
    upload_id, part_number = _upload_id(s3), _part_number(s3)
    sse.refuse_sse_s3_on_read(s3.headers)
    key = sse.request_key(s3)
    stream = await open_copy_source(s3)
    source_version = stream.info.version_id
    async with stream:
        span = _copy_range(s3.headers.get("x-amz-copy-source-range"), stream.info.data_size)
        if span.length > MAX_PART_BYTES:
            raise S3Error(S3ErrorCode.EntityTooLarge)
        md5 = hashlib.md5(usedforsecurity=False)
        algorithm = (await _upload_algorithm(s3, upload_id))[0]  # S3 computes the part's checksum then
        checksum = algorithm.hasher() if algorithm is not None else None
        try:
            out = await s3.gateway.client.create_multipart_key(
                s3.gateway.volume, s3.bucket, s3.key, upload_id, part_number, size_hint=max(span.length, 0),
                customer_key=key,
            )  # fmt: skip
            encryption = await sse.check_part_key(out, key)
            async with out:
                if span.length > 0:
                    async for piece in read_range(stream, span, s3.gateway.settings.buffer_size):
                        md5.update(piece)
                        if checksum is not None:
                            checksum.update(piece)
                        await out.write(piece)
                etag = sse.etag(md5.hexdigest(), key)
                out.metadata[ETAG] = etag
                if algorithm is not None and checksum is not None:
                    out.metadata[algorithm.header] = base64.b64encode(checksum.digest()).decode()
            committed = out.key_info
        except OzoneClientError as e:
            raise s3_error(e, BucketName=s3.bucket, Key=s3.key, UploadId=upload_id) from None
        except SseKeyError as e:
            raise sse.key_error(e, "part") from None
    modified = committed.modification_time if committed is not None else 0
    body = xml.document(
        "CopyPartResult",
        xml.el("LastModified", xml.iso_time(modified)),
        xml.el("ETag", f'"{etag}"'),
        *(xml.el(f"Checksum{a.value}", v) for a in ChecksumAlgorithm if (v := out.metadata.get(a.header))),
    )
    headers = {"x-amz-copy-source-version-id": source_version} if source_version else {}
    return xml_response(body, **headers, **sse.answer_headers(encryption))


async def complete_multipart_upload(s3: S3Request) -> web.Response:
    upload_id = _upload_id(s3)
    sse.refuse_sse_s3_on_read(s3.headers)
    customer_key = sse.request_key(s3)  # SDKs send an SSE-C upload's key again: OM compares it
    request = xml.parse(await s3.body.read_all(), "CompleteMultipartUpload")
    parts: list[tuple[int, str]] = []
    claimed: dict[int, tuple[ChecksumAlgorithm, str]] = {}
    for node in request.findall("Part"):
        number = decimal((xml.text(node, "PartNumber") or "").strip())
        if number is None:
            raise S3Error(S3ErrorCode.MalformedXML)
        parts.append((number, (xml.text(node, "ETag") or "").strip().strip('"')))
        for algorithm in ChecksumAlgorithm:
            if (value := xml.text(node, f"Checksum{algorithm.value}", required=False)) is not None:
                claimed[number] = (algorithm, value.strip())
    if not parts:
        raise S3Error(S3ErrorCode.MalformedXML, "You must specify at least one part")
    if any(b[0] <= a[0] for a, b in itertools.pairwise(parts)):
        raise S3Error(S3ErrorCode.InvalidPartOrder, UploadId=upload_id)
    try:
        etag = multipart_etag([p[1] for p in parts])
    except S3Error:
        await _upload_algorithm(s3, upload_id)  # an unknown upload is NoSuchUpload, whatever its body names
        raise
    completed: KeyInfo | None = None  # a repeated completion is answered without its version
    try:
        checksum = await _object_checksum(s3, upload_id, [p[0] for p in parts], claimed)
    except S3Error as e:  # the parts are gone once the upload completed: a retry is answered from the key
        if e.code is not S3ErrorCode.NoSuchUpload:
            raise
        checksum = await _repeated(s3, upload_id, etag, e)
    else:
        metadata = {ETAG: etag, UPLOAD_ID: upload_id}
        if checksum is not None:
            metadata[checksum[0].header] = checksum[1]
        try:
            completed = await s3.gateway.client.complete_multipart_upload(
                s3.gateway.volume, s3.bucket, s3.key, upload_id, parts, metadata=metadata,
                condition=write_condition(s3.headers),
                part_checksum=checksum[0].header if checksum is not None else "",  # kept for ObjectParts
                customer_key=customer_key,
            )  # fmt: skip
        except OzoneClientError as e:
            refused = conditional_error(e, s3)
            if refused.code is S3ErrorCode.PreconditionFailed:
                raise refused from None
            error = s3_error(e, BucketName=s3.bucket, Key=s3.key, UploadId=upload_id)
            if error.code is not S3ErrorCode.NoSuchUpload:
                raise error from None
            checksum = await _repeated(s3, upload_id, etag, error)
    body = xml.document(
        "CompleteMultipartUploadResult",
        xml.el("Location", f"{s3.http.scheme}://{s3.http.host}/{s3.bucket}/{s3.key}"),
        xml.el("Bucket", s3.bucket),
        xml.el("Key", s3.key),
        xml.el("ETag", f'"{etag}"'),
        xml.el(f"Checksum{checksum[0].value}", checksum[1]) if checksum is not None else None,
        xml.el("ChecksumType", checksum_type(checksum[1])) if checksum is not None else None,
    )
    encryption = completed.encryption if completed is not None else None
    return xml_response(body, **version_headers(completed), **sse.answer_headers(encryption))


def _full_object_crc(algorithm: ChecksumAlgorithm, crcs: Sequence[bytes], sizes: Sequence[int]) -> bytes:
    """The CRC of the parts' concatenation from their CRCs and sizes (crc_combine.py)."""
    combined = int.from_bytes(crcs[0])
    for crc, size in zip(crcs[1:], sizes[1:], strict=True):
        combined = COMBINE[algorithm](combined, int.from_bytes(crc), size)
    return combined.to_bytes(algorithm.size)


async def _object_checksum(
    s3: S3Request, upload_id: str, numbers: list[int], claimed: dict[int, tuple[ChecksumAlgorithm, str]]
) -> tuple[ChecksumAlgorithm, str] | None:
    """The object's checksum, when the upload was created with one or the completion names one (in its
    XML's parts or its x-amz-checksum-* header): every part's claimed checksum must be the one verified at
    its upload, and the header's value the object's checksum (a COMPOSITE one with or without its `-N`).
    The type is the upload's; an upload created without one takes the completion's x-amz-checksum-type."""
    kept, (required, created_type) = await _part_metadata(s3, upload_id)
    asked = s3.headers.get(CHECKSUM_TYPE, "").upper() or None
    if required is not None and asked is not None and asked != created_type:
        raise S3Error(
            S3ErrorCode.InvalidRequest,
            f"The upload was created using the {created_type} checksum mode. The complete request must use "
            "the same checksum mode.",
        )
    kind = created_type or asked or COMPOSITE
    if required is not None and kind == COMPOSITE:
        for number in numbers:
            if claimed.get(number, (None, ""))[0] is not required:
                raise S3Error(
                    S3ErrorCode.InvalidRequest,
                    f"The upload was created using a {required.value.lower()} checksum. The complete request "
                    f"must include the checksum for each part. It was missing for part {number} in the "
                    "request.",
                )
    named = [(BY_HEADER[name], value) for name in BY_HEADER if (value := s3.headers.get(name)) is not None]
    algorithms = {a for a, _ in claimed.values()} | {a for a, _ in named} | ({required} - {None})
    if not algorithms:
        return None
    if len(algorithms) > 1 or len(named) > 1:
        raise S3Error(S3ErrorCode.InvalidRequest, "A multipart upload's parts have one checksum algorithm.")
    [algorithm] = algorithms
    assert algorithm is not None
    check_checksum_type(algorithm, kind)
    if numbers != list(range(1, len(numbers) + 1)):  # Amazon's CompletedPart.PartNumber (R31's F4)
        raise S3Error(
            S3ErrorCode.InvalidPartOrder,
            "With checksums, the part numbers must start at 1 and be consecutive.",
            UploadId=upload_id,
        )
    raws: list[bytes] = []
    for number in numbers:
        part = kept.get(number)
        stored = part.metadata.get(algorithm.header) if part is not None else None
        if stored is None or (number in claimed and claimed[number][1] != stored):
            raise S3Error(
                S3ErrorCode.InvalidPart,
                f"Part {number} was not uploaded with the {algorithm.value} checksum the request names.",
                UploadId=upload_id,
            )
        raws.append(decode_checksum(algorithm, stored, trailing=False))
    if kind == FULL_OBJECT:
        sizes = [kept[number].size for number in numbers]
        whole = await asyncio.to_thread(_full_object_crc, algorithm, raws, sizes)  # off the event loop
        if named and decode_checksum(algorithm, named[0][1], trailing=False) != whole:
            raise mismatch(algorithm)
        return algorithm, base64.b64encode(whole).decode()
    digest = algorithm.hasher()
    for raw in raws:
        digest.update(memoryview(raw))
    composite = digest.digest()
    if named and decode_checksum(algorithm, named[0][1].rsplit("-", 1)[0], trailing=False) != composite:
        raise mismatch(algorithm)
    return algorithm, f"{base64.b64encode(composite).decode()}-{len(numbers)}"


async def _part_metadata(
    s3: S3Request, upload_id: str
) -> tuple[dict[int, PartInfo], tuple[ChecksumAlgorithm | None, str | None]]:
    """Every part as committed, page by page (OM lists at most MAX_LIST_ENTRIES at a time), and the
    algorithm and type the upload was created with."""
    kept: dict[int, PartInfo] = {}
    metadata: Mapping[str, str] = {}
    marker, truncated = 0, True
    while truncated:
        try:
            page = await s3.gateway.client.list_parts(
                s3.gateway.volume,
                s3.bucket,
                s3.key,
                upload_id,
                part_number_marker=marker,
                max_parts=MAX_LIST_ENTRIES,
            )
        except OzoneClientError as e:
            raise s3_error(e, BucketName=s3.bucket, Key=s3.key, UploadId=upload_id) from None
        kept.update({p.part_number: p for p in page.parts})
        metadata = page.metadata
        marker, truncated = page.next_part_number_marker, page.truncated and bool(page.parts)
    return kept, _created_with(metadata)


async def _upload_algorithm(s3: S3Request, upload_id: str) -> tuple[ChecksumAlgorithm | None, str | None]:
    """The checksum algorithm and type the upload was created with (NoSuchUpload if there is no such
    upload)."""
    try:
        page = await s3.gateway.client.list_parts(
            s3.gateway.volume, s3.bucket, s3.key, upload_id, max_parts=1
        )
    except OzoneClientError as e:
        raise s3_error(e, BucketName=s3.bucket, Key=s3.key, UploadId=upload_id) from None
    return _created_with(page.metadata)


def _created_with(upload_metadata: Mapping[str, str]) -> tuple[ChecksumAlgorithm | None, str | None]:
    name = upload_metadata.get(UPLOAD_ALGORITHM)
    if name is None:
        return None, None
    return ChecksumAlgorithm(name), upload_metadata.get(UPLOAD_CHECKSUM_TYPE, COMPOSITE)


async def _repeated(
    s3: S3Request, upload_id: str, etag: str, missing: S3Error
) -> tuple[ChecksumAlgorithm, str] | None:
    """The checksum the first completion answered, when this upload already completed into the key with
    these parts (S3 answers a repeated completion, a client's retry after a lost answer, as it answered
    the first); else `missing` (NoSuchUpload) is raised."""
    try:
        info = await s3.gateway.client.key_info(s3.gateway.volume, s3.bucket, s3.key)
    except OzoneClientError:
        raise missing from None
    if info.metadata.get(UPLOAD_ID) != upload_id or info.metadata.get(ETAG) != etag:
        raise missing
    return next(((a, info.metadata[a.header]) for a in ChecksumAlgorithm if a.header in info.metadata), None)


async def abort_multipart_upload(s3: S3Request) -> web.Response:
    upload_id = _upload_id(s3)
    try:
        await s3.gateway.client.abort_multipart_upload(s3.gateway.volume, s3.bucket, s3.key, upload_id)
    except OzoneClientError as e:
        raise s3_error(e, BucketName=s3.bucket, Key=s3.key, UploadId=upload_id) from None
    return web.Response(status=204)


async def list_parts(s3: S3Request) -> web.Response:
    sse.refuse_sse_s3_on_read(s3.headers)
    key = sse.request_key(s3)
    upload_id = _upload_id(s3)
    marker = s3.int_query("part-number-marker", 0, 0, MAX_PART_NUMBER)
    max_parts = s3.page_size("max-parts")
    try:
        listing = await s3.gateway.client.list_parts(  # OM reads 0 as its default: ask for one, show none
            s3.gateway.volume,
            s3.bucket,
            s3.key,
            upload_id,
            part_number_marker=marker,
            max_parts=max_parts or 1,
        )
    except OzoneClientError as e:
        raise s3_error(e, BucketName=s3.bucket, Key=s3.key, UploadId=upload_id) from None
    if max_parts == 0:
        listing = replace(listing, parts=(), next_part_number_marker=marker, truncated=bool(listing.parts))
    checksums = sse.part_checksums_shown(listing.sse_algorithm, listing.customer_key_md5, key)
    parts = (
        xml.el(
            "Part",
            None,
            xml.el("PartNumber", p.part_number),
            xml.el("LastModified", xml.iso_time(p.modification_ms)),
            xml.el("ETag", f'"{p.etag}"'),
            xml.el("Size", p.size),
            *(
                xml.el(f"Checksum{a.value}", p.metadata[a.header])
                for a in ChecksumAlgorithm
                if checksums and a.header in p.metadata
            ),
        )
        for p in listing.parts
    )
    shown = await bucket_owner(s3)
    body = xml.document(
        "ListPartsResult",
        xml.el("Bucket", s3.bucket),
        xml.el("Key", s3.key),
        xml.el("UploadId", upload_id),
        _initiator(shown),
        owner(shown),
        xml.el("StorageClass", storage_class_name(listing.replication)),
        xml.el("PartNumberMarker", marker),
        xml.el("NextPartNumberMarker", listing.next_part_number_marker),
        xml.el("MaxParts", max_parts),
        xml.el("IsTruncated", listing.truncated),
        *parts,
    )
    return xml_response(body)


def _initiator(name: str) -> xml.ET.Element:
    """An upload's initiator and owner, shown as its bucket's owner (acls.py: OM records no uploader)."""
    return xml.el("Initiator", None, xml.el("ID", name), xml.el("DisplayName", name))


async def list_multipart_uploads(s3: S3Request) -> web.Response:
    prefix = s3.query.get("prefix", "")
    key_marker, upload_marker = s3.query.get("key-marker", ""), s3.query.get("upload-id-marker", "")
    max_uploads = s3.page_size("max-uploads")
    client = s3.gateway.client
    try:
        uploads = await client.list_multipart_uploads(
            s3.gateway.volume, s3.bucket, prefix=prefix, key_marker=key_marker,
            upload_id_marker=upload_marker, max_uploads=max(max_uploads, 1),
        )  # fmt: skip
        uploads = uploads[:max_uploads]
        # one more after the page tells whether it is truncated (OM answers at most 1000 at once)
        truncated = bool(uploads) and len(uploads) == max_uploads and bool(
            await client.list_multipart_uploads(
                s3.gateway.volume, s3.bucket, prefix=prefix, key_marker=uploads[-1].key,
                upload_id_marker=uploads[-1].upload_id, max_uploads=1,
            )
        )  # fmt: skip
    except OzoneClientError as e:
        raise s3_error(e, BucketName=s3.bucket) from None
    shown = await bucket_owner(s3) if uploads else ""
    entries = (
        xml.el(
            "Upload",
            None,
            xml.el("Key", u.key),
            xml.el("UploadId", u.upload_id),
            _initiator(shown),
            owner(shown),
            xml.el("StorageClass", storage_class_name(u.replication)),
            xml.el("Initiated", xml.iso_time(u.creation_ms)),
        )
        for u in uploads
    )
    last = uploads[-1] if truncated and uploads else None
    body = xml.document(
        "ListMultipartUploadsResult",
        xml.el("Bucket", s3.bucket),
        xml.el("KeyMarker", key_marker),
        xml.el("UploadIdMarker", upload_marker),
        xml.el("NextKeyMarker", last.key) if last else None,
        xml.el("NextUploadIdMarker", last.upload_id) if last else None,
        xml.el("Prefix", prefix),
        xml.el("MaxUploads", max_uploads),
        xml.el("IsTruncated", truncated),
        *entries,
    )
    return xml_response(body)
