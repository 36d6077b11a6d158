"""What key requests answer: an open key's plan and session, and a committed key with where its blocks are
read."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyozone.hdds.block import ExcludeList
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.om_records import KeyRecord
from pyozone.hdds.security.acl import Acls, Ownership
from pyozone.hdds.security.sse import KeyEncryption
from pyozone.protocol.block import BlockLocation

if TYPE_CHECKING:
    from pyozone.proto import hdds_pb2


@dataclass(frozen=True, slots=True)
class OpenKeyPlan:
    """An openKey that passed its checks: the `count` blocks of `block_size` bytes (what the largest replica
    holds) of `config` to ask SCM for, each holding `capacity` key bytes, and what the open key records."""

    volume: str
    bucket: str
    key: str
    data_size: int
    config: ReplicationConfig
    block_size: int
    count: int
    capacity: int
    excluded: ExcludeList
    metadata: Mapping[str, str] | None
    tags: Mapping[str, str] | None
    creator: Ownership | None
    parent_acls: Acls
    bucket_sse: bool = False  # the bucket's S3 default encryption
    encryption: KeyEncryption | None = None

    @property
    def allocating(self) -> str:
        return f"allocating {self.count} block(s) for {self.volume}/{self.bucket}/{self.key}"


@dataclass(frozen=True, slots=True)
class OpenKeySession:
    """An open key: its record (blocks without offsets), where each pre-allocated block is written, and
    how many key bytes each holds (what SCM counted for it; an EC block group's: that on each data
    index); a writer moves to a new block past that."""

    key: KeyRecord
    client_id: int
    allocated: tuple[BlockLocation, ...]
    block_length: int


@dataclass(frozen=True, slots=True)
class ReadLocation:
    """Where one block of a key is read: the pipeline (None if SCM no longer knows the container)."""

    pipeline: hdds_pb2.Pipeline | None
    container_state: str


@dataclass(frozen=True, slots=True)
class LocatedKey:
    key: KeyRecord
    locations: tuple[ReadLocation, ...]

    def where(self) -> Iterator[tuple[hdds_pb2.Pipeline | None, str]]:
        """Each block's read pipeline and container state, in the key's block order."""
        return ((r.pipeline, r.container_state) for r in self.locations)
