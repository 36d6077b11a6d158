"""SimCluster: thousands of virtual datanodes heartbeating the real SCM core on a virtual clock.

Deterministic for a seed: events run in (time, sequence) order from one heap. Tests kill, restart, pause,
slow or partition nodes and advance time; nothing sleeps. At every tick the pipelines of a node that is
down, paused or cut off are looked at (`step_pipeline`): their members ask SCM to close them as the daemon's
would, after the pipeline timeouts.
"""

from __future__ import annotations

import heapq
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from itertools import count

from pyozone.config import OzoneConfiguration
from pyozone.datanode.container_full import CLOSE_THRESHOLD_KEY, check_close_threshold, fills_up
from pyozone.datanode.reports import PendingReports, Periodic
from pyozone.datanode.settings import DatanodeSettings
from pyozone.hdds.block import AllocatedBlock, ExcludeList
from pyozone.hdds.clock import ManualClock
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.ids import RATIS_THREE, ReplicationConfig
from pyozone.hdds.messages import ContainerAction, ContainerActionReason, ContainerReplicaReport
from pyozone.hdds.states import ReplicaState
from pyozone.hdds.topology import NetworkTopology
from pyozone.scm.node.storage_report import TB, node_report
from pyozone.scm.scm import StorageContainerManager
from pyozone.scm.settings import ScmSettings
from pyozone.scm.store import SCMMetadataStore
from pyozone.sim.datanode import SimDatanode, step_pipeline

_HEARTBEAT, _TICK = 0, 1


class SimCluster:
    def __init__(
        self,
        datanodes: int = 3,
        racks: int = 1,
        data_disks: int = 1,
        metadata_disks: int = 1,
        conf: OzoneConfiguration | None = None,
        seed: int = 0,
        tick_ms: int = 1000,
        store: SCMMetadataStore | None = None,
        restored: Sequence[SimDatanode] = (),
        epoch_ms: int | None = None,
        disk_capacity: int = TB * 8,
    ) -> None:
        """`epoch_ms`: the wall time at virtual time 0 (default: a fixed instant, for reproducible runs);
        `disk_capacity`: the bytes of each data volume of the datanodes added."""
        self.conf = conf or OzoneConfiguration()
        self.settings = ScmSettings.from_conf(self.conf)
        self.clock = ManualClock() if epoch_ms is None else ManualClock(epoch_ms=epoch_ms)
        self.store = store or SCMMetadataStore.in_memory()
        self.rng = random.Random(seed)
        self.tick_ms = tick_ms
        self.disk_capacity = disk_capacity
        self.datanode_settings = DatanodeSettings.from_conf(self.conf)
        self.heartbeat_ms = self.datanode_settings.heartbeat.interval_ms
        self._racks: dict[str, str] = {}
        self.datanodes: dict[str, SimDatanode] = {}
        self._reports: dict[str, PendingReports] = {}  # each datanode process's report cadence
        self._heap: list[tuple[int, int, int, str]] = []
        self._seq = count()
        self.heartbeats_delivered = 0
        self.heartbeat_observer: Callable[[float], None] | None = None
        """Told the seconds SCM's core took over each heartbeat (the web UI's scm_heartbeat_seconds)."""
        self.scm = self._new_scm()
        self.container_size = self.settings.container.size_bytes
        self._close_threshold = check_close_threshold(self.conf.get(CLOSE_THRESHOLD_KEY))
        self._queue_limits = self.datanode_settings.admission
        self._pipeline_raft = self.datanode_settings.ratis.settings(suggested_leader=False)
        self._members: dict[str, tuple[str, ...]] = {}  # pipeline id -> members, as the datanodes hold it
        self._pipelines_of: dict[str, set[str]] = {}  # datanode -> pipelines naming it
        self._disturbed: set[str] = set()  # datanodes dead, paused or cut off: their pipelines are watched
        self._unsettled: set[str] = set()  # pipelines whose group is not whole again yet
        self._schedule(0, _TICK, "")
        total = max(datanodes, len(restored))
        for i, node in enumerate(restored):
            self._add(node, first_heartbeat_ms=i * self.heartbeat_ms // total)
        for i in range(len(restored), total):
            self.add_datanode(
                rack=f"/rack{i % racks + 1}",
                data_disks=data_disks,
                metadata_disks=metadata_disks,
                first_heartbeat_ms=i * self.heartbeat_ms // total,
            )

    def _new_scm(self) -> StorageContainerManager:
        return StorageContainerManager(
            self.settings, self.clock, self.store, topology=NetworkTopology(dict(self._racks)), rng=self.rng
        )

    # ------------------------------------------------------------------ membership and faults
    def add_datanode(
        self, rack: str = "/rack1", data_disks: int = 1, metadata_disks: int = 1, first_heartbeat_ms: int = 0
    ) -> str:
        n = len(self.datanodes)
        uuid = f"{int(self.rng.getrandbits(32)):08x}-0000-4000-8000-{n:012d}"
        details = DatanodeDetails(
            uuid, f"dn{n + 1}.sim", f"10.0.{n // 250}.{n % 250 + 1}", network_location=rack
        )
        report = node_report(uuid, data_disks, metadata_disks, disk_capacity=self.disk_capacity)
        self._add(SimDatanode(details, report), first_heartbeat_ms)
        return uuid

    def _add(self, node: SimDatanode, first_heartbeat_ms: int) -> None:
        rack = node.details.network_location
        self._racks[node.uuid] = rack
        self.scm.nodes.topology.map_name(node.uuid, rack)
        self.datanodes[node.uuid] = node
        self._index_pipelines(node)
        self._start_process(node)
        self._schedule(self.clock.now_ms() + first_heartbeat_ms, _HEARTBEAT, node.uuid)

    def saved_datanodes(self) -> list[dict]:
        """The simulated datanodes' disks, for the next run over the same SCM store."""
        return [node.to_dict() for node in self.datanodes.values()]

    def kill(self, dn: str) -> None:
        """The process dies: no heartbeats until restart; its disks (replicas) survive."""
        self._disturb(dn)
        self.datanodes[dn].alive = False

    def restart(self, dn: str) -> None:
        node = self.datanodes[dn]
        if node.alive:
            return
        node.alive, node.registered = True, False
        node.rejoin(self.clock.now_ms())
        self._start_process(node)  # commands and owed reports lived in the dead process's memory
        self._schedule(self.clock.now_ms(), _HEARTBEAT, dn)
        self._settle(dn)

    def pause(self, dn: str) -> None:
        """The process stops (SIGSTOP, a long GC pause): no heartbeats, no answers to its pipelines' peers;
        it resumes with its memory."""
        self._disturb(dn)
        self.datanodes[dn].paused = True

    def resume(self, dn: str) -> None:
        self.datanodes[dn].paused = False
        self._settle(dn)

    def fail_pipeline(self, pipeline_id: str, reporter: str, reason: str) -> None:
        """A pipeline's log fails (its leader lost a follower, a disk error): no member can commit a close
        entry any more, and `reporter` sends SCM a pipeline action."""
        for dn, node in self.datanodes.items():
            if pipeline_id in node.pipelines:
                node.fail_pipeline(pipeline_id, reason if dn == reporter else None)

    def partition(self, dn: str) -> None:
        """The node is cut off: its heartbeats and its pipelines' Raft messages are lost on the way; it keeps
        running."""
        self._disturb(dn)
        self.datanodes[dn].partitioned = True

    def heal(self, dn: str) -> None:
        self.datanodes[dn].partitioned = False
        self._settle(dn)

    def slow(self, dn: str, factor: float) -> None:
        """Heartbeats arrive `factor` times less often."""
        self.datanodes[dn].slow_factor = factor

    # ------------------------------------------------------------------ pipelines' Raft groups
    def _index_pipelines(self, node: SimDatanode) -> None:
        """Learns the pipelines a datanode holds (after each command batch), so a member's trouble finds
        every pipeline naming it, including one it never joined."""
        for pid, members in node.pipelines.items():
            if pid not in self._members:
                self._members[pid] = members
                for member in members:
                    self._pipelines_of.setdefault(member, set()).add(pid)

    def _disturb(self, dn: str) -> None:
        """Before a node goes down, pauses or is cut off: its pipelines' groups are looked at now (the last
        instant every member heard the others), then at every tick until they are whole again."""
        self._step_pipelines(self._pipelines_of.get(dn, set()))
        self._disturbed.add(dn)

    def _settle(self, dn: str) -> None:
        node = self.datanodes[dn]
        if node.running and not node.partitioned:
            self._disturbed.discard(dn)
            self._unsettled |= self._pipelines_of.get(dn, set())

    def _step_pipelines(self, pipelines: set[str]) -> None:
        now = self.clock.now_ms()
        for pid in sorted(pipelines):
            members = self._members[pid]
            if not any(pid in self.datanodes[m].pipelines for m in members if m in self.datanodes):
                self._forget_pipeline(pid)
            elif len(members) == 1 or step_pipeline(pid, members, self.datanodes, self._pipeline_raft, now):
                self._unsettled.discard(pid)
            else:
                self._unsettled.add(pid)

    def _forget_pipeline(self, pid: str) -> None:
        """No datanode holds it any more (closed everywhere)."""
        for member in self._members.pop(pid):
            self._pipelines_of.get(member, set()).discard(pid)
        self._unsettled.discard(pid)

    def _step_troubled_pipelines(self) -> None:
        """At each tick: the pipelines of every node down, paused or cut off, and those not whole again."""
        if not (self._disturbed or self._unsettled):
            return
        watched = set(self._unsettled)
        for dn in self._disturbed:
            watched |= self._pipelines_of.get(dn, set())
        self._step_pipelines(watched)

    def restart_scm(self) -> None:
        """A new SCM over the same store: state reloads, datanodes are told to register again."""
        self.scm = self._new_scm()

    # ------------------------------------------------------------------ time
    def advance(self, ms: int) -> None:
        end = self.clock.now_ms() + ms
        while self._heap and self._heap[0][0] <= end:
            due, _, kind, dn = heapq.heappop(self._heap)
            self.clock.set(max(due, self.clock.now_ms()))
            if kind == _TICK:
                self._step_troubled_pipelines()
                self.scm.tick()
                self._schedule(due + self.tick_ms, _TICK, "")
            else:
                self._heartbeat(dn)
        self.clock.set(end)

    def run_until(self, predicate: Callable[[], bool], timeout_ms: int, step_ms: int = 1000) -> bool:
        """Advances in steps until the predicate holds; False if it did not within the timeout."""
        waited = 0
        while not predicate():
            if waited >= timeout_ms:
                return False
            self.advance(step_ms)
            waited += step_ms
        return True

    def _schedule(self, due_ms: int, kind: int, dn: str) -> None:
        heapq.heappush(self._heap, (due_ms, next(self._seq), kind, dn))

    def _start_process(self, node: SimDatanode) -> None:
        """A datanode process starts: the daemon's command queue rules and report cadence, on virtual time."""
        node.start_process(self._queue_limits)
        self._reports[node.uuid] = PendingReports(
            self.datanode_settings.reports, clock=lambda: self.clock.now_ms() / 1000
        )

    def _heartbeat(self, dn: str) -> None:
        node = self.datanodes[dn]
        if not node.alive:
            return
        now = self.clock.now_ms()
        self._schedule(now + int(self.heartbeat_ms * node.slow_factor), _HEARTBEAT, dn)
        if node.partitioned or node.paused:
            return
        self.heartbeats_delivered += 1
        if not node.registered:
            self.scm.register(node.details, node.report, node.container_report(), node.pipeline_reports())
            node.registered = True
            self._reports[dn].mark_sent(frozenset(Periodic))
            node.pending_icr.clear()
            return
        node.run_replications(self.clock.wall_ms(), self.datanodes)
        due = self._reports[dn].take().periodic
        if Periodic.PIPELINES in due:
            node.pending_pipeline_report = True
        heartbeat = node.heartbeat(Periodic.CONTAINERS in due, Periodic.NODE in due)
        started = time.perf_counter()
        commands = self.scm.heartbeat(heartbeat)
        if self.heartbeat_observer is not None:
            self.heartbeat_observer(time.perf_counter() - started)
        node.receive(commands, self.scm.context.known_term, self.clock.wall_ms())
        self._index_pipelines(node)

    # ------------------------------------------------------------------ writes
    def write_block(
        self,
        size: int,
        replication: ReplicationConfig = RATIS_THREE,
        owner: str = "sim",
        excluded: ExcludeList | None = None,
    ) -> AllocatedBlock:
        """Allocates a block from SCM and lands it on every pipeline member, as a client write would."""
        block = self.scm.blocks.allocate_block(size, replication, owner, excluded or ExcludeList())
        self._land(block, size)
        return block

    def _land(self, block: AllocatedBlock, size: int) -> None:
        """The client writes the block's chunks to every member of its pipeline."""
        for dn in block.pipeline.nodes:
            node = self.datanodes[dn]
            old = node.replicas.get(block.block_id.container_id)
            if old is None:
                old = ContainerReplicaReport(
                    block.block_id.container_id, ReplicaState.OPEN, origin_node_id=dn
                )
            node.set_replica(
                replace(
                    old,
                    sequence_id=old.sequence_id + 1,
                    key_count=old.key_count + 1,
                    used_bytes=old.used_bytes + size,
                )
            )
            if fills_up(old.used_bytes, old.used_bytes + size, self.container_size, self._close_threshold):
                node.container_actions.append(
                    ContainerAction(block.block_id.container_id, ContainerActionReason.CONTAINER_FULL)
                )
