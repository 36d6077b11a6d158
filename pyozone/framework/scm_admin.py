"""ScmAdminClient: a synchronous client of ScmAdminProtocolService (Ozone's
StorageContainerLocationProtocolClientSideTranslatorPB) for OM, the datanodes, admin tools and the CLI.

getContainer has one path here (`container_with_pipeline`) with one error mapping (scm_errors.py); each
caller reads what it needs of the answer: `pyozone admin container info` the view, OM the replicas'
addresses, a datanode the EC pipeline's replica indexes."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from pyozone import rpc
from pyozone.common.net import HostPort
from pyozone.common.tls import TlsStore
from pyozone.framework.scm_errors import ScmClientError, scm_error, scm_malformed
from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.limits import MAX_ADMIN_MESSAGE_BYTES
from pyozone.hdds.replication_report import ReplicationManagerReport
from pyozone.hdds.safemode_status import RuleStatus
from pyozone.hdds.security.x509 import CertRole
from pyozone.hdds.states import LifeCycleState, ReplicaState
from pyozone.proto import ScmAdminProtocol_pb2 as pb
from pyozone.protocol import (
    ProtocolError,
    container_info_from_proto,
    container_replica_info_from_proto,
    node_from_proto,
    pipeline_from_proto,
    pipeline_members,
    rule_status_from_proto,
)
from pyozone.protocol.admin import (
    ContainerView,
    DatanodeListing,
    PipelineView,
    pipeline_replica_indexes,
    rm_report_from_proto,
)
from pyozone.protocol.common import (
    datanode_details_from_proto,
    is_reference,
    pipeline_id_to_proto,
    replication_to_proto,
)
from pyozone.rpc.rpc_client import RpcClient

T = TypeVar("T")


ADMIN_SERVICE = rpc.service(pb, "ScmAdminProtocolService")
"""SCM's admin protocol (Ozone's StorageContainerLocationProtocol), on ozone.scm.client.address."""


@dataclass(frozen=True, slots=True)
class ScmInfo:
    cluster_id: str
    scm_id: str
    in_safe_mode: bool
    pre_check_complete: bool


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


class ScmClient(RpcClient):
    """What SCM's admin and block clients share: SCM's certificate, one error mapping (scm_errors.py) and
    getScmInfo, which both services answer."""

    PEER = CertRole.SCM

    def _error(self, e: rpc.RpcError) -> ScmClientError:
        return scm_error(self.address, e)

    def _malformed(self, e: ProtocolError) -> ScmClientError:
        return scm_malformed(self.address, e)

    def scm_info(self) -> ScmInfo:
        """The cluster id and safe-mode state (OM checks the cluster id when it starts)."""
        return self._call(
            self._stub.getScmInfo,
            pb.GetScmInfoRequestProto(),
            lambda r: ScmInfo(r.clusterId, r.scmId, r.inSafeMode, r.preCheckComplete),
        )


class ScmAdminClient(ScmClient):
    def __init__(self, address: HostPort, timeout_s: float = 30.0, tls: TlsStore | None = None) -> None:
        super().__init__(address, ADMIN_SERVICE, MAX_ADMIN_MESSAGE_BYTES, timeout_s, tls)

    # ------------------------------------------------------------------ cluster

    def datanodes(self) -> list[DatanodeListing]:
        return self._call(
            self._stub.queryNode,
            pb.NodeQueryRequestProto(),
            lambda r: [node_from_proto(n, f"datanodes[{i}]") for i, n in enumerate(r.datanodes)],
        )

    # ------------------------------------------------------------------ pipelines
    def pipelines(self) -> list[PipelineView]:
        return self._call(
            self._stub.listPipelines,
            pb.ListPipelineRequestProto(),
            lambda r: [_pipeline_view(p, f"pipelines[{i}]") for i, p in enumerate(r.pipelines)],
        )

    def create_pipeline(self, config: ReplicationConfig) -> PipelineView:
        rtype, factor, _ = replication_to_proto(config)
        request = pb.PipelineRequestProto(replicationType=rtype, replicationFactor=factor)

        def convert(r: pb.PipelineResponseProto) -> PipelineView:
            if r.errorMessage:
                raise ScmClientError(r.errorMessage)
            return _pipeline_view(r.pipeline, "pipeline")

        return self._call(self._stub.createPipeline, request, convert)

    def close_pipeline(self, pipeline_id: str) -> None:
        self._call(
            self._stub.closePipeline,
            pb.ClosePipelineRequestProto(pipelineID=pipeline_id_to_proto(pipeline_id)),
            _none,
        )

    def activate_pipeline(self, pipeline_id: str) -> None:
        self._call(
            self._stub.activatePipeline,
            pb.ActivatePipelineRequestProto(pipelineID=pipeline_id_to_proto(pipeline_id)),
            _none,
        )

    def deactivate_pipeline(self, pipeline_id: str) -> None:
        self._call(
            self._stub.deactivatePipeline,
            pb.DeactivatePipelineRequestProto(pipelineID=pipeline_id_to_proto(pipeline_id)),
            _none,
        )

    # ------------------------------------------------------------------ containers
    def containers(
        self, start: int = 0, count: int = 1000, state: LifeCycleState | None = None
    ) -> tuple[list[ContainerInfo], int]:
        request = pb.SCMListContainerRequestProto(startContainerID=start, count=count)
        if state is not None:
            request.state = state.value
        return self._call(
            self._stub.listContainer,
            request,
            lambda r: (
                [container_info_from_proto(c, f"containers[{i}]") for i, c in enumerate(r.containers)],
                r.containerCount,
            ),
        )

    def container_with_pipeline(self, container_id: int) -> ContainerWithPipeline:
        """SCM's record of the container, its replicas and its pipeline; ScmClientError with `not_found`
        when SCM has no such container."""
        return self._call(
            self._stub.getContainer,
            pb.GetContainerRequestProto(containerID=container_id),
            container_with_pipeline_from_proto,
        )

    def container(self, container_id: int) -> ContainerView:
        return self.container_with_pipeline(container_id).view()

    def close_container(self, container_id: int) -> None:
        self._call(
            self._stub.closeContainer, pb.SCMCloseContainerRequestProto(containerID=container_id), _none
        )

    # ------------------------------------------------------------------ safe mode
    def in_safe_mode(self) -> bool:
        return self._call(self._stub.inSafeMode, pb.InSafeModeRequestProto(), lambda r: r.inSafeMode)

    def safe_mode_rules(self) -> list[RuleStatus]:
        return self._call(
            self._stub.getSafeModeRuleStatuses,
            pb.GetSafeModeRuleStatusesRequestProto(),
            lambda r: [rule_status_from_proto(s) for s in r.safeModeRuleStatusesProto],
        )

    def force_exit_safe_mode(self) -> bool:
        return self._call(
            self._stub.forceExitSafeMode, pb.ForceExitSafeModeRequestProto(), lambda r: r.exitedSafeMode
        )

    # ------------------------------------------------------------------ node admin
    def decommission(self, hosts: list[str]) -> dict[str, str]:
        return self._call(
            self._stub.decommissionNodes, pb.DecommissionNodesRequestProto(hosts=hosts), _failed_hosts
        )

    def start_maintenance(self, hosts: list[str], end_in_hours: int) -> dict[str, str]:
        request = pb.StartMaintenanceNodesRequestProto(hosts=hosts, endInHours=end_in_hours)
        return self._call(self._stub.startMaintenanceNodes, request, _failed_hosts)

    def recommission(self, hosts: list[str]) -> dict[str, str]:
        return self._call(
            self._stub.recommissionNodes, pb.RecommissionNodesRequestProto(hosts=hosts), _failed_hosts
        )

    # ------------------------------------------------------------------ replication manager
    def replication_manager_report(self) -> ReplicationManagerReport:
        return self._call(
            self._stub.getReplicationManagerReport,
            pb.GetReplicationManagerReportRequestProto(),
            lambda r: rm_report_from_proto(r.report),
        )

    def start_replication_manager(self) -> None:
        self._call(self._stub.startReplicationManager, pb.StartReplicationManagerRequestProto(), _none)

    def stop_replication_manager(self) -> None:
        self._call(self._stub.stopReplicationManager, pb.StopReplicationManagerRequestProto(), _none)

    def replication_manager_running(self) -> bool:
        return self._call(
            self._stub.getReplicationManagerStatus,
            pb.ReplicationManagerStatusRequestProto(),
            lambda r: r.isRunning,
        )

    # ------------------------------------------------------------------ snapshot
    def snapshot_chunks(self, batch_rows: int = 0) -> Iterator[pb.SnapshotChunkProto]:
        """streamSnapshot's chunks as they arrive (pyozone/admin/snapshot.py makes a snapshot of them).
        No deadline: a large cluster's snapshot takes as long as it takes; an unreachable SCM still fails
        at once."""
        request = pb.SnapshotRequestProto(batchRows=batch_rows)
        chunks = self._stub.streamSnapshot(request)
        try:
            yield from chunks
        except rpc.RpcError as e:
            raise self._error(e) from None
        finally:
            chunks.close()  # a reader that stops early ends the stream; a no-op once it is complete


def _none(_: Any) -> None:
    return None


def _failed_hosts(response: Any) -> dict[str, str]:
    return {f.host: f.error for f in response.failedHosts}


def container_with_pipeline_from_proto(r: pb.GetContainerResponseProto) -> ContainerWithPipeline:
    replicas = tuple(container_replica_info_from_proto(x, f"replicas[{i}]") for i, x in enumerate(r.replicas))
    located = tuple(
        ReplicaLocation(
            datanode_details_from_proto(x.datanodeDetails, f"replicas[{i}].datanodeDetails"),
            ReplicaState[x.state],
            x.replicaIndex,
        )
        for i, x in enumerate(r.replicas)
        if not is_reference(x.datanodeDetails)
    )
    pipeline, indexes = None, ()
    if r.HasField("pipeline"):
        pipeline = _pipeline_view(r.pipeline, "pipeline")
        indexes = pipeline_replica_indexes(r.pipeline, config=pipeline.pipeline.replication_config)
    return ContainerWithPipeline(
        container_info_from_proto(r.containerInfo, "containerInfo"), replicas, located, pipeline, indexes
    )


def _pipeline_view(proto: Any, field: str) -> PipelineView:
    return PipelineView(pipeline_from_proto(proto, field), pipeline_members(proto, field))
