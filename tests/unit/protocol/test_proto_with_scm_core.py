"""The real SCM core, its registrations, heartbeats and commands all sent over the wire format.

Every registration, heartbeat and heartbeat response of a simulated cluster goes dataclass -> proto -> bytes
-> proto -> dataclass; the copies must equal the originals and the cluster must behave as usual.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from pyozone import protocol as p
from pyozone.config import OzoneConfiguration
from pyozone.hdds.commands import SCMCommand
from pyozone.hdds.datanode import DatanodeDetails, LayoutVersion, NodeReport
from pyozone.hdds.messages import ContainerReplicaReport, Heartbeat, PipelineReport
from pyozone.hdds.states import LifeCycleState, NodeState, PipelineState, ReplicaState, SCMCommandType
from pyozone.scm.events import SCMEvent
from pyozone.sim.cluster import SimCluster
from tests.unit.protocol.proto_strategies import wire

SECOND = 1_000
MINUTE = 60 * SECOND
T = SCMCommandType


class OverTheWire:
    """Stands between the simulated datanodes and the SCM core, as the gRPC layer will."""

    def __init__(self, cluster: SimCluster) -> None:
        self.cluster = cluster
        self.commands: Counter[SCMCommandType] = Counter()
        self.heartbeats = 0
        self.statuses = 0
        self.attach()

    def attach(self) -> None:
        scm = self.cluster.scm
        self.register_core, self.heartbeat_core = scm.register, scm.heartbeat
        scm.register = self.register  # type: ignore[method-assign]
        scm.heartbeat = self.heartbeat  # type: ignore[method-assign]

    def register(
        self,
        details: DatanodeDetails,
        node_report: NodeReport | None = None,
        container_report: Sequence[ContainerReplicaReport] = (),
        pipeline_reports: Sequence[PipelineReport] = (),
        layout: LayoutVersion | None = None,
    ):
        request = p.RegisterRequest(
            details, node_report, tuple(container_report), tuple(pipeline_reports), layout
        )
        received = p.register_request_from_proto(wire(p.register_request_to_proto(request)))
        assert received == request
        node = self.register_core(
            received.datanode,
            received.node_report,
            received.container_report,
            received.pipeline_reports,
            received.layout,
        )
        response = p.RegisterResponse(node.cluster_id, node.datanode_uuid, node.network_location)
        assert p.register_response_from_proto(wire(p.register_response_to_proto(response))) == response
        return node

    def heartbeat(self, hb: Heartbeat) -> list[SCMCommand]:
        received = p.heartbeat_from_proto(wire(p.heartbeat_to_proto(hb)))
        assert received == hb
        self.heartbeats += 1
        self.statuses += len(received.command_status_reports)
        response = p.HeartbeatResponse(hb.datanode.uuid, tuple(self.heartbeat_core(received)))
        delivered = p.heartbeat_response_from_proto(wire(p.heartbeat_response_to_proto(response)))
        assert delivered == response
        self.commands.update(c.type for c in delivered.commands)
        return list(delivered.commands)


def test_a_cluster_runs_over_the_wire_format() -> None:
    conf = OzoneConfiguration(
        {
            "ozone.scm.container.size": "10MB",
            "ozone.scm.block.size": "1MB",
            "ozone.scm.close.container.wait.duration": "10s",
            "hdds.scm.wait.time.after.safemode.exit": "30s",
            "hdds.scm.block.deleting.service.interval": "10s",
        }
    )
    c = SimCluster(5, conf=conf, seed=3)
    link = OverTheWire(c)
    scm = c.scm

    assert c.run_until(lambda: not scm.safe_mode.in_safe_mode(), 10 * MINUTE)
    assert c.run_until(
        lambda: any(pl.state is PipelineState.OPEN for pl in scm.pipelines.pipelines()), MINUTE
    )
    assert link.commands[T.createPipelineCommand] > 0

    # A container fills, is closed, and its blocks are deleted: closeContainer, deleteBlocks and their ACKs.
    block = c.write_block(1 << 20, owner="om")
    cid = block.container_id
    scm.events.fire(SCMEvent.CLOSE_CONTAINER, cid)
    assert c.run_until(
        lambda: (
            scm.containers.get(cid).state is LifeCycleState.CLOSED
            and [r.state for r in scm.containers.replicas(cid)] == [ReplicaState.CLOSED] * 3
        ),
        3 * MINUTE,
    )
    assert link.commands[T.closeContainerCommand] >= 3
    (tx,) = scm.deleted_blocks.add_transactions({cid: [block.block_id.local_id]})
    assert c.run_until(lambda: tx not in scm.deleted_blocks.transaction_ids(), 3 * MINUTE)
    assert link.commands[T.deleteBlocksCommand] == 3 and link.statuses >= 3

    # A datanode dies: its pipelines close (closePipeline to the survivors).
    victim = next(iter(c.datanodes))
    c.kill(victim)
    assert c.run_until(lambda: scm.nodes.node(victim).status.health is NodeState.DEAD, 15 * MINUTE)
    assert link.commands[T.closePipelineCommand] > 0

    # A restarted SCM tells every datanode to register again.
    c.restart_scm()
    link.attach()
    c.advance(2 * MINUTE)
    assert link.commands[T.reregisterCommand] >= len(c.datanodes) - 1
    assert c.scm.nodes.is_registered(next(dn for dn in c.datanodes if dn != victim))
