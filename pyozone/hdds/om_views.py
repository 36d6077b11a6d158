"""What OM's clients see of volumes, buckets, keys and multipart uploads: immutable views with Python
names (Ozone's OzoneVolume, OzoneBucket, OzoneKeyDetails and OmMultipartUploadListParts, as the client
shows them), read from OM's answers in protocol/om.py.

They are kept apart from OM's records (om_records.py) for a reason: a view hides proto3's quirks (zero
enum values, unset fields: an unset replication type reads as RATIS and factor as THREE, a layout defaults
to OBJECT_STORE) and carries where a key's blocks are read (KeyLocation, with pipelines and tokens), while a
record is what om.db keeps (ACLs, owners, charged bytes, BCSIDs). The code and the JSON of `pyozone sh`
do not depend on either's wire form.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.locations import KeyLocation
from pyozone.hdds.s3_object_lock import ObjectLockConfiguration, Retention
from pyozone.hdds.security.sse import KeyEncryption, SseAlgorithm
from pyozone.hdds.states import ReplicationType


@dataclass(frozen=True, slots=True)
class KeyCondition:
    """An S3 conditional write, which OM checks in the step that commits or deletes the key
    (OmClientProtocol.proto: KeyCondition; the check: om/conditions.py): `must_not_exist` is
    If-None-Match: *, `expected_etag` If-Match ("*": any committed key)."""

    must_not_exist: bool = False
    expected_etag: str = ""


@dataclass(frozen=True, slots=True)
class InitiatedUpload:
    """initiateMultipartUpload's answer: the upload's id and how its parts are encrypted (NONE: not)."""

    upload_id: str
    algorithm: SseAlgorithm = SseAlgorithm.NONE


@dataclass(frozen=True, slots=True)
class OpenedKey:
    """openKey's answer: the client id naming the open key, its pre-allocated blocks, and its encryption
    with the data key to encrypt with (SSE-S3's; b"" for SSE-C, whose key the writer holds)."""

    client_id: int
    blocks: list[KeyLocation]
    encryption: KeyEncryption | None = None
    data_key: bytes = field(default=b"", repr=False)


@dataclass(frozen=True, slots=True)
class VolumeInfo:
    name: str
    owner: str
    admin: str
    creation_time: int
    modification_time: int
    quota_in_bytes: int  # replicated bytes at most; 0: no quota
    used_bytes: int
    used_namespace: int  # buckets
    quota_in_namespace: int  # buckets at most; 0: no quota


@dataclass(frozen=True, slots=True)
class BucketInfo:
    volume: str
    name: str
    owner: str
    creation_time: int
    modification_time: int
    replication: ReplicationConfig  # the default of the bucket's keys
    layout: str
    used_bytes: int
    used_namespace: int  # keys
    quota_in_bytes: int  # replicated bytes at most; 0: no quota
    quota_in_namespace: int  # keys at most; 0: no quota
    versioning: str = ""  # S3's: "" (never set), "Enabled" or "Suspended"
    object_lock: ObjectLockConfiguration | None = None  # S3's (hdds/s3_object_lock.py); None: not enabled


CHECKSUM_PREFIX = "x-amz-checksum-"
"""The metadata entries that hold a key's or a part's S3 checksum (x-amz-checksum-crc32, ...)."""
UPLOAD_ALGORITHM = "s3.multipart.checksumAlgorithm"
"""Kept in an S3 multipart upload's metadata (never returned as a header): the checksum algorithm it was
created with, which every part must then carry (a copied part gets it computed) and the completion name
for every part, as Amazon requires."""


@dataclass(frozen=True, slots=True)
class KeyInfo:
    volume: str
    bucket: str
    name: str
    data_size: int
    creation_time: int
    modification_time: int
    replication: ReplicationConfig
    object_id: int = 0
    locations: tuple[KeyLocation, ...] = field(default=())
    write_path: str = ""  # "V1" or "V2" on what a write returns; OM does not record it
    metadata: Mapping[str, str] = field(default_factory=dict)  # S3's: "ETag", "Content-Type", x-amz-meta-*
    tags: Mapping[str, str] = field(default_factory=dict)
    parts: tuple[tuple[int, int], ...] = ()
    """A completed multipart upload's (part number, size) in order, on a lookup; () for any other key."""
    part_checksums: tuple[str, ...] = ()
    """Beside `parts`: each part's checksum (the S3 gateway's), when its completion asked OM to keep them."""
    version_id: str = ""  # S3's: "null" or the version's id; "": written while its bucket was unversioned
    delete_marker: bool = False
    version_seq: int = 0
    """The version's place in its key's order (hdds/s3_versions.py), a `null` one's too: a version listing
    resumes there even after the version is gone."""
    retention: Retention | None = None  # S3 Object Lock's (hdds/s3_object_lock.py)
    legal_hold: bool | None = None  # None: never set
    encryption: KeyEncryption | None = None
    """S3 server-side encryption of its data (hdds/security/sse.py); None: plaintext."""
    data_key: bytes = field(default=b"", repr=False)
    """SSE-S3's data key, as OM answers it to a reader or writer it allows (openKey, lookupKey)."""
    owner: str = ""
    """Its writer (OM's key owner): S3's object owner where the bucket's ACLs apply."""

    @property
    def is_ec(self) -> bool:
        """Whether the key is erasure coded."""
        return self.replication.type is ReplicationType.EC


@dataclass(frozen=True, slots=True)
class PartInfo:
    """A committed part of a multipart upload; `etag` is the name it was committed with, `metadata` what
    it was committed with (the S3 gateway's part checksums)."""

    part_number: int
    etag: str
    size: int
    modification_ms: int
    metadata: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class MultipartPartList:
    """One page of ListParts: the parts after the marker, where the next page starts, and the upload's
    replication, metadata and encryption (SSE-C's key MD5 with it)."""

    parts: tuple[PartInfo, ...]
    next_part_number_marker: int
    truncated: bool
    replication: ReplicationConfig
    metadata: Mapping[str, str]
    sse_algorithm: SseAlgorithm = SseAlgorithm.NONE
    customer_key_md5: str = ""


@dataclass(frozen=True, slots=True)
class MultipartUploadInfo:
    key: str
    upload_id: str
    creation_ms: int
    replication: ReplicationConfig


@dataclass(frozen=True, slots=True)
class ServiceInfo:
    """OM's getServiceInfo: the cluster, OM's id and whether SCM is in safe mode (Ozone's ServiceInfo)."""

    cluster_id: str
    om_id: str
    scm_in_safe_mode: bool
