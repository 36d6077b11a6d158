"""WritableECContainerProvider (Ozone's class of that name) through the real SCM core: pipelines up to the
maximum, then existing containers with room; full pipelines closed; the exclude list honoured; the last-try
raise."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyozone.hdds.block import ExcludeList
from pyozone.hdds.exceptions import ResultCode, SCMException
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.states import LifeCycleState, PipelineState, ReplicationType
from pyozone.scm.block.writable_ec import maximum_ec_pipelines
from tests.unit.scm.block.ec_harness import RS_3_2, EcScm

GB = 1 << 30
RS_6_3 = ReplicationConfig.parse("rs-6-3-1024k")
ONE_PIPELINE_OF_1GB = {
    "ozone.scm.container.size": "1GB",
    "ozone.scm.ec.pipeline.minimum": "1",
    "ozone.scm.ec.pipeline.per.volume.factor": "0",
}


# ------------------------------------------------------------------ the maximum
def test_maximum_is_the_minimum_on_a_small_cluster() -> None:
    """10 nodes of 1 volume: floor(1 x 10 / 5) = 2 < ozone.scm.ec.pipeline.minimum (5)."""
    assert EcScm(10).scm.blocks.ec_containers.maximum_pipelines(RS_3_2) == 5


def test_maximum_grows_with_healthy_volumes() -> None:
    """10 nodes of 4 volumes: floor(1 x 40 / 5) = 8."""
    assert EcScm(10, volumes=4).scm.blocks.ec_containers.maximum_pipelines(RS_3_2) == 8


def test_maximum_counts_only_healthy_in_service_nodes() -> None:
    h = EcScm(10, volumes=4)
    h.run(10 * 60_000 + 3_000, silent=h.dns[:5])  # five nodes dead: 20 volumes left
    assert h.scm.blocks.ec_containers.maximum_pipelines(RS_3_2) == 5


def test_maximum_uses_the_per_volume_factor() -> None:
    h = EcScm(10, volumes=4, overrides={"ozone.scm.ec.pipeline.per.volume.factor": "2.5"})
    assert h.scm.blocks.ec_containers.maximum_pipelines(RS_3_2) == 20


@given(
    minimum=st.integers(0, 50),
    factor=st.floats(0, 10, allow_nan=False),
    volumes=st.integers(0, 5000),
    data=st.integers(1, 10),
    parity=st.integers(1, 4),
)
def test_maximum_formula(minimum: int, factor: float, volumes: int, data: int, parity: int) -> None:
    config = ReplicationConfig(ReplicationType.EC, 0, data, parity)
    got = maximum_ec_pipelines(config, minimum, factor, volumes)
    assert got == max(minimum, int(factor * volumes // (data + parity)))
    assert got >= minimum
    assert maximum_ec_pipelines(config, minimum, factor, volumes + 1) >= got


# ------------------------------------------------------------------ allocation
def test_each_allocation_below_the_maximum_opens_a_pipeline_with_its_own_container() -> None:
    h = EcScm(10)
    blocks = [h.allocate() for _ in range(5)]
    assert len({b.pipeline.id for b in blocks}) == 5
    assert len({b.container_id for b in blocks}) == 5
    for b in blocks:
        assert b.pipeline.replication_config == RS_3_2
        assert b.pipeline.state is PipelineState.OPEN
        assert len(b.pipeline.nodes) == 5
        info = h.scm.containers.get(b.container_id)
        assert info.pipeline_id == b.pipeline.id and info.replication_config == RS_3_2
        assert h.scm.pipelines.containers(b.pipeline.id) == {b.container_id}


def test_allocation_at_the_maximum_reuses_open_pipelines() -> None:
    h = EcScm(10)
    for _ in range(40):
        h.allocate()
    assert len(h.open_pipelines()) == 5
    assert h.scm.containers.count() == 5


def test_many_blocks_spread_over_the_pipelines_within_the_limit() -> None:
    """1000 block groups in 1 GB containers: full containers close, their pipelines close, new ones
    open; never more OPEN pipelines than the maximum; every datanode holds a share."""
    h = EcScm(10, racks=5, overrides={"ozone.scm.container.size": "1GB"})
    per_pipeline: Counter[str] = Counter()
    per_node: Counter[str] = Counter()
    for _ in range(1000):
        block = h.write()
        assert len(h.open_pipelines()) <= 5
        per_pipeline[block.pipeline.id] += 1
        per_node.update(block.pipeline.nodes)
        assert len({h.scm.nodes.topology.rack_of(dn) for dn in block.pipeline.nodes}) == 5
    # 1 GB holds four 256 MB groups: each container is full after four, then its pipeline goes
    closed = h.scm.pipelines.pipelines(RS_3_2, PipelineState.CLOSED)
    assert len(closed) + len(h.open_pipelines()) == len(per_pipeline)
    assert len(closed) >= 1000 // 4 - 5
    for p in closed:
        assert per_pipeline[p.id] == 4
        (info,) = h.scm.containers.pipeline_containers(p.id)
        assert info.state is LifeCycleState.CLOSING
    for p in h.open_pipelines():
        assert per_pipeline[p.id] <= 4  # a full one closes when an allocation next meets it
    assert set(per_node) == set(h.dns)
    assert max(per_node.values()) < 2 * min(per_node.values())


def test_a_full_containers_pipeline_is_closed_and_replaced() -> None:
    h = EcScm(10, overrides=ONE_PIPELINE_OF_1GB)
    first = h.write(GB // 2)
    h.write(GB // 2)  # its replicas report it full
    assert h.scm.containers.get(first.container_id).state is LifeCycleState.OPEN
    third = h.allocate(size=GB // 2)
    assert third.pipeline.id != first.pipeline.id
    assert h.scm.pipelines.get(first.pipeline.id).state is PipelineState.CLOSED
    assert h.scm.containers.get(first.container_id).state is LifeCycleState.CLOSING


def test_a_container_without_room_for_the_block_closes_its_pipeline() -> None:
    h = EcScm(10, overrides=ONE_PIPELINE_OF_1GB)
    first = h.write(GB // 2 + 1)
    second = h.allocate(size=GB // 2)
    assert second.container_id != first.container_id
    assert h.scm.pipelines.get(first.pipeline.id).state is PipelineState.CLOSED
    assert h.scm.containers.get(first.container_id).state is LifeCycleState.CLOSING


# ------------------------------------------------------------------ the exclude list
def test_excluded_datanodes_are_in_no_new_pipeline() -> None:
    h = EcScm(10)
    excluded = ExcludeList(datanodes=frozenset(h.dns[:3]))
    for _ in range(20):
        assert not excluded.datanodes & set(h.allocate(excluded=excluded).pipeline.nodes)


def test_excluded_datanodes_rule_out_open_pipelines() -> None:
    h = EcScm(10)
    for _ in range(5):
        h.allocate()
    dn = h.open_pipelines()[0].nodes[0]
    for _ in range(20):
        assert dn not in h.allocate(excluded=ExcludeList(datanodes=frozenset({dn}))).pipeline.nodes


def test_excluded_pipelines_and_containers_are_skipped() -> None:
    h = EcScm(10)
    blocks = [h.allocate() for _ in range(5)]
    excluded = ExcludeList(
        pipelines=frozenset(b.pipeline.id for b in blocks[:2]),
        containers=frozenset(b.container_id for b in blocks[2:4]),
    )
    for _ in range(20):
        assert h.allocate(size=1 << 20, excluded=excluded).container_id == blocks[4].container_id


def test_every_open_pipeline_excluded_raises_the_maximum_to_the_node_count() -> None:
    """Open = maximum and all excluded: one more pipeline is allowed while nodes outnumber the maximum."""
    h = EcScm(10, overrides={"ozone.scm.ec.pipeline.minimum": "1"})
    max_pipelines = h.scm.blocks.ec_containers.maximum_pipelines(RS_3_2)
    assert max_pipelines == 2
    blocks = [h.allocate() for _ in range(2)]
    excluded = ExcludeList(pipelines=frozenset(b.pipeline.id for b in blocks))
    extra = h.allocate(excluded=excluded)
    assert extra.pipeline.id not in excluded.pipelines
    assert len(h.open_pipelines()) == 3


def test_a_datanode_in_every_open_pipeline_excluded_still_gets_a_pipeline_without_it() -> None:
    """CI: a datanode killed mid-write was in all six open pipelines (six nodes, the raised maximum six)
    and the writer was refused until SCM found the node stale. Pipelines holding a datanode the writer
    excluded do not count against the raised maximum."""
    h = EcScm(6)
    assert h.scm.blocks.ec_containers.maximum_pipelines(RS_3_2) == 5
    for _ in range(5):
        h.allocate()
    first = h.open_pipelines()
    dead = next(dn for dn in h.dns if all(dn in p.nodes for p in first))  # five omit at most five nodes
    other = next(dn for dn in h.dns if dn != dead)
    h.allocate(excluded=ExcludeList(datanodes=frozenset({other}), pipelines=frozenset(p.id for p in first)))
    assert len(h.open_pipelines()) == 6 and all(dead in p.nodes for p in h.open_pipelines())
    block = h.allocate(excluded=ExcludeList(datanodes=frozenset({dead})))
    assert dead not in block.pipeline.nodes
    assert len(h.open_pipelines()) == 7


def test_no_pipeline_left_and_no_room_to_raise_the_maximum_is_refused() -> None:
    h = EcScm(5)
    blocks = [h.allocate() for _ in range(5)]
    excluded = ExcludeList(pipelines=frozenset(b.pipeline.id for b in blocks))
    with pytest.raises(SCMException) as e:
        h.allocate(excluded=excluded)
    assert e.value.code is ResultCode.FAILED_TO_FIND_SUITABLE_NODE
    assert "limit (5) reached (5 open)" in str(e.value)


def test_too_few_datanodes_for_the_config_is_refused() -> None:
    h = EcScm(8)
    with pytest.raises(SCMException) as e:
        h.allocate(RS_6_3)
    assert e.value.code is ResultCode.FAILED_TO_FIND_SUITABLE_NODE
    assert h.scm.pipelines.pipelines(RS_6_3) == []


def test_refused_in_safe_mode() -> None:
    h = EcScm(10, overrides={"hdds.scm.safemode.min.datanode": "20"}, out_of_safe_mode=False)
    assert h.scm.safe_mode.in_safe_mode()
    with pytest.raises(SCMException) as e:
        h.allocate()
    assert e.value.code is ResultCode.SAFE_MODE_EXCEPTION
