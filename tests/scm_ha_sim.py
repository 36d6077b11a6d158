"""Seeded runs of three SCM cores of one service on virtual time, with failovers (issue 31).

Each seed draws a cluster (6-9 datanodes, a sequence id batch size, message loss) and, for two virtual
minutes, block writes (three owners, RATIS/THREE and RATIS/ONE) and block deletes (OM's deleteScmKeyBlocks)
to the ready leader beside faults: the leader killed (most often) or another SCM, restarts, the leader
isolated from the other SCMs (not from the datanodes), random partitions of the SCMs, datanode kills and
restarts, and the leader killed or isolated while replications it sent run. Then every fault heals.
After every event these invariants hold:

1. no local id or delete transaction id is acknowledged twice, an acknowledged delete transaction
   committed with the blocks it was asked for, and a committed container or delete-transaction id names
   one record for ever (its pipeline, owner and replication, its blocks) on every SCM;
2. every acknowledged block's container is in the table of every SCM that applied the entry it was
   acknowledged at, and not DELETED;
3. SCMs at equal applied index hold equal scm.db tables (a digest per index);
4. a command leaves only the ready leader of its term, carrying that term, once every write the leader
   staged before it was queued applied (or was undone), and only once what it acts on committed
   (CreatePipeline: the pipeline's record; CloseContainer: a record past OPEN; DeleteBlocks: the
   transactions'; ClosePipeline: the record CLOSED or gone; replicate and reconstruct: a CLOSED or
   QUASI_CLOSED record; DeleteContainer of a container the leader moved to DELETING: that record); a
   datanode that observed a newer term drops it;
5. after the faults stop, within 10 election timeouts a ready leader takes a write, and within two minutes
   more every SCM has applied the same log and holds the same tables;
6. an SCM (a follower or a new leader, restarted behind the log or not) leaves safe mode only with its
   container and pipeline rules' totals those of its records then, and each rule holding on them;
7. every live SCM's memory equals its records (the leader's through its overlay): each container's state
   and pipeline, each pipeline's state and members, the OPEN containers of each pipeline, the delete
   transaction ids (a step-down's undo, a follower's record listeners, an installed checkpoint);
8. no replication storm: no more replication commands are sent than a lone SCM would send plus those in
   flight at a failover. Checked per command: a ReplicateContainerCommand or ReconstructECContainersCommand
   for container C that the ready leader L sends was queued (the Replication Manager's decision) only while
   C lacked a copy counting (a) the copies that exist
   (the simulated datanodes' replicas, not L's view: healthy for C's record, on live in-service datanodes
   registered with L since they started, that L does not hold DEAD, HEALTHY if L has not heard the copy's
   latest state) and (b) the pushes of C running on live sources L holds HEALTHY, to live targets L holds
   HEALTHY, before their deadline (`_copies`). Sound: every copy counted is one a lone SCM in L's place
   counts, (a) from its replica map (the same reports reach every SCM; a report on its way is covered by
   the pending ADD of the command that made the copy) and (b) from its pending ADDs (a push running lives
   in its table until done or past its deadline), and a lone SCM replicates a Ratis container only short
   of its replication factor (one rack: never mis-replicated), an EC one only short of an index, and a
   QUASI_CLOSED stuck one only for an origin short of copies (`SINGLE_ORIGIN_COPIES`, the most any origin
   is kept at, bounds it). What it tolerates: a queued push of an older term, which the datanode refuses
   once it heard the newer one (so L must send it again: the allowance "in flight at the failover"), and
   a push from a source L cannot hear (its completion cannot reach L). A new leader meets it by waiting
   hdds.scm.wait.time.after.safemode.exit from becoming ready (10 s here, over three heartbeat intervals:
   by then every push of an older term finished and was reported, or was refused) before its Replication
   Manager acts (`StorageContainerManager.services_ready`, Ozone's lastTimeToBeReadyInMillis), and by a
   follower recording the replicas it heard of before their container's record (`ContainerReportHandler`).
   Each seed counts the replication commands sent and those in flight at failovers (queued or running on
   live datanodes when a new ready leader appears); the run fails over the leader just after replication
   commands went out, half of the time they are still in flight.

Replay a seed: `python -m tests.scm_ha_sim --seed 17 --trace`; many: `python -m tests.scm_ha_sim --seeds 200`.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections import Counter

from pyozone.config import OzoneConfiguration
from pyozone.hdds.block import AllocatedBlock
from pyozone.hdds.commands import (
    CloseContainerCommand,
    ClosePipelineCommand,
    CreatePipelineCommand,
    DeleteBlocksCommand,
    DeleteContainerCommand,
    DeletedBlocksTransaction,
    ReconstructECContainersCommand,
    ReplicateContainerCommand,
    SCMCommand,
)
from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.container_health import ContainerHealthState
from pyozone.hdds.exceptions import SCMException
from pyozone.hdds.ids import RATIS_ONE, RATIS_THREE, BlockID, DatanodeID
from pyozone.hdds.messages import ContainerReplicaReport
from pyozone.hdds.pipeline import Pipeline
from pyozone.hdds.safemode_status import SafeModeStatus
from pyozone.hdds.states import LifeCycleState, NodeOperationalState, PipelineState, ReplicationType
from pyozone.hdds.store.codec import IntKeyCodec, RecordCodec, StrKeyCodec
from pyozone.protocol.scm_ratis import entry_from_bytes
from pyozone.ratis.messages import EntryKind, LogEntry
from pyozone.scm.events import SCMEvent
from pyozone.scm.replication.qc_stuck_count import SINGLE_ORIGIN_COPIES
from pyozone.scm.replication.replica_match import is_unhealthy
from pyozone.scm.safemode.container_rules import AbstractContainerSafeModeRule
from pyozone.scm.safemode.pipeline_rules import HealthyPipelineSafeModeRule, OneReplicaPipelineSafeModeRule
from pyozone.scm.scm import StorageContainerManager
from pyozone.scm.store import SCMMetadataStore
from pyozone.sim.datanode import SimDatanode
from pyozone.sim.scm_ha import ELECTION_MS, SCM_NAMES, ScmHaObserver, SimHaCluster, SimScm

SECOND = 1000
FAULT_MS = 120 * SECOND
WARMUP_MS = 120 * SECOND
SETTLE_MS = 120 * SECOND
HEALTHY_MS = 15 * 60 * SECOND  # then every container healthy in the leader's RM report, none CLOSING
UNHEALTHY_STATES = (
    ContainerHealthState.UNDER_REPLICATED,
    ContainerHealthState.OVER_REPLICATED,
    ContainerHealthState.MISSING,
    ContainerHealthState.UNHEALTHY,
    ContainerHealthState.QUASI_CLOSED_STUCK,
    ContainerHealthState.OPEN_UNHEALTHY,
    ContainerHealthState.OPEN_WITHOUT_PIPELINE,
)
MB = 1 << 20
OWNERS = ("om-a", "om-b", "om-c")
REPLICATIONS = (RATIS_THREE, RATIS_THREE, RATIS_THREE, RATIS_ONE)


class InvariantViolation(AssertionError):
    pass


class Checker(ScmHaObserver):
    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.acked_local: set[int] = set()
        self.acked_at: dict[int, int] = {}  # container id -> the leader's applied index at its first ack
        self.containers_seen: dict[int, tuple] = {}
        self.tx_seen: dict[int, tuple] = {}
        self.acked_tx: set[int] = set()
        self.queued_at: dict[int, int] = {}  # id of a queued command -> the leader's store epoch then
        self.digest_at: dict[int, tuple[str, str]] = {}  # applied index -> (SCM, digest)
        self.counts: Counter[str] = Counter()
        self.led: tuple[str, int] | None = None  # the ready leader last seen, and its term
        # id of a queued replication command -> (the command, what made it a storm then, or None)
        self.storm_at_queue: dict[int, tuple[SCMCommand, str | None]] = {}
        self._container_codec = RecordCodec(ContainerInfo)
        self._pipeline_codec = RecordCodec(Pipeline)
        self._decoded: dict[bytes, ContainerInfo] = {}
        self._decoded_pipelines: dict[bytes, Pipeline] = {}
        self._int = IntKeyCodec()

    def _container(self, raw: bytes) -> ContainerInfo:
        """A stored container record, decoded once per distinct value (the checks read every record after
        every event)."""
        info = self._decoded.get(raw)
        if info is None:
            info = self._decoded[raw] = self._container_codec.decode(raw)
        return info

    def _pipeline(self, raw: bytes) -> Pipeline:
        pipeline = self._decoded_pipelines.get(raw)
        if pipeline is None:
            pipeline = self._decoded_pipelines[raw] = self._pipeline_codec.decode(raw)
        return pipeline

    def fail(self, cluster: SimHaCluster, message: str) -> None:
        raise InvariantViolation(
            f"seed {self.seed}, t={cluster.clock.now_ms()} ms: {message}\n"
            f"replay: python -m tests.scm_ha_sim --seed {self.seed} --trace"
        )

    # ---- (1), (2): acknowledgements
    def acknowledged(self, cluster: SimHaCluster, scm: SimScm, block: AllocatedBlock) -> None:
        local = block.block_id.local_id
        if local in self.acked_local:
            self.fail(cluster, f"local id {local} acknowledged twice")
        self.acked_local.add(local)
        self.acked_at.setdefault(block.container_id, scm.server.applied_index)
        self.counts["blocks acknowledged"] += 1

    def deletes_acknowledged(
        self, cluster: SimHaCluster, scm: SimScm, tx_ids: list[int], blocks: list[BlockID]
    ) -> None:
        asked = {(b.container_id, b.local_id) for b in blocks}
        for tx in tx_ids:
            if tx in self.acked_tx:
                self.fail(cluster, f"delete transaction {tx} acknowledged twice")
            self.acked_tx.add(tx)
            seen = self.tx_seen.get(tx)
            if seen is None:
                self.fail(cluster, f"{scm.name} acknowledged delete transaction {tx} before it committed")
            else:
                container_id, local_ids = _blocks(seen[0])
                if not {(container_id, local) for local in local_ids} <= asked:
                    self.fail(cluster, f"delete transaction {tx} names blocks {local_ids} not asked for")
        self.counts["delete transactions acknowledged"] += len(tx_ids)

    # ---- (1), (3): every applied entry
    def entry_applied(self, cluster: SimHaCluster, scm: SimScm, entry: LogEntry) -> None:
        if entry.kind is not EntryKind.STATE_MACHINE:
            return
        for cf, key, value in entry_from_bytes(entry.payload).ops:
            if value is None:
                continue
            if cf == "containers":
                info = self._container_codec.decode(value)
                identity = (info.pipeline_id, info.owner, info.replication_config)
                if self.containers_seen.setdefault(info.container_id, identity) != identity:
                    self.fail(cluster, f"container id {info.container_id} names two containers")
            elif cf == "deletedBlocks":
                tx = self._int.decode(key)
                identity = (value,)
                seen = self.tx_seen.setdefault(tx, identity)
                if seen != identity and _blocks(seen[0]) != _blocks(value):
                    self.fail(cluster, f"delete transaction {tx} names two sets of blocks")
        digest = scm.digest()
        first = self.digest_at.setdefault(entry.index, (scm.name, digest))
        if first[1] != digest:
            self.fail(cluster, f"{scm.name} and {first[0]} applied index {entry.index}: their scm.db differ")
        self.counts["entries applied"] += 1

    # ---- (4): commands
    def commands(self, cluster: SimHaCluster, scm: SimScm, node: SimDatanode, commands: list) -> None:
        if not commands:
            return
        context = scm.core.context
        if not context.is_leader_ready():
            self.fail(cluster, f"{scm.name}, not the ready leader, sent {commands}")
        committed = SCMMetadataStore(scm.backend)
        for command in commands:
            epoch = self.queued_at.pop(id(command), 0)
            if epoch > scm.core.store.applied_epoch:
                self.fail(
                    cluster, f"{scm.name} sent {command} queued at epoch {epoch} before that epoch applied"
                )
            self._check_command(cluster, scm, committed, command, context.known_term)
            if isinstance(command, ReplicateContainerCommand | ReconstructECContainersCommand):
                self._check_no_storm(cluster, scm, node, command)
        self.counts["commands sent"] += len(commands)

    def _check_command(
        self, cluster: SimHaCluster, scm: SimScm, committed: SCMMetadataStore, command: SCMCommand, term: int
    ) -> None:
        if command.term != term:
            self.fail(cluster, f"{scm.name}, leader of term {term}, sent {command} of term {command.term}")
        if isinstance(command, CreatePipelineCommand):
            table = committed.table("pipelines", StrKeyCodec(), RecordCodec(Pipeline))
            if table.get(command.pipeline_id) is None:
                self.fail(cluster, f"{scm.name} sent {command} before the pipeline's record committed")
        elif isinstance(command, CloseContainerCommand):
            info = committed.int_table("containers", self._container_codec).get(command.container_id)
            if info is None or info.state is LifeCycleState.OPEN:
                self.fail(cluster, f"{scm.name} sent {command} before a record past OPEN committed")
        elif isinstance(command, DeleteBlocksCommand):
            raw = committed.backend
            for tx in command.transactions:
                if raw.get("deletedBlocks", self._int.encode(tx.tx_id)) is None:
                    self.fail(cluster, f"{scm.name} sent delete transaction {tx.tx_id} before it committed")
        elif isinstance(command, ClosePipelineCommand):
            table = committed.table("pipelines", StrKeyCodec(), RecordCodec(Pipeline))
            pipeline = table.get(command.pipeline_id)
            if pipeline is not None and pipeline.state is not PipelineState.CLOSED:
                self.fail(
                    cluster, f"{scm.name} sent {command} while the committed record is {pipeline.state}"
                )
        elif isinstance(command, ReplicateContainerCommand | ReconstructECContainersCommand):
            info = committed.int_table("containers", self._container_codec).get(command.container_id)
            if info is None or info.state not in (LifeCycleState.CLOSED, LifeCycleState.QUASI_CLOSED):
                self.fail(cluster, f"{scm.name} sent {command} while the committed record is {info}")
        elif isinstance(command, DeleteContainerCommand):
            info = committed.int_table("containers", self._container_codec).get(command.container_id)
            view = scm.core.containers.find(command.container_id)
            deleting = (LifeCycleState.DELETING, LifeCycleState.DELETED)
            if view is not None and view.state in deleting and (info is None or info.state not in deleting):
                self.fail(cluster, f"{scm.name} sent {command} before its DELETING record committed: {info}")

    # ---- (8) no replication storm
    def _check_no_storm(
        self,
        cluster: SimHaCluster,
        scm: SimScm,
        node: SimDatanode,
        command: ReplicateContainerCommand | ReconstructECContainersCommand,
    ) -> None:
        """A replication command sent: judged as it stood when the leader queued it (the Replication
        Manager's decision; a copy that comes back before the datanode's heartbeat takes the command is
        no storm, a lone SCM's queue keeps it too)."""
        self.counts["replication commands sent"] += 1
        queued, storm = self.storm_at_queue.pop(id(command), (None, None))
        if queued is command and storm is not None:
            self.fail(cluster, f"replication storm: {scm.name} sent to {node.uuid} {storm}")

    def _storm(self, cluster: SimHaCluster, scm: SimScm, command: SCMCommand) -> str | None:
        """What makes a replication command the leader queues now a storm, or None."""
        if not isinstance(command, ReplicateContainerCommand | ReconstructECContainersCommand):
            return None
        info = scm.core.containers.find(command.container_id)
        if info is None:
            return None  # (4) judges it
        copies = _copies(cluster, scm, info)
        required = info.replication_config.required_nodes
        if info.replication_config.type is ReplicationType.EC:
            full = {c.replica_index for c in copies.values()} >= set(range(1, required + 1))
        else:
            full = len(copies) >= required
        if full and info.state is LifeCycleState.QUASI_CLOSED:
            per_origin = Counter(c.origin_node_id for c in copies.values())
            full = min(per_origin.values()) >= SINGLE_ORIGIN_COPIES
        if not full:
            return None
        return (
            f"{command}, queued in term {scm.core.context.known_term} at t={cluster.clock.now_ms()} ms while "
            f"container {info.container_id} ({info.state.name}) had {required} copies counting those in "
            f"flight: {sorted(copies)}"
        )

    def _failover(self, cluster: SimHaCluster) -> None:
        """Counts each new ready leader and the replications in flight on live datanodes then."""
        leader = cluster.leader()
        if leader is None:
            return
        led = (leader.name, leader.core.context.known_term)
        if led == self.led:
            return
        if self.led is not None:
            self.counts["failovers"] += 1
            self.counts["replication commands in flight at failovers"] += sum(
                len(n.replications()) for n in cluster.datanodes.values() if n.alive
            )
        self.led = led

    def received(self, cluster: SimHaCluster, node: SimDatanode, stale: int, dropped: int) -> None:
        if dropped < stale:
            self.fail(cluster, f"datanode {node.uuid} executed a command older than a term it observed")
        self.counts["stale commands dropped"] += stale

    # ---- (6) safe mode
    def scm_started(self, cluster: SimHaCluster, scm: SimScm) -> None:
        core = scm.core
        queue = core.nodes.commands
        add = queue.add

        def queued(dn: DatanodeID, command: SCMCommand) -> None:
            self.queued_at[id(command)] = core.store.epoch  # what the leader had staged when it was queued
            if isinstance(command, ReplicateContainerCommand | ReconstructECContainersCommand):
                self.storm_at_queue[id(command)] = (command, self._storm(cluster, scm, command))
            add(dn, command)

        queue.add = queued  # type: ignore[method-assign]
        core.events.add_handler(
            SCMEvent.SAFE_MODE_STATUS, lambda status: self._safe_mode_status(cluster, scm, core, status)
        )

    def _safe_mode_status(
        self, cluster: SimHaCluster, scm: SimScm, core: StorageContainerManager, status: SafeModeStatus
    ) -> None:
        if status is not SafeModeStatus.OUT_OF_SAFE_MODE:
            return
        eligible: dict[ReplicationType, set[int]] = {t: set() for t in ReplicationType}
        for state in (LifeCycleState.CLOSED, LifeCycleState.QUASI_CLOSED):
            for info in core.containers.containers(state):
                if info.number_of_keys > 0:
                    eligible[info.replication_config.type].add(info.container_id)
        opened = len(core.pipelines.pipelines(RATIS_THREE, PipelineState.OPEN))
        for rule in core.safe_mode.rules():
            wrong = ""
            if isinstance(rule, AbstractContainerSafeModeRule):
                records = eligible[rule.container_type]
                if rule.eligible != records:
                    wrong = f"waits for {sorted(rule.eligible)}, its records {sorted(records)}"
            elif isinstance(rule, HealthyPipelineSafeModeRule | OneReplicaPipelineSafeModeRule):
                want = math.ceil(rule.percent * opened)
                if isinstance(rule, HealthyPipelineSafeModeRule):
                    want = max(rule.min_healthy_pipelines, want)
                if rule.threshold != want:
                    wrong = f"threshold {rule.threshold} for {opened} OPEN RATIS/THREE pipelines"
            if not wrong and not rule.validate():
                wrong = f"does not hold: {rule.status_text()}"
            if wrong:
                self.fail(
                    cluster,
                    f"{scm.name} (leader={core.context.is_leader()}, applied {scm.server.applied_index}) "
                    f"left safe mode; its {rule.name} {wrong}",
                )
        self.counts["safe mode exits checked"] += 1

    # ---- (7) memory against records
    def _memory_matches_records(self, cluster: SimHaCluster, scm: SimScm) -> None:
        core = scm.core
        store = core.store  # through the overlay on the leader
        records = {}
        for key, value in store.items("containers"):
            info = self._container(value)
            records[self._int.decode(key)] = (info.state, info.pipeline_id)
        memory = {info.container_id: (info.state, info.pipeline_id) for info in core.containers.containers()}
        problems = []
        if records != memory:
            problems.append(f"containers (record, memory): {_diff(records, memory)}")
        records_p = {}
        for _, value in store.items("pipelines"):
            pipeline = self._pipeline(value)
            records_p[pipeline.id] = (pipeline.state, tuple(pipeline.nodes))
        memory_p = {p.id: (p.state, tuple(p.nodes)) for p in core.pipelines.pipelines()}
        if records_p != memory_p:
            problems.append(f"pipelines (record, memory): {_diff(records_p, memory_p)}")
        open_in: dict[str, set[int]] = {}
        for cid, (state, p) in memory.items():
            if state is LifeCycleState.OPEN and p is not None:
                open_in.setdefault(p, set()).add(cid)
        for pid in memory_p:
            derived = open_in.get(pid, set())
            if set(core.pipelines.containers(pid)) != derived:
                problems.append(
                    f"pipeline {pid} holds {sorted(core.pipelines.containers(pid))}, OPEN {sorted(derived)}"
                )
        records_t = [self._int.decode(key) for key, _ in store.items("deletedBlocks")]
        memory_t = [self._int.decode(key) for key in core.deleted_blocks.record_keys()]
        if records_t != memory_t:
            problems.append(f"delete transactions: records {records_t}, memory {memory_t}")
        if problems:
            self.fail(
                cluster,
                f"{scm.name} (leader={core.context.is_leader()}, applied {scm.server.applied_index}): "
                + "; ".join(problems),
            )

    # ---- (2), (7) after every event
    def after_event(self, cluster: SimHaCluster) -> None:
        self._failover(cluster)
        for scm in cluster.scms.values():
            if not scm.alive:
                continue
            self._memory_matches_records(cluster, scm)
            applied = scm.server.applied_index
            for cid, at in self.acked_at.items():
                if applied < at:
                    continue
                raw = scm.backend.get("containers", self._int.encode(cid))
                info = None if raw is None else self._container(raw)
                if info is None or info.state is LifeCycleState.DELETED:
                    self.fail(cluster, f"acknowledged container {cid} is {info and info.state} on {scm.name}")


def _diff(records: dict, memory: dict) -> dict:
    return {
        k: (records.get(k), memory.get(k))
        for k in records.keys() | memory.keys()
        if records.get(k) != memory.get(k)
    }


def _copies(cluster: SimHaCluster, scm: SimScm, info: ContainerInfo) -> dict[str, ContainerReplicaReport]:
    """Invariant 8's copies of a container, by datanode, as the sending SCM could know them: (a) healthy
    copies on live in-service datanodes registered with it since they started, that it does not hold
    DEAD (HEALTHY if it has not heard the copy's latest state yet: the report is on its way), and (b) the
    targets of pushes running on live, reachable sources it holds HEALTHY, to live targets it holds
    HEALTHY, before their deadline: what a lone SCM's pending ADDs would cover."""
    cid, nodes = info.container_id, scm.core.nodes

    def held(dn: str, healthy: bool) -> bool:
        known = nodes.get(dn)
        return known is not None and (known.status.is_healthy() if healthy else not known.status.is_dead())

    def counts(dn: str, replica: ContainerReplicaReport | None) -> bool:
        node = cluster.datanodes[dn]
        return (
            replica is not None
            and node.alive
            and node.op_state is NodeOperationalState.IN_SERVICE
            and cluster.registered(dn, scm.name)
            and not is_unhealthy(info, _as_replica(dn, replica))
        )

    copies = {
        dn: replica
        for dn, node in cluster.datanodes.items()
        if counts(dn, replica := node.replicas.get(cid))
        and held(dn, healthy=cluster.owes_report(dn, scm.name, cid))
    }
    now = cluster.clock.wall_ms()
    for dn, node in cluster.datanodes.items():
        source = node.replicas.get(cid)
        if node.paused or node.partitioned or not counts(dn, source) or not held(dn, healthy=True):
            continue
        for push in node.replications_running:
            if not isinstance(push, ReplicateContainerCommand) or push.container_id != cid:
                continue
            target = push.target and push.target.uuid
            if (
                target in cluster.datanodes
                and target not in copies
                and now < push.deadline_epoch_ms
                and cluster.datanodes[target].alive
                and cluster.datanodes[target].op_state is NodeOperationalState.IN_SERVICE
                and held(target, healthy=True)
            ):
                copies[target] = source
    return copies


def _as_replica(dn: str, report: ContainerReplicaReport) -> ContainerReplica:
    return ContainerReplica(
        report.container_id, dn, report.state, report.origin_node_id, report.sequence_id,
        replica_index=report.replica_index,
    )  # fmt: skip


def _blocks(value: bytes) -> tuple[int, tuple[int, ...]]:
    """A deletedBlocks record's container and blocks (its retry count is no part of its identity)."""
    tx = _TX_CODEC.decode(value)
    return tx.container_id, tuple(tx.local_ids)


_TX_CODEC = RecordCodec(DeletedBlocksTransaction)


CONF = {
    "hdds.heartbeat.interval": "3s",
    "ozone.scm.container.size": "10MB",
    "ozone.scm.block.size": "1MB",
    # a new leader's services wait this long after it became ready (invariant 8): more than three heartbeat
    # intervals, by when every push of an older term has finished and been reported, or been refused
    "hdds.scm.wait.time.after.safemode.exit": "10s",
    "ozone.scm.stale.node.interval": "30s",
    "ozone.scm.dead.node.interval": "60s",
    "ozone.scm.close.container.wait.duration": "10s",
    "ozone.scm.pipeline.creation.interval": "10s",
    "hdds.scm.replication.thread.interval": "30s",
    # A follower not yet caught up (not state-machine ready) drops the ICRs it takes; a later leader learns
    # those replicas from the next full report (a caught-up follower holds a report that comes before its
    # container's record and records the replica when the record applies).
    "hdds.container.report.interval": "5m",
}


class Run:
    """One seed: the cluster, the workload, the faults, the checks."""

    def __init__(self, seed: int, trace: bool = False) -> None:
        self.seed = seed
        self.rng = random.Random(seed)
        self.trace = trace
        self.checker = Checker(seed)
        conf = dict(CONF)
        conf["ozone.scm.sequence.id.batch.size"] = str(self.rng.choice([5, 50, 1000]))
        conf["hdds.heartbeat.interval"] = self.rng.choice(["1s", "3s"])
        self.cluster = SimHaCluster(
            self.rng.randint(6, 9), conf=OzoneConfiguration(conf), seed=seed, observer=self.checker
        )
        self.deleted: set[BlockID] = set()  # blocks asked to be deleted (answered or not)
        self.replications_seen = 0
        self.cluster.loss = self.rng.choice([0.0, 0.0, 0.05, 0.2])
        self.cluster.max_delay_ms = self.rng.choice([20, 100, 300])

    def log(self, what: str) -> None:
        self.checker.counts[what.split(" ")[0]] += 1
        if self.trace:
            print(f"{self.cluster.clock.now_ms():8d} {what}")

    def write(self) -> None:
        rng = self.rng
        try:
            self.cluster.write_block(
                rng.choice([MB // 2, MB]), rng.choice(REPLICATIONS), owner=rng.choice(OWNERS)
            )
        except SCMException as refused:
            self.checker.counts[f"writes refused ({refused.code.name})"] += 1

    def delete(self) -> None:
        """OM deletes keys: some acknowledged blocks not deleted yet go to the deleted block log."""
        c, rng = self.cluster, self.rng
        live = [b.block_id for b in c.acked if b.block_id not in self.deleted]
        if not live:
            return
        blocks = rng.sample(live, min(len(live), rng.randint(1, 4)))
        try:
            c.delete_blocks(blocks)
        except SCMException as refused:
            self.checker.counts[f"deletes refused ({refused.code.name})"] += 1
            return
        self.deleted.update(blocks)

    def fault(self) -> None:
        c, rng = self.cluster, self.rng
        leader = c.leader()
        dead = [s for s in c.scms.values() if not s.alive]
        what = rng.choices(
            [
                "kill-leader",
                "kill-scm",
                "restart-scm",
                "isolate-leader",
                "partition",
                "heal",
                "kill-dn",
                "restart-dn",
            ],
            weights=[4, 1, 4, 2, 1, 3, 2, 2],
        )[0]
        if what == "kill-leader" and leader is not None:
            c.kill_scm(leader.name)
        elif what == "kill-scm":
            c.kill_scm(rng.choice(SCM_NAMES))
        elif what == "restart-scm" and dead:
            c.restart_scm_node(rng.choice(dead).name)
        elif what == "isolate-leader" and leader is not None:
            c.isolate_scm(leader.name)
        elif what == "partition":
            c.partition_scms({n: rng.randint(0, 1) for n in SCM_NAMES})
        elif what == "heal":
            c.heal_scms()
        elif what == "kill-dn":
            c.kill(rng.choice(list(c.datanodes)))
        elif what == "restart-dn":
            for dn, node in c.datanodes.items():
                if not node.alive:
                    c.restart(dn)
                    break
        else:
            return
        self.log(f"{what} (leader {leader and leader.name})")

    def replicating(self) -> bool:
        """The leader sent replication commands since the last step, and a live datanode still runs or
        queues one: a failover now tests invariant 8 (pushes finish within a heartbeat or two)."""
        sent = self.checker.counts["replication commands sent"]
        fresh, self.replications_seen = sent > self.replications_seen, sent
        return fresh and any(node.alive and node.replications() for node in self.cluster.datanodes.values())

    def fail_over_mid_replication(self) -> None:
        leader = self.cluster.leader()
        if leader is None:
            return
        if self.rng.random() < 0.5:
            self.cluster.kill_scm(leader.name)
        else:
            self.cluster.isolate_scm(leader.name)
        self.log(f"failover-mid-replication (leader {leader.name})")

    def run(self) -> None:
        c, rng = self.cluster, self.rng
        if not c.run_until(lambda: c.leader() is not None and not c.scm.safe_mode.in_safe_mode(), WARMUP_MS):
            self.checker.fail(c, "no ready leader out of safe mode after the warm-up")
        end = c.clock.now_ms() + FAULT_MS
        while c.clock.now_ms() < end:
            for _ in range(rng.randint(0, 3)):
                self.write()
            if rng.random() < 0.15:
                self.delete()
            if rng.random() < 0.08:
                self.fault()
            elif self.replicating() and rng.random() < 0.5:
                self.fail_over_mid_replication()
            c.advance(rng.randint(100, 1500))
        # the faults stop
        c.loss, c.max_delay_ms = 0.0, 20
        c.heal_scms()
        for name in SCM_NAMES:
            c.restart_scm_node(name)
        for dn in list(c.datanodes):
            c.restart(dn)
        healed = c.clock.now_ms()
        acked = len(c.acked)
        while len(c.acked) == acked:
            if c.clock.now_ms() > healed + 10 * ELECTION_MS + 10 * SECOND:
                self.checker.fail(c, "no write acknowledged within 10 election timeouts of the heal (+10 s)")
            if c.leader() is not None:
                self.write()
            c.advance(200)
        took = c.clock.now_ms() - healed
        self.checker.counts["ms to the first write after the heal (max)"] = max(
            self.checker.counts["ms to the first write after the heal (max)"], took
        )

        def converged() -> bool:
            scms = list(c.scms.values())
            return len({s.server.applied_index for s in scms}) == 1 and len({s.digest() for s in scms}) == 1

        if not c.run_until(converged, SETTLE_MS):
            self.checker.fail(
                c, f"SCMs did not converge: applied {[s.server.applied_index for s in c.scms.values()]}"
            )
        leader = c.leader()
        assert leader is not None
        stale_report = leader.core.replication.report

        def healthy() -> bool:
            report = leader.core.replication.report
            unhealthy = any(report.stat(state.name) for state in UNHEALTHY_STATES)
            return report is not stale_report and not unhealthy and report.stat("CLOSING") == 0

        if not c.run_until(healthy, HEALTHY_MS):
            report = leader.core.replication.report
            self.checker.fail(
                c,
                f"containers not healthy: {[(s.name, report.stat(s.name)) for s in UNHEALTHY_STATES]}, "
                f"CLOSING {report.stat('CLOSING')}",
            )


def run_seed(seed: int, trace: bool = False) -> Counter[str]:
    run = Run(seed, trace)
    run.run()
    return run.checker.counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, help="run this seed only")
    parser.add_argument("--seeds", type=int, default=20, help="run seeds 0..N-1")
    parser.add_argument("--first", type=int, default=0, help="the first seed of --seeds")
    parser.add_argument("--trace", action="store_true", help="print every fault")
    args = parser.parse_args()
    seeds = [args.seed] if args.seed is not None else range(args.first, args.first + args.seeds)
    total: Counter[str] = Counter()
    started = time.perf_counter()
    for seed in seeds:
        counts = run_seed(seed, args.trace)
        for key, value in counts.items():
            if "(max)" in key:
                total[key] = max(total[key], value)
            else:
                total[key] += value
        if args.seed is not None:
            print(f"seed {seed}: {dict(counts)}")
    print(
        f"{len(seeds)} seeds in {time.perf_counter() - started:.1f} s: all invariants hold; "
        f"{dict(sorted(total.items()))}"
    )


if __name__ == "__main__":
    sys.exit(main())
