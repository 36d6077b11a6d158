"""EC containers close without a log (CloseContainerEventHandler, AbstractContainerReportHandler): when a
member of their pipeline goes, or it leaves service, SCM force-closes every index, and index 1 or a parity
index reporting CLOSED closes the container."""

from __future__ import annotations

from pyozone.hdds.commands import CloseContainerCommand
from pyozone.hdds.messages import ContainerReplicaReport
from pyozone.hdds.states import LifeCycleState, PipelineState, ReplicaState, SCMCommandType
from pyozone.hdds.states import NodeOperationalState as Op
from tests.unit.scm.block.ec_harness import EcScm

STALE_MS = 5 * 60_000 + 3_000
LEASE_MS = 150_000


def closed(cid: int, index: int) -> ContainerReplicaReport:
    return ContainerReplicaReport(
        cid, ReplicaState.CLOSED, replica_index=index, key_count=1, used_bytes=1 << 20
    )


def test_a_stale_member_closes_the_pipeline_and_every_index_is_told_to_close() -> None:
    h = EcScm(8)
    block = h.allocate()
    pipeline, cid = block.pipeline, block.container_id
    lost = pipeline.nodes[2]
    h.run(STALE_MS, silent=[lost])
    assert h.scm.pipelines.get(pipeline.id).state is PipelineState.CLOSED
    assert h.scm.containers.get(cid).state is LifeCycleState.CLOSING
    h.run(LEASE_MS, silent=[lost])
    for dn in pipeline.nodes:
        (command,) = h.queued(dn, SCMCommandType.closeContainerCommand)
        assert isinstance(command, CloseContainerCommand)
        assert (command.container_id, command.pipeline_id, command.force) == (cid, pipeline.id, True)
    for dn in set(h.dns) - set(pipeline.nodes):
        assert h.queued(dn, SCMCommandType.closeContainerCommand) == []


def test_a_dead_member_removes_the_pipeline_without_a_close_pipeline_command() -> None:
    h = EcScm(8)
    block = h.allocate()
    lost = block.pipeline.nodes[0]
    h.run(10 * 60_000 + 3_000, silent=[lost])
    assert h.scm.pipelines.find(block.pipeline.id) is None
    assert h.scm.containers.get(block.container_id).state is LifeCycleState.CLOSING
    assert block.pipeline.id not in h.close_pipeline_commands()
    assert lost not in h.allocate().pipeline.nodes


def test_a_member_leaving_service_closes_the_pipeline() -> None:
    h = EcScm(8)
    block = h.allocate()
    leaving = block.pipeline.nodes[4]
    h.scm.nodes.set_operational_state(leaving, Op.DECOMMISSIONING)
    h.scm.admin_monitor.run()
    assert h.scm.pipelines.find(block.pipeline.id) is None
    assert h.scm.containers.get(block.container_id).state is LifeCycleState.CLOSING
    assert block.pipeline.id not in h.close_pipeline_commands()
    assert leaving not in h.allocate().pipeline.nodes


def test_a_data_index_other_than_1_does_not_close_the_container() -> None:
    h = EcScm(8)
    block = h.allocate()
    cid, nodes = block.container_id, block.pipeline.nodes
    h.scm.pipelines.close_pipeline(block.pipeline.id)
    for index in (2, 3):
        h.report(nodes[index - 1], closed(cid, index))
    assert h.scm.containers.get(cid).state is LifeCycleState.CLOSING
    h.report(nodes[0], closed(cid, 1))
    assert h.scm.containers.get(cid).state is LifeCycleState.CLOSED
    assert {r.replica_index for r in h.scm.containers.replicas(cid)} == {1, 2, 3}


def test_a_parity_index_closes_the_container() -> None:
    h = EcScm(8)
    block = h.allocate()
    cid = block.container_id
    h.scm.pipelines.close_pipeline(block.pipeline.id)
    h.report(block.pipeline.nodes[4], closed(cid, 5))
    assert h.scm.containers.get(cid).state is LifeCycleState.CLOSED
