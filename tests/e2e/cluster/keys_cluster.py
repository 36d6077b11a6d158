"""The cluster the key acceptance tests run on: 3 datanodes, 4 MB blocks, 16 MB containers, and the
volume and bucket they write to."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from tests.e2e.cluster.cluster_helpers import LiveCluster, MiB, live_cluster, sh

VOL, BUCKET = "keys", "bucket1"
BLOCK = 4 * MiB
CONTAINER = 16 * MiB
LEASE_S = 15

OVERRIDES = {
    "ozone.scm.block.size": "4MB",
    "ozone.scm.container.size": "16MB",
    # SCM marks a container CLOSING when its datanodes report it full and closes it after this lease (Ozone's
    # CloseContainerEventHandler): a 300 MB key's openKey pre-allocates 64 blocks at once, and the writes
    # into those already in a CLOSING container must land before it closes.
    "ozone.scm.close.container.wait.duration": f"{LEASE_S}s",
    "ozone.block.deleting.service.interval": "1s",
    "hdds.scm.block.deleting.service.interval": "1s",
    "hdds.scm.replication.thread.interval": "2s",
    # full container reports let SCM see emptied containers and delete them: how a chunk file the dead put
    # left without its putBlock goes (the datanode's deleteBlocks skips blocks it has no record of)
    "hdds.container.report.interval": "5s",
}


@contextmanager
def keys_cluster(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    overrides: dict[str, str] | None = None,
) -> Iterator[LiveCluster]:
    """A running cluster with OVERRIDES (and `overrides` on top) and the volume and bucket made."""
    with live_cluster(request, tmp_path_factory, name, 3, overrides={**OVERRIDES, **(overrides or {})}) as c:
        created = [sh(c, "volume", "create", f"/{VOL}"), sh(c, "bucket", "create", f"/{VOL}/{BUCKET}")]
        assert all(r.code == 0 for r in created), created
        yield c
