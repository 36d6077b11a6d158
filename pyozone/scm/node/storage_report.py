"""Storage reports for simulated datanodes."""

from __future__ import annotations

from pyozone.hdds.datanode import NodeReport, StorageReport

TB = 1 << 40


def node_report(
    node_id: str,
    data_disks: int,
    metadata_disks: int,
    disk_capacity: int = 8 * TB,
    used_per_disk: int = 0,
    failed_disks: int = 0,
) -> NodeReport:
    """Healthy volumes with room to spare; the first `failed_disks` data volumes are reported failed."""
    data = tuple(
        StorageReport(
            f"{node_id}-data-{i}",
            f"/data/disk{i}",
            disk_capacity,
            used_per_disk,
            disk_capacity - used_per_disk,
            failed=i < failed_disks,
        )
        for i in range(data_disks)
    )
    meta = tuple(
        StorageReport(f"{node_id}-meta-{i}", f"/meta/disk{i}", TB, 0, TB) for i in range(metadata_disks)
    )
    return NodeReport(data, meta)
