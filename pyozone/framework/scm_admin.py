"""ScmAdminClient: a synchronous client of ScmAdminProtocolService (Ozone's
StorageContainerLocationProtocolClientSideTranslatorPB) for OM, the datanodes, admin tools and the CLI.

getContainer has one path here (`container_with_pipeline`) with one error mapping (scm_errors.py); each
caller reads what it needs of the answer: `pyozone admin container info` the view, OM the replicas'
addresses, a datanode the EC pipeline's replica indexes."""

from __future__ import annotations

from collections.abc import Iterator

from pyozone import rpc
from pyozone.common.net import HostPort
from pyozone.common.tls import TlsStore
from pyozone.framework.scm_errors import ScmClientError, scm_error, scm_malformed
from pyozone.framework.scm_failover import FailoverStub, ScmNodes, channel_stubs
from pyozone.hdds.balancer import BalancerStartOptions, BalancerStartResult, BalancerStatusInfo
from pyozone.hdds.container import ContainerInfo
from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.limits import MAX_ADMIN_MESSAGE_BYTES
from pyozone.hdds.replication_report import ReplicationManagerReport
from pyozone.hdds.safemode_status import RuleStatus
from pyozone.hdds.security.x509 import CertRole
from pyozone.hdds.states import LifeCycleState
from pyozone.protocol import admin as wire
from pyozone.protocol import admin_balancer as balancer_wire
from pyozone.protocol.admin import ContainerQuery, ContainerWithPipeline, ReplicaLocation, ScmInfo
from pyozone.protocol.admin_records import ContainerView, DatanodeListing, PipelineView
from pyozone.protocol.snapshot import SnapshotChunk, snapshot_chunk_from_proto, snapshot_request
from pyozone.rpc.rpc_client import RpcClient

__all__ = [
    "ADMIN_SERVICE",
    "ContainerWithPipeline",
    "PipelineView",
    "ReplicaLocation",
    "ScmAdminClient",
    "ScmClient",
    "ScmInfo",
]


ADMIN_SERVICE = rpc.ServiceSpec.of(wire.ADMIN_SERVICE)
"""SCM's admin protocol (Ozone's StorageContainerLocationProtocol), on ozone.scm.client.address."""


class ScmClient(RpcClient):
    """What SCM's admin and block clients share: SCM's certificate, one error mapping (scm_errors.py),
    getScmInfo, which both services answer, and failover between the SCMs of a service (scm_failover.py:
    `nodes` at the client's protocol port; a lone SCM's address is a one-node ScmNodes)."""

    PEER = CertRole.SCM

    def __init__(
        self,
        nodes: ScmNodes | HostPort,
        spec: rpc.ServiceSpec,
        max_message_bytes: int,
        timeout_s: float,
        tls: TlsStore | None = None,
    ) -> None:
        self.nodes = nodes if isinstance(nodes, ScmNodes) else ScmNodes.lone(nodes)
        self.timeout_s = timeout_s
        self._stub = FailoverStub(
            self.nodes, channel_stubs(self.nodes, spec, max_message_bytes, tls, self.PEER)
        )

    @property  # type: ignore[override]
    def address(self) -> HostPort:
        """The SCM calls go to now."""
        return self._stub.address

    def close(self) -> None:
        self._stub.close()

    def _error(self, e: rpc.RpcError) -> ScmClientError:
        return scm_error(self.address, e)

    def _malformed(self, e: ProtocolError) -> ScmClientError:
        return scm_malformed(self.address, e)

    def scm_info(self) -> ScmInfo:
        """The cluster id and safe-mode state (OM checks the cluster id when it starts)."""
        return self._call(self._stub.getScmInfo, wire.empty_request("getScmInfo"), wire.scm_info_from_proto)


class ScmAdminClient(ScmClient):
    def __init__(
        self, nodes: ScmNodes | HostPort, timeout_s: float = 30.0, tls: TlsStore | None = None
    ) -> None:
        super().__init__(nodes, ADMIN_SERVICE, MAX_ADMIN_MESSAGE_BYTES, timeout_s, tls)

    # ------------------------------------------------------------------ cluster

    def datanodes(self) -> list[DatanodeListing]:
        return self._call(self._stub.queryNode, wire.empty_request("queryNode"), wire.nodes_from_proto)

    # ------------------------------------------------------------------ pipelines
    def pipelines(self) -> list[PipelineView]:
        return self._call(
            self._stub.listPipelines, wire.empty_request("listPipelines"), wire.pipelines_from_proto
        )

    def create_pipeline(self, config: ReplicationConfig) -> PipelineView:
        created = self._call(
            self._stub.createPipeline, wire.create_pipeline_request(config), wire.created_pipeline_from_proto
        )
        if isinstance(created, str):
            raise ScmClientError(created)
        return created

    def close_pipeline(self, pipeline_id: str) -> None:
        self._call(self._stub.closePipeline, wire.pipeline_id_request("closePipeline", pipeline_id), _none)

    def activate_pipeline(self, pipeline_id: str) -> None:
        self._call(
            self._stub.activatePipeline, wire.pipeline_id_request("activatePipeline", pipeline_id), _none
        )

    def deactivate_pipeline(self, pipeline_id: str) -> None:
        self._call(
            self._stub.deactivatePipeline, wire.pipeline_id_request("deactivatePipeline", pipeline_id), _none
        )

    # ------------------------------------------------------------------ containers
    def containers(
        self, start: int = 0, count: int = 1000, state: LifeCycleState | None = None
    ) -> tuple[list[ContainerInfo], int]:
        request = wire.container_query_to_proto(ContainerQuery(start, count, state))
        return self._call(self._stub.listContainer, request, wire.container_page_from_proto)

    def container_with_pipeline(self, container_id: int) -> ContainerWithPipeline:
        """SCM's record of the container, its replicas and its pipeline; ScmClientError with `not_found`
        when SCM has no such container."""
        return self._call(
            self._stub.getContainer,
            wire.container_id_request("getContainer", container_id),
            wire.container_with_pipeline_from_proto,
        )

    def container(self, container_id: int) -> ContainerView:
        return self.container_with_pipeline(container_id).view()

    def close_container(self, container_id: int) -> None:
        self._call(
            self._stub.closeContainer, wire.container_id_request("closeContainer", container_id), _none
        )

    # ------------------------------------------------------------------ safe mode
    def in_safe_mode(self) -> bool:
        return self._call(
            self._stub.inSafeMode, wire.empty_request("inSafeMode"), wire.in_safe_mode_from_proto
        )

    def safe_mode_rules(self) -> list[RuleStatus]:
        return self._call(
            self._stub.getSafeModeRuleStatuses,
            wire.empty_request("getSafeModeRuleStatuses"),
            wire.rule_statuses_from_proto,
        )

    def force_exit_safe_mode(self) -> bool:
        """Every SCM of a service leaves safe mode (each has its own); True when each did."""
        return self._call(
            self._stub.on_every_scm("forceExitSafeMode"),
            wire.empty_request("forceExitSafeMode"),
            lambda answers: all(wire.force_exit_from_proto(a) for a in answers),
        )

    # ------------------------------------------------------------------ node admin
    def decommission(self, hosts: list[str]) -> dict[str, str]:
        return self._call(
            self._stub.decommissionNodes, wire.decommission_request(hosts), wire.failed_hosts_from_proto
        )

    def start_maintenance(self, hosts: list[str], end_in_hours: int) -> dict[str, str]:
        return self._call(
            self._stub.startMaintenanceNodes,
            wire.maintenance_request(hosts, end_in_hours),
            wire.failed_hosts_from_proto,
        )

    def recommission(self, hosts: list[str]) -> dict[str, str]:
        return self._call(
            self._stub.recommissionNodes, wire.recommission_request(hosts), wire.failed_hosts_from_proto
        )

    # ------------------------------------------------------------------ replication manager
    def replication_manager_report(self) -> ReplicationManagerReport:
        return self._call(
            self._stub.getReplicationManagerReport,
            wire.empty_request("getReplicationManagerReport"),
            wire.rm_report_response_from_proto,
        )

    def start_replication_manager(self) -> None:
        """On every SCM of a service (each runs its own Replication Manager, active while it leads)."""
        self._call(
            self._stub.on_every_scm("startReplicationManager"),
            wire.empty_request("startReplicationManager"),
            _none,
        )

    def stop_replication_manager(self) -> None:
        """On every SCM of a service, so no leader to come runs it."""
        self._call(
            self._stub.on_every_scm("stopReplicationManager"),
            wire.empty_request("stopReplicationManager"),
            _none,
        )

    def replication_manager_running(self) -> bool:
        return self._call(
            self._stub.getReplicationManagerStatus,
            wire.empty_request("getReplicationManagerStatus"),
            wire.rm_status_from_proto,
        )

    # ------------------------------------------------------------------ container balancer
    def start_container_balancer(self, options: BalancerStartOptions) -> BalancerStartResult:
        """On the leader; a refusal is the result's message (Ozone's StartContainerBalancerResponseProto)."""
        return self._call(
            self._stub.startContainerBalancer,
            balancer_wire.start_request(options),
            balancer_wire.start_result,
        )

    def stop_container_balancer(self) -> None:
        self._call(self._stub.stopContainerBalancer, wire.empty_request("stopContainerBalancer"), _none)

    def container_balancer_status_info(self) -> BalancerStatusInfo:
        return self._call(
            self._stub.getContainerBalancerStatusInfo,
            wire.empty_request("getContainerBalancerStatusInfo"),
            balancer_wire.status_info,
        )

    # ------------------------------------------------------------------ SCM HA
    def transfer_leadership(self, target: str | None) -> str:
        """Hands the service's leadership to `target` (an SCM's node id or Ratis address; None: another SCM,
        picked by the leader); returns the SCM that leads now. Sent to the leader (a follower names it)."""
        return self._call(
            self._stub.transferLeadership,
            wire.transfer_leadership_request(target),
            wire.transfer_leadership_from_proto,
        )

    # ------------------------------------------------------------------ snapshot
    def snapshot_chunks(self, batch_rows: int = 0) -> Iterator[SnapshotChunk | None]:
        """streamSnapshot's chunks as they arrive (pyozone/admin/snapshot.py makes a snapshot of them; None
        is a chunk that carries neither info nor batch). No deadline: a large cluster's snapshot takes as
        long as it takes; an unreachable SCM still fails at once. Any SCM of a service answers it (an
        applied state), so the stream goes to the SCM calls go to now, with no failover."""
        chunks = self._stub.current.streamSnapshot(snapshot_request(batch_rows))
        try:
            for chunk in chunks:
                yield snapshot_chunk_from_proto(chunk)
        except rpc.RpcError as e:
            raise self._error(e) from None
        finally:
            chunks.close()  # a reader that stops early ends the stream; a no-op once it is complete


def _none(_: object) -> None:
    return None
