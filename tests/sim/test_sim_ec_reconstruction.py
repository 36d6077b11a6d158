"""EC reconstruction through the whole core on virtual time: killed datanodes' indexes are rebuilt by
reconstructECContainers commands the simulated coordinators run, and pyozone's ops-per-node limit caps
what one iteration gives any node while cutting the load on the busiest sources."""

from __future__ import annotations

from pyozone.config import OzoneConfiguration
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.states import ReplicaState
from pyozone.sim.cluster import SimCluster
from pyozone.sim.ec import RepairRun, fully_replicated, kill_and_repair, place_ec_containers

HOUR = 3_600_000
RS_3_2 = ReplicationConfig.parse("rs-3-2-1024k")
ENABLED = "hdds.scm.replication.datanode.ops.limit.enabled"
LIMIT = "hdds.scm.replication.datanode.ops.limit"


def ec_cluster(overrides: dict[str, str]) -> tuple[SimCluster, list[int]]:
    c = SimCluster(15, racks=5, conf=OzoneConfiguration(overrides), seed=11)
    return c, place_ec_containers(c, 120, RS_3_2)


def repair(overrides: dict[str, str]) -> tuple[SimCluster, list[int], RepairRun]:
    c, ids = ec_cluster(overrides)
    return c, ids, kill_and_repair(c, ids, 2, 2 * HOUR)


def test_lost_indexes_are_reconstructed_on_live_nodes_and_the_pending_adds_complete() -> None:
    c, ids, run = repair({})
    assert run.healthy_at_ms is not None and fully_replicated(c, ids)
    assert run.reconstructions_sent > 0 and run.reconstructions_failed == 0
    for cid in ids:
        live = [r for r in c.scm.containers.replicas(cid) if c.datanodes[r.datanode].alive]
        assert sorted(r.replica_index for r in live) == [1, 2, 3, 4, 5]
        assert all(r.state is ReplicaState.CLOSED for r in live)
    c.advance(HOUR // 60)  # the last ICRs are in: every ADD completed, none timed out
    assert c.scm.replication.pending_ops.pending_add_count() == 0
    assert c.scm.replication.metrics.ec_replica_create_timeout_total == 0


def test_the_ops_limit_caps_each_iteration_and_lowers_the_peak_source_load() -> None:
    _, _, off = repair({})
    c, ids = ec_cluster({ENABLED: "true", LIMIT: "3"})
    ops = c.scm.replication.sender.node_ops
    most: list[int] = []
    original = c.scm.replication.under_processor.process_all

    def watched() -> int:
        sent = original()
        most.append(max((ops.count(dn) for dn in c.datanodes), default=0))
        return sent

    c.scm.replication.under_processor.process_all = watched  # type: ignore[method-assign]
    on = kill_and_repair(c, ids, 2, 2 * HOUR)
    assert on.healthy_at_ms is not None and fully_replicated(c, ids)
    assert most and max(most) <= 3
    assert on.reconstructions_deferred > 0
    assert on.peak["source"] < off.peak["source"]
