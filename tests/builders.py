"""Datanode identities and storage reports shared by the unit tests of several managers."""

from __future__ import annotations

from pyozone.hdds.datanode import NodeReport, StorageReport

GB = 1 << 30


def dn_id(i: int) -> str:
    return f"00000000-0000-4000-8000-{i:012d}"


def volume(name: str, remaining: int = 500 * GB, capacity: int = 1000 * GB, failed: bool = False):
    return StorageReport(name, f"/data/{name}", capacity, capacity - remaining, remaining, failed)


def node_report(
    data_volumes: int = 1,
    metadata_volumes: int = 1,
    data_remaining: int = 500 * GB,
    metadata_remaining: int = 50 * GB,
    failed_data_volumes: int = 0,
) -> NodeReport:
    """Plenty of space by default: data volumes fit a 5GB container, metadata volumes are above 1GB."""
    data = tuple(volume(f"d{v}", data_remaining) for v in range(data_volumes))
    data += tuple(volume(f"f{v}", data_remaining, failed=True) for v in range(failed_data_volumes))
    meta = tuple(volume(f"m{v}", metadata_remaining) for v in range(metadata_volumes))
    return NodeReport(storage=data, metadata_storage=meta)
