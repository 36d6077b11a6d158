"""A virtual datanode: the state a real one keeps, and its answers to SCM's commands.

It stores no data. It keeps what SCM can observe: replicas with state and BCSID, pipelines it is a
member of, its persisted operational state, and the reports it owes SCM on its next heartbeat.

Commands are taken by the real datanode's rules (pyozone/datanode/command_admission.py): an older SCM
term, a passed deadline or a full queue drops them, and the command queue report SCM throttles on counts
what waits. Replication is push-based, as in Ozone (ReplicationSupervisor): a replicateContainerCommand goes
to a source, which copies its replica to the named target. A reconstructECContainersCommand goes to its
coordinator (a target), which reads `data` sources and writes the missing indexes to the targets; as
on a real datanode the new replicas are reported once CLOSED (RECOVERING ones are not reported).
Replications and reconstructions wait, NORMAL before LOW, for the datanode's replication workers, which
finish one each per heartbeat interval. `running_work` tells which nodes a running one keeps busy, as
source and as target, so the load replication puts on every node can be measured.

Pipelines fail as the daemon's do (`step_pipeline`): each member keeps its view of its pipeline's Raft group
(`RaftView`: term, when it last heard a leader, as leader when each follower last answered), and a member that
dies, pauses or is cut off makes the leader ask SCM to close the pipeline after
`hdds.ratis.raft.server.rpc.slowness.timeout`, or, without a leader (the leader dead and no majority left to
elect another), the others after `hdds.ratis.raft.server.Notification.no-leader.timeout`: the keys read by the
daemon's `PipelineRaftConfig`, the instants decided by the Raft core's own rule (`RaftSettings.slow_at_ms`,
`no_leader_at_ms`). A dead leader with a majority left is replaced after an election timeout (the first
member, in the pipeline's order, of the majority), which then reports its pipeline and in turn raises the
slowness action for the old leader.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pyozone.datanode.command_admission import (
    REPLICATION_TYPES,
    CommandAdmission,
    QueueLimits,
    WaitingCommands,
)
from pyozone.datanode.pipeline_raft import NO_LEADER_REASON, slow_member_reason
from pyozone.hdds.commands import (
    CloseContainerCommand,
    ClosePipelineCommand,
    CreatePipelineCommand,
    DeleteBlocksCommand,
    DeleteContainerCommand,
    ReconstructECContainersCommand,
    ReconstructionSource,
    ReplicateContainerCommand,
    SCMCommand,
    SetNodeOperationalStateCommand,
)
from pyozone.hdds.datanode import DatanodeDetails, NodeReport, StorageReport
from pyozone.hdds.messages import (
    CommandStatusReport,
    ContainerAction,
    ContainerReplicaReport,
    DeleteBlockTransactionResult,
    Heartbeat,
    PipelineAction,
    PipelineReport,
)
from pyozone.hdds.states import CommandStatus, NodeOperationalState, ReplicaState, SCMCommandType
from pyozone.ratis.settings import RaftSettings
from pyozone.scm.node.storage_report import TB, node_report


@dataclass(slots=True)
class RaftView:
    """One member's view of its pipeline's Raft group: what the core keeps that decides its failure
    notifications (pyozone/ratis: the term, `_leader_seen_ms`, the leader's `_answered`)."""

    term: int
    leader_seen_ms: int  # when it last heard from a leader, or led
    leading_since_ms: int = 0
    majority_ms: int = 0  # as leader: when a majority last answered (LeaderState.has_majority_contact)
    answered: dict[str, int] = field(default_factory=dict)  # as leader: follower -> its last answer
    slow_reported: set[str] = field(default_factory=set)
    no_leader_reported: bool = False


@dataclass(slots=True)
class SimDatanode:
    details: DatanodeDetails
    report: NodeReport
    alive: bool = True
    paused: bool = False
    partitioned: bool = False
    slow_factor: float = 1.0
    registered: bool = False
    op_state: NodeOperationalState = NodeOperationalState.IN_SERVICE
    op_state_expiry: int = 0
    replicas: dict[int, ContainerReplicaReport] = field(default_factory=dict)
    pipelines: dict[str, tuple[str, ...]] = field(default_factory=dict)  # pipeline id -> members
    leader_of: set[str] = field(default_factory=set)
    raft: dict[str, RaftView] = field(default_factory=dict)  # pipeline id -> its Raft group as seen here
    pending_icr: dict[int, ContainerReplicaReport] = field(default_factory=dict)
    pending_status: list[CommandStatusReport] = field(default_factory=list)
    pending_pipeline_report: bool = False
    container_actions: list[ContainerAction] = field(default_factory=list)
    pipeline_actions: list[PipelineAction] = field(default_factory=list)
    failed_pipelines: set[str] = field(default_factory=set)  # their log takes no close entry
    waiting_for_log: dict[int, str] = field(default_factory=dict)  # CLOSING replica -> its failed pipeline
    executed: dict[SCMCommandType, int] = field(default_factory=dict)
    replication_queue: WaitingCommands = field(default_factory=WaitingCommands)
    replications_running: list[SCMCommand] = field(default_factory=list)
    admission: CommandAdmission | None = None  # the datanode process's; new at every (re)start
    replications_done: int = 0
    reconstructions_done: int = 0
    reconstructions_failed: int = 0
    replications_expired: int = 0
    commands_dropped: int = 0

    @property
    def uuid(self) -> str:
        return self.details.uuid

    @property
    def running(self) -> bool:
        """Its process runs (neither dead nor paused): it takes part in its pipelines' Raft groups."""
        return self.alive and not self.paused

    def view(self, pipeline_id: str, now_ms: int) -> RaftView:
        """This member's view of a pipeline's group, begun `now_ms` (its leader heard, its followers
        answered) the first time the model looks at the pipeline."""
        view = self.raft.get(pipeline_id)
        if view is None:
            leads = pipeline_id in self.leader_of
            view = self.raft[pipeline_id] = RaftView(int(leads), now_ms, now_ms, now_ms)
        return view

    def rejoin(self, now_ms: int) -> None:
        """A restarted process: its Raft members start again from their persisted term, every silence
        counted from now."""
        for pid, view in self.raft.items():
            self.raft[pid] = RaftView(view.term, now_ms, now_ms, now_ms)

    def to_dict(self) -> dict[str, Any]:
        """What survives a restart of the simulated process: identity, disks, pipelines, replicas."""
        d = self.details
        return {
            "uuid": d.uuid,
            "hostname": d.hostname,
            "ip": d.ip_address,
            "rack": d.network_location,
            "dataDisks": len(self.report.storage),
            "diskCapacity": self.report.storage[0].capacity if self.report.storage else 0,
            "metadataDisks": len(self.report.metadata_storage),
            "opState": self.op_state.name,
            "opStateExpiry": self.op_state_expiry,
            "pipelines": {pid: list(members) for pid, members in self.pipelines.items()},
            "leaderOf": sorted(self.leader_of),
            "replicas": [
                {
                    "containerID": r.container_id,
                    "state": r.state.name,
                    "bcsid": r.sequence_id,
                    "origin": r.origin_node_id,
                    "keys": r.key_count,
                    "used": r.used_bytes,
                    "index": r.replica_index,
                    "empty": r.is_empty,
                }
                for r in self.replicas.values()
            ],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SimDatanode:
        details = DatanodeDetails(data["uuid"], data["hostname"], data["ip"], network_location=data["rack"])
        capacity = data.get("diskCapacity") or 8 * TB  # saved before the capacity was: the default
        node = cls(details, node_report(data["uuid"], data["dataDisks"], data["metadataDisks"], capacity))
        node.op_state = NodeOperationalState[data["opState"]]
        node.op_state_expiry = data["opStateExpiry"]
        node.pipelines = {pid: tuple(members) for pid, members in data["pipelines"].items()}
        node.leader_of = set(data["leaderOf"])
        for r in data["replicas"]:
            node.replicas[r["containerID"]] = ContainerReplicaReport(
                r["containerID"],
                ReplicaState[r["state"]],
                r["bcsid"],
                r["origin"],
                r["keys"],
                r["used"],
                r["index"],
                r["empty"],
            )
        node.report = report_with_used(node.report, sum(r.used_bytes for r in node.replicas.values()))
        return node

    def container_report(self) -> tuple[ContainerReplicaReport, ...]:
        return tuple(self.replicas[cid] for cid in sorted(self.replicas))

    def pipeline_reports(self) -> tuple[PipelineReport, ...]:
        return tuple(PipelineReport(pid, pid in self.leader_of) for pid in sorted(self.pipelines))

    def heartbeat(self, full_container_report: bool, node_report: bool) -> Heartbeat:
        details = replace(
            self.details, persisted_op_state=self.op_state, persisted_op_state_expiry=self.op_state_expiry
        )
        icrs = tuple(self.pending_icr[cid] for cid in sorted(self.pending_icr))
        status = tuple(self.pending_status)
        actions = tuple(self.container_actions)
        self.container_actions.clear()
        pipeline_actions = tuple(self.pipeline_actions)
        self.pipeline_actions.clear()
        pipeline_reports = self.pipeline_reports() if self.pending_pipeline_report else None
        self.pending_icr.clear()
        self.pending_status.clear()
        self.pending_pipeline_report = False
        return Heartbeat(
            datanode=details,
            node_report=self.report if node_report else None,
            container_report=self.container_report() if full_container_report else None,
            incremental_container_reports=icrs,
            command_status_reports=status,
            container_actions=actions,
            pipeline_actions=pipeline_actions,
            pipeline_reports=pipeline_reports,
            command_queue_report=self._admission().queue_report(self.replications()),
            persisted_op_state=self.op_state,
        )

    # ------------------------------------------------------------------ replicas
    def set_replica(self, replica: ContainerReplicaReport) -> None:
        """A replica written, copied in or changed; its bytes count in the node report's used space (the
        balancer reads utilization from node reports)."""
        old = self.replicas.get(replica.container_id)
        self.replicas[replica.container_id] = replica
        self.pending_icr[replica.container_id] = replica
        grown = replica.used_bytes - (0 if old is None else old.used_bytes)
        if grown:
            self.report = report_with_used(self.report, grown)

    def drop_replica(self, container_id: int) -> None:
        replica = self.replicas.pop(container_id, None)
        if replica is not None:
            self.pending_icr[container_id] = replace(replica, state=ReplicaState.DELETED)
            if replica.used_bytes:
                self.report = report_with_used(self.report, -replica.used_bytes)

    # ------------------------------------------------------------------ commands
    def start_process(self, limits: QueueLimits) -> None:
        """A (re)started datanode process: an empty command queue that has seen no SCM term yet."""
        self.replication_queue.clear()
        self.replications_running.clear()
        leaving = self.op_state is not NodeOperationalState.IN_SERVICE
        self.admission = CommandAdmission(limits, _QUEUED, out_of_service=leaving)

    def _admission(self) -> CommandAdmission:
        if self.admission is None:
            raise RuntimeError(f"datanode {self.uuid} has no running process (start_process)")
        return self.admission

    def receive(self, commands: Iterable[SCMCommand], term: int, now_epoch_ms: int) -> None:
        """A heartbeat response: its term is observed first, then each command is taken or dropped."""
        commands = list(commands)
        admission = self._admission()
        admission.observe_term(max([term, *(c.term for c in commands)]))
        for command in commands:
            if command.type is SCMCommandType.reregisterCommand:
                self.registered = False
            else:
                waiting = self.replication_queue if command.type in REPLICATION_TYPES else _RUN_AT_ONCE
                if admission.refusal(command, now_epoch_ms, waiting):
                    self.commands_dropped += 1
                    continue
                _HANDLERS[command.type](self, command)
                self._start_replications(now_epoch_ms)  # free workers take waiting work at once
            self.executed[command.type] = self.executed.get(command.type, 0) + 1

    def _create_pipeline(self, command: CreatePipelineCommand) -> None:
        pid = command.pipeline_id
        self.pipelines[pid] = tuple(command.nodes)
        if command.suggested_leader == self.uuid or len(self.pipelines[pid]) == 1:
            self.leader_of.add(pid)
        self.pending_pipeline_report = True

    def fail_pipeline(self, pipeline_id: str, reason: str | None) -> None:
        """The pipeline's log failed here: it takes no close entry any more (PipelineGroups.fail). With a
        `reason`, this member asks SCM to close the pipeline (a pipeline action)."""
        self.failed_pipelines.add(pipeline_id)
        if reason is not None:
            self.pipeline_actions.append(PipelineAction(pipeline_id, reason))

    def _close_pipeline(self, command: ClosePipelineCommand) -> None:
        """Leaves the group; a replica waiting for the failed log's close entry quasi-closes."""
        pid = command.pipeline_id
        self.pipelines.pop(pid, None)
        self.leader_of.discard(pid)
        self.raft.pop(pid, None)
        self.failed_pipelines.discard(pid)
        for cid in [cid for cid, waited in self.waiting_for_log.items() if waited == pid]:
            del self.waiting_for_log[cid]
            replica = self.replicas.get(cid)
            if replica is not None and replica.state is ReplicaState.CLOSING:
                self.set_replica(replace(replica, state=ReplicaState.QUASI_CLOSED))

    def _close_container(self, command: CloseContainerCommand) -> None:
        """CloseContainerCommandHandler: close through Ratis when in the pipeline, else force closes, else
        quasi-closes."""
        replica = self.replicas.get(command.container_id)
        if replica is None or replica.state in (ReplicaState.CLOSED, ReplicaState.UNHEALTHY):
            return
        force = command.force
        if replica.state is ReplicaState.QUASI_CLOSED:
            if force:
                self.set_replica(replace(replica, state=ReplicaState.CLOSED))
            return
        in_pipeline = command.pipeline_id in self.pipelines
        if in_pipeline and command.pipeline_id in self.failed_pipelines and not force:
            # the close entry cannot commit: CLOSING until the pipeline's close command
            self.waiting_for_log[command.container_id] = command.pipeline_id
            if replica.state is ReplicaState.OPEN:
                self.set_replica(replace(replica, state=ReplicaState.CLOSING))
            return
        target = ReplicaState.CLOSED if in_pipeline or force else ReplicaState.QUASI_CLOSED
        self.set_replica(replace(replica, state=target))

    def _delete_container(self, command: DeleteContainerCommand) -> None:
        self.drop_replica(command.container_id)

    def _delete_blocks(self, command: DeleteBlocksCommand) -> None:
        results = tuple(
            DeleteBlockTransactionResult(tx.tx_id, tx.container_id, True) for tx in command.transactions
        )
        self.pending_status.append(
            CommandStatusReport(command.id, command.type, CommandStatus.EXECUTED, results)
        )

    def _replicate(self, command: SCMCommand) -> None:
        """Replicate and reconstruct commands wait for a replication worker alike."""
        self.replication_queue.push(command)

    def replications(self) -> list[SCMCommand]:
        """Running and waiting: what the command queue report counts."""
        return [*self.replications_running, *self.replication_queue]

    def _start_replications(self, now_epoch_ms: int) -> None:
        """Free workers take waiting replications, NORMAL before LOW, oldest first; one whose deadline
        passed, or whose SCM term went stale, while it waited is dropped instead (as the daemon's queue
        does when a worker takes it)."""
        admission = self._admission()
        while self.replication_queue and len(self.replications_running) < admission.replication_workers:
            command = self.replication_queue.pop()
            if admission.refusal_at_start(command, now_epoch_ms):
                self.replications_expired += 1
            else:
                self.replications_running.append(command)

    def run_replications(self, now_epoch_ms: int, peers: Mapping[str, SimDatanode]) -> None:
        """One heartbeat interval of the replication workers: each running push completes (the target
        imports the copy in the source's state, BCSID and size, and reports it by ICR), then the workers
        take the next waiting ones."""
        running, self.replications_running = self.replications_running, []
        for command in running:
            if isinstance(command, ReconstructECContainersCommand):
                self._reconstruct(command, peers)
                continue
            replica = self.replicas.get(command.container_id)
            target = peers.get(command.target.uuid) if command.target is not None else None
            if replica is None or replica.state not in _REPLICABLE or target is None or not target.alive:
                continue
            if replica.container_id in target.replicas:
                continue
            target.set_replica(replica)
            self.replications_done += 1
        self._start_replications(now_epoch_ms)

    def _reconstruct(self, command: ReconstructECContainersCommand, peers: Mapping[str, SimDatanode]) -> None:
        """The coordinator's run: every source it reads must still hold a CLOSED copy of its index and
        be alive, else the attempt fails (its RECOVERING replicas are cleaned up: nothing is reported,
        and SCM's pending ADDs time out). Each target gets its missing index, CLOSED, by ICR."""
        read = [peers.get(s.datanode.uuid) for s in reconstruction_reads(command)]
        copies = [p.replicas.get(command.container_id) if p is not None and p.alive else None for p in read]
        if not copies or any(c is None or c.state is not ReplicaState.CLOSED for c in copies):
            self.reconstructions_failed += 1
            return
        model = copies[0]
        for target, index in zip(command.targets, command.missing_indexes, strict=True):
            node = peers.get(target.uuid)
            if node is not None and node.alive and command.container_id not in node.replicas:
                node.set_replica(replace(model, replica_index=index, origin_node_id=node.uuid))
        self.reconstructions_done += 1

    def running_work(self) -> Iterable[tuple[str, str]]:
        """(role, node) for every node each running replication or reconstruction keeps busy: a push
        reads here ("source") and writes its target ("target"); a reconstruction reads its sources and
        writes every target, this coordinator among them."""
        for command in self.replications_running:
            if isinstance(command, ReconstructECContainersCommand):
                for source in reconstruction_reads(command):
                    yield "source", source.datanode.uuid
                for target in command.targets:
                    yield "target", target.uuid
            elif isinstance(command, ReplicateContainerCommand) and command.target is not None:
                yield "source", self.uuid
                yield "target", command.target.uuid

    def _set_operational_state(self, command: SetNodeOperationalStateCommand) -> None:
        self.op_state = command.state
        self.op_state_expiry = command.expiry_epoch_s
        self._admission().out_of_service = command.state is not NodeOperationalState.IN_SERVICE

    # ------------------------------------------------------------------ the pipeline's Raft group
    def lead(self, pipeline_id: str, view: RaftView, term: int, now_ms: int) -> None:
        """Won an election of `term`: leads from now, and reports its pipelines (the daemon's
        notify_leader_changed -> pipeline report)."""
        self.leader_of.add(pipeline_id)
        view.term, view.leader_seen_ms = term, now_ms
        view.leading_since_ms = view.majority_ms = now_ms
        view.answered.clear()
        view.slow_reported.clear()
        self.pending_pipeline_report = True

    def step_down(self, pipeline_id: str, view: RaftView, now_ms: int) -> None:
        """A higher term seen, or no majority for raft.server.rpc.timeout.max: a follower, leaderless
        from now."""
        self.leader_of.discard(pipeline_id)
        view.leader_seen_ms, view.no_leader_reported = now_ms, False
        self.pending_pipeline_report = True

    def ask_close(self, pipeline_id: str, reason: str) -> None:
        """A pipeline action CLOSE on the next heartbeat (Ozone's triggerPipelineClose)."""
        self.pipeline_actions.append(PipelineAction(pipeline_id, reason))


def step_pipeline(
    pipeline_id: str,
    members: Sequence[str],
    nodes: Mapping[str, SimDatanode],
    settings: RaftSettings,
    now_ms: int,
) -> bool:
    """One look at a pipeline's Raft group at `now_ms`: who hears whom (a running member that is not
    partitioned hears every other such member), terms spread, the leader's contact, elections and the two
    failure notifications, each at most once per silence as the core's (`RaftSettings.slow_at_ms`,
    `no_leader_at_ms`; an election after `rpc_timeout_min_ms`, a leader without a majority steps down after
    `rpc_timeout_max_ms`). True when the group is whole again: every member holds it, runs and hears the
    others, under one leader of one term (the caller stops looking)."""
    held = [nodes[m] for m in members if m in nodes and pipeline_id in nodes[m].pipelines]
    running = [n for n in held if n.running]
    views = {n.uuid: n.view(pipeline_id, now_ms) for n in running}
    connected = [n for n in running if not n.partitioned]
    majority = len(members) // 2 + 1
    top = max((views[n.uuid].term for n in connected), default=0)
    # one leader among those who hear each other: the one of the highest term (a restarted member may
    # still think it leads the term it led before)
    leading = sorted((n for n in connected if pipeline_id in n.leader_of), key=lambda n: -views[n.uuid].term)
    for node in leading[1:]:
        node.step_down(pipeline_id, views[node.uuid], now_ms)
    for node in connected:
        views[node.uuid].term = top
    heard: set[str] = set()  # followers that heard their leader now
    for leader in [n for n in running if pipeline_id in n.leader_of]:
        view = views[leader.uuid]
        followers = [n for n in connected if n is not leader] if leader in connected else []
        for node in followers:
            view.answered[node.uuid] = now_ms
            view.slow_reported.discard(node.uuid)
            views[node.uuid].leader_seen_ms = now_ms
            views[node.uuid].no_leader_reported = False
            heard.add(node.uuid)
        view.leader_seen_ms = now_ms
        if len(followers) + 1 >= majority:
            view.majority_ms = now_ms
        elif now_ms - view.majority_ms >= settings.rpc_timeout_max_ms:
            leader.step_down(pipeline_id, view, now_ms)
            continue
        for member in members:
            if member == leader.uuid or member in heard or member in view.slow_reported:
                continue
            due = settings.slow_at_ms(view.answered.get(member, view.leading_since_ms))
            if due is not None and now_ms >= due:
                view.slow_reported.add(member)
                leader.ask_close(pipeline_id, slow_member_reason(member))
    leaderless = [n for n in running if n.uuid not in heard and pipeline_id not in n.leader_of]
    for node in leaderless:
        view = views[node.uuid]
        if pipeline_id in node.leader_of:
            continue  # won an election of this look
        voters = [n for n in leaderless if n in connected] if node in connected else [node]
        timed_out = now_ms - view.leader_seen_ms >= settings.rpc_timeout_min_ms
        if timed_out and len(voters) >= majority:
            term = max(views[n.uuid].term for n in voters) + 1
            for voter in voters:
                views[voter.uuid].term, views[voter.uuid].leader_seen_ms = term, now_ms
                views[voter.uuid].no_leader_reported = False
            voters[0].lead(pipeline_id, views[voters[0].uuid], term, now_ms)
            continue
        due = settings.no_leader_at_ms(view.leader_seen_ms)
        if due is not None and now_ms >= due and not view.no_leader_reported:
            view.no_leader_reported = True
            node.ask_close(pipeline_id, NO_LEADER_REASON)
    leaders = [n for n in connected if pipeline_id in n.leader_of]
    return (
        len(connected) == len(members)
        and len(leaders) == 1
        and len({views[n.uuid].term for n in connected}) == 1
    )


def report_with_used(report: NodeReport, extra: int) -> NodeReport:
    """The node report after its healthy data volumes took `extra` bytes between them (or freed them,
    when negative), each volume kept between empty and full."""
    healthy = [s for s in report.storage if not s.failed]
    share = extra // max(1, len(healthy))
    return replace(report, storage=tuple(s if s.failed else _fill(s, share) for s in report.storage))


def _fill(storage: StorageReport, extra: int) -> StorageReport:
    used = max(0, min(storage.capacity, storage.used + extra))
    return replace(storage, used=used, remaining=storage.capacity - used)


_REPLICABLE = (ReplicaState.CLOSED, ReplicaState.QUASI_CLOSED, ReplicaState.UNHEALTHY)


def reconstruction_reads(command: ReconstructECContainersCommand) -> tuple[ReconstructionSource, ...]:
    """The sources a coordinator reads: `data` of them, the lowest indexes first, as the codec decodes
    from the lowest indexes it is given (pyozone/hdds/ec/codec.py) and Ozone reads the data indexes it
    has before any parity. With SCM's ops-per-node rule on, SCM names exactly these."""
    data = command.replication_config.ec_data
    return tuple(sorted(command.sources, key=lambda s: s.replica_index)[:data])


_HANDLERS = {
    SCMCommandType.replicateContainerCommand: SimDatanode._replicate,
    SCMCommandType.reconstructECContainersCommand: SimDatanode._replicate,
    SCMCommandType.createPipelineCommand: SimDatanode._create_pipeline,
    SCMCommandType.closePipelineCommand: SimDatanode._close_pipeline,
    SCMCommandType.closeContainerCommand: SimDatanode._close_container,
    SCMCommandType.deleteContainerCommand: SimDatanode._delete_container,
    SCMCommandType.deleteBlocksCommand: SimDatanode._delete_blocks,
    SCMCommandType.setNodeOperationalStateCommand: SimDatanode._set_operational_state,
}
_QUEUED = frozenset(_HANDLERS)
"""What the datanode's command queue takes; reregister is the heartbeat loop's own."""
_RUN_AT_ONCE = WaitingCommands()
"""What waits before a command other than a replication here: nothing (each runs as it arrives)."""
