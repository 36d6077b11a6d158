"""Rules for a key's metadata and tags, checked before either reaches a table.

Tags follow S3's tag-set rules (at most 10, a key of 1-128 characters, a value of at most 256), so OM
never holds a set S3 would refuse. Metadata is what the S3 gateway stores per object (system headers and
x-amz-meta-*): S3 bounds user metadata at 2 KB and a request's headers at 8 KB, so OM's bound of 16 KiB
over all names and values leaves room for both and keeps every listing page small.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyozone.om.exceptions import OMException, OMResultCode

MAX_TAGS = 10
MAX_TAG_KEY_CHARS = 128
MAX_TAG_VALUE_CHARS = 256
MAX_METADATA_BYTES = 16 * 1024
"""UTF-8 bytes of every metadata name and value together."""


def check_metadata(metadata: Mapping[str, str]) -> None:
    size = 0
    for name, value in metadata.items():
        if not name:
            raise OMException(OMResultCode.INVALID_REQUEST, "metadata: an empty name")
        if _has_control(name):
            shown = name[:64]
            raise OMException(OMResultCode.INVALID_REQUEST, f"metadata name {shown!r}: a control character")
        size += len(name.encode()) + len(value.encode())
    if size > MAX_METADATA_BYTES:
        raise OMException(
            OMResultCode.INVALID_REQUEST,
            f"metadata of {size} bytes is above the limit of {MAX_METADATA_BYTES} bytes",
        )


def check_tags(tags: Mapping[str, str]) -> None:
    if len(tags) > MAX_TAGS:
        raise OMException(OMResultCode.INVALID_REQUEST, f"{len(tags)} tags, at most {MAX_TAGS} allowed")
    for name, value in tags.items():
        if not 0 < len(name) <= MAX_TAG_KEY_CHARS:
            raise OMException(
                OMResultCode.INVALID_REQUEST,
                f"tag key of {len(name)} characters: 1 to {MAX_TAG_KEY_CHARS} allowed",
            )
        if len(value) > MAX_TAG_VALUE_CHARS:
            raise OMException(
                OMResultCode.INVALID_REQUEST,
                f"tag {name!r}: a value of {len(value)} characters, at most {MAX_TAG_VALUE_CHARS} allowed",
            )


def _has_control(text: str) -> bool:
    return any(ord(c) < 0x20 or ord(c) == 0x7F for c in text)
