"""MultipartManager: S3 multipart uploads as Ozone's OM keeps them (S3InitiateMultipartUploadRequest,
S3MultipartUploadCommitPartRequest, S3MultipartUploadCompleteRequest, S3MultipartUploadAbortRequest).

An upload in progress is one multipartInfoTable entry holding its committed parts. A part is written as an
open key (openKey naming the upload and part number) and committed into the entry; a part committed again
under its number replaces the older one, whose blocks go to deletedTable. Completing the upload writes, in
one batch under the namespace lock, the key (the listed parts' blocks in part order, offsets shifted to
the key's, with each part's number and size, as Ozone's blocks carry their part number), the entry's
removal, the unlisted parts' blocks to deletedTable and the bucket's usage; so a crash leaves the upload or
the key, never half of each. Aborting sends every part's blocks to deletedTable.
As in Ozone, a committed part counts in its bucket's and volume's usage, so parts must fit the quotas while
the upload is open; aborting releases them and completing moves them to the key.
A part still being written when its upload completes or aborts finds no upload at its commit: its blocks
go to deletedTable.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise

from pyozone.hdds.block import ExcludeList
from pyozone.hdds.ids import BlockID, ReplicationConfig
from pyozone.hdds.om_records import (
    KeyBlock,
    KeyRecord,
    MultipartUploadRecord,
    Pairs,
    PartRecord,
    pairs,
    replicated_size,
)
from pyozone.hdds.om_views import CHECKSUM_PREFIX, UPLOAD_ALGORITHM, KeyCondition
from pyozone.hdds.security.acl import Ownership, inherit_defaults
from pyozone.hdds.security.sse import KeyEncryption, SseAlgorithm, SseRequest, new_iv
from pyozone.om import conditions, object_lock, quota
from pyozone.om.core import OzoneManager
from pyozone.om.data_keys import default_sse
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.key_metadata import check_metadata, check_tags
from pyozone.om.keys import OpenKeySession
from pyozone.om.metadata import MULTIPART_INFO_TABLE, OPEN_KEY_TABLE, Op, bucket_key, key_key, open_key_key
from pyozone.om.names import check_key_name
from pyozone.om.settings import DEFAULT_LIST_LIMIT
from pyozone.protocol import om_records

log = logging.getLogger(__name__)

MAX_PART_NUMBER = 10_000
"""S3's part numbers are 1 to 10,000."""
UPLOAD_SEPARATOR = "\x00"
"""Between key and upload id in multipartInfoTable (metadata.py): below every character a key may hold."""


def multipart_key(volume: str, bucket: str, key: str, upload_id: str) -> str:
    return f"{key_key(volume, bucket, key)}{UPLOAD_SEPARATOR}{upload_id}"


def _check_part_checksum(name: str, upload_metadata: Pairs, where: str) -> None:
    """What a completion may keep as its parts' checksums: a checksum entry, the one of the algorithm the
    upload was created with if it was (R31's F5: a native client named `ETag`, and the parts' MD5s were
    served as their CRC32s)."""
    if not name:
        return
    created = dict(upload_metadata).get(UPLOAD_ALGORITHM)
    expected = CHECKSUM_PREFIX + created.lower() if created else None
    if not name.startswith(CHECKSUM_PREFIX) or (expected is not None and name != expected):
        raise OMException(
            OMResultCode.INVALID_REQUEST,
            f"{where}: {name!r} is not the parts' checksum"
            + (f" (the upload's is {expected!r})" if expected else ""),
        )


@dataclass(frozen=True, slots=True)
class PartPage:
    """One page of an upload's parts (ListParts)."""

    upload: MultipartUploadRecord
    parts: tuple[PartRecord, ...]
    next_marker: int
    truncated: bool


class MultipartManager:
    def __init__(self, om: OzoneManager) -> None:
        self.om = om

    def _upload(self, volume: str, bucket: str, key: str, upload_id: str) -> MultipartUploadRecord:
        data = self.om.store.get(MULTIPART_INFO_TABLE, multipart_key(volume, bucket, key, upload_id))
        if data is None:
            self.om.bucket_info(volume, bucket)
            raise OMException(
                OMResultCode.NO_SUCH_MULTIPART_UPLOAD_ERROR,
                f"no multipart upload {upload_id!r} of {volume}/{bucket}/{key}",
            )
        return om_records.decode_multipart(data)

    # ------------------------------------------------------------------ writing
    def initiate(
        self,
        volume: str,
        bucket: str,
        key: str,
        replication: ReplicationConfig | None = None,
        metadata: Mapping[str, str] | None = None,
        tags: Mapping[str, str] | None = None,
        creator: Ownership | None = None,
        sse: SseRequest | None = None,
    ) -> MultipartUploadRecord:
        """A new upload. Its id starts with the object id in hex, zero-padded, so a key's uploads sort by
        creation (S3 lists them so, and pages by upload id); the UUID after it keeps ids unique across
        OMs. `replication` is the client's (checked against ozone.replication.allowed-configs); None
        takes the bucket's. Every part is written with the upload's. With ozone.acl.enabled the
        `creator` owns the key it completes into. `sse`: the parts are encrypted (DataKeys.new:
        one data key for the upload, an iv per part)."""
        om = self.om
        check_key_name(key, om.settings.check_key_characters)
        check_metadata(metadata or {})
        check_tags(tags or {})
        if replication is not None:
            om.settings.allowed_configs.check(replication)
        with om.lock:
            parent = om.bucket_info(volume, bucket)
            object_lock.check_write(parent, metadata, om.clock.wall_ms())
            sse = sse or default_sse(parent.sse_default)
            encryption = om.data_keys.new(sse, volume, bucket, key) if sse is not None else None
            ops: list[Op] = []
            (object_id,) = om.new_ids(1)
            upload = MultipartUploadRecord(
                volume,
                bucket,
                key,
                f"{object_id:016x}-{uuid.uuid4()}",
                om.clock.wall_ms(),
                ReplicationConfig.resolve(replication, parent.replication, om.settings.default_replication),
                object_id,
                pairs(metadata),
                pairs(tags),
                owner=creator.owner if creator else "",
                acls=inherit_defaults(creator.acls, parent.acls) if creator else (),
                encryption=encryption,
            )
            name = multipart_key(volume, bucket, key, upload.upload_id)
            ops.append((MULTIPART_INFO_TABLE, name, om_records.encode(om_records.multipart_to_proto(upload))))
            om.commit(ops)
        log.debug("initiated multipart upload %s of %s/%s/%s", upload.upload_id, volume, bucket, key)
        return upload

    def open_part(
        self,
        volume: str,
        bucket: str,
        key: str,
        upload_id: str,
        part_number: int,
        data_size: int = 0,
        excluded: ExcludeList | None = None,
        creator: Ownership | None = None,
    ) -> OpenKeySession:
        """An open key for one part, of the upload's replication (owned by its writer), and its encryption
        with an iv of the part's own: a part written again never reuses a key stream."""
        check_part_number(part_number)
        upload = self._upload(volume, bucket, key, upload_id)
        check_part_writer(upload, creator)
        plan = self.om.keys.plan_open_as(
            volume, bucket, key, data_size, upload.replication, excluded, creator=creator
        )
        if upload.encryption is not None:
            plan = replace(plan, encryption=replace(upload.encryption, iv=new_iv()))
        return self.om.keys.open_planned(plan)

    def commit_part(
        self,
        volume: str,
        bucket: str,
        key: str,
        client_id: int,
        upload_id: str,
        part_number: int,
        data_size: int,
        blocks: Sequence[KeyBlock],
        metadata: Mapping[str, str] | None = None,
        stored: Mapping[BlockID, int] | None = None,
    ) -> PartRecord:
        """The open key becomes the upload's part `part_number`, named by metadata's "ETag" (else, as Ozone
        names it, by the key's path and client id); `stored`: as KeyManager.commit's. A part the
        quotas have no room for (less the part it replaces) is refused (QUOTA_EXCEEDED) and its open key
        abandoned."""
        check_part_number(part_number)
        check_metadata(metadata or {})
        om = self.om
        with om.lock:
            parent = om.bucket_info(volume, bucket)
            opened = om.keys.open_record(volume, bucket, key, client_id)
            name = multipart_key(volume, bucket, key, upload_id)
            data = om.store.get(MULTIPART_INFO_TABLE, name)
            if data is None:  # completed or aborted while the part was written
                missing = f"no multipart upload {upload_id!r} of {volume}/{bucket}/{key}"
                om.keys.abandon(opened, client_id, f"part {part_number}: {missing}")
                raise OMException(OMResultCode.NO_SUCH_MULTIPART_UPLOAD_ERROR, missing)
            upload = om_records.decode_multipart(data)
            kept = om.keys.written_blocks(opened, blocks, data_size)
            written = replace(
                opened,
                data_size=data_size,
                modification_ms=om.clock.wall_ms(),
                blocks=kept,
                metadata=pairs(metadata),
                charged_bytes=quota.charged_bytes(opened.replication, data_size, kept, stored),
            )
            part_name = (metadata or {}).get("ETag") or f"{key_key(volume, bucket, key)}{client_id}"
            part = PartRecord(part_number, part_name, written)
            older = upload.part(part_number)
            added = written.replicated_bytes - (older.key.replicated_bytes if older is not None else 0)
            try:
                om.keys.check_quota(parent, added, False)
            except OMException as e:
                om.keys.abandon(
                    opened, client_id, f"part {part_number} of upload {upload_id!r} refused: {e.message}"
                )
                raise
            ops: list[Op] = []
            om.keys.account(parent, added, 0, ops)
            om.keys.orphan_unused(opened, kept, ops)
            if older is not None:
                om.keys.orphan(older.key, ops)
            parts = sorted((*(p for p in upload.parts if p.part_number != part_number), part),
                           key=lambda p: p.part_number)  # fmt: skip
            upload = replace(upload, parts=tuple(parts))
            ops.append((MULTIPART_INFO_TABLE, name, om_records.encode(om_records.multipart_to_proto(upload))))
            ops.append((OPEN_KEY_TABLE, open_key_key(volume, bucket, key, client_id), None))
            om.commit(ops)
        return part

    def complete(
        self,
        volume: str,
        bucket: str,
        key: str,
        upload_id: str,
        parts: Sequence[tuple[int, str]],
        metadata: Mapping[str, str] | None = None,
        condition: KeyCondition | None = None,
        part_checksum: str = "",
        customer_key_md5: str = "",
    ) -> KeyRecord:
        """The key of the listed (part number, part name) parts; see the module's docstring. A
        `condition` the committed key fails refuses it, and the upload stays as it was. `part_checksum`
        names the part metadata entry (the S3 gateway's checksum) the key keeps for each part ("" if a part
        lacks it). `customer_key_md5`: the SSE-C key the caller sent (check_customer_key)."""
        om = self.om
        with om.lock:
            parent = om.bucket_info(volume, bucket)
            upload = self._upload(volume, bucket, key, upload_id)
            check_customer_key(upload, customer_key_md5)
            old = om.keys.find(volume, bucket, key)
            conditions.check(condition, old, key_key(volume, bucket, key))
            where = f"completing {upload_id!r} of {volume}/{bucket}/{key}"
            if not parts:
                raise OMException(OMResultCode.INVALID_REQUEST, f"{where}: an empty part list")
            _check_part_checksum(part_checksum, upload.metadata, where)
            for (before, _), (number, _) in pairwise(parts):
                if number <= before:
                    raise OMException(
                        OMResultCode.INVALID_PART_ORDER, f"{where}: part {number} after part {before}"
                    )
            blocks: list[KeyBlock] = []
            sizes: list[tuple[int, int]] = []  # kept with the key: S3's GET by partNumber
            checksums: list[str] = []
            size = 0
            extra = 0  # what the parts were charged beyond their sizes (stored_lengths.py), kept by the key
            for i, (number, name) in enumerate(parts):
                part = upload.part(number)
                if part is None or part.part_name != name:
                    found = "no such part" if part is None else f"its ETag is {part.part_name!r}"
                    raise OMException(OMResultCode.INVALID_PART, f"{where}: part {number} {name!r}: {found}")
                if i < len(parts) - 1 and part.key.data_size < om.settings.multipart_min_size:
                    raise OMException(
                        OMResultCode.ENTITY_TOO_SMALL,
                        f"{where}: part {number} has {part.key.data_size} bytes; every part but the last "
                        f"needs at least {om.settings.multipart_min_size}",
                    )
                blocks.extend(replace(b, offset=size + b.offset) for b in part.key.blocks)
                sizes.append((number, part.key.data_size))
                if part_checksum:
                    checksums.append(dict(part.key.metadata).get(part_checksum, ""))
                size += part.key.data_size
                extra += part.key.replicated_bytes - replicated_size(part.key.replication, part.key.data_size)
            merged = dict(upload.metadata) | dict(metadata or {})
            check_metadata(merged)
            now = om.clock.wall_ms()
            record = KeyRecord(
                volume, bucket, key, size, now, now, upload.replication, tuple(blocks), upload.object_id,
                pairs(merged), upload.tags, upload.owner, upload.acls,
                replicated_size(upload.replication, size) + extra if extra else 0,
                tuple(sizes), tuple(checksums), encryption=_completed_encryption(upload, parts),
            )  # fmt: skip
            ops: list[Op] = []
            listed = {number for number, _ in parts}
            for part in upload.parts:
                if part.part_number not in listed:
                    om.keys.orphan(part.key, ops)
            record = om.keys.write(parent, record, old, ops, counted=_parts_bytes(upload))
            ops.append((MULTIPART_INFO_TABLE, multipart_key(volume, bucket, key, upload_id), None))
            om.commit(ops)
        log.debug("completed multipart upload %s: %s/%s/%s, %d bytes", upload_id, volume, bucket, key, size)
        return record

    def abort(self, volume: str, bucket: str, key: str, upload_id: str) -> None:
        om = self.om
        with om.lock:
            upload = self._upload(volume, bucket, key, upload_id)
            ops: list[Op] = [(MULTIPART_INFO_TABLE, multipart_key(volume, bucket, key, upload_id), None)]
            for part in upload.parts:
                om.keys.orphan(part.key, ops)
            om.keys.account(om.bucket_info(volume, bucket), -_parts_bytes(upload), 0, ops)
            om.commit(ops)
        log.debug("aborted multipart upload %s of %s/%s/%s", upload_id, volume, bucket, key)

    # ------------------------------------------------------------------ listing
    def list_parts(
        self, volume: str, bucket: str, key: str, upload_id: str, marker: int = 0, max_parts: int = 0
    ) -> PartPage:
        """Parts numbered above `marker`, at most `max_parts` (0: 1000)."""
        upload = self._upload(volume, bucket, key, upload_id)
        limit = max_parts or DEFAULT_LIST_LIMIT
        after = [p for p in upload.parts if p.part_number > marker]
        page = tuple(after[:limit])
        return PartPage(upload, page, page[-1].part_number if page else marker, len(after) > limit)

    def list_uploads(
        self,
        volume: str,
        bucket: str,
        prefix: str = "",
        key_marker: str = "",
        upload_id_marker: str = "",
        max_uploads: int = 0,
    ) -> list[MultipartUploadRecord]:
        """Uploads of keys starting with `prefix`, by key then creation, after (key_marker,
        upload_id_marker) or, without an upload id marker, after every upload of key_marker (S3's rule);
        at most `max_uploads` (0: 1000)."""
        self.om.bucket_info(volume, bucket)
        base = bucket_key(volume, bucket) + "/"
        start = None
        if key_marker:
            # "\x01" sorts after key_marker's own uploads and before every longer key
            start = base + key_marker + (UPLOAD_SEPARATOR + upload_id_marker if upload_id_marker else "\x01")
        limit = max_uploads or DEFAULT_LIST_LIMIT
        found = []
        for _, value in self.om.store.scan(MULTIPART_INFO_TABLE, base + prefix, start):
            if len(found) >= limit:
                break
            found.append(om_records.decode_multipart(value))
        return found


def _parts_bytes(upload: MultipartUploadRecord) -> int:
    """What the upload's committed parts count in their bucket's and volume's usage."""
    return sum(p.key.replicated_bytes for p in upload.parts)


def check_part_number(number: int) -> None:
    if not 1 <= number <= MAX_PART_NUMBER:
        raise OMException(
            OMResultCode.INVALID_REQUEST, f"part number {number}: parts are numbered 1 to {MAX_PART_NUMBER}"
        )


def check_customer_key(upload: MultipartUploadRecord, customer_key_md5: str) -> None:
    """An SSE-C key sent to complete an upload must be the upload's (its parts were written with it; R36
    F9): another is PERMISSION_DENIED (S3's AccessDenied, as for a part), one for an upload not SSE-C
    INVALID_REQUEST. None sent passes: Amazon needs it on completion only for a checksum it recomputes."""
    if not customer_key_md5:
        return
    encryption = upload.encryption
    if encryption is None or encryption.algorithm is not SseAlgorithm.SSE_C:
        raise OMException(  # S3's code and words for it (s3g/om_errors.py reads the code before ": ")
            OMResultCode.INVALID_REQUEST,
            "InvalidRequest: The encryption parameters are not applicable to this object.",
        )
    if encryption.customer_key_md5 != customer_key_md5:
        raise OMException(
            OMResultCode.PERMISSION_DENIED,
            f"{upload.key}: upload {upload.upload_id} was written with another SSE-C key",
        )


def check_part_writer(upload: MultipartUploadRecord, creator: Ownership | None) -> None:
    """An SSE-S3 upload's parts are written by its initiator alone (ACLs on): a part's open answers the
    upload's data key, which is the completed object's, so another writer would learn the key of an
    object it may not read (R36 F5). Amazon lets any s3:PutObject holder upload parts
    (docs/differences.md); SSE-C's key is the customer's, which a writer must hold anyway."""
    encryption = upload.encryption
    if encryption is None or encryption.algorithm is not SseAlgorithm.SSE_S3 or creator is None:
        return
    if creator.owner != upload.owner:
        raise OMException(
            OMResultCode.PERMISSION_DENIED,
            f"{upload.key}: upload {upload.upload_id} is SSE-S3 encrypted: its parts are written by its "
            f"initiator {upload.owner} alone",
        )


def _completed_encryption(
    upload: MultipartUploadRecord, parts: Sequence[tuple[int, str]]
) -> KeyEncryption | None:
    """The completed key's encryption: the upload's, with each listed part's iv in order."""
    if upload.encryption is None:
        return None
    ivs = []
    for number, _ in parts:
        part = upload.part(number)
        assert part is not None and part.key.encryption is not None  # complete checked the list
        ivs.append(part.key.encryption.iv)
    return replace(upload.encryption, part_ivs=tuple(ivs))
