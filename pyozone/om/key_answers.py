"""What key requests answer: an open key's session, and a committed key with where its blocks are read."""

from __future__ import annotations

from dataclasses import dataclass

from pyozone.om.records import KeyRecord
from pyozone.proto import hdds_pb2
from pyozone.protocol.block import BlockLocation


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
