"""SimScmService: three SCM cores of one service on virtual time (issue 31; invariants: tests/scm_ha_sim.py).

Each `SimScm` is a core over its own `MemoryBackend` (which survives a kill, as RocksDB's page-cache WAL
does), its `ScmContext`, `ScmReplication`, the glue decisions of `ScmRaftDriver` and a sans-IO
`ratis.RaftServer` (election 1 s) with an in-memory durable log. Raft messages, disk syncs and the Raft
servers' deadlines are events in `SimCluster`'s heap beside the datanodes' heartbeats and the cores'
ticks. Every datanode heartbeats every live SCM it can reach (an SCM that missed some of its reports
gets a full report next) and takes commands through its `CommandAdmission` with the term the SCM
answered with. Writes go to the ready leader and are acknowledged once their epoch applied there.

Faults: `kill_scm` / `restart_scm_node` (a restart reloads the core from its scm.db and the Raft server
from its disk: the state machine's snapshot is the last entry its scm.db applied), `isolate_scm` (cut
from the other SCMs, not from the datanodes), `partition_scms`, `heal_scms`, and the datanode faults of
`SimCluster`. A checker (`ScmHaInvariants`) is told every acknowledgement, applied entry and command.
"""

from __future__ import annotations

import hashlib
import heapq
import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from pyozone.config import OzoneConfiguration
from pyozone.datanode.reports import Periodic
from pyozone.hdds.block import AllocatedBlock, ExcludeList
from pyozone.hdds.exceptions import ResultCode, SCMException
from pyozone.hdds.ids import RATIS_THREE, BlockID, ReplicationConfig
from pyozone.hdds.messages import Heartbeat
from pyozone.hdds.states import SCMCommandType
from pyozone.hdds.topology import NetworkTopology
from pyozone.protocol.scm_ratis import ScmEntryCodec
from pyozone.ratis.messages import ClientCall, LogEntry, Message, RaftPeerId, TermIndex
from pyozone.ratis.outputs import Apply, InstallSnapshot, Output, Persist, Send
from pyozone.ratis.roles import RaftPeerRole
from pyozone.ratis.server import PersistentState, RaftServer
from pyozone.ratis.settings import RaftSettings
from pyozone.scm.ha.context import ScmContext
from pyozone.scm.ha.driver import ScmRaftDriver
from pyozone.scm.ha.replication import ScmReplication
from pyozone.scm.scm import StorageContainerManager
from pyozone.scm.store import TABLE_NAMES, MemoryBackend, SCMMetadataStore
from pyozone.scm.store.metadata_store import REPLICATED_TABLES, TRANSACTION_INFO_KEY
from pyozone.sim.cluster import SimCluster
from pyozone.sim.datanode import SimDatanode

ELECTION_MS = 1000  # the simulator's ozone.scm.ha.ratis.leader.election.timeout
SCM_NAMES = ("scm1", "scm2", "scm3")
_RAFT = 2  # a Raft event in SimCluster's heap: its payload is in SimHaCluster._raft_events


def scm_raft_settings(election_ms: int = ELECTION_MS) -> RaftSettings:
    """The daemon's Raft settings at a short election timeout (Ozone's max = min + 200 ms, RatisUtil)."""
    return RaftSettings(
        rpc_timeout_min_ms=election_ms,
        rpc_timeout_max_ms=election_ms + 200,
        leader_step_down_wait_ms=election_ms,
        no_leader_timeout_ms=0,
        rpc_slowness_timeout_ms=0,
    )


@dataclass
class RaftDisk:
    """What an SCM's Raft storage holds durably: term, vote and the log after `base`."""

    term: int = 0
    voted_for: RaftPeerId | None = None
    base: int = 0
    entries: list[LogEntry] = field(default_factory=list)

    def write(self, persist: Persist) -> None:
        self.term, self.voted_for = persist.term, persist.voted_for
        if persist.snapshot is not None:
            self.base, self.entries = persist.snapshot.index, []
        written = [e for e in persist.entries if e.index > self.base]
        if not written:
            return
        if written[0].index > self.base + len(self.entries) + 1:
            self.base, self.entries = written[0].index - 1, []  # restarted from a snapshot past the log
        del self.entries[written[0].index - self.base - 1 :]
        self.entries.extend(written)

    def after(self, index: int) -> tuple[LogEntry, ...]:
        return tuple(self.entries[max(0, index - self.base) :])


class SimScm:
    """One SCM process: its scm.db and Raft disk survive a kill; everything else is rebuilt at start."""

    def __init__(self, name: str, cluster: SimHaCluster) -> None:
        self.name = name
        self.peer = RaftPeerId(name)
        self.cluster = cluster
        self.backend = MemoryBackend(TABLE_NAMES)
        self.disk = RaftDisk()
        self.alive = False
        self.incarnation = 0
        self.tick_token = 0
        self.tick_at: int | None = None
        self.core: StorageContainerManager
        self.server: RaftServer
        self.replication: ScmReplication
        self.driver: ScmRaftDriver
        self.start()

    def start(self) -> None:
        cluster = self.cluster
        self.incarnation += 1
        self.alive, self.tick_at = True, None
        store = SCMMetadataStore(self.backend)
        self.core = StorageContainerManager(
            cluster.settings,
            cluster.clock,
            store,
            topology=NetworkTopology(dict(cluster.racks)),
            rng=random.Random(f"{cluster.seed}-{self.name}-{self.incarnation}"),
            context=ScmContext.ha_follower(),
        )
        self.replication = ScmReplication(self.core)
        self.driver = ScmRaftDriver(self.replication, ScmEntryCodec(REPLICATED_TABLES))
        snapshot = self.applied_entry()
        self.core.context.applied(snapshot.index)
        self.server = RaftServer(
            self.peer,
            tuple(RaftPeerId(n) for n in SCM_NAMES),
            cluster.raft_settings,
            cluster.clock,
            random.Random(f"{cluster.seed}-{self.name}-raft-{self.incarnation}"),
            PersistentState(self.disk.term, self.disk.voted_for, self.disk.after(snapshot.index), snapshot),
        )
        cluster.observer.scm_started(cluster, self)

    def applied_entry(self) -> TermIndex:
        """The last entry this scm.db applied (Ozone's scmTransactionInfos), the state machine's snapshot."""
        raw = SCMMetadataStore(self.backend).transaction_infos.get(TRANSACTION_INFO_KEY)
        if raw is None:
            return TermIndex(0, 0)
        term, index = str(raw).split("#")
        return TermIndex(int(term), int(index))

    def leading_term(self) -> int | None:
        server = self.server
        return server.current_term if self.alive and server.role is RaftPeerRole.LEADER else None

    def ready_leader(self) -> bool:
        return self.alive and self.core.context.is_leader_ready()

    def digest(self) -> str:
        """The committed tables (scm.db, not the leader's overlay)."""
        h = hashlib.sha256()
        for cf in TABLE_NAMES:
            for key, value in self.backend.items(cf):
                h.update(cf.encode() + b"\0" + key + b"\0" + value + b"\1")
        return h.hexdigest()


@dataclass
class PendingAnswer:
    """A call's answer, held until its epoch applied on the SCM that answered it; never given once that
    SCM stepped down or restarted (its caller heard SCM_NOT_LEADER, or nothing)."""

    scm: SimScm
    incarnation: int
    term: int
    epoch: int
    deliver: Callable[[], None]


class ScmHaObserver:
    """What the simulator tells a checker; the default checks nothing."""

    def acknowledged(self, cluster: SimHaCluster, scm: SimScm, block: AllocatedBlock) -> None: ...
    def entry_applied(self, cluster: SimHaCluster, scm: SimScm, entry: LogEntry) -> None: ...
    def commands(self, cluster: SimHaCluster, scm: SimScm, node: SimDatanode, commands: list) -> None: ...
    def received(self, cluster: SimHaCluster, node: SimDatanode, stale: int, dropped: int) -> None: ...
    def after_event(self, cluster: SimHaCluster) -> None: ...
    def scm_started(self, cluster: SimHaCluster, scm: SimScm) -> None: ...
    def deletes_acknowledged(
        self, cluster: SimHaCluster, scm: SimScm, tx_ids: list[int], blocks: list[BlockID]
    ) -> None: ...


class SimHaCluster(SimCluster):
    """`SimCluster` with three SCMs of one service (`scm` is the ready leader's core, else scm1's)."""

    def __init__(
        self,
        datanodes: int = 3,
        conf: OzoneConfiguration | None = None,
        seed: int = 0,
        tick_ms: int = 1000,
        election_ms: int = ELECTION_MS,
        observer: ScmHaObserver | None = None,
        **kwargs: Any,
    ) -> None:
        self.seed = seed
        self.raft_settings = scm_raft_settings(election_ms)
        self.racks: dict[str, str] = {}
        self.observer = observer or ScmHaObserver()
        self.net_rng = random.Random(f"{seed}-net")
        self.scm_side: dict[str, int] = dict.fromkeys(SCM_NAMES, 0)
        self.loss = 0.0  # the share of Raft messages lost
        self.max_delay_ms = 20  # a Raft message takes 1 ms to this long
        self.acked: list[AllocatedBlock] = []
        self.pending: list[PendingAnswer] = []
        self.deleted_tx: list[int] = []  # delete transactions acknowledged (deleteScmKeyBlocks answered)
        self._raft_events: dict[int, tuple[Callable[..., None], tuple[Any, ...]]] = {}
        self._registered: set[tuple[str, str]] = set()  # (datanode, SCM) registrations
        self._needs_full: set[tuple[str, str]] = set()  # an SCM missed some of the datanode's reports
        self.scms: dict[str, SimScm] = {}
        super().__init__(datanodes=datanodes, conf=conf, seed=seed, tick_ms=tick_ms, **kwargs)
        for scm in self.scms.values():
            self._raft_step(scm, [])

    # ------------------------------------------------------------------ the SCMs
    def _new_scm(self) -> StorageContainerManager:
        if not self.scms:
            self.racks = self._racks
            self.scms = {name: SimScm(name, self) for name in SCM_NAMES}
        return self.scms[SCM_NAMES[0]].core

    def _add(self, node: SimDatanode, first_heartbeat_ms: int) -> None:
        super()._add(node, first_heartbeat_ms)
        for scm in self.scms.values():
            scm.core.nodes.topology.map_name(node.uuid, node.details.network_location)

    def leader(self) -> SimScm | None:
        """The ready leader of the highest term (a deposed one may not know it yet)."""
        ready = [s for s in self.scms.values() if s.ready_leader()]
        return max(ready, key=lambda s: s.core.context.known_term, default=None)

    def _refresh_scm(self) -> None:
        leader = self.leader()
        if leader is not None:
            self.scm = leader.core

    def kill_scm(self, name: str) -> None:
        """The SCM process dies: its scm.db and Raft disk stay; its callers hear nothing."""
        scm = self.scms[name]
        scm.alive = False
        self._registered = {r for r in self._registered if r[1] != name}

    def restart_scm_node(self, name: str) -> None:
        scm = self.scms[name]
        if scm.alive:
            return
        scm.start()
        for dn, rack in self.racks.items():
            scm.core.nodes.topology.map_name(dn, rack)
        self._raft_step(scm, [])

    def restart(self, dn: str) -> None:
        """A restarted datanode process registers with every SCM again (its SCM connections are new:
        `datanode/scm_connections.py`, Ozone's SCMConnectionManager), each registration a full report."""
        if not self.datanodes[dn].alive:
            self._registered = {r for r in self._registered if r[0] != dn}
        super().restart(dn)

    def registered(self, dn: str, scm: str) -> bool:
        """The datanode's process registered with the SCM since either last started."""
        return (dn, scm) in self._registered

    def owes_report(self, dn: str, scm: str, container_id: int) -> bool:
        """The SCM has not heard the datanode's copy of the container as it stands: an ICR not sent yet,
        or a full report owed to that SCM."""
        return container_id in self.datanodes[dn].pending_icr or (dn, scm) in self._needs_full

    def isolate_scm(self, name: str) -> None:
        """Cut from the other SCMs (not from the datanodes)."""
        self.scm_side = {n: (1 if n == name else 0) for n in SCM_NAMES}

    def partition_scms(self, sides: dict[str, int]) -> None:
        self.scm_side = dict(sides)

    def heal_scms(self) -> None:
        self.scm_side = dict.fromkeys(SCM_NAMES, 0)

    def _reachable(self, a: str, b: str) -> bool:
        return self.scms[a].alive and self.scms[b].alive and self.scm_side[a] == self.scm_side[b]

    # ------------------------------------------------------------------ the Raft shell
    def _raft_event(self, at: int, handler: Callable[..., None], *args: Any) -> None:
        seq = next(self._seq)
        self._raft_events[seq] = (handler, args)
        heapq.heappush(self._heap, (at, seq, _RAFT, ""))

    def _raft_step(self, scm: SimScm, outputs: list[Output]) -> None:
        """Carries out a Raft server's outputs, then the glue's decisions: step down when no longer
        leading, submit what the core sealed, and the server's next deadline."""
        work = list(outputs)
        while True:
            later: list[Output] = []
            for output in work:
                later += self._carry_out(scm, output)
            work = later
            server = scm.server
            scm.driver.observe(
                scm.leading_term(),
                server.current_term,
                server.leader_id and str(server.leader_id),
                server.leader_commit_index,
            )
            if scm.core.context.is_leader():
                for payload in scm.driver.pack_sealed():
                    work += server.submit(ClientCall("", 0, payload))
            if not work:
                break
        deadline = max(scm.server.deadline_ms() or 0, self.clock.now_ms())
        if scm.tick_at is None or deadline < scm.tick_at:
            scm.tick_token += 1
            scm.tick_at = deadline
            self._raft_event(deadline, self._on_raft_tick, scm, scm.incarnation, scm.tick_token)
        self._release_writes()

    def _carry_out(self, scm: SimScm, output: Output) -> list[Output]:
        """One output, in order; returns what the server answered to it (after the rest of the batch)."""
        if isinstance(output, Send):
            self._send(scm.name, output)
        elif isinstance(output, Persist):
            scm.disk.write(output)
            self._raft_event(self.clock.now_ms() + 1, self._on_persisted, scm, scm.incarnation, output.seq)
        elif isinstance(output, Apply):
            answered: list[Output] = []
            for entry in output.entries:
                scm.driver.apply(entry, scm.leading_term())
                self.observer.entry_applied(self, scm, entry)
                answered += scm.server.applied(entry.index, None)
            return answered
        elif isinstance(output, InstallSnapshot):
            self._raft_event(
                self.clock.now_ms() + 5, self._on_install, scm, scm.incarnation, str(output.leader_id)
            )
        return []

    def _send(self, sender: str, send: Send) -> None:
        to = str(send.to)
        if not self._reachable(sender, to) or self.net_rng.random() < self.loss:
            return
        delay = self.net_rng.randint(1, self.max_delay_ms)
        self._raft_event(self.clock.now_ms() + delay, self._on_deliver, to, sender, send.message)

    def _on_deliver(self, to: str, sender: str, message: Message) -> None:
        if self._reachable(sender, to):
            scm = self.scms[to]
            self._raft_step(scm, scm.server.receive(RaftPeerId(sender), message))

    def _on_persisted(self, scm: SimScm, incarnation: int, seq: int) -> None:
        if scm.alive and scm.incarnation == incarnation:
            self._raft_step(scm, scm.server.persisted(seq))

    def _on_raft_tick(self, scm: SimScm, incarnation: int, token: int) -> None:
        if scm.alive and scm.incarnation == incarnation and token == scm.tick_token:
            scm.tick_at = None
            self._raft_step(scm, scm.server.tick())

    def _on_install(self, scm: SimScm, incarnation: int, leader_name: str) -> None:
        """The follower fetches the leader's scm.db checkpoint (the daemon's `/dbCheckpoint`) and reloads its
        views."""
        if not scm.alive or scm.incarnation != incarnation:
            return
        if not self._reachable(scm.name, leader_name):
            self._raft_step(scm, scm.server.snapshot_installed(None))
            return
        source = self.scms[leader_name]
        snapshot = source.applied_entry()
        if snapshot.index > scm.server.applied_index:
            wipe = [(cf, key, None) for cf in TABLE_NAMES for key, _ in list(scm.backend.items(cf))]
            scm.backend.write(wipe)
            scm.backend.write([(cf, k, v) for cf in TABLE_NAMES for k, v in source.backend.items(cf)])
            scm.replication.reload_all()
            scm.core.context.applied(snapshot.index)
        self._raft_step(scm, scm.server.snapshot_installed(snapshot))

    # ------------------------------------------------------------------ time
    def advance(self, ms: int) -> None:
        end = self.clock.now_ms() + ms
        while self._heap and self._heap[0][0] <= end:
            due, seq, kind, dn = heapq.heappop(self._heap)
            self.clock.set(max(due, self.clock.now_ms()))
            if kind == _RAFT:
                handler, args = self._raft_events.pop(seq)
                handler(*args)
            elif kind == 1:  # the cores' periodic tick
                self._step_troubled_pipelines()
                for scm in self.scms.values():
                    if scm.alive:
                        scm.core.tick()
                        self._raft_step(scm, [])
                self._schedule(due + self.tick_ms, 1, "")
            else:
                self._heartbeat(dn)
            self._refresh_scm()
            self.observer.after_event(self)
        self.clock.set(end)

    # ------------------------------------------------------------------ datanodes
    def _heartbeat(self, dn: str) -> None:
        node = self.datanodes[dn]
        if not node.alive:
            return
        now = self.clock.now_ms()
        self._schedule(now + int(self.heartbeat_ms * node.slow_factor), 0, dn)
        if node.partitioned or node.paused:
            for name in SCM_NAMES:
                self._needs_full.add((dn, name))
            return
        self.heartbeats_delivered += 1
        node.run_replications(self.clock.wall_ms(), self.datanodes)
        due = self._reports[dn].take().periodic
        if Periodic.PIPELINES in due:
            node.pending_pipeline_report = True
        heartbeat = node.heartbeat(Periodic.CONTAINERS in due, Periodic.NODE in due)
        for scm in self.scms.values():
            if not scm.alive or not scm.core.context.state_machine_ready():
                # down, or catching up its log: its datanode service answers UNAVAILABLE
                # (StateMachineReadyRule), so no report is judged against a half-replayed container table
                self._needs_full.add((dn, scm.name))
                continue
            self._heartbeat_one(node, scm, heartbeat)

    def _heartbeat_one(self, node: SimDatanode, scm: SimScm, heartbeat: Heartbeat) -> None:
        key = (node.uuid, scm.name)
        if key not in self._registered:
            # then it heartbeats at once, as a datanode's endpoint goes from REGISTER to HEARTBEAT: a
            # re-registration is no heartbeat, and an SCM about to hold the node DEAD would drop the
            # replicas it has just been told of
            scm.core.register(node.details, node.report, node.container_report(), node.pipeline_reports())
            self._registered.add(key)
            self._needs_full.discard(key)
        elif key in self._needs_full:
            self._needs_full.discard(key)
            heartbeat = replace(
                heartbeat,
                node_report=node.report,
                container_report=node.container_report(),
                pipeline_reports=node.pipeline_reports(),
            )
        answer = scm.core.heartbeat(heartbeat)
        commands = [c for c in answer if c.type is not SCMCommandType.reregisterCommand]
        if len(commands) < len(answer):
            self._registered.discard(key)
        self.observer.commands(self, scm, node, commands)
        admission = node.admission
        seen = max(admission.max_term if admission is not None else 0, scm.core.context.known_term)
        seen = max([seen, *(c.term for c in commands)])
        stale = sum(1 for c in commands if c.term < seen)
        dropped = node.commands_dropped
        node.receive(commands, scm.core.context.known_term, self.clock.wall_ms())
        self._index_pipelines(node)
        self.observer.received(self, node, stale, node.commands_dropped - dropped)
        self._raft_step(scm, [])

    # ------------------------------------------------------------------ writes
    def write_block(
        self,
        size: int,
        replication: ReplicationConfig = RATIS_THREE,
        owner: str = "sim",
        excluded: ExcludeList | None = None,
    ) -> AllocatedBlock:
        """Allocates a block on the ready leader; it is written and acknowledged once its epoch applied
        there (`acked`). Raises SCMException when no SCM is the ready leader or the leader refuses."""
        leader = self.leader()
        if leader is None:
            raise SCMException("no SCM is the ready leader", ResultCode.SCM_NOT_LEADER)
        block = leader.core.blocks.allocate_block(size, replication, owner, excluded or ExcludeList())

        def deliver() -> None:
            self._land(block, size)
            self.acked.append(block)
            self.observer.acknowledged(self, leader, block)

        self._hold(leader, deliver)
        return block

    def delete_blocks(self, blocks: list[BlockID]) -> list[int]:
        """OM's deleteScmKeyBlocks on the ready leader: the blocks go to the deleted block log; the
        transaction ids are acknowledged once their epoch applied there (`deleted_tx`). Raises
        SCMException when no SCM is the ready leader or the leader refuses."""
        leader = self.leader()
        if leader is None:
            raise SCMException("no SCM is the ready leader", ResultCode.SCM_NOT_LEADER)
        tx_ids = leader.core.blocks.delete_blocks(blocks)

        def deliver() -> None:
            self.deleted_tx.extend(tx_ids)
            self.observer.deletes_acknowledged(self, leader, tx_ids, blocks)

        self._hold(leader, deliver)
        return tx_ids

    def _hold(self, leader: SimScm, deliver: Callable[[], None]) -> None:
        context = leader.core.context
        self.pending.append(
            PendingAnswer(leader, leader.incarnation, context.known_term, leader.replication.epoch, deliver)
        )
        self._raft_step(leader, [])

    def _release_writes(self) -> None:
        still: list[PendingAnswer] = []
        for answer in self.pending:
            scm = answer.scm
            context = scm.core.context
            if not (scm.alive and scm.incarnation == answer.incarnation and context.is_leader()):
                continue  # the caller hears SCM_NOT_LEADER (or nothing): never acknowledged
            if context.known_term != answer.term:
                continue
            if not scm.replication.released(answer.epoch):
                still.append(answer)
                continue
            answer.deliver()
        self.pending = still
