"""Helpers for the datanode storage tests: a datanode's directories, chunks and blocks."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from pyozone.config import OzoneConfiguration
from pyozone.datanode.settings import DatanodeSettings
from pyozone.datanode.storage import (
    BlockData,
    ChecksumType,
    ChunkInfo,
    ContainerError,
    ContainerSet,
    KeyValueContainer,
    Result,
    VolumeSet,
    compute,
)
from pyozone.hdds.ids import BlockID

NO_FREE_SPACE_FLOOR = {
    "hdds.datanode.volume.min.free.space": "0B",
    "hdds.datanode.volume.min.free.space.percent": "0",
}
"""The test datanodes keep no free-space floor: a test must not depend on how full the host's disk is (the
floor's own tests set one, on a simulated disk)."""

CLUSTER = "CID-test-cluster"
DN_UUID = "11111111-2222-3333-4444-555555555555"
BPC = 1024


@dataclass
class Node:
    """One datanode's storage: its volume set and container set over directories under `root`."""

    root: Path
    volumes: VolumeSet
    containers: ContainerSet

    def close(self) -> None:
        self.volumes.close()


def make_conf(root: Path, disks: int = 2, container_size: str = "1MB") -> OzoneConfiguration:
    return OzoneConfiguration(
        {
            "hdds.datanode.dir": ",".join(str(root / f"disk{i}") for i in range(disks)),
            "ozone.metadata.dirs": str(root / "meta"),
            "ozone.scm.container.size": container_size,
            **NO_FREE_SPACE_FLOOR,
        }
    )


def volume_set(conf: OzoneConfiguration, dn_uuid: str = DN_UUID, cluster: str = CLUSTER) -> VolumeSet:
    """The volumes a datanode with `conf` opens."""
    settings = DatanodeSettings.from_conf(conf)
    return VolumeSet(settings.storage, settings.space, dn_uuid, cluster)


def open_node(
    root: Path, disks: int = 2, container_size: str = "1MB", dn_uuid: str = DN_UUID, cluster: str = CLUSTER
) -> Node:
    volumes = volume_set(make_conf(root, disks, container_size), dn_uuid, cluster)
    return Node(root, volumes, ContainerSet(volumes))


def payload(seed: int, size: int) -> bytes:
    return random.Random(seed).randbytes(size)


def chunk_for(
    data: bytes, name: str, offset: int = 0, kind: ChecksumType = ChecksumType.CRC32, bpc: int = BPC
) -> ChunkInfo:
    return ChunkInfo(name, offset, len(data), compute(data, kind, bpc))


def write_block(
    container: KeyValueContainer,
    local_id: int,
    sizes: tuple[int, ...],
    bcsid: int,
    kind: ChecksumType = ChecksumType.CRC32,
) -> tuple[BlockData, bytes]:
    """Writes chunks of these sizes back to back, then commits the block; returns it and its bytes."""
    block_id = BlockID(container.container_id, local_id)
    chunks, offset, parts = [], 0, []
    for n, size in enumerate(sizes):
        data = payload(local_id * 1000 + n, size)
        chunk = chunk_for(data, f"{local_id}_chunk_{n}", offset, kind)
        container.write_chunk(block_id, chunk, data)
        chunks.append(chunk)
        parts.append(data)
        offset += size
    block = BlockData(block_id, tuple(chunks), (("TYPE", "KEY"),))
    container.put_block(block, bcsid)
    return block.with_bcsid(bcsid), b"".join(parts)


def read_block(container: KeyValueContainer, block: BlockData) -> bytes:
    return b"".join(container.read_chunk(block.block_id, c) for c in block.chunks)


@contextmanager
def raises(result: Result) -> Iterator[pytest.ExceptionInfo[ContainerError]]:
    """Expects a ContainerError with this result."""
    with pytest.raises(ContainerError) as info:
        yield info
    assert info.value.result is result, str(info.value)
