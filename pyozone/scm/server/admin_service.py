"""ScmAdminProtocolService: what `pyozone admin` asks of a live SCM, as a thin adapter over the core; its
messages are built and read in pyozone/protocol/admin.py, the same converters ScmAdminClient uses.

Every call runs on the event loop (pyozone.rpc), so it sees and changes the core between heartbeats,
never during one. With security or ACLs on (admin_access.py), a call that changes the cluster
(decommission, maintenance, pipelines, safe mode, the Replication Manager, closing a container) is for
administrators only, and one that reads SCM's datanodes, pipelines or containers (their lists, a
container's replicas, the Replication Manager's report, a snapshot) for administrators, read-only
administrators, OM and the datanodes. SCM's identity, safe mode and whether the Replication Manager runs
stay open to every caller, as in Ozone. In an HA service, `transferLeadership` (administrators only) hands
the leadership to another SCM.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING

from pyozone.hdds.container import ContainerInfo
from pyozone.hdds.exceptions import ResultCode, SCMException
from pyozone.hdds.security.users import AdminRight
from pyozone.hdds.states import LifeCycleState, NodeOperationalState
from pyozone.protocol import admin as wire
from pyozone.protocol import admin_balancer as balancer_wire
from pyozone.protocol.common import container_id, pipeline_id_from_proto
from pyozone.protocol.snapshot import snapshot_chunk_to_proto
from pyozone.rpc import CallContext, StatusCode
from pyozone.scm.events import SCMEvent
from pyozone.scm.scm import StorageContainerManager
from pyozone.scm.server import node_admin
from pyozone.scm.server.admin_access import AdminAccess
from pyozone.scm.server.ha import LeadershipNotMoved, NotServing, ScmRaft
from pyozone.scm.server.listings import container_view, datanode_listing, pipeline_view
from pyozone.scm.server.resolve import details_resolver
from pyozone.scm.server.rpc import InvalidRequest, parse, rpc, rpc_stream
from pyozone.scm.server.snapshot_source import SnapshotSource

if TYPE_CHECKING:
    from google.protobuf.message import Message

    from pyozone.proto import ScmAdminProtocol_pb2 as pb

MAX_LIST_COUNT = 10_000
"""Containers per listContainer page: well inside MAX_ADMIN_MESSAGE_BYTES at ~100 bytes a container."""

MAX_SNAPSHOT_BATCH_ROWS = 65_536
"""streamSnapshot's batchRows at most: a batch is built in one go on the event loop, between heartbeats."""

Context = CallContext


class AdminService:
    def __init__(
        self,
        core: StorageContainerManager,
        admins: AdminAccess,
        scm_uuid: str,
        snapshot_source: SnapshotSource | None = None,
        raft: ScmRaft | None = None,
    ) -> None:
        """`raft`: this SCM's Raft glue in an HA service (None: a lone SCM)."""
        self.core = core
        self.scm_uuid = scm_uuid
        self.snapshot_source = snapshot_source
        self.raft = raft
        self._resolve = details_resolver(core.nodes)
        self._admins = admins

    # ------------------------------------------------------------------ SCM
    @rpc
    async def getScmInfo(
        self, request: pb.GetScmInfoRequestProto, context: Context
    ) -> pb.GetScmInfoResponseProto:
        safe_mode = self.core.safe_mode
        return wire.scm_info_to_proto(
            wire.ScmInfo(
                self.core.cluster_id, self.scm_uuid, safe_mode.in_safe_mode(), safe_mode.precheck_passed()
            )
        )

    # ------------------------------------------------------------------ datanodes
    @rpc
    async def queryNode(
        self, request: pb.NodeQueryRequestProto, context: Context
    ) -> pb.NodeQueryResponseProto:
        await self._admins.require(context, AdminRight.READ)
        query = parse(wire.node_query_from_proto, request)
        health, op = query.health, query.operational_state
        nodes = sorted(self.core.nodes.nodes(), key=lambda i: (i.details.hostname, i.uuid))
        return wire.nodes_to_proto(
            datanode_listing(self.core, info)
            for info in nodes
            if (health is None or info.status.health is health)
            and (op is None or info.status.operational_state is op)
        )

    @rpc
    async def decommissionNodes(self, request: pb.DecommissionNodesRequestProto, context: Context) -> Message:
        await self._admins.require(context)
        failed = self._set_state(request.hosts, NodeOperationalState.DECOMMISSIONING)
        return wire.failed_hosts_to_proto("decommissionNodes", failed)

    @rpc
    async def startMaintenanceNodes(
        self, request: pb.StartMaintenanceNodesRequestProto, context: Context
    ) -> Message:
        await self._admins.require(context)
        if request.endInHours < 0:
            raise InvalidRequest(f"endInHours: must be at least 0, got {request.endInHours}")
        expiry = self.core.clock.wall_ms() // 1000 + request.endInHours * 3600 if request.endInHours else 0
        failed = self._set_state(request.hosts, NodeOperationalState.ENTERING_MAINTENANCE, expiry)
        return wire.failed_hosts_to_proto("startMaintenanceNodes", failed)

    @rpc
    async def recommissionNodes(self, request: pb.RecommissionNodesRequestProto, context: Context) -> Message:
        await self._admins.require(context)
        failed = self._set_state(request.hosts, NodeOperationalState.IN_SERVICE)
        return wire.failed_hosts_to_proto("recommissionNodes", failed)

    def _set_state(
        self, hosts: Sequence[str], state: NodeOperationalState, expiry_epoch_sec: int = 0
    ) -> list[tuple[str, str]]:
        """(host, error) of each host that could not move."""
        if not hosts:
            raise InvalidRequest("hosts: is empty")
        return node_admin.set_state(self.core.nodes, hosts, state, expiry_epoch_sec)

    # ------------------------------------------------------------------ pipelines
    @rpc
    async def listPipelines(
        self, request: pb.ListPipelineRequestProto, context: Context
    ) -> pb.ListPipelineResponseProto:
        await self._admins.require(context, AdminRight.READ)
        nodes = self.core.nodes
        return wire.pipelines_to_proto(
            pipeline_view(nodes, pipeline) for pipeline in self.core.pipelines.pipelines()
        )

    @rpc
    async def createPipeline(
        self, request: pb.PipelineRequestProto, context: Context
    ) -> pb.PipelineResponseProto:
        await self._admins.require(context)
        config = parse(wire.create_pipeline_request_from_proto, request)
        pipeline = self.core.pipelines.create_pipeline(config)
        return wire.created_pipeline_to_proto(pipeline_view(self.core.nodes, pipeline))

    @rpc
    async def closePipeline(self, request: pb.ClosePipelineRequestProto, context: Context) -> Message:
        await self._admins.require(context)
        self.core.pipelines.close_pipeline(parse(pipeline_id_from_proto, request, "pipelineID", ""))
        return wire.empty_response("closePipeline")

    @rpc
    async def activatePipeline(self, request: pb.ActivatePipelineRequestProto, context: Context) -> Message:
        await self._admins.require(context)
        self.core.pipelines.activate_pipeline(parse(pipeline_id_from_proto, request, "pipelineID", ""))
        return wire.empty_response("activatePipeline")

    @rpc
    async def deactivatePipeline(
        self, request: pb.DeactivatePipelineRequestProto, context: Context
    ) -> Message:
        await self._admins.require(context)
        self.core.pipelines.deactivate_pipeline(parse(pipeline_id_from_proto, request, "pipelineID", ""))
        return wire.empty_response("deactivatePipeline")

    # ------------------------------------------------------------------ containers
    @rpc
    async def listContainer(
        self, request: pb.SCMListContainerRequestProto, context: Context
    ) -> pb.SCMListContainerResponseProto:
        await self._admins.require(context, AdminRight.READ)
        if not 0 < request.count <= MAX_LIST_COUNT:
            raise InvalidRequest(f"count: must be in 1..{MAX_LIST_COUNT}, got {request.count}")
        query = parse(wire.container_query_from_proto, request)
        rtype, factor = query.replication_type, query.factor

        def matches(info: ContainerInfo) -> bool:
            config = info.replication_config
            return (rtype is None or config.type is rtype) and (factor is None or config.factor == factor)

        matching = [info for info in self.core.containers.containers(query.state) if matches(info)]
        page = [info for info in matching if info.container_id >= query.start][: query.count]
        return wire.container_page_to_proto(page, len(matching))

    @rpc
    async def getContainer(
        self, request: pb.GetContainerRequestProto, context: Context
    ) -> pb.GetContainerResponseProto:
        await self._admins.require(context, AdminRight.READ)
        view = container_view(self.core, parse(container_id, request.containerID, "containerID"))
        return wire.container_with_pipeline_to_proto(view, self._resolve)

    @rpc
    async def closeContainer(self, request: pb.SCMCloseContainerRequestProto, context: Context) -> Message:
        """Allowed in safe mode, as in Ozone: closing only stops writes."""
        await self._admins.require(context)
        info = self.core.containers.get(parse(container_id, request.containerID, "containerID"))
        if info.state is not LifeCycleState.OPEN:
            raise SCMException(
                f"container {info.container_id} is {info.state.name}; only OPEN containers can be closed",
                ResultCode.INVALID_CONTAINER_STATE,
            )
        self.core.events.fire(SCMEvent.CLOSE_CONTAINER, info.container_id)
        return wire.empty_response("closeContainer")

    # ------------------------------------------------------------------ safe mode
    @rpc
    async def inSafeMode(
        self, request: pb.InSafeModeRequestProto, context: Context
    ) -> pb.InSafeModeResponseProto:
        safe_mode = self.core.safe_mode
        return wire.safe_mode_to_proto(safe_mode.in_safe_mode(), safe_mode.precheck_passed())

    @rpc
    async def getSafeModeRuleStatuses(
        self, request: pb.GetSafeModeRuleStatusesRequestProto, context: Context
    ) -> pb.GetSafeModeRuleStatusesResponseProto:
        return wire.rule_statuses_to_proto(self.core.safe_mode.rule_statuses())

    @rpc
    async def forceExitSafeMode(
        self, request: pb.ForceExitSafeModeRequestProto, context: Context
    ) -> pb.ForceExitSafeModeResponseProto:
        await self._admins.require(context)
        self.core.safe_mode.force_exit()
        return wire.force_exit_to_proto(not self.core.safe_mode.in_safe_mode())

    # ------------------------------------------------------------------ replication manager
    @rpc
    async def getReplicationManagerReport(
        self, request: pb.GetReplicationManagerReportRequestProto, context: Context
    ) -> pb.GetReplicationManagerReportResponseProto:
        """The report of the last full check (empty, timestamp 0, before the first one completes)."""
        await self._admins.require(context, AdminRight.READ)
        return wire.rm_report_response(self.core.replication.report)

    @rpc
    async def startReplicationManager(
        self, request: pb.StartReplicationManagerRequestProto, context: Context
    ) -> Message:
        await self._admins.require(context)
        self.core.replication.start()
        return wire.empty_response("startReplicationManager")

    @rpc
    async def stopReplicationManager(
        self, request: pb.StopReplicationManagerRequestProto, context: Context
    ) -> Message:
        await self._admins.require(context)
        self.core.replication.stop()
        return wire.empty_response("stopReplicationManager")

    @rpc
    async def getReplicationManagerStatus(
        self, request: pb.ReplicationManagerStatusRequestProto, context: Context
    ) -> pb.ReplicationManagerStatusResponseProto:
        return wire.rm_status_to_proto(self.core.replication.is_running())

    # ------------------------------------------------------------------ container balancer
    @rpc
    async def startContainerBalancer(
        self, request: pb.StartContainerBalancerRequestProto, context: Context
    ) -> pb.StartContainerBalancerResponseProto:
        """Administrators only, on the leader (Ozone's SCMClientProtocolServer): a refusal (SCM's state,
        the options) is the answer's message."""
        await self._admins.require(context)
        return balancer_wire.start_response(
            self.core.balancer.start_balancer(balancer_wire.start_options(request))
        )

    @rpc
    async def stopContainerBalancer(
        self, request: pb.StopContainerBalancerRequestProto, context: Context
    ) -> Message:
        await self._admins.require(context)
        self.core.balancer.stop()
        return wire.empty_response("stopContainerBalancer")

    @rpc
    async def getContainerBalancerStatus(
        self, request: pb.ContainerBalancerStatusRequestProto, context: Context
    ) -> pb.ContainerBalancerStatusResponseProto:
        return balancer_wire.status_response(self.core.balancer.is_running())

    @rpc
    async def getContainerBalancerStatusInfo(
        self, request: pb.ContainerBalancerStatusInfoRequestProto, context: Context
    ) -> pb.ContainerBalancerStatusInfoResponseProto:
        return balancer_wire.status_info_response(self.core.balancer.status_info())

    # ------------------------------------------------------------------ SCM HA
    @rpc
    async def transferLeadership(
        self, request: pb.TransferLeadershipRequestProto, context: Context
    ) -> pb.TransferLeadershipResponseProto:
        """`pyozone admin scm transfer` (Ozone's SCMClientProtocolServer.transferLeadership): administrators
        only; the leader hands over (ha.py `ScmRaft.transfer_leadership`), a follower refuses naming it."""
        await self._admins.require(context)
        if self.raft is None:
            await context.abort(
                StatusCode.FAILED_PRECONDITION,
                "this SCM runs alone (no ozone.scm.service.ids): there is no leadership to transfer",
            )
        target = wire.transfer_leadership_target(request)
        try:
            new_leader = await self.raft.transfer_leadership(target)  # type: ignore[union-attr]
        except NotServing as refusal:
            await context.abort(StatusCode.UNAVAILABLE, refusal.text)
        except LeadershipNotMoved as failure:
            await context.abort(StatusCode.FAILED_PRECONDITION, str(failure))
        return wire.transfer_leadership_to_proto(new_leader)

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
            yield snapshot_chunk_to_proto(chunk)
