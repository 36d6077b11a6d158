"""SCM high availability on the Raft shell (issue 31; docs/architecture.md "Where each rule is defined").

With `ozone.scm.service.ids` each SCM is one member of its service's Raft group (the cluster id's UUID,
Ozone's SCMRatisServerImpl): `ScmRaft` is the member's state machine and the glue around the sans-IO
`ScmRaftDriver` (scm/ha/driver.py, shared with the simulator). The leader's core executes as a lone SCM's
does; its store stages each transaction and `flush` submits what the core sealed, in epoch order, as
ScmRatis.proto entries (protocol/scm_ratis.py). Every SCM applies the committed entries: the leader's own
records go from its overlay to scm.db, another leader's through the record listeners. The shell applies
its no-op and configuration entries itself, so the glue reads the member's status after each entry, each
submit and every `POLL_S`: a leader that applied its log up to its last entry has applied its term's
first one and steps up (Ozone's notifyLeaderReady); a leader whose member no longer leads its term steps
down, and the callers waiting for its uncommitted writes are refused. An entry that cannot be applied (a
failed scm.db write, a record listener's error, bytes that are not an entry) is never gone past: the
member fails for its group and the SCM stops serving and exits (Ozone's SCMStateMachine.applyTransaction
terminates), so its scm.db never lacks an entry it counted applied; a restart applies it again.

Snapshots (Ozone's SCMStateMachine.takeSnapshot): every `ozone.scm.ha.ratis.snapshot.threshold` applied
entries and at a clean stop scm.db is flushed and the member hears `snapshot_taken`, purging its log per
`ozone.scm.ha.ratis.log.purge.enabled` and `.gap`; a restart resumes after scm.db's #TRANSACTIONINFO
(`latest_snapshot`). A follower the leader purged past fetches the leader's `/dbCheckpoint`, swaps it in
as scm.db and reloads the core's views from it (`install_snapshot`).

The client-facing protocols (admin, block) are `leader_only`: a follower refuses every call but getScmInfo,
the snapshot stream and Ozone's per-SCM admin commands with Ozone's ServerNotLeaderException text
naming the leader at the port of the protocol called; the leader runs a call only after a ReadIndex round
begun after it arrived (Ratis's raft.server.read.option LINEARIZABLE, shared by concurrent calls, as OM's),
so a leader deposed by a partition, which still thinks it leads until it steps down, answers nothing from
its stale state (a container's state, an allocation in a container the new leader closed: issue 31's
Jepsen test), and it answers once what the call wrote has committed (`ozone.scm.ha.ratis.request.timeout`).
Datanodes heartbeat every SCM; the datanode protocol is `caught_up_only`: refused while the SCM knows no
leader or has not applied the leader's commit index.
`transfer_leadership` (`pyozone admin scm transfer`) checks the leader itself and answers once the
leadership moved; `report` is /api/v1/ratis and, through ratis_server/raft_gauges.py, SCM HA's /prom.
"""

from __future__ import annotations

import asyncio
import functools
import heapq
import inspect
import itertools
import logging
import random
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from pyozone import rpc
from pyozone.common.net import HostPort
from pyozone.common.scm_ha import ScmNodeDetails
from pyozone.common.tls import TlsStore
from pyozone.config import OzoneConfiguration
from pyozone.hdds.exceptions import ResultCode, SCMException
from pyozone.hdds.store.table import Op, StoreError
from pyozone.protocol.scm_ratis import ScmEntryCodec
from pyozone.ratis.messages import LogEntry, RaftPeerId, TermIndex
from pyozone.ratis.server import PersistentState
from pyozone.ratis.settings import RaftSettings
from pyozone.ratis_server.auto_snapshot import AutoSnapshot
from pyozone.ratis_server.db_checkpoint import CHECKPOINT_PATH, CheckpointError, fetch_and_install
from pyozone.ratis_server.member_api import (
    ApplyFailedError,
    InstalledSnapshot,
    NotLeaderError,
    TransferRefusedError,
)
from pyozone.ratis_server.read_rounds import ReadRounds
from pyozone.ratis_server.roles import member_roles
from pyozone.ratis_server.segmented_log import SegmentedRaftLog
from pyozone.ratis_server.server import RaftMember
from pyozone.scm.ha.driver import ScmRaftDriver
from pyozone.scm.ha.replication import ScmReplication
from pyozone.scm.scm import StorageContainerManager
from pyozone.scm.server.rpc import InvalidRequest
from pyozone.scm.store import scm_db
from pyozone.scm.store.layout import scm_metadata_dir
from pyozone.scm.store.metadata_store import REPLICATED_TABLES, TRANSACTION_INFO_KEY

log = logging.getLogger(__name__)

ELECTION_TIMEOUT_SPREAD_MS = 200
"""How far above `ozone.scm.ha.ratis.leader.election.timeout` an SCM's election timer may be drawn
(Ozone's RatisUtil sets raft.server.rpc.timeout.max to the minimum + 200 ms)."""
POLL_S = 0.02
"""How often the glue reads the member's role and submits what background work (ticks, heartbeats)
sealed."""
RATIS_DIR_NAME = "scm-ha"
"""`ozone.scm.ha.ratis.storage.dir`'s default, under SCM's metadata directory."""
BLOCK_ANY_SCM = frozenset({"getScmInfo"})
"""Block protocol calls any SCM of the service answers: the cluster's identity (`scm --bootstrap` asks it
before a leader exists)."""
ADMIN_ANY_SCM = BLOCK_ANY_SCM | {
    "streamSnapshot",
    "startReplicationManager",
    "stopReplicationManager",
    "forceExitSafeMode",
}
"""Admin calls any SCM answers: getScmInfo, the snapshot stream of its applied state, and Ozone's
ADMIN_COMMAND_TYPE (StorageContainerLocationProtocol: "admin command should take effect on all SCM
instance"), each SCM's own Replication Manager and safe mode."""
ADMIN_LEADER_CHECKED = frozenset({"transferLeadership"})
"""Admin calls that check the leader themselves (`ScmRaft.transfer_leadership`), not through the gate: a
transfer is answered once this SCM stepped down, when the gate's wait for its writes would refuse it as a
follower's and the client would send it again to the new leader."""


def scm_raft_settings(conf: OzoneConfiguration) -> RaftSettings:
    """SCM's Raft settings from Ozone's `ozone.scm.ha.ratis.*` keys (Ozone's RatisUtil.newRaftProperties)."""
    election_ms = int(conf.get("ozone.scm.ha.ratis.leader.election.timeout"))
    purge_gap = int(conf.get("ozone.scm.ha.ratis.log.purge.gap"))
    if purge_gap <= 0:
        raise ValueError(f"ozone.scm.ha.ratis.log.purge.gap must be positive, got {purge_gap}")
    if int(conf.get("ozone.scm.ha.ratis.snapshot.threshold")) <= 0:
        raise ValueError("ozone.scm.ha.ratis.snapshot.threshold must be positive")
    return RaftSettings(
        rpc_timeout_min_ms=election_ms,
        rpc_timeout_max_ms=election_ms + ELECTION_TIMEOUT_SPREAD_MS,
        pre_vote=bool(conf.get("ozone.scm.ha.ratis.server.leaderelection.pre-vote")),
        append_byte_limit=int(conf.get("ozone.scm.ha.ratis.log.appender.queue.byte-limit")),
        leader_step_down_wait_ms=election_ms,
        retry_cache_expiry_ms=int(conf.get("ozone.scm.ha.ratis.server.retry.cache.timeout")),
        # without ozone.scm.ha.ratis.log.purge.enabled a snapshot never purges the log
        purge_gap=purge_gap if conf.get("ozone.scm.ha.ratis.log.purge.enabled") else sys.maxsize,
        no_leader_timeout_ms=0,
        rpc_slowness_timeout_ms=0,
    )


def scm_ratis_dir(conf: OzoneConfiguration) -> Path:
    """`ozone.scm.ha.ratis.storage.dir`, else `scm-ha` beside scm.db (Ozone's default: the metadata dirs)."""
    named = conf.get("ozone.scm.ha.ratis.storage.dir")
    return Path(str(named)) if named else scm_metadata_dir(conf) / RATIS_DIR_NAME


class RaftLogMismatchError(Exception):
    """SCM's Raft log is not the one its scm.db was applied from (`ScmRaftLog.load`)."""


def log_mismatch(stored: PersistentState, db_applied: TermIndex) -> str | None:
    """How the loaded log `stored` fails to go with scm.db's last applied entry `db_applied` (its
    #TRANSACTIONINFO), or None when it goes with it: it holds that entry with its term (then, by the log
    matching property, the log's entries up to it are those scm.db applied, and skipping them by index is
    sound), or it ends before it with no entry of a later term (scm.db installed a leader's checkpoint
    and the SCM died before its log was reset, or the log lost unflushed entries scm.db applied: scm.db
    applies committed entries only, so the member restarts its log after scm.db's entry, dropping the
    shorter log's, as an installed snapshot does: RaftMember._resume_point). A log that knows no term at
    all is a lost or new directory, never taken for scm.db's (its votes are gone)."""
    if db_applied.index == 0:
        return None
    first = stored.snapshot.index
    if first > db_applied.index:
        return f"starts after index {first}"
    if first == db_applied.index:
        held = stored.snapshot.term
    elif db_applied.index - first <= len(stored.entries):
        held = stored.entries[db_applied.index - first - 1].term
    elif not (first or stored.entries or stored.current_term):
        return "is empty"
    else:
        later = next((e for e in stored.entries if e.term > db_applied.term), None)
        if later is None and stored.snapshot.term <= db_applied.term:
            return None
        at = later.index if later is not None else first
        term = later.term if later is not None else stored.snapshot.term
        return (
            f"ends at index {first + len(stored.entries)} with term {term} at index {at}, after scm.db's term"
        )
    return None if held == db_applied.term else f"holds term {held} at index {db_applied.index}"


class ScmRaftLog(SegmentedRaftLog):
    """SCM's Raft log, refused at load unless it holds scm.db's #TRANSACTIONINFO entry with its term
    (R19 D2): a log younger than scm.db (ozone.scm.ha.ratis.storage.dir moved without its contents, the
    directory lost) would have its first entries skipped as applied although scm.db never saw them. A log
    purged up to a snapshot passes: a snapshot is taken only of what scm.db holds durably, so the log's
    start is at or before scm.db's entry (Ozone starts Ratis from scm.db's TransactionInfo likewise)."""

    def __init__(self, group_dir: Path, segment_size_max: int, db_applied: TermIndex, db_dir: Path) -> None:
        super().__init__(group_dir, segment_size_max)
        self._db_applied = db_applied
        self._db_dir = db_dir

    def load(self) -> PersistentState:
        stored = super().load()
        problem = log_mismatch(stored, self._db_applied)
        if problem is None:
            return stored
        self.close()
        at = self._db_applied
        raise RaftLogMismatchError(
            f"scm.db ({self._db_dir}) holds the transactions up to log entry {at.term}#{at.index} (its "
            f"{TRANSACTION_INFO_KEY}), but SCM's Raft log in {self._group_dir} {problem}: it is not the "
            "log this scm.db was applied from, and its entries would be taken as applied by index. Restore "
            "the Raft log directory that belongs with this scm.db (ozone.scm.ha.ratis.storage.dir); if this "
            "SCM alone lost it, start it on an empty scm.db directory and run `scm --bootstrap`, so it "
            "catches up from the leader's log"
        )


class NotServing(Exception):
    """This SCM may not answer a leader-only call now: `text` is the refusal (UNAVAILABLE)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


class LeadershipNotMoved(Exception):
    """A leadership transfer the leader could not make: another one runs, or the target did not take over
    in time (FAILED_PRECONDITION: the caller may try again; not a failover)."""


class ScmRaft:
    """The Raft member's state machine and the leader's replicator, on the serving loop."""

    def __init__(
        self,
        core: StorageContainerManager,
        node: ScmNodeDetails,
        nodes: tuple[ScmNodeDetails, ...],
        request_timeout_ms: int,
        entry_byte_limit: int,
        on_failed: Callable[[str], None],
        snapshot_threshold: int = 1000,
        tls: TlsStore | None = None,
    ) -> None:
        """`snapshot_threshold`: ozone.scm.ha.ratis.snapshot.threshold, applied entries between two
        snapshots; `tls`: this SCM's TLS material, when a follower fetches the leader's checkpoint over
        https."""
        self.core = core
        self.node = node
        self.nodes = {n.node_id: n for n in nodes}
        self.context = core.context
        self.replication = ScmReplication(core)
        self.driver = ScmRaftDriver(self.replication, ScmEntryCodec(REPLICATED_TABLES), entry_byte_limit)
        self._request_timeout_s = request_timeout_ms / 1000
        self._loop = asyncio.get_running_loop()
        self._member: RaftMember | None = None
        self._waiting: list[tuple[int, int, asyncio.Future[None]]] = []
        self._order = itertools.count()
        self._generation = 0
        self._poller: asyncio.Task[None] | None = None
        self._entry_byte_limit = entry_byte_limit
        core.store.admit = self._admit
        self._on_failed = on_failed
        self.failed: str | None = None
        """Why the member failed for its group (an entry could not be applied): this SCM serves no more."""
        raw = core.store.transaction_infos.get(TRANSACTION_INFO_KEY)
        term, _, index = str(raw or "0#0").partition("#")
        self.db_applied = TermIndex(int(term), int(index))
        """The last entry scm.db held at start (or installed from the leader): the member resumes after
        it (`latest_snapshot`), so only the log's tail is applied again."""
        self.context.applied(self.db_applied.index)
        self._tls = tls
        self.snapshot_index = self.db_applied.index
        """The last snapshot told to the member (`take_snapshot`)."""
        self.auto_snapshot = AutoSnapshot(snapshot_threshold, self.take_snapshot, self._loop, "scm-snapshot")
        self._installing = False
        self._reads = ReadRounds(lambda: self.member.read_index(), self._read_refusal, f"SCM {node.node_id}")
        self.snapshots = 0
        self.installs = 0
        self.install_failures = 0

    def attach(self, member: RaftMember) -> None:
        self._member = member

    @property
    def member(self) -> RaftMember:
        if self._member is None:
            raise RuntimeError("SCM's Raft member is not attached")
        return self._member

    def start(self) -> None:
        self._poller = self._loop.create_task(self._poll_loop(), name="scm-raft-poll")

    async def stop(self) -> None:
        if self._poller is not None:
            self._poller.cancel()
            await asyncio.gather(self._poller, return_exceptions=True)
        self._fail_waiting("this SCM stopped")

    def report(self) -> dict[str, Any]:
        """What /api/v1/ratis shows (as OM's): role, readiness, term, leader, indexes, each follower's lag,
        each SCM of the group with the role this SCM knows it in (its client address as `rpcAddress`),
        step-ups and step-downs."""
        member = self._member
        if member is None or not member.running:
            return {"nodeId": self.node.node_id, "running": False, "failed": self.failed}
        status = member.status()
        return {
            "nodeId": self.node.node_id,
            "running": True,
            "groupId": status.group_id,
            "role": status.role.name,
            "ready": self.context.is_leader_ready(),
            "stateMachineReady": self.context.state_machine_ready(),
            "term": status.term,
            "leader": status.leader.id if status.leader is not None else None,
            "lastIndex": status.last_index,
            "commitIndex": status.commit_index,
            "appliedIndex": status.applied_index,
            "scmDbAppliedAtStart": self.db_applied.index,
            "snapshotIndex": self.snapshot_index,
            "snapshots": self.snapshots,
            "snapshotInstalls": self.installs,
            "snapshotInstallFailures": self.install_failures,
            "followers": [
                {"nodeId": f.peer.id, "matchIndex": f.match_index, "lag": f.lag} for f in status.followers
            ],
            "members": member_roles(
                status, member.group.peers, {n.node_id: str(n.client_address) for n in self.nodes.values()}
            ),
            "readIndexRounds": self.read_rounds,
            "stepUps": self.driver.step_ups,
            "stepDowns": self.driver.step_downs,
        }

    # ------------------------------------------------------------------ the state machine
    def apply(self, entry: LogEntry) -> None:
        """A committed STATE_MACHINE entry, in log order (every SCM): a leader whose member no longer leads
        steps down before it applies another's entry; one that applied its whole log steps up after. Any
        failure is an ApplyFailedError: the member fails rather than go past the entry."""
        try:
            self.observe(step_up=False)
            self.driver.apply(entry, self.member.leading_term())
        except Exception as error:
            raise ApplyFailedError(
                f"SCM {self.node.node_id} could not apply log entry {entry.term}#{entry.index} "
                f"({type(error).__name__}: {error}); it stops rather than go past it: a restart applies it "
                "again from the log"
            ) from error
        self._release()
        self.observe()
        self.auto_snapshot.applied(entry.index, self.snapshot_index)

    def notify_failed(self, reason: str) -> None:
        """The member failed for its group (an entry not applied, its log not written): this SCM refuses
        every call from now on and its daemon exits (Ozone: ExitUtils.terminate)."""
        if self.failed is not None:
            return
        self.failed = reason
        log.critical("SCM %s stops serving: its Raft member failed: %s", self.node.node_id, reason)
        self._fail_waiting(f"its Raft member failed: {reason}")
        self._on_failed(reason)

    # ------------------------------------------------------------------ snapshots
    def latest_snapshot(self) -> TermIndex | None:
        """What scm.db held at start (its #TRANSACTIONINFO): the member resumes after it (Ozone's
        SCMStateMachine starts from scm.db's TransactionInfo)."""
        return self.db_applied if self.db_applied.index else None

    async def take_snapshot(self) -> TermIndex | None:
        """SCMStateMachine.takeSnapshot: scm.db's #TRANSACTIONINFO read, then its memtables flushed to table
        files (so it holds that entry without the unsynced write-ahead log), then the member hears
        `snapshot_taken` and purges its log up to it past ozone.scm.ha.ratis.log.purge.gap (when
        ozone.scm.ha.ratis.log.purge.enabled). The point is read before the flush: what is applied
        meanwhile is past it. Returns the point (None: nothing new, the member stopped, an install runs)."""
        member = self._member
        if member is None or not member.running or self._installing:
            return None
        raw = self.core.store.transaction_infos.get(TRANSACTION_INFO_KEY)
        term, _, index = str(raw or "0#0").partition("#")
        point = TermIndex(int(term), int(index))
        if point.index <= self.snapshot_index:
            return None
        try:
            await asyncio.to_thread(scm_db.flush, self.core.store)
            if not member.running or self._installing:
                return None
            member.snapshot_taken(point)
        except (StoreError, ValueError) as error:
            log.warning("SCM %s: no snapshot taken: %s", self.node.node_id, error)
            return None
        self.snapshot_index = point.index
        self.snapshots += 1
        log.info("SCM %s: snapshot at %s (scm.db flushed)", self.node.node_id, point)
        return point

    async def install_snapshot(
        self, leader_id: RaftPeerId, leader_address: HostPort | None, first_available: TermIndex
    ) -> InstalledSnapshot | None:
        """SCMStateMachine.notifyInstallSnapshotFromLeader: the leader's log starts at `first_available`,
        past what this SCM holds. Downloads the leader's scm.db checkpoint from its web server
        (`/dbCheckpoint`), checks it (SHA-256, that it opens, a #TRANSACTIONINFO reaching the leader's log),
        swaps it in as scm.db (ratis_server/db_checkpoint.py) and reloads the core's views from it
        (`ScmReplication.reload_all`: every record through its listener, safe-mode rules re-read). A
        checkpoint refused is never installed: None, and the member asks again at the leader's next
        notification. The members in force are the group's first ones (no addScm yet)."""
        leader = self.nodes.get(leader_id.id)
        if leader is None:
            log.error("SCM %s: %s is no SCM of this service: no checkpoint", self.node.node_id, leader_id)
            return None
        where = leader.http_address
        url = f"{'https' if self._tls is not None else 'http'}://{where.host}:{where.port}{CHECKPOINT_PATH}"
        await self.auto_snapshot.ended()
        self._installing = True
        loop = self._loop

        def install(unpacked: Path, _: object) -> None:  # the swap on the loop: nothing reads scm.db then
            asyncio.run_coroutine_threadsafe(self._swap_in(unpacked), loop).result()

        try:
            context = self._tls.client_context() if self._tls is not None else None
            db_path = scm_db.db_path(self.core.store)
            installed = await asyncio.to_thread(
                fetch_and_install, scm_db.SCM_CHECKPOINT, url, context, db_path, install,
                first_available.index - 1,
            )  # fmt: skip
        except (CheckpointError, StoreError, OSError) as error:  # OSError: the staging directory
            self.install_failures += 1
            log.error(
                "SCM %s: the checkpoint of SCM %s was refused, nothing installed (retried at the leader's "
                "next notification): %s", self.node.node_id, leader_id, error,
            )  # fmt: skip
            return None
        finally:
            self._installing = False
        self.db_applied = installed
        self.snapshot_index = installed.index
        self.context.applied(installed.index)
        self.installs += 1
        log.info("SCM %s installed the checkpoint of SCM %s at %s", self.node.node_id, leader_id, installed)
        return installed, ()

    async def _swap_in(self, unpacked: Path) -> None:
        """The checked checkpoint becomes scm.db, and the core's views are rebuilt from it. A reload that
        fails leaves views that are not scm.db's: this SCM serves no more (`notify_failed`)."""
        scm_db.install(self.core.store, unpacked)
        try:
            self.replication.reload_all()
        except Exception as error:
            self.notify_failed(f"its views could not be reloaded from the installed scm.db: {error}")
            raise

    # ------------------------------------------------------------------ the glue
    def observe(self, step_up: bool = True) -> None:
        """The member's role into the context: step-down, a leader learned, and with `step_up` the step-up
        of a leader that applied its log (Ozone's notifyNotLeader, notifyLeaderReady)."""
        member = self._member
        if member is None or not member.running:
            return
        status = member.status()
        leading = member.leading_term()
        leader = status.leader.id if status.leader is not None else None
        # the catch-up target: the leader's commit index of its last append (a restarted follower's own
        # stops at the entries it holds), or this SCM's own where it knows more (it led)
        target = max(status.commit_index, status.leader_commit_index)
        if self.driver.observe(leading, status.term, leader, target):
            self._stepped_down(f"SCM {self.node.node_id} no longer leads")
        if step_up:
            self.driver.shell_applied(leading, status.applied_index, status.last_index)

    def flush(self) -> None:
        """Submits what the leader's core sealed, in epoch order (tasks start in the order made)."""
        if not self.context.is_leader() or self._member is None or not self._member.running:
            return
        for payload in self.driver.pack_sealed():
            task = self._loop.create_task(self.member.submit(payload, "", 0))
            task.add_done_callback(functools.partial(self._submit_done, self._generation))

    def _admit(self, ops: list[Op]) -> None:
        """Refuses a leader's transaction one log entry could not carry, before it is staged (R19 D4):
        submitted, the member would refuse its entry and the leader would undo every staged transaction
        and step down and up again, for a call the client retries for ever. The writer gets a
        non-retriable SCMException (Ozone: the Ratis request too big)."""
        codec = self.driver.codec
        size = codec.head_bytes + sum(codec.op_bytes(op) for op in ops)
        if size > self._entry_byte_limit:
            raise SCMException(
                f"a transaction of {len(ops)} records ({size} bytes) is above the "
                f"{self._entry_byte_limit} bytes one SCM Raft log entry may carry "
                "(ozone.scm.ha.ratis.log.appender.queue.byte-limit): refused, nothing of it written",
                ResultCode.INTERNAL_ERROR,
            )

    def _submit_done(self, generation: int, task: asyncio.Task[object]) -> None:
        error = asyncio.CancelledError() if task.cancelled() else task.exception()
        if error is None or generation != self._generation or not self.context.is_leader():
            return
        if not isinstance(error, (NotLeaderError, asyncio.CancelledError)):
            log.error("SCM %s: an entry was refused by the Raft member: %s", self.node.node_id, error)
        # what was staged after the entry may build on it: the whole uncommitted tail goes
        status = self.member.status() if self.member.running else None
        leader = status.leader.id if status is not None and status.leader is not None else None
        self.replication.step_down(
            status.term if status is not None else self.context.known_term,
            leader,
            status.commit_index if status is not None else None,
            why=f"an entry was not committed: {error}",
        )
        self.driver.step_downs += 1
        self._stepped_down(f"an entry was not committed: {error}")

    async def _poll_loop(self) -> None:
        while True:
            try:
                self.observe()
                self.flush()
            except Exception:
                log.exception("SCM %s: the Raft glue failed; continuing", self.node.node_id)
            await asyncio.sleep(POLL_S)

    # ------------------------------------------------------------------ leadership
    async def transfer_leadership(self, target: str | None) -> str:
        """Hands the service's leadership to `target` (an SCM's node id or Ratis address HOST:PORT; None:
        another SCM at random), as Ozone's `admin scm transfer` (SCMClientProtocolServer
        .transferLeadership, RatisUtil.transferRatisLeadership): returns the new leader's id once this SCM
        stepped down, or this SCM's own when it is the target (a retry after the answer was lost finds the
        target leading). NotServing (naming the leader at the admin port) unless this SCM is the ready
        leader; InvalidRequest for a target that is no SCM of the service, or with none to pick;
        LeadershipNotMoved when another transfer runs or the target did not take over in time."""
        self.check_leader(lambda n: n.client_address)
        me = self.node.node_id
        peers = self.member.group.peers
        if target is None:
            others = [p.id for p in peers if p.id.id != me]
            if not others:
                raise InvalidRequest(f"SCM {me} is the only SCM of its service: no other SCM to lead")
            chosen = random.choice(others)
        else:
            found = [p.id for p in peers if target in (p.id.id, str(p.address))]
            if not found:
                named = ", ".join(f"{p.id.id} ({p.address})" for p in peers)
                raise InvalidRequest(f"newLeaderId: {target!r} is no SCM of the service ({named})")
            chosen = found[0]
            if chosen.id == me:
                return me
        try:
            moved = await self.member.transfer_leadership(chosen)
        except TransferRefusedError as error:
            raise LeadershipNotMoved(f"SCM {me}: {error}") from None
        except NotLeaderError:
            self.check_leader(lambda n: n.client_address)  # refused naming the leader it knows now
            raise
        if not moved:
            raise LeadershipNotMoved(
                f"SCM {chosen.id} did not take over from SCM {me} in time (ozone.scm.ha.ratis.leader.election"
                ".timeout): is it running and caught up?"
            )
        self.observe()
        log.info("SCM %s handed the leadership of its service to SCM %s", me, chosen.id)
        return chosen.id

    # ------------------------------------------------------------------ serving
    def check_leader(self, port: Callable[[ScmNodeDetails], HostPort]) -> None:
        """Raises NotServing unless this SCM is the ready leader of the term its member leads."""
        self._refuse_if_failed()
        self.observe()
        member = self._member
        leading = member.leading_term() if member is not None else None
        if self.context.is_leader_ready() and leading == self.context.known_term:
            return
        me = self.node.node_id
        if leading is not None:
            raise NotServing(f"LeaderNotReadyException: Server:{me} is in LEADER state but not yet ready.")
        known = member.status().leader if member is not None and member.running else None
        leader = self.nodes.get(known.id) if known is not None else None
        if leader is None or leader.node_id == me:
            raise NotServing(
                f"ServerNotLeaderException: Server:{me} is not the leader. Could not determine the leader "
                "node."
            )
        where = port(leader)
        raise NotServing(
            f"ServerNotLeaderException: Server:{me} is not the leader. Suggested leader is "
            f"Server:{where.host}:{where.port}."
        )

    def check_caught_up(self) -> None:
        """Raises NotServing unless StateMachineReadyRule's condition holds: the ready leader,
        or a follower that applied its log up to the leader's commit index seen when it learned it."""
        self._refuse_if_failed()
        self.observe()
        if self.context.state_machine_ready():
            return
        member = self._member
        status = member.status() if member is not None and member.running else None
        if status is None or status.leader is None:
            raise NotServing(f"SCM {self.node.node_id} knows no leader of its service yet")
        raise NotServing(
            f"SCM {self.node.node_id} is catching up its Raft log: applied {status.applied_index} of "
            f"{max(status.commit_index, status.leader_commit_index)}"
        )

    def _refuse_if_failed(self) -> None:
        if self.failed is not None:
            me = self.node.node_id
            raise NotServing(f"SCM {me} stopped serving: its Raft member failed: {self.failed}")

    async def read_barrier(self) -> None:
        """Returns after a ReadIndex round begun after this call (ratis_server/read_rounds.py; concurrent
        calls share one): this SCM still led then and applied every entry committed before, so its state
        holds every write any leader acknowledged before the call arrived. NotServing when the round finds
        it no longer leads."""
        await self._reads.barrier()

    @property
    def read_rounds(self) -> int:
        return self._reads.rounds

    def _read_refusal(self, error: Exception) -> NotServing:
        return NotServing(
            f"ServerNotLeaderException: Server:{self.node.node_id} is not the leader (a ReadIndex round "
            f"failed: {error})."
        )

    async def committed(self) -> None:
        """Returns once every write the core made so far has committed (a call's answer leaves then);
        NotServing when this SCM stepped down before, or past the request timeout."""
        epoch = self.replication.epoch
        self.flush()
        if self.replication.released(epoch):
            return
        future: asyncio.Future[None] = self._loop.create_future()
        heapq.heappush(self._waiting, (epoch, next(self._order), future))
        try:
            await asyncio.wait_for(asyncio.shield(future), self._request_timeout_s)
        except TimeoutError:
            raise NotServing(
                f"SCM {self.node.node_id}: the call's writes did not commit within "
                f"{self._request_timeout_s:g} s (ozone.scm.ha.ratis.request.timeout)"
            ) from None

    def _release(self) -> None:
        waiting = self._waiting
        while waiting and self.replication.released(waiting[0][0]):
            future = heapq.heappop(waiting)[2]
            if not future.done():
                future.set_result(None)

    def _stepped_down(self, why: str) -> None:
        self._generation += 1
        self._fail_waiting(why)

    def _fail_waiting(self, why: str) -> None:
        waiting, self._waiting = self._waiting, []
        leader = self.context.leader_id
        suggested = f" Suggested leader is Server:{leader}." if leader and leader != self.node.node_id else ""
        for _, _, future in waiting:
            if not future.done():
                future.set_exception(
                    NotServing(
                        f"ServerNotLeaderException: Server:{self.node.node_id} is not the leader ({why})."
                        f"{suggested}"
                    )
                )


class Gated:
    """A servicer whose every call (but `exempt` ones) first passes `check` (NotServing: refused
    UNAVAILABLE with its text) and, with `barrier`, waits for `barrier()` before it runs, and with
    `settle`, is answered only once `settle()` returns."""

    def __init__(
        self,
        servicer: object,
        check: Callable[[], None],
        settle: Callable[[], Awaitable[None]] | None = None,
        exempt: frozenset[str] = frozenset(),
        barrier: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self._servicer = servicer
        self._check = check
        self._settle = settle
        self._exempt = exempt
        self._barrier = barrier
        self._wrapped: dict[str, Any] = {}

    def __getattr__(self, name: str) -> Any:
        handler = getattr(self._servicer, name)
        if name in self._exempt or not callable(handler):
            return handler
        wrapped = self._wrapped.get(name)
        if wrapped is None:
            wrapped = self._wrapped[name] = self._wrap(handler)
        return wrapped

    def _wrap(self, handler: Any) -> Any:
        check, settle, barrier = self._check, self._settle, self._barrier

        async def refuse(context: rpc.CallContext, error: NotServing) -> None:
            await context.abort(rpc.StatusCode.UNAVAILABLE, error.text)

        if inspect.isasyncgenfunction(handler):

            async def stream(request: Any, context: rpc.CallContext) -> AsyncIterator[Any]:
                try:
                    check()
                except NotServing as error:
                    await refuse(context, error)
                async for message in handler(request, context):
                    yield message

            return stream

        async def call(request: Any, context: rpc.CallContext) -> Any:
            try:
                check()
                if barrier is not None:
                    try:
                        await barrier()
                    except NotServing:
                        check()  # a step-down: refused as a call arriving now is (naming the leader)
                        raise
                answer = await handler(request, context)
                if settle is not None:
                    try:
                        await settle()
                    except NotServing:
                        check()  # a step-down: refused as a call arriving now is (naming the leader)
                        raise
            except NotServing as error:
                await refuse(context, error)
            return answer

        return call


def leader_only(
    servicer: object, raft: ScmRaft, port: Callable[[ScmNodeDetails], HostPort], any_scm: frozenset[str]
) -> Gated:
    """A client-facing servicer of an HA SCM (Ozone's SCM protocol translators check the leader first): a
    call (but those of `any_scm`) is refused unless this SCM is the ready leader, runs after a ReadIndex
    round (`read_barrier`) and is answered only once its writes committed. `port` picks the called
    protocol's address of a node, named in the refusal."""
    return Gated(
        servicer, functools.partial(raft.check_leader, port), raft.committed, any_scm, raft.read_barrier
    )


def caught_up_only(servicer: object, raft: ScmRaft) -> Gated:
    """The datanode protocol of an HA SCM: refused while this SCM catches up its log (Ozone's
    deferred DatanodeProtocolServer start), so no report is judged against a half-replayed table."""
    return Gated(servicer, raft.check_caught_up)
