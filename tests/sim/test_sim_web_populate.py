"""`pyozone sim --containers`: closed containers placed on a running simulated cluster (sim/populate.py).

What SCM holds (records, replica map, each node's container set) must be what the simulated datanodes
hold, so their later full reports change nothing, the Replication Manager finds them healthy, and blocks
allocated afterwards get fresh container ids.
"""

from __future__ import annotations

from collections import Counter

import pytest

from pyozone.hdds.container_health import ContainerHealthState
from pyozone.hdds.ids import RATIS_THREE
from pyozone.hdds.states import LifeCycleState, ReplicaState
from pyozone.sim.populate import PlaceAtSafeModeExit, place_closed_containers

COUNT = 300


@pytest.fixture
def cluster(sim):
    c = sim.cluster(9, racks=3, seed=4, overrides={"hdds.container.report.interval": "2m"})
    sim.leave_safe_mode(c)
    return c


def test_scm_and_the_datanodes_hold_the_same_replicas(cluster) -> None:
    ids = place_closed_containers(cluster, COUNT)
    scm = cluster.scm
    assert len(ids) == COUNT
    assert scm.containers.count(LifeCycleState.CLOSED) == COUNT
    rack_of = scm.nodes.topology.rack_of
    for cid in ids:
        info = scm.containers.get(cid)
        assert info.replication_config == RATIS_THREE and info.number_of_keys > 0
        assert cluster.container_size // 2 <= info.used_bytes <= cluster.container_size
        replicas = scm.containers.replicas(cid)
        holders = {r.datanode for r in replicas}
        assert len(holders) == 3 and len({rack_of(dn) for dn in holders}) == 3, replicas
        for r in replicas:
            on_disk = cluster.datanodes[r.datanode].replicas[cid]
            assert (on_disk.state, on_disk.used_bytes, on_disk.sequence_id) == (
                ReplicaState.CLOSED,
                info.used_bytes,
                info.sequence_id,
            )
            assert cid in scm.nodes.containers(r.datanode)
    spread = Counter(r.datanode for cid in ids for r in scm.containers.replicas(cid))
    assert len(spread) == 9 and max(spread.values()) - min(spread.values()) <= 3, spread


def test_full_reports_change_nothing_and_the_rm_finds_them_healthy(cluster, sim) -> None:
    ids = place_closed_containers(cluster, COUNT)
    scm = cluster.scm
    before = {cid: sorted(r.datanode for r in scm.containers.replicas(cid)) for cid in ids}
    cluster.advance(3 * sim.MINUTE)  # every datanode sends a full container report (2m interval)
    assert {cid: sorted(r.datanode for r in scm.containers.replicas(cid)) for cid in ids} == before
    report = scm.replication.process_all()
    assert report.stat(LifeCycleState.CLOSED) == COUNT
    unhealthy = {
        s.name: report.stat(s) for s in ContainerHealthState if s is not ContainerHealthState.HEALTHY
    }
    assert set(unhealthy.values()) == {0}, unhealthy


def test_node_reports_count_the_placed_bytes(cluster, sim) -> None:
    ids = place_closed_containers(cluster, COUNT)
    held = Counter()
    for cid in ids:
        for r in cluster.scm.containers.replicas(cid):
            held[r.datanode] += r.bytes_used
    cluster.advance(2 * sim.MINUTE)  # node reports every minute
    for dn, node in cluster.datanodes.items():
        assert sum(s.used for s in node.report.storage) == held[dn]
        assert cluster.scm.nodes.node(dn).report == node.report


def test_ids_come_from_scms_sequence(cluster) -> None:
    ids = place_closed_containers(cluster, COUNT)
    block = cluster.write_block(1 << 20)
    assert block.block_id.container_id > ids[-1]
    assert cluster.scm.containers.count() == COUNT + len(
        cluster.scm.containers.containers(LifeCycleState.OPEN)
    )


def test_refused_in_safe_mode_and_on_fewer_than_three_nodes(sim) -> None:
    c = sim.cluster(3)
    with pytest.raises(ValueError, match="safe mode"):
        place_closed_containers(c, 1)
    sim.leave_safe_mode(c)
    c.kill(next(iter(c.datanodes)))
    sim.advance_to(c, c.clock.now_ms() + 11 * sim.MINUTE)  # DEAD: two healthy nodes left
    with pytest.raises(ValueError, match="need 3 healthy datanodes"):
        place_closed_containers(c, 1)
    assert c.scm.containers.count(LifeCycleState.CLOSED) == 0


def test_placed_once_at_the_first_step_out_of_safe_mode(sim) -> None:
    c = sim.cluster(5)
    seen: list[tuple[int, float]] = []
    place = PlaceAtSafeModeExit(c, 40, lambda count, minute, _seconds: seen.append((count, minute)))
    place()
    assert seen == [] and c.scm.containers.count() == 0
    while c.scm.safe_mode.in_safe_mode():
        c.advance(sim.SECOND)
        place()
    place()
    assert seen == [(40, c.clock.now_ms() / sim.MINUTE)]
    assert c.scm.containers.count(LifeCycleState.CLOSED) == 40


def test_placement_waits_for_three_healthy_datanodes(sim) -> None:
    c = sim.cluster(3)
    seen: list[int] = []
    place = PlaceAtSafeModeExit(c, 10, lambda count, _minute, _seconds: seen.append(count))
    sim.leave_safe_mode(c)
    victim = next(iter(c.datanodes))
    c.kill(victim)
    sim.advance_to(c, c.clock.now_ms() + 6 * sim.MINUTE)  # STALE: two healthy nodes
    place()
    assert seen == []
    c.restart(victim)
    c.run_until(lambda: sim.health(c, victim).name == "HEALTHY", sim.MINUTE)
    place()
    assert seen == [10] and c.scm.containers.count(LifeCycleState.CLOSED) == 10
