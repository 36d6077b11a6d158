"""A datanode whose data volumes are full stays HEALTHY, as in Ozone (issue 11, defect 3): its replicas
count and serve reads. Its node report shows 0 B free on working volumes, and SCM's log says when it runs
out of space and when space returns, once each."""

from __future__ import annotations

import logging
from types import SimpleNamespace

import pytest

from pyozone.hdds.states import NodeState
from tests.unit.scm.node.conftest import NodeCluster


def test_a_full_node_stays_healthy_and_the_log_says_it_has_no_space(
    cluster: NodeCluster, build: SimpleNamespace, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="pyozone.scm.node.node_manager")
    dn = cluster.add(1, build.node_report(data_volumes=2))
    full = build.node_report(data_volumes=2, data_remaining=0)
    cluster.nm.process_node_report(dn, full)
    cluster.nm.process_node_report(dn, full)
    cluster.run(30_000, alive=[dn])
    info = cluster.nm.node(dn)
    assert cluster.health(dn) is NodeState.HEALTHY
    assert info.remaining() == 0 and info.healthy_volume_count() == 2 and info.failed_volume_count() == 0
    assert caplog.text.count(f"Datanode {dn} has no space left on its data volumes") == 1

    cluster.nm.process_node_report(dn, build.node_report(data_volumes=2, data_remaining=build.GB))
    assert f"Datanode {dn} has space again: {2 * build.GB} B free" in caplog.text


def test_failed_volumes_are_not_called_full(
    cluster: NodeCluster, build: SimpleNamespace, caplog: pytest.LogCaptureFixture
) -> None:
    dn = cluster.add(1)
    cluster.nm.process_node_report(dn, build.node_report(data_volumes=0, failed_data_volumes=1))
    assert "no space left" not in caplog.text
