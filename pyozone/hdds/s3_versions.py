"""S3 object versions: a bucket's versioning state, version ids and their order, and what a write or a
delete does to the versions a key has (Amazon's "Using versioning in S3 buckets"). Pure rules, so OM
(om/versions.py) and the gateway share them and each is testable alone.

A version's place in time is its sequence number, an OM object id taken when the version is committed
(OzoneManager.new_ids in om/core.py: it only grows, across restarts and leaders), so a later version
always has a larger one. Its id is that number in 16 hex digits; a `null` version (written while the
bucket was never versioned or Suspended) has one too, for its order, but is named `null`. A key written
before its bucket was versioned has number 0: the oldest.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

NULL_VERSION = "null"
"""S3's id of the version written while a bucket was unversioned or versioning was Suspended."""
_SEQ_DIGITS = 16
_MAX_SEQ = (1 << 64) - 1


class BucketVersioning(Enum):
    """A bucket's versioning state, as GetBucketVersioning names it ("" : never set)."""

    UNVERSIONED = ""
    ENABLED = "Enabled"
    SUSPENDED = "Suspended"

    @classmethod
    def of(cls, text: str) -> BucketVersioning:
        """ValueError for anything but the three states."""
        return cls(text)


class VersionIdError(ValueError):
    """A version id no version can have (S3: 400 InvalidArgument "Invalid version id specified")."""


def version_id(seq: int, versioned: bool) -> str:
    """The S3 id of the version numbered `seq`: `null` unless it was written while versioning was Enabled."""
    return f"{seq:0{_SEQ_DIGITS}x}" if versioned else NULL_VERSION


def parse_version_id(text: str) -> int | None:
    """The sequence number a version id names; None: the null version. VersionIdError if malformed."""
    if text == NULL_VERSION:
        return None
    if len(text) != _SEQ_DIGITS or any(c not in "0123456789abcdef" for c in text):
        raise VersionIdError(f"Invalid version id specified: {text!r}")
    return int(text, 16)


def order_suffix(seq: int) -> str:
    """What follows a key's name in a version's table key: newer versions sort first."""
    return f"\x00{_MAX_SEQ - seq:0{_SEQ_DIGITS}x}"


def seq_of_suffix(suffix: str) -> int:
    """The sequence number `order_suffix` wrote (its NUL included)."""
    return _MAX_SEQ - int(suffix[1:], 16)


@dataclass(frozen=True, slots=True)
class DeleteOutcome:
    """What a delete did in S3's terms: the version it added (a delete marker) or removed, and whether that
    version is a delete marker; `version_id` "": an unversioned bucket's key, simply deleted."""

    version_id: str
    delete_marker: bool


@dataclass(frozen=True, slots=True)
class WritePlan:
    """What a committed write does to the key's versions in a versioned bucket: whether the new version
    is a versioned one (else `null`), and whether the current version it displaces is kept as a noncurrent
    version (else it is replaced: its blocks go to deletion). Any other `null` version is dropped whenever
    the new one is `null`."""

    versioned: bool
    keep_current: bool

    @property
    def drops_null(self) -> bool:
        return not self.versioned


def write_plan(state: BucketVersioning, current_versioned: bool) -> WritePlan:
    """Enabled: a new version, every old one kept. Suspended: the new version is `null`; the current one
    is kept only if it is not itself `null` (a `null` version is overwritten, Amazon's "Adding objects to
    versioning-suspended buckets"). Never called for an unversioned bucket (replaced as always)."""
    if state is BucketVersioning.ENABLED:
        return WritePlan(versioned=True, keep_current=True)
    return WritePlan(versioned=False, keep_current=current_versioned)
