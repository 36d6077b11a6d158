"""Name rules for volumes, buckets and keys, as Ozone checks them before touching any table.

Volume and bucket names follow HddsClientUtils.verifyResourceName in its strict (S3) mode: they become
DNS labels and S3 bucket names, so the rules are the DNS ones. Key names may hold almost anything (they
are S3 object names), but a control character or NUL breaks every tool that prints them, and the optional
character check (ozone.om.keyname.character.check.enabled) refuses what breaks URLs and shells.
"""

from __future__ import annotations

import re

from pyozone.om.exceptions import OMException, OMResultCode

MIN_RESOURCE_NAME = 3
MAX_RESOURCE_NAME = 63
MAX_KEY_NAME_BYTES = 1024
"""pyozone's limit on a key name (UTF-8 bytes): S3's; Ozone bounds it only by its RPC size."""

UNSAFE_KEY_CHARACTERS = frozenset('\\{}^><%~#|`[]"?')
"""What Ozone's KEYNAME_ILLEGAL_CHARACTER_CHECK_REGEX refuses (plus the double quote S3 warns about)."""

_IPV4 = re.compile(r"\d{1,3}(\.\d{1,3}){3}")
_ALLOWED = re.compile(r"[a-z0-9.-]")
_BAD_PAIRS = (
    ("..", "two contiguous periods"),
    (".-", "a dash after a period"),
    ("-.", "a period after a dash"),
)


def check_volume_name(name: str) -> None:
    _check_resource(name, "volume", OMResultCode.INVALID_VOLUME_NAME)


def check_bucket_name(name: str) -> None:
    _check_resource(name, "bucket", OMResultCode.INVALID_BUCKET_NAME)


def resource_name_problem(name: str) -> str | None:
    """Which rule a volume or bucket name breaks, or None."""
    if not name:
        return "is empty"
    if len(name) < MIN_RESOURCE_NAME:
        return f"is shorter than {MIN_RESOURCE_NAME} characters"
    if len(name) > MAX_RESOURCE_NAME:
        return f"is longer than {MAX_RESOURCE_NAME} characters"
    for c in name:
        if not _ALLOWED.fullmatch(c):
            what = "an uppercase letter" if c.isupper() else "an unsupported character"
            return f"has {what} {c!r} (only lowercase letters, digits, '.' and '-')"
    if name[0] in ".-":
        return "does not start with a letter or digit"
    if name[-1] in ".-":
        return "does not end with a letter or digit"
    for pair, why in _BAD_PAIRS:
        if pair in name:
            return f"has {why}"
    if _IPV4.fullmatch(name):
        return "is shaped like an IPv4 address"
    return None


def _check_resource(name: str, kind: str, code: OMResultCode) -> None:
    problem = resource_name_problem(name)
    if problem is not None:
        raise OMException(code, f"{kind} name {name!r} {problem}")


def key_name_problem(name: str, check_characters: bool) -> str | None:
    """Which rule a key name breaks, or None."""
    if not name:
        return "is empty"
    for c in name:
        if ord(c) < 0x20 or ord(c) == 0x7F:
            return f"has the control character {c!r}"
    size = len(name.encode("utf-8", "surrogatepass"))
    if size > MAX_KEY_NAME_BYTES:
        return f"is {size} bytes in UTF-8, above the limit of {MAX_KEY_NAME_BYTES}"
    if check_characters:
        bad = sorted({c for c in name if c in UNSAFE_KEY_CHARACTERS})
        if bad:
            return (
                f"has the unsafe character(s) {''.join(bad)!r} "
                "(ozone.om.keyname.character.check.enabled is true)"
            )
    return None


def check_key_name(name: str, check_characters: bool) -> None:
    problem = key_name_problem(name, check_characters)
    if problem is not None:
        shown = name if len(name) <= 100 else name[:100] + "..."
        raise OMException(OMResultCode.INVALID_KEY_NAME, f"key name {shown!r} {problem}")
