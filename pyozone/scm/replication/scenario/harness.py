"""A real Replication Manager around one scenario's container (TestReplicationManagerScenarios's harness).

Everything SCM-side is real: node, pipeline and container managers on an in-memory store, and the
ReplicationManager with its check chain, processors, pending-op table and command sender. Only what
Ozone's harness fakes is fixed here: every datanode sits on one rack (so placement is always
satisfied), node statuses are the ones the scenario gives, command counts start at zero (commands are
drained as soon as they are recorded), SCM is out of safe mode with no wait, and spare healthy
datanodes stand by as targets for new replicas.

Datanode aliases map to fixed ids (uuid5 of the alias), so two runs of a scenario choose alike; the
random choices the RM makes come from a seeded random.Random.

The RM runs on a lone SCM (the ready leader of term 0) unless the harness is given another leader's
ScmContext: its commands then carry that leader's term.
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from pyozone.hdds.clock import ManualClock
from pyozone.hdds.commands import SCMCommand
from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.datanode import DatanodeDetails, NodeReport, StorageReport
from pyozone.hdds.ids import ContainerID, DatanodeID
from pyozone.hdds.node_status import NodeStatus
from pyozone.hdds.pipeline import Pipeline
from pyozone.hdds.replication_report import ReplicationManagerReport
from pyozone.hdds.states import LifeCycleState, NodeOperationalState, NodeState, PipelineState, SCMCommandType
from pyozone.scm.block.sequence_id import SequenceIdGenerator
from pyozone.scm.container.manager import ContainerManager
from pyozone.scm.events import EventQueue
from pyozone.scm.ha.context import ScmContext
from pyozone.scm.node.node_manager import NodeManager
from pyozone.scm.pipeline.manager import PipelineManager
from pyozone.scm.replication.manager import ReplicationManager
from pyozone.scm.replication.pending_ops import PendingOpType
from pyozone.scm.replication.queue import ReplicationQueue
from pyozone.scm.replication.scenario.model import Scenario
from pyozone.scm.store import RecordCodec, SCMMetadataStore, StrKeyCodec

if TYPE_CHECKING:
    from pyozone.scm.settings import ScmSettings

SPARE_DATANODES = 12
"""Healthy in-service nodes holding nothing: Ozone's harness invents a fresh target for every
placement, so there must always be enough (an RS-6-3 container may need 9 new replicas at once)."""
_NAMESPACE = uuid.UUID("6f1c3b52-0c0e-4f8e-9d5c-5a1e7c0e2d11")
_TB = 1 << 40
_PENDING_DEADLINE_MS = 1 << 62  # Ozone's harness: Long.MAX_VALUE, the op never times out
_SEED = 0


@dataclass(frozen=True, slots=True)
class SentCommand:
    """A command the RM queued for a datanode; `alias` is the scenario's name for it, if it has one."""

    type: SCMCommandType
    datanode: DatanodeID
    alias: str | None
    force: bool | None = None
    term: int = 0

    def __str__(self) -> str:
        where = self.alias or f"<unnamed {self.datanode[:8]}>"
        force = "" if self.force is None else f"(force={str(self.force).lower()})"
        return f"{self.type.name}{force}@{where}"


@dataclass(frozen=True, slots=True)
class CheckOutcome:
    report: ReplicationManagerReport
    under_queue: int
    over_queue: int
    commands: tuple[SentCommand, ...]
    container_state: LifeCycleState


class _ScenarioNodeManager(NodeManager):
    """The real NodeManager, with statuses pinned as the scenario says and every command recorded."""

    def __init__(
        self, settings: ScmSettings, clock: ManualClock, events: EventQueue, context: ScmContext
    ) -> None:
        super().__init__(settings, clock, events, context=context)
        self.sent: list[tuple[DatanodeID, SCMCommand]] = []

    def pin_status(self, dn: DatanodeID, status: NodeStatus) -> None:
        info = self.node(dn)
        info.status = status
        self._track_writable(info)

    def add_datanode_command(self, dn: DatanodeID, command: SCMCommand) -> None:
        self.sent.append((dn, command))
        super().add_datanode_command(dn, command)

    def take_sent(self) -> list[tuple[DatanodeID, SCMCommand]]:
        """The commands recorded so far; the queues are emptied so every node's count is 0 again."""
        sent, self.sent = self.sent, []
        for info in self.nodes():
            self.clear_command_queue(info.uuid)
        return sent


class ScenarioHarness:
    def __init__(self, scenario: Scenario, settings: ScmSettings, context: ScmContext | None = None) -> None:
        """`settings`: SCM's, over which the scenario's maintenance minimums apply and services run at
        once after safe mode (the harness sets hdds.scm.wait.time.after.safemode.exit to 0)."""
        self.scenario = scenario
        self.clock = ManualClock()
        self.settings = replace(
            settings,
            safe_mode=replace(settings.safe_mode, wait_after_exit_ms=0),
            replication=replace(
                settings.replication,
                maintenance_replica_minimum=scenario.ratis_maintenance_minimum,
                maintenance_remaining_redundancy=scenario.ec_maintenance_redundancy,
            ),
        )
        self.events = EventQueue()
        self.aliases: dict[str, DatanodeID] = {}
        self._names: dict[DatanodeID, str] = {}
        self.nodes = _ScenarioNodeManager(
            self.settings, self.clock, self.events, context or ScmContext.standalone()
        )
        replica_dns = self._register_datanodes()
        store = SCMMetadataStore.in_memory()
        container = self._container()
        self._store_records(store, container, replica_dns)
        self.pipelines = PipelineManager(self.settings, self.clock, self.events, store, self.nodes)
        sequence_ids = SequenceIdGenerator(store, self.settings.sequence_id_batch_size)
        self.containers = ContainerManager(
            self.settings.container, self.clock, self.events, store, self.nodes, self.pipelines, sequence_ids
        )
        self._add_replicas(replica_dns)
        self.rm = ReplicationManager(
            self.settings.replication,
            self.clock,
            self.events,
            self.nodes,
            self.containers,
            self.pipelines,
            lambda: True,
            random.Random(_SEED),
        )
        self.rm.should_run()  # becoming ready clears the pending-op table: load the scenario's after
        self._schedule_pending_ops()

    @property
    def container_id(self) -> ContainerID:
        return self.scenario.container_id

    # ------------------------------------------------------------------ phases
    def check(self) -> CheckOutcome:
        """The full scan over the one container: the report, the queues and the commands it sent."""
        report = self.rm.process_all()
        queue = self.rm.queue
        return self._outcome(report, queue)

    def check_read_only(self) -> CheckOutcome:
        """checkContainerStatus: the same chain in read-only mode, into a fresh report."""
        report = ReplicationManagerReport(self.rm.config.container_sample_limit)
        self.rm.check_container_status(self.container_id, report)
        return self._outcome(report, ReplicationQueue())

    def process_first(self) -> tuple[SentCommand, ...]:
        """Processes the first queued item, under-replicated first (the scenario has one container,
        so a queue holds at most one item)."""
        if self.rm.queue.under_size():
            self.rm.process_under_replicated()
        elif self.rm.queue.over_size():
            self.rm.process_over_replicated()
        return self._take_sent()

    def _outcome(self, report: ReplicationManagerReport, queue: ReplicationQueue) -> CheckOutcome:
        return CheckOutcome(
            report,
            queue.under_size(),
            queue.over_size(),
            self._take_sent(),
            self.containers.get(self.container_id).state,
        )

    def _take_sent(self) -> tuple[SentCommand, ...]:
        return tuple(
            SentCommand(command.type, dn, self._names.get(dn), getattr(command, "force", None), command.term)
            for dn, command in self.nodes.take_sent()
        )

    # ------------------------------------------------------------------ building
    def _register_datanodes(self) -> list[DatanodeID]:
        """Every alias, every unnamed replica's node and the spares; returns the replicas' nodes."""
        replica_dns = []
        for i, replica in enumerate(self.scenario.replicas):
            dn = self._alias(replica.datanode) if replica.datanode else self._anonymous(f"replica-{i}")
            replica_dns.append(dn)
            self._register(dn, replica.operational_state, replica.health_state)
        for i, op in enumerate(self.scenario.pending_replicas):
            dn = self._alias(op.datanode) if op.datanode else self._anonymous(f"pending-{i}")
            if not self.nodes.is_registered(dn):
                self._register(dn, NodeOperationalState.IN_SERVICE, NodeState.HEALTHY)
        for i in range(SPARE_DATANODES):
            self._register(self._anonymous(f"spare-{i}"), NodeOperationalState.IN_SERVICE, NodeState.HEALTHY)
        return replica_dns

    def _alias(self, alias: str) -> DatanodeID:
        dn = self.aliases.setdefault(alias, str(uuid.uuid5(_NAMESPACE, f"datanode:{alias}")))
        self._names[dn] = alias
        return dn

    def _anonymous(self, name: str) -> DatanodeID:
        return str(uuid.uuid5(_NAMESPACE, f"anonymous:{name}"))

    def _register(self, dn: DatanodeID, op: NodeOperationalState, health: NodeState) -> None:
        """Registered with the op state persisted, as the replica's node reports it (Ozone's harness
        sets the persisted op state too), then pinned to the scenario's health."""
        name = self._names.get(dn, dn[:8])
        n = len(self.nodes.nodes()) + 1
        details = DatanodeDetails(dn, name, f"10.1.{n // 256}.{n % 256}", persisted_op_state=op)
        volume = StorageReport(f"{name}-vol", "/data", _TB, 0, _TB)
        self.nodes.register(details, NodeReport(storage=(volume,), metadata_storage=(volume,)))
        self.nodes.pin_status(dn, NodeStatus(op, health))

    def _origin(self, alias: str | None, i: int) -> DatanodeID:
        """Origins are aliases of their own, as in Ozone's harness; no origin: one of its own."""
        return str(uuid.uuid5(_NAMESPACE, f"origin:{alias}" if alias else f"origin-anonymous:{i}"))

    def _container(self) -> ContainerInfo:
        s = self.scenario
        pipeline_id = (
            str(uuid.uuid5(_NAMESPACE, "pipeline")) if s.container_state is LifeCycleState.OPEN else None
        )
        return ContainerInfo(
            s.container_id,
            s.container_state,
            self.clock.wall_ms(),
            pipeline_id,
            s.replication_config,
            s.owner,
            used_bytes=s.used,
            number_of_keys=s.keys,
            sequence_id=s.sequence_id,
        )

    def _store_records(
        self, store: SCMMetadataStore, container: ContainerInfo, replica_dns: list[DatanodeID]
    ) -> None:
        """The container (and an OPEN container's open pipeline) as a restarted SCM would find them."""
        store.int_table("containers", RecordCodec(ContainerInfo)).put(container.container_id, container)
        if container.pipeline_id is None:
            return
        now = self.clock.wall_ms()
        members = (
            tuple(replica_dns)
            or tuple(info.uuid for info in self.nodes.nodes())[: container.replication_config.required_nodes]
        )
        pipeline = Pipeline(
            container.pipeline_id, container.replication_config, PipelineState.OPEN, members, now, now
        )
        store.table("pipelines", StrKeyCodec(), RecordCodec(Pipeline)).put(pipeline.id, pipeline)

    def _add_replicas(self, replica_dns: list[DatanodeID]) -> None:
        for i, (replica, dn) in enumerate(zip(self.scenario.replicas, replica_dns, strict=True)):
            self.containers.update_replica(
                ContainerReplica(
                    self.container_id,
                    dn,
                    replica.state,
                    self._origin(replica.origin, i),
                    replica.sequence_id,
                    replica.keys,
                    replica.used,
                    replica.index,
                    replica.is_empty,
                )
            )
            self.nodes.add_container(dn, self.container_id)

    def _schedule_pending_ops(self) -> None:
        pending = self.rm.pending_ops
        for i, op in enumerate(self.scenario.pending_replicas):
            dn = self._alias(op.datanode) if op.datanode else self._anonymous(f"pending-{i}")
            if op.type is PendingOpType.ADD:
                pending.schedule_add(self.container_id, dn, op.replica_index, None, _PENDING_DEADLINE_MS)
            else:
                pending.schedule_delete(self.container_id, dn, op.replica_index, None, _PENDING_DEADLINE_MS)
