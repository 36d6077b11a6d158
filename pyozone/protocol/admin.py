"""The admin protocol's calls (ScmAdminProtocolService, Ozone's StorageContainerLocationProtocol): every
request and answer of the service, built here once for SCM's AdminService and the framework's
ScmAdminClient alike; the records they carry are admin_records.py's."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from google.protobuf.descriptor import ServiceDescriptor
from google.protobuf.message import Message

from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.replication_report import ReplicationManagerReport
from pyozone.hdds.safemode_status import RuleStatus
from pyozone.hdds.states import (
    LifeCycleState,
    NodeOperationalState,
    NodeState,
    ReplicaState,
    ReplicationFactor,
    ReplicationType,
)
from pyozone.proto import ScmAdminProtocol_pb2 as admin_pb2
from pyozone.proto import hdds_pb2
from pyozone.protocol.admin_records import (
    ContainerView,
    DatanodeListing,
    PipelineView,
    container_info_from_proto,
    container_info_to_proto,
    container_replica_info_from_proto,
    container_replica_info_to_proto,
    node_from_proto,
    node_to_proto,
    pipeline_from_proto,
    pipeline_members,
    pipeline_replica_indexes,
    pipeline_to_proto,
    rm_report_from_proto,
    rm_report_to_proto,
    rule_status_from_proto,
    rule_status_to_proto,
)
from pyozone.protocol.common import (
    Resolver,
    datanode_details_from_proto,
    enum_from_proto,
    is_reference,
    pipeline_id_to_proto,
    replication_from_proto,
    replication_to_proto,
    request_of,
    response_of,
)

# ------------------------------------------------------------------ the service's requests and answers
ADMIN_SERVICE: ServiceDescriptor = admin_pb2.DESCRIPTOR.services_by_name["ScmAdminProtocolService"]
"""What pyozone.rpc serves on ozone.scm.client.address and what ScmAdminClient calls."""


def empty_request(method: str) -> Message:
    """The request of an rpc sent without arguments: getScmInfo, queryNode (every node), listPipelines,
    inSafeMode, getSafeModeRuleStatuses, forceExitSafeMode and the Replication Manager's."""
    return request_of(ADMIN_SERVICE, method)


def empty_response(method: str) -> Message:
    """The answer of an rpc that returns nothing: the pipeline and container changes, starting and
    stopping the Replication Manager."""
    return response_of(ADMIN_SERVICE, method)


@dataclass(frozen=True, slots=True)
class ScmInfo:
    """getScmInfo's answer, on the admin and the block port alike."""

    cluster_id: str
    scm_id: str
    in_safe_mode: bool
    pre_check_complete: bool


def scm_info_to_proto(info: ScmInfo) -> admin_pb2.GetScmInfoResponseProto:
    return admin_pb2.GetScmInfoResponseProto(
        clusterId=info.cluster_id,
        scmId=info.scm_id,
        inSafeMode=info.in_safe_mode,
        preCheckComplete=info.pre_check_complete,
    )


def scm_info_from_proto(proto: admin_pb2.GetScmInfoResponseProto) -> ScmInfo:
    return ScmInfo(proto.clusterId, proto.scmId, proto.inSafeMode, proto.preCheckComplete)


# datanodes
@dataclass(frozen=True, slots=True)
class NodeQuery:
    """queryNode's filters (Ozone's `optional` state and opState); None matches every node."""

    health: NodeState | None = None
    operational_state: NodeOperationalState | None = None


def node_query_from_proto(proto: admin_pb2.NodeQueryRequestProto) -> NodeQuery:
    return NodeQuery(
        enum_from_proto(NodeState, proto.state, "state") if proto.HasField("state") else None,
        enum_from_proto(NodeOperationalState, proto.opState, "opState")
        if proto.HasField("opState")
        else None,
    )


def nodes_to_proto(nodes: Iterable[DatanodeListing]) -> admin_pb2.NodeQueryResponseProto:
    return admin_pb2.NodeQueryResponseProto(datanodes=[node_to_proto(n) for n in nodes])


def nodes_from_proto(proto: admin_pb2.NodeQueryResponseProto) -> list[DatanodeListing]:
    return [node_from_proto(n, f"datanodes[{i}]") for i, n in enumerate(proto.datanodes)]


def decommission_request(hosts: Sequence[str]) -> admin_pb2.DecommissionNodesRequestProto:
    return admin_pb2.DecommissionNodesRequestProto(hosts=hosts)


def maintenance_request(
    hosts: Sequence[str], end_in_hours: int
) -> admin_pb2.StartMaintenanceNodesRequestProto:
    return admin_pb2.StartMaintenanceNodesRequestProto(hosts=hosts, endInHours=end_in_hours)


def recommission_request(hosts: Sequence[str]) -> admin_pb2.RecommissionNodesRequestProto:
    return admin_pb2.RecommissionNodesRequestProto(hosts=hosts)


def failed_hosts_to_proto(method: str, failed: Iterable[tuple[str, str]]) -> Message:
    """The answer of decommissionNodes, startMaintenanceNodes or recommissionNodes: (host, error) of
    each host SCM could not move."""
    response = empty_response(method)
    response.failedHosts.extend(  # type: ignore[attr-defined]
        admin_pb2.DatanodeAdminErrorResponseProto(host=host, error=error) for host, error in failed
    )
    return response


def failed_hosts_from_proto(proto: Message) -> dict[str, str]:
    return {f.host: f.error for f in proto.failedHosts}  # type: ignore[attr-defined]


# pipelines
def pipeline_view_from_proto(proto: hdds_pb2.Pipeline, field: str = "pipeline") -> PipelineView:
    return PipelineView(pipeline_from_proto(proto, field), pipeline_members(proto, field))


def _pipeline_view_to_proto(view: PipelineView) -> hdds_pb2.Pipeline:
    return pipeline_to_proto(view.pipeline, view.members.get)


def pipelines_to_proto(views: Iterable[PipelineView]) -> admin_pb2.ListPipelineResponseProto:
    return admin_pb2.ListPipelineResponseProto(pipelines=[_pipeline_view_to_proto(v) for v in views])


def pipelines_from_proto(proto: admin_pb2.ListPipelineResponseProto) -> list[PipelineView]:
    return [pipeline_view_from_proto(p, f"pipelines[{i}]") for i, p in enumerate(proto.pipelines)]


def create_pipeline_request(config: ReplicationConfig) -> admin_pb2.PipelineRequestProto:
    rtype, factor, _ = replication_to_proto(config)
    return admin_pb2.PipelineRequestProto(replicationType=rtype, replicationFactor=factor)


def create_pipeline_request_from_proto(proto: admin_pb2.PipelineRequestProto) -> ReplicationConfig:
    """SCM chooses the pipeline's id, and makes EC pipelines only for writers."""
    if proto.pipelineID:
        raise ProtocolError("pipelineID", "SCM chooses pipeline ids; leave it empty")
    if proto.replicationType == ReplicationType.EC:
        raise ProtocolError("replicationType", "EC pipelines are not created on request")
    return replication_from_proto(
        proto.replicationType, proto.replicationFactor, None, "", "replicationType", "replicationFactor"
    )


def created_pipeline_to_proto(view: PipelineView) -> admin_pb2.PipelineResponseProto:
    return admin_pb2.PipelineResponseProto(
        errorCode=admin_pb2.PipelineResponseProto.success, pipeline=_pipeline_view_to_proto(view)
    )


def created_pipeline_from_proto(proto: admin_pb2.PipelineResponseProto) -> PipelineView | str:
    """The pipeline made, or the errorMessage SCM refused it with."""
    if proto.errorMessage:
        return proto.errorMessage
    return pipeline_view_from_proto(proto.pipeline, "pipeline")


def pipeline_id_request(method: str, pipeline_id: str) -> Message:
    """The request of closePipeline, activatePipeline or deactivatePipeline."""
    request = empty_request(method)
    request.pipelineID.CopyFrom(pipeline_id_to_proto(pipeline_id))  # type: ignore[attr-defined]
    return request


# containers
@dataclass(frozen=True, slots=True)
class ContainerQuery:
    """A listContainer page: `count` containers from `start` on, of those matching the filters (None
    matches every container)."""

    start: int
    count: int
    state: LifeCycleState | None = None
    replication_type: ReplicationType | None = None
    factor: ReplicationFactor | None = None


def container_query_to_proto(query: ContainerQuery) -> admin_pb2.SCMListContainerRequestProto:
    proto = admin_pb2.SCMListContainerRequestProto(startContainerID=query.start, count=query.count)
    if query.state is not None:
        proto.state = query.state.value
    if query.replication_type is not None:
        proto.type = query.replication_type.value
    if query.factor is not None:
        proto.factor = query.factor.value
    return proto


def container_query_from_proto(proto: admin_pb2.SCMListContainerRequestProto) -> ContainerQuery:
    return ContainerQuery(
        proto.startContainerID,
        proto.count,
        enum_from_proto(LifeCycleState, proto.state, "state") if proto.HasField("state") else None,
        enum_from_proto(ReplicationType, proto.type, "type") if proto.HasField("type") else None,
        enum_from_proto(ReplicationFactor, proto.factor, "factor") if proto.HasField("factor") else None,
    )


def container_page_to_proto(
    page: Iterable[ContainerInfo], matching: int
) -> admin_pb2.SCMListContainerResponseProto:
    """`matching`: how many containers match the filters, on every page."""
    return admin_pb2.SCMListContainerResponseProto(
        containers=[container_info_to_proto(info) for info in page], containerCount=matching
    )


def container_page_from_proto(
    proto: admin_pb2.SCMListContainerResponseProto,
) -> tuple[list[ContainerInfo], int]:
    containers = [container_info_from_proto(c, f"containers[{i}]") for i, c in enumerate(proto.containers)]
    return containers, proto.containerCount


def container_id_request(method: str, container: int) -> Message:
    """The request of getContainer or closeContainer."""
    request = empty_request(method)
    request.containerID = container  # type: ignore[attr-defined]
    return request


@dataclass(frozen=True, slots=True)
class ReplicaLocation:
    """A replica on a datanode SCM still knows, with the address to read it from."""

    datanode: DatanodeDetails
    state: ReplicaState
    replica_index: int = 0
    """EC: which index (1..data+parity) the replica holds; 0 for a replicated container."""


@dataclass(frozen=True, slots=True)
class ContainerWithPipeline:
    """getContainer's answer (Ozone's ContainerWithPipeline)."""

    info: ContainerInfo
    replicas: tuple[ContainerReplica, ...]
    located: tuple[ReplicaLocation, ...]
    """The replicas on datanodes SCM still knows in full (one of a datanode it forgot has no address)."""
    pipeline: PipelineView | None
    pipeline_indexes: tuple[int, ...] = ()
    """An EC pipeline's replica index of each of its nodes, in order; empty for a replicated one."""

    def view(self) -> ContainerView:
        return ContainerView(self.info, self.replicas, self.pipeline)


def container_with_pipeline_to_proto(
    view: ContainerView, resolve: Resolver
) -> admin_pb2.GetContainerResponseProto:
    """`resolve` names each replica's datanode in full where SCM knows it."""
    response = admin_pb2.GetContainerResponseProto(containerInfo=container_info_to_proto(view.info))
    for replica in view.replicas:
        response.replicas.append(container_replica_info_to_proto(replica, resolve(replica.datanode)))
    if view.pipeline is not None:
        response.pipeline.CopyFrom(_pipeline_view_to_proto(view.pipeline))
    return response


def container_with_pipeline_from_proto(proto: admin_pb2.GetContainerResponseProto) -> ContainerWithPipeline:
    replicas = tuple(
        container_replica_info_from_proto(x, f"replicas[{i}]") for i, x in enumerate(proto.replicas)
    )
    located = tuple(
        ReplicaLocation(
            datanode_details_from_proto(x.datanodeDetails, f"replicas[{i}].datanodeDetails"),
            ReplicaState[x.state],
            x.replicaIndex,
        )
        for i, x in enumerate(proto.replicas)
        if not is_reference(x.datanodeDetails)
    )
    pipeline, indexes = None, ()
    if proto.HasField("pipeline"):
        pipeline = pipeline_view_from_proto(proto.pipeline, "pipeline")
        indexes = pipeline_replica_indexes(proto.pipeline, config=pipeline.pipeline.replication_config)
    return ContainerWithPipeline(
        container_info_from_proto(proto.containerInfo, "containerInfo"), replicas, located, pipeline, indexes
    )


# safe mode
def safe_mode_to_proto(in_safe_mode: bool, pre_check_complete: bool) -> admin_pb2.InSafeModeResponseProto:
    return admin_pb2.InSafeModeResponseProto(inSafeMode=in_safe_mode, preCheckComplete=pre_check_complete)


def in_safe_mode_from_proto(proto: admin_pb2.InSafeModeResponseProto) -> bool:
    return proto.inSafeMode


def rule_statuses_to_proto(statuses: Iterable[RuleStatus]) -> admin_pb2.GetSafeModeRuleStatusesResponseProto:
    return admin_pb2.GetSafeModeRuleStatusesResponseProto(
        safeModeRuleStatusesProto=[rule_status_to_proto(s) for s in statuses]
    )


def rule_statuses_from_proto(proto: admin_pb2.GetSafeModeRuleStatusesResponseProto) -> list[RuleStatus]:
    return [rule_status_from_proto(s) for s in proto.safeModeRuleStatusesProto]


def force_exit_to_proto(exited: bool) -> admin_pb2.ForceExitSafeModeResponseProto:
    return admin_pb2.ForceExitSafeModeResponseProto(exitedSafeMode=exited)


def force_exit_from_proto(proto: admin_pb2.ForceExitSafeModeResponseProto) -> bool:
    return proto.exitedSafeMode


# replication manager
def rm_report_response(
    report: ReplicationManagerReport,
) -> admin_pb2.GetReplicationManagerReportResponseProto:
    return admin_pb2.GetReplicationManagerReportResponseProto(report=rm_report_to_proto(report))


def rm_report_response_from_proto(
    proto: admin_pb2.GetReplicationManagerReportResponseProto,
) -> ReplicationManagerReport:
    return rm_report_from_proto(proto.report)


def rm_status_to_proto(running: bool) -> admin_pb2.ReplicationManagerStatusResponseProto:
    return admin_pb2.ReplicationManagerStatusResponseProto(isRunning=running)


def rm_status_from_proto(proto: admin_pb2.ReplicationManagerStatusResponseProto) -> bool:
    return proto.isRunning


# SCM HA
def transfer_leadership_request(target: str | None) -> admin_pb2.TransferLeadershipRequestProto:
    """`target`: an SCM's node id or Ratis address; None: another SCM, picked by the leader."""
    return admin_pb2.TransferLeadershipRequestProto(newLeaderId=target or "")


def transfer_leadership_target(proto: admin_pb2.TransferLeadershipRequestProto) -> str | None:
    return proto.newLeaderId or None


def transfer_leadership_to_proto(new_leader: str) -> admin_pb2.TransferLeadershipResponseProto:
    return admin_pb2.TransferLeadershipResponseProto(newLeaderId=new_leader)


def transfer_leadership_from_proto(proto: admin_pb2.TransferLeadershipResponseProto) -> str:
    if not proto.newLeaderId:
        raise ProtocolError("newLeaderId", "the answer names no new leader")
    return proto.newLeaderId
