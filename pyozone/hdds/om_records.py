"""OM's records: what om.db's tables hold, as immutable values OM's core builds new versions of (Ozone's
OmVolumeArgs, OmBucketInfo, OmKeyInfo and OmMultipartKeyInfo in ozone-common's om.helpers). They sit in the
kernel so protocol/om.py converts them to and from OmClientProtocol's messages (the tables' values).

They are not the client's views (om_views.py): a record carries what om.db keeps and OM's rules need (ACLs,
owners, charged bytes, sorted metadata pairs, each block's BCSID and createVersion), a view what a client
is shown, with its replication named as Ozone prints it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pyozone.hdds.ec.layout import StripeLayout
from pyozone.hdds.ids import BlockID, ReplicationConfig
from pyozone.hdds.s3_object_lock import ObjectLockConfiguration, Retention
from pyozone.hdds.s3_versions import BucketVersioning, version_id
from pyozone.hdds.security.acl import Acls, Ownership
from pyozone.hdds.security.sse import KeyEncryption
from pyozone.hdds.states import ReplicationType

OBJECT_STORE = "OBJECT_STORE"

Pairs = tuple[tuple[str, str], ...]
"""A string map as a record holds it: sorted (name, value) pairs, so records stay immutable and compare
equal whatever order a request listed them in."""


def replicated_size(config: ReplicationConfig, size: int) -> int:
    """Bytes stored for `size` key bytes (Ozone's QuotaUtil.getReplicatedSize): every copy of a replicated
    key; an EC key's data plus its parity cells, each as long as its stripe's first cell."""
    if config.type is ReplicationType.EC:
        layout = StripeLayout.of(config)
        return size + layout.parity * layout.index_length(size, layout.data + 1)
    return size * config.required_nodes


def pairs(mapping: Mapping[str, str] | None) -> Pairs:
    return tuple(sorted((mapping or {}).items()))


@dataclass(frozen=True, slots=True)
class VolumeRecord:
    volume: str
    owner: str
    admin: str
    creation_ms: int
    modification_ms: int
    quota_bytes: int = 0  # 0: no quota
    used_bytes: int = 0
    used_namespace: int = 0  # buckets
    quota_namespace: int = 0  # buckets at most; 0: no quota
    acls: Acls = ()

    @property
    def ownership(self) -> Ownership:
        return Ownership(self.owner, self.acls)


@dataclass(frozen=True, slots=True)
class BucketRecord:
    volume: str
    bucket: str
    owner: str
    creation_ms: int
    modification_ms: int
    replication: ReplicationConfig  # the default of the bucket's keys
    layout: str = OBJECT_STORE
    used_bytes: int = 0  # replicated bytes of committed keys
    used_namespace: int = 0  # keys
    quota_bytes: int = 0  # replicated bytes at most; 0: no quota
    quota_namespace: int = 0  # keys at most; 0: no quota
    acls: Acls = ()
    versioning: BucketVersioning = BucketVersioning.UNVERSIONED  # S3's (hdds/s3_versions.py)
    object_lock: ObjectLockConfiguration | None = None
    """S3 Object Lock (hdds/s3_object_lock.py); None: not enabled (once enabled, never disabled)."""
    sse_default: bool = False
    """An S3 default encryption: keys asked none of their own are SSE-S3 (hdds/s3_encryption.py)."""

    @property
    def ownership(self) -> Ownership:
        return Ownership(self.owner, self.acls)


@dataclass(frozen=True, slots=True)
class KeyBlock:
    """One block of a key: where its bytes sit within the key, and the BCSID the client committed."""

    block_id: BlockID
    offset: int = 0
    length: int = 0
    bcsid: int = 0
    create_version: int = 0


@dataclass(frozen=True, slots=True)
class KeyRecord:
    """A committed key (keyTable), an open key (openKeyTable: `blocks` are the blocks allocated to it) or
    a deleted one (deletedTable: `blocks` are the blocks SCM must still delete)."""

    volume: str
    bucket: str
    key: str
    data_size: int
    creation_ms: int
    modification_ms: int
    replication: ReplicationConfig
    blocks: tuple[KeyBlock, ...] = ()
    object_id: int = 0
    metadata: Pairs = ()  # S3's object metadata: "ETag", "Content-Type", "x-amz-meta-*", ...
    tags: Pairs = ()
    owner: str = ""  # with ozone.acl.enabled: who wrote it
    acls: Acls = ()
    charged_bytes: int = 0
    """Replicated bytes the quotas hold for it beyond what `data_size` makes (stored_lengths.py); 0: none."""
    parts: tuple[tuple[int, int], ...] = ()
    """A completed multipart upload's (part number, size) in order (S3's GET by partNumber); () else."""
    part_checksums: tuple[str, ...] = ()
    """Beside `parts`: each part's checksum, when the completion named the metadata entry holding it."""
    version_seq: int = 0
    """S3 versions (hdds/s3_versions.py): its order among the key's versions; 0: written unversioned."""
    versioned: bool = False
    """It has an id of its own (written while versioning was Enabled); else it is the `null` version."""
    delete_marker: bool = False
    retention: Retention | None = None
    """S3 Object Lock (hdds/s3_object_lock.py): the version's retention, if any."""
    legal_hold: bool | None = None
    """Its legal hold: ON, OFF, or None (never set)."""
    encryption: KeyEncryption | None = None
    """S3 server-side encryption of its data (hdds/security/sse.py); None: plaintext."""

    @property
    def version_id(self) -> str:
        return version_id(self.version_seq, self.versioned)

    @property
    def replicated_bytes(self) -> int:
        """What the bucket's and volume's usage holds for the key: its replicated size, or what it was
        charged at commit when that was more."""
        return max(replicated_size(self.replication, self.data_size), self.charged_bytes)

    @property
    def ownership(self) -> Ownership:
        return Ownership(self.owner, self.acls)


@dataclass(frozen=True, slots=True)
class PartRecord:
    """A committed part of a multipart upload: its name (the ETag it was committed with) and its key
    record (size, modification time, blocks with offsets within the part)."""

    part_number: int
    part_name: str
    key: KeyRecord


@dataclass(frozen=True, slots=True)
class MultipartUploadRecord:
    """An upload in progress (multipartInfoTable): what the completed key will be, and its parts."""

    volume: str
    bucket: str
    key: str
    upload_id: str
    creation_ms: int
    replication: ReplicationConfig
    object_id: int
    metadata: Pairs = ()
    tags: Pairs = ()
    parts: tuple[PartRecord, ...] = ()  # by part number
    owner: str = ""  # with ozone.acl.enabled: of the key it completes into, and that key's entries
    acls: Acls = ()
    encryption: KeyEncryption | None = None
    """The upload's S3 server-side encryption: each part takes it with an iv of its own."""

    def part(self, number: int) -> PartRecord | None:
        return next((p for p in self.parts if p.part_number == number), None)
