"""ScmAdminProtocolService: what `pyozone admin` asks of a live SCM, as a thin adapter over the core.

Every call runs on the event loop (pyozone.rpc), so it sees and changes the core between heartbeats,
never during one. With security or ACLs on (admin_access.py), a call that changes the cluster
(decommission, maintenance, pipelines, safe mode, the Replication Manager, closing a container) is for
administrators only, and one that reads SCM's datanodes, pipelines or containers (their lists, a
container's replicas, the Replication Manager's report, a snapshot) for administrators, read-only
administrators, OM and the datanodes. SCM's identity, safe mode and whether the Replication Manager runs
stay open to every caller, as in Ozone.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from enum import IntEnum
from typing import TypeVar

from google.protobuf.message import Message

from pyozone import protocol as p
from pyozone.hdds.container import ContainerInfo
from pyozone.hdds.exceptions import ResultCode, SCMException
from pyozone.hdds.security.users import AdminRight
from pyozone.hdds.states import (
    LifeCycleState,
    NodeOperationalState,
    NodeState,
    ReplicationFactor,
    ReplicationType,
)
from pyozone.proto import ScmAdminProtocol_pb2 as pb
from pyozone.protocol.admin import rm_report_to_proto
from pyozone.protocol.common import container_id, enum_from_proto, pipeline_id_from_proto
from pyozone.rpc import CallContext, StatusCode
from pyozone.scm.events import SCMEvent
from pyozone.scm.scm import StorageContainerManager
from pyozone.scm.server import node_admin
from pyozone.scm.server.admin_access import AdminAccess
from pyozone.scm.server.listings import container_view, datanode_listing, pipeline_view
from pyozone.scm.server.resolve import details_resolver
from pyozone.scm.server.rpc import InvalidRequest, parse, rpc, rpc_stream
from pyozone.scm.server.snapshot_source import SnapshotSource

MAX_LIST_COUNT = 10_000
"""Containers per listContainer page: well inside MAX_ADMIN_MESSAGE_BYTES at ~100 bytes a container."""

MAX_SNAPSHOT_BATCH_ROWS = 65_536
"""streamSnapshot's batchRows at most: a batch is built in one go on the event loop, between heartbeats."""

Context = CallContext
E = TypeVar("E", bound=IntEnum)


class AdminService:
    def __init__(
        self, core: StorageContainerManager, scm_uuid: str, snapshot_source: SnapshotSource | None = None
    ) -> None:
        self.core = core
        self.scm_uuid = scm_uuid
        self.snapshot_source = snapshot_source
        self._resolve = details_resolver(core.nodes)
        self._admins = AdminAccess.from_conf(core.conf)

    # ------------------------------------------------------------------ SCM
    @rpc
    async def getScmInfo(
        self, request: pb.GetScmInfoRequestProto, context: Context
    ) -> pb.GetScmInfoResponseProto:
        safe_mode = self.core.safe_mode
        return pb.GetScmInfoResponseProto(
            clusterId=self.core.cluster_id,
            scmId=self.scm_uuid,
            inSafeMode=safe_mode.in_safe_mode(),
            preCheckComplete=safe_mode.precheck_passed(),
        )

    # ------------------------------------------------------------------ datanodes
    @rpc
    async def queryNode(
        self, request: pb.NodeQueryRequestProto, context: Context
    ) -> pb.NodeQueryResponseProto:
        await self._admins.require(context, AdminRight.READ)
        health = _optional(request, "state", NodeState)
        op = _optional(request, "opState", NodeOperationalState)
        nodes = self.core.nodes
        response = pb.NodeQueryResponseProto()
        for info in sorted(nodes.nodes(), key=lambda i: (i.details.hostname, i.uuid)):
            if (health is None or info.status.health is health) and (
                op is None or info.status.operational_state is op
            ):
                response.datanodes.append(p.node_to_proto(datanode_listing(self.core, info)))
        return response

    @rpc
    async def decommissionNodes(
        self, request: pb.DecommissionNodesRequestProto, context: Context
    ) -> pb.DecommissionNodesResponseProto:
        await self._admins.require(context)
        failed = self._set_state(request.hosts, NodeOperationalState.DECOMMISSIONING)
        return pb.DecommissionNodesResponseProto(failedHosts=failed)

    @rpc
    async def startMaintenanceNodes(
        self, request: pb.StartMaintenanceNodesRequestProto, context: Context
    ) -> pb.StartMaintenanceNodesResponseProto:
        await self._admins.require(context)
        if request.endInHours < 0:
            raise InvalidRequest(f"endInHours: must be at least 0, got {request.endInHours}")
        expiry = self.core.clock.wall_ms() // 1000 + request.endInHours * 3600 if request.endInHours else 0
        failed = self._set_state(request.hosts, NodeOperationalState.ENTERING_MAINTENANCE, expiry)
        return pb.StartMaintenanceNodesResponseProto(failedHosts=failed)

    @rpc
    async def recommissionNodes(
        self, request: pb.RecommissionNodesRequestProto, context: Context
    ) -> pb.RecommissionNodesResponseProto:
        await self._admins.require(context)
        failed = self._set_state(request.hosts, NodeOperationalState.IN_SERVICE)
        return pb.RecommissionNodesResponseProto(failedHosts=failed)

    def _set_state(
        self, hosts: list[str], state: NodeOperationalState, expiry_epoch_sec: int = 0
    ) -> list[pb.DatanodeAdminErrorResponseProto]:
        if not hosts:
            raise InvalidRequest("hosts: is empty")
        failed = node_admin.set_state(self.core.nodes, hosts, state, expiry_epoch_sec)
        return [pb.DatanodeAdminErrorResponseProto(host=host, error=error) for host, error in failed]

    # ------------------------------------------------------------------ pipelines
    @rpc
    async def listPipelines(
        self, request: pb.ListPipelineRequestProto, context: Context
    ) -> pb.ListPipelineResponseProto:
        await self._admins.require(context, AdminRight.READ)
        nodes = self.core.nodes
        views = (pipeline_view(nodes, pipeline) for pipeline in self.core.pipelines.pipelines())
        return pb.ListPipelineResponseProto(
            pipelines=[p.pipeline_to_proto(v.pipeline, v.members.get) for v in views]
        )

    @rpc
    async def createPipeline(
        self, request: pb.PipelineRequestProto, context: Context
    ) -> pb.PipelineResponseProto:
        await self._admins.require(context)
        if request.pipelineID:
            raise InvalidRequest("pipelineID: SCM chooses pipeline ids; leave it empty")
        if request.replicationType == ReplicationType.EC:
            raise InvalidRequest("replicationType: EC pipelines are not created on request")
        config = parse(
            p.replication_from_proto,
            request.replicationType,
            request.replicationFactor,
            None,
            "",
            "replicationType",
            "replicationFactor",
        )
        view = pipeline_view(self.core.nodes, self.core.pipelines.create_pipeline(config))
        return pb.PipelineResponseProto(
            errorCode=pb.PipelineResponseProto.success,
            pipeline=p.pipeline_to_proto(view.pipeline, view.members.get),
        )

    @rpc
    async def closePipeline(
        self, request: pb.ClosePipelineRequestProto, context: Context
    ) -> pb.ClosePipelineResponseProto:
        await self._admins.require(context)
        self.core.pipelines.close_pipeline(parse(pipeline_id_from_proto, request, "pipelineID", ""))
        return pb.ClosePipelineResponseProto()

    @rpc
    async def activatePipeline(
        self, request: pb.ActivatePipelineRequestProto, context: Context
    ) -> pb.ActivatePipelineResponseProto:
        await self._admins.require(context)
        self.core.pipelines.activate_pipeline(parse(pipeline_id_from_proto, request, "pipelineID", ""))
        return pb.ActivatePipelineResponseProto()

    @rpc
    async def deactivatePipeline(
        self, request: pb.DeactivatePipelineRequestProto, context: Context
    ) -> pb.DeactivatePipelineResponseProto:
        await self._admins.require(context)
        self.core.pipelines.deactivate_pipeline(parse(pipeline_id_from_proto, request, "pipelineID", ""))
        return pb.DeactivatePipelineResponseProto()

    # ------------------------------------------------------------------ containers
    @rpc
    async def listContainer(
        self, request: pb.SCMListContainerRequestProto, context: Context
    ) -> pb.SCMListContainerResponseProto:
        await self._admins.require(context, AdminRight.READ)
        if not 0 < request.count <= MAX_LIST_COUNT:
            raise InvalidRequest(f"count: must be in 1..{MAX_LIST_COUNT}, got {request.count}")
        state = _optional(request, "state", LifeCycleState)
        rtype = _optional(request, "type", ReplicationType)
        factor = _optional(request, "factor", ReplicationFactor)

        def matches(info: ContainerInfo) -> bool:
            config = info.replication_config
            return (rtype is None or config.type is rtype) and (factor is None or config.factor == factor)

        matching = [info for info in self.core.containers.containers(state) if matches(info)]
        page = [info for info in matching if info.container_id >= request.startContainerID][: request.count]
        return pb.SCMListContainerResponseProto(
            containers=[p.container_info_to_proto(info) for info in page], containerCount=len(matching)
        )

    @rpc
    async def getContainer(
        self, request: pb.GetContainerRequestProto, context: Context
    ) -> pb.GetContainerResponseProto:
        await self._admins.require(context, AdminRight.READ)
        view = container_view(self.core, parse(container_id, request.containerID, "containerID"))
        response = pb.GetContainerResponseProto(containerInfo=p.container_info_to_proto(view.info))
        for replica in view.replicas:
            details = self._resolve(replica.datanode)
            response.replicas.append(p.container_replica_info_to_proto(replica, details))
        if view.pipeline is not None:
            response.pipeline.CopyFrom(p.pipeline_to_proto(view.pipeline.pipeline, view.pipeline.members.get))
        return response

    @rpc
    async def closeContainer(
        self, request: pb.SCMCloseContainerRequestProto, context: Context
    ) -> pb.SCMCloseContainerResponseProto:
        """Allowed in safe mode, as in Ozone: closing only stops writes."""
        await self._admins.require(context)
        info = self.core.containers.get(parse(container_id, request.containerID, "containerID"))
        if info.state is not LifeCycleState.OPEN:
            raise SCMException(
                f"container {info.container_id} is {info.state.name}; only OPEN containers can be closed",
                ResultCode.INVALID_CONTAINER_STATE,
            )
        self.core.events.fire(SCMEvent.CLOSE_CONTAINER, info.container_id)
        return pb.SCMCloseContainerResponseProto()

    # ------------------------------------------------------------------ safe mode
    @rpc
    async def inSafeMode(
        self, request: pb.InSafeModeRequestProto, context: Context
    ) -> pb.InSafeModeResponseProto:
        safe_mode = self.core.safe_mode
        return pb.InSafeModeResponseProto(
            inSafeMode=safe_mode.in_safe_mode(), preCheckComplete=safe_mode.precheck_passed()
        )

    @rpc
    async def getSafeModeRuleStatuses(
        self, request: pb.GetSafeModeRuleStatusesRequestProto, context: Context
    ) -> pb.GetSafeModeRuleStatusesResponseProto:
        return pb.GetSafeModeRuleStatusesResponseProto(
            safeModeRuleStatusesProto=[p.rule_status_to_proto(s) for s in self.core.safe_mode.rule_statuses()]
        )

    @rpc
    async def forceExitSafeMode(
        self, request: pb.ForceExitSafeModeRequestProto, context: Context
    ) -> pb.ForceExitSafeModeResponseProto:
        await self._admins.require(context)
        self.core.safe_mode.force_exit()
        return pb.ForceExitSafeModeResponseProto(exitedSafeMode=not self.core.safe_mode.in_safe_mode())

    # ------------------------------------------------------------------ replication manager
    @rpc
    async def getReplicationManagerReport(
        self, request: pb.GetReplicationManagerReportRequestProto, context: Context
    ) -> pb.GetReplicationManagerReportResponseProto:
        """The report of the last full check (empty, timestamp 0, before the first one completes)."""
        await self._admins.require(context, AdminRight.READ)
        return pb.GetReplicationManagerReportResponseProto(
            report=rm_report_to_proto(self.core.replication.report)
        )

    @rpc
    async def startReplicationManager(
        self, request: pb.StartReplicationManagerRequestProto, context: Context
    ) -> pb.StartReplicationManagerResponseProto:
        await self._admins.require(context)
        self.core.replication.start()
        return pb.StartReplicationManagerResponseProto()

    @rpc
    async def stopReplicationManager(
        self, request: pb.StopReplicationManagerRequestProto, context: Context
    ) -> pb.StopReplicationManagerResponseProto:
        await self._admins.require(context)
        self.core.replication.stop()
        return pb.StopReplicationManagerResponseProto()

    @rpc
    async def getReplicationManagerStatus(
        self, request: pb.ReplicationManagerStatusRequestProto, context: Context
    ) -> pb.ReplicationManagerStatusResponseProto:
        return pb.ReplicationManagerStatusResponseProto(isRunning=self.core.replication.is_running())

    # ------------------------------------------------------------------ snapshot
    @rpc_stream
    async def streamSnapshot(
        self, request: pb.SnapshotRequestProto, context: Context
    ) -> AsyncIterator[pb.SnapshotChunkProto]:
        """`pyozone admin snapshot`: see snapshot_source.py."""
        await self._admins.require(context, AdminRight.READ)
        if request.batchRows > MAX_SNAPSHOT_BATCH_ROWS:
            raise InvalidRequest(f"batchRows: at most {MAX_SNAPSHOT_BATCH_ROWS}, got {request.batchRows}")
        if self.snapshot_source is None:
            await context.abort(StatusCode.UNIMPLEMENTED, "this SCM was started without snapshots")
        async for chunk in self.snapshot_source(self.core, request.batchRows):
            yield chunk


def _optional(request: Message, name: str, enum: type[E]) -> E | None:
    """An `optional` enum filter: None when not sent, else the enum member (a bad number is the caller's)."""
    return parse(enum_from_proto, enum, getattr(request, name), name) if request.HasField(name) else None
