"""The datanode's storage layer: volumes, containers, block metadata, scanning and replica archives.

Synchronous and thread-safe per container; the daemon calls it from a worker pool.
"""

from pyozone.datanode.storage.archive import ExportStream
from pyozone.datanode.storage.archive_import import ContainerImporter, import_container
from pyozone.datanode.storage.container import KeyValueContainer
from pyozone.datanode.storage.container_data import ContainerData
from pyozone.datanode.storage.container_set import ContainerSet, DuplicateReplica
from pyozone.datanode.storage.errors import ContainerError, Result
from pyozone.datanode.storage.scanner import ContainerScanner, ScanResult
from pyozone.datanode.storage.volume import HddsVolume, MetadataVolume, VolumeState
from pyozone.datanode.storage.volume_set import VolumeSet
from pyozone.hdds.block_data import BlockData, ChunkInfo
from pyozone.hdds.checksum import ChecksumData, ChecksumMismatch, ChecksumType, compute, verify

__all__ = [
    "BlockData",
    "ChecksumData",
    "ChecksumMismatch",
    "ChecksumType",
    "ChunkInfo",
    "ContainerData",
    "ContainerError",
    "ContainerImporter",
    "ContainerScanner",
    "ContainerSet",
    "DuplicateReplica",
    "ExportStream",
    "HddsVolume",
    "KeyValueContainer",
    "MetadataVolume",
    "Result",
    "ScanResult",
    "VolumeSet",
    "VolumeState",
    "compute",
    "import_container",
    "verify",
]
