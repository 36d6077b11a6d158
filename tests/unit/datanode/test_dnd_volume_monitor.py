"""The volume monitor gives up the containers of every volume that failed since its last round, also one
failed between rounds by an I/O error or a failed stat (which its own disk check then skips)."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pyozone.datanode.reports import PendingReports
from pyozone.datanode.volume_monitor import VolumeMonitor
from tests.unit.datanode.dns_helpers import PIPELINE, open_node


def test_a_volume_failed_between_rounds_loses_its_containers(tmp_path: Path) -> None:
    node = open_node(tmp_path, "dn-a", "8MB")
    container = node.containers.create(1, "dn-a", PIPELINE)
    failed_pipelines: list[str] = []
    with ThreadPoolExecutor(1) as executor:
        monitor = VolumeMonitor(
            node.volumes, node.containers, PendingReports(node.settings.reports), executor, 1.0,
            lambda ids, why: failed_pipelines.extend(ids),
        )  # fmt: skip
        container.volume.mark_failed("EIO on a chunk write")
        assert asyncio.run(monitor.check()) == [1]
        assert 1 not in node.containers and failed_pipelines == [PIPELINE]
        assert asyncio.run(monitor.check()) == []  # given up once
