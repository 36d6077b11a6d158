"""One member of a Raft group on the event loop (the role of Ratis's RaftServerImpl around its state
machine): it runs one sans-IO `pyozone.ratis.RaftServer` and carries out the core's outputs, in order.

- `Persist` and `PurgeLog`: to its `LogWriter` (log_writer.py): each entry's state machine data, then the
  record, group-committed on a worker thread; the core hears `persisted` once a flush returns. A failed
  write or flush, an exception from the core (a bug), or a state machine's `ApplyFailedError`, stops the
  member at once (`_fail`).
- `Appended`: the leader files the data `submit` was given under the entry's index, for its `Persist`
  (which builds the entry's wire bytes once into the `DataCache` its followers' appends share).
- `Send`: to the peer's `PeerSender` (one-way messages, a bounded queue per peer: transport.py); the
  senders and `group` follow the configuration in force.
- `Apply` and `InstallSnapshot`: to its `Applier` (applier.py): each committed entry to the state machine in
  log order, its result back to the core; a leader's checkpoint loaded, Applies meanwhile held.
- `Reply`, `NotLeader`, `ReadReady`, `TransferDone`, `TransferRefused`, `ConfigurationDone`,
  `ConfigurationRefused`, `WatchDone`, `WatchFailed`: the futures of the callers of `submit`, `read_index`,
  `transfer_leadership`, `set_configuration` and `watch`.
- `NoLeader`, `FollowerSlow`, a leader newly known, a failure of the member: the state machine's optional
  hooks (`StateMachineEvents`).
- Ticks: one loop timer at the core's `deadline_ms()`, moved after every input.

A peer's messages reach the core only past `InboundChecks` (inbound.py: which messages a member takes).

What the daemon embedding it (OM; a datanode's pipelines) uses: `start`, `submit`, `watch`,
`commit_infos`, `read_index`, `transfer_leadership`, `set_configuration`, `snapshot_taken`, `status`,
`stop`. Its messages come through a `RaftDivisions` port (transport.py): its own, or one it shares with
members of other groups. A member restarts from its storage, after the
later of the log's snapshot and its state machine's (`latest_snapshot`); its state machine applies the log
after that point again. A state machine behind the log's start is refused (StateMachineBehindLogError): the
entries between are gone, and applying the log after them would skip them.
"""

from __future__ import annotations

import asyncio
import enum
import itertools
import logging
import random
from collections import deque
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from pyozone import rpc
from pyozone.common.net import HostPort
from pyozone.common.tls import TlsStore
from pyozone.hdds.clock import SystemClock
from pyozone.hdds.security.x509 import CertRole
from pyozone.protocol.raft import RaftEnvelope, entry_wire_bytes
from pyozone.ratis.messages import (
    AppendEntriesReply,
    AppendEntriesRequest,
    AppendResult,
    ClientCall,
    CommitInfos,
    EntryKind,
    RaftPeerId,
    TermIndex,
    WatchLevel,
)
from pyozone.ratis.outputs import (
    Appended,
    Apply,
    ConfigurationDone,
    ConfigurationRefused,
    FollowerSlow,
    InstallSnapshot,
    NoLeader,
    NotLeader,
    Output,
    Persist,
    PurgeLog,
    ReadReady,
    Reply,
    Send,
    TransferDone,
    TransferRefused,
    WatchDone,
    WatchFailed,
)
from pyozone.ratis.roles import RaftPeerRole
from pyozone.ratis.server import PersistentState, RaftServer
from pyozone.ratis.settings import RaftSettings
from pyozone.ratis_server.applier import Applier
from pyozone.ratis_server.inbound import InboundChecks
from pyozone.ratis_server.log_writer import LogWriter
from pyozone.ratis_server.member_api import (
    ApplyFailedError,
    DataStateMachine,
    EntryTooLargeError,
    FollowerStatus,
    NotLeaderError,
    NotReplicatedError,
    RaftStatus,
    ReconfigurationError,
    StateMachine,
    StateMachineBehindLogError,
    TransferRefusedError,
)
from pyozone.ratis_server.state_machine_data import LEADER_PENDING_BYTES, StateMachineData
from pyozone.ratis_server.storage import RaftStorage
from pyozone.ratis_server.transport import (
    PeerSender,
    RaftDivisions,
    RaftGroup,
    RaftPeer,
)

log = logging.getLogger(__name__)


class _Waiting(enum.Enum):
    WRITE = "write"
    READ = "read"
    TRANSFER = "transfer"
    CONFIGURATION = "configuration"
    WATCH = "watch"


class RaftMember:
    """One member of `group`, `me`, serving the members' service on its own address in the group (or on
    a port it shares with other groups' members). What it takes from its peers, and what that proves over
    mutual TLS or plaintext: inbound.py."""

    def __init__(
        self,
        me: RaftPeerId,
        group: RaftGroup,
        storage: RaftStorage,
        state_machine: StateMachine,
        settings: RaftSettings | None = None,
        tls: TlsStore | None = None,
        role: CertRole = CertRole.OM,
        rng: random.Random | None = None,
        bind_host: str | None = None,
        known_peers: tuple[RaftPeer, ...] = (),
        server: RaftDivisions | None = None,
        leader_pending_bytes: int = LEADER_PENDING_BYTES,
        priorities: Mapping[RaftPeerId, int] | None = None,
        on_sent: Callable[[RaftPeerId, int], None] | None = None,
    ) -> None:
        """`group`: the group's first members (the configuration before any change in the log) and their
        addresses; `known_peers`: other servers' addresses, members later or not (OM: every OM its
        configuration names), so a member added by a change another member led is reachable here.
        `server`: the port this member's group shares with others (a datanode's pipelines); without it the
        member serves its own port. A `DataStateMachine` makes the group carry state machine data:
        `submit(..., data=)`, each entry's data written at append on every member and acknowledged only
        once written, the leader caching what it sends up to `leader_pending_bytes`
        (`dfs.container.ratis.leader.pending.bytes.limit`), entries applied with `apply_async`.
        `priorities`: the members' priorities (Ratis's RaftPeer.priority, unnamed: 0), for the core's vote
        rule and hand-over to a caught-up follower of higher priority; with `settings`'
        `first_election_timeout_*` short for the top one, a fresh group's first leader is that member at
        once (Ozone's datanode: SCM's suggested leader of the pipeline). `on_sent(peer, nbytes)`: the bytes of
        each call delivered to a peer (the datanode's traffic counts)."""
        address = group.address(me)
        if address is None:
            raise ValueError(f"{me} is not a member of group {group.group_id}")
        self.me = me
        self.group = group
        """The members in force (the last configuration the core appended) and their addresses."""
        self.address = address
        self._addresses: dict[RaftPeerId, RaftPeer] = {p.id: p for p in (*known_peers, *group.peers)}
        """Every member's address this member knows: the group's at start and those of the configuration
        changes in force or under way (a refused change's are forgotten). Messages are taken only from
        these; the core decides who is a member."""
        self._bind_host = bind_host or address.host
        self._storage = storage
        self._state_machine = state_machine
        self._data_machine: DataStateMachine | None = (
            state_machine if hasattr(state_machine, "write_data") else None  # type: ignore[assignment]
        )
        self._data = (
            StateMachineData(self._data_machine, leader_pending_bytes, self._data_unreadable)
            if self._data_machine
            else None
        )
        """The state machine data of its entries (with a `DataStateMachine`)."""
        self._settings = settings or RaftSettings()
        self._tls = tls
        self._role = role
        self._rng = rng or random.Random()
        self._clock = SystemClock()
        self._core: RaftServer | None = None
        self._server = server
        self._divisions: RaftDivisions | None = None
        """The port this member serves: `server`, or its own."""
        self._senders: dict[RaftPeerId, PeerSender] = {}
        self._outputs: deque[Output] = deque()
        self._carrying_out = False
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at: int | None = None
        self._waiting: dict[tuple[_Waiting, ClientCall], list[asyncio.Future[Any]]] = {}
        self._own_calls = itertools.count(1)
        self._match: dict[RaftPeerId, int] = {}
        self._match_term = 0
        self.running = False
        self._stopping: asyncio.Task[None] | None = None
        """The stop under way (the daemon's, or the one a failure started): a second `stop` waits for it."""
        self._members: tuple[RaftPeerId, ...] = ()
        """The configuration `group` and the senders follow."""
        self._closing: set[asyncio.Task[None]] = set()
        """Senders of removed members, closing."""
        self._proposed: dict[ClientCall, tuple[RaftPeerId, ...]] = {}
        """The members each configuration change under way added to `_addresses`."""
        self._inbound = InboundChecks(me, tls, role, self._address_of)
        """Which peer messages this member takes (inbound.py)."""
        self._log_writer = LogWriter(
            storage, self._data_machine, self._data, self._is_running, self._persisted, self._fail
        )
        """Its Persists and purges, data before record, group-committed (log_writer.py)."""
        self._applier = Applier(
            me,
            state_machine,
            self._data_machine,
            self._data,
            self._running_core,
            self._step,
            self._input,
            self._is_running,
            self._address_of,
        )
        """Its committed entries to the state machine, and snapshot installs (applier.py)."""
        self._priorities = dict(priorities or {})
        self._on_sent = on_sent
        self._answered_ms: dict[RaftPeerId, int] = {}
        """When each follower last answered this member in its leading term `_match_term`."""
        self._leading_since_ms = 0
        self._notified_leader: tuple[RaftPeerId, int] | None = None
        """The leader `notify_leader_changed` last named and its term; None once this member knows no leader,
        so the same leader heard again after a gap (or in a new term) is a change to notify."""

    # ---- life cycle

    async def start(self) -> None:
        """Loads the storage, starts the core and listens on the member's address (or joins `server`)."""
        shared = self._server
        if shared is not None and (shared.role is not self._role or shared.address.port != self.address.port):
            raise ValueError(
                f"{self.me} of group {self.group.group_id} ({self._role.name} at {self.address}) cannot "
                f"share the Raft port of {shared.role.name} at {shared.address}"
            )
        if shared is not None and self.group.group_id in shared.groups:
            raise ValueError(f"group {self.group.group_id} already has a member on {shared.address}")
        state = self._resume_point(self._storage.load())
        self._core = RaftServer(
            self.me,
            self.group.ids,
            self._settings,
            self._clock,
            self._rng,
            state,
            entry_wire_bytes,
            self._priorities,
        )
        self._applier.applied_index = state.snapshot.index
        self._log_writer.open(str(self.me))
        divisions = self._server
        if divisions is None:
            address = HostPort(self._bind_host, self.address.port)
            divisions = RaftDivisions(address, self._tls, self._role, self._settings.append_byte_limit)
        divisions.register(self)
        self._divisions = divisions
        self.running = True
        self._follow_configuration()
        try:
            if self._server is None:
                await divisions.start()
        except BaseException:
            await self.stop()
            raise
        self._schedule_tick()

    async def stop(self) -> None:
        """Stops taking messages and calls, answers every waiting caller (NotLeaderError: try another
        member), lets a flush under way finish, and leaves no task behind. A second stop (or one after a
        failure stopped the member) returns once the first has finished."""
        if self._core is None:
            return
        if self._stopping is None:
            self.running = False
            self._stopping = asyncio.get_running_loop().create_task(self._stop())
        await asyncio.shield(self._stopping)

    def _fail(self, what: str) -> None:
        """A storage error or a bug in the core (called from an except block): the member stops at once, as
        Ratis's RaftServerImpl terminates on a log I/O error. Nothing after the failure is carried out: no
        write after a failed one is reported persisted, and no reply or apply it held back is released."""
        log.exception("Raft member %s: %s; it stops", self.me, what)
        self.running = False
        self._notify("notify_failed", what)  # Ozone: the state machine unhealthy, the pipeline closes
        self._outputs.clear()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._stopping is None:
            self._stopping = asyncio.get_running_loop().create_task(self._stop())

    async def _stop(self) -> None:
        self.running = False
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._divisions is not None:
            self._divisions.unregister(self)
            if self._server is None:
                await self._divisions.stop()
            self._divisions = None
        await self._log_writer.abandon_writes()
        await self._applier.stop()
        if self._data is not None:
            self._data.not_leading()
        for sender in self._senders.values():
            await sender.close()
        self._senders = {}
        for closing in list(self._closing):
            await closing
        await self._log_writer.close()
        waiting, self._waiting = self._waiting, {}
        stopped = NotLeaderError(self.me, None, None)
        for futures in waiting.values():
            for future in futures:
                if not future.done():
                    future.set_exception(stopped)
        self._storage.close()

    def _resume_point(self, stored: PersistentState) -> PersistentState:
        """Where the core starts: after the later of the log's snapshot and the state machine's durable
        applied point (`latest_snapshot`). When the state machine is ahead of the log's end (it loaded a
        leader's checkpoint and the member died before the log was reset; or the log lost unflushed
        entries the state machine applied), the log is reset to start after it, durably, as an installed
        snapshot resets it (`Persist.snapshot`), so the core's next entries follow on from the stored log.
        A state machine with snapshots behind the log's start (it lost what a snapshot claimed, or is an
        older copy) is refused: StateMachineBehindLogError, the storage closed."""
        latest = getattr(self._state_machine, "latest_snapshot", None)
        if latest is None:
            return stored  # a state machine without snapshots replays the log it has
        ahead = latest()
        if (ahead.index if ahead is not None else 0) < stored.snapshot.index:
            self._storage.close()
            raise StateMachineBehindLogError(self.me, ahead, stored.snapshot)
        if ahead is None or ahead.index == stored.snapshot.index:
            return stored
        held = next((e for e in stored.entries if e.index == ahead.index), None)
        # The members in force at the state machine's snapshot: the last configuration entry before it.
        configuration = next(
            (
                e.peers
                for e in reversed(stored.entries)
                if e.index <= ahead.index and e.kind is EntryKind.CONFIGURATION
            ),
            stored.configuration,
        )
        if held is not None and held.term == ahead.term:
            after = tuple(e for e in stored.entries if e.index > ahead.index)
            return PersistentState(stored.current_term, stored.voted_for, after, ahead, configuration)
        log.info(
            "Raft member %s: its state machine is at %s, past its log: the log restarts there", self.me, ahead
        )
        self._storage.write(Persist(0, stored.current_term, stored.voted_for, (), ahead, configuration))
        self._storage.flush()
        return PersistentState(stored.current_term, stored.voted_for, (), ahead, configuration)

    def _follow_configuration(self) -> None:
        """The group's table and the senders follow the configuration the core has in force: a sender for
        each other member whose address is known, closed once it is no longer a member (a learner being
        added gets its sender when the core first sends to it)."""
        members = self._running_core().configuration
        if members == self._members:
            return
        removed = set(self._members) - set(members)
        self._members = members
        self.group = RaftGroup(
            self.group.group_id, tuple(self._addresses[p] for p in members if p in self._addresses)
        )
        unknown = [str(p) for p in members if p not in self._addresses]
        if unknown:
            log.warning("Raft member %s: no address for members %s", self.me, unknown)
        for peer in removed & self._senders.keys():
            closing = asyncio.get_running_loop().create_task(self._senders.pop(peer).close())
            self._closing.add(closing)
            closing.add_done_callback(self._closing.discard)
        for peer in members:
            self._sender(peer)

    def _sender(self, peer: RaftPeerId) -> PeerSender | None:
        sender = self._senders.get(peer)
        if sender is None and peer != self.me and peer in self._addresses and self.running:
            sender = PeerSender(
                self.group.group_id,
                self._addresses[peer],
                self._tls,
                self._role,
                self._settings.append_byte_limit,
                entry_wire=self._data.entry_wire if self._data is not None else None,
                on_sent=self._on_sent,
            )
            self._senders[peer] = sender
        return sender

    def _address_of(self, peer: RaftPeerId | None) -> HostPort | None:
        known = self._addresses.get(peer) if peer is not None else None
        return known.address if known is not None else None

    # ---- the daemon's API

    async def submit(
        self, payload: bytes, client_id: str, call_id: int, data: bytes | memoryview | None = None
    ) -> object:
        """Replicates `payload` and returns the state machine's result for it, once applied on this leader;
        NotLeaderError naming the leader when this member does not lead.

        `client_id` and `call_id` name the write (Ratis's ClientId and callId): each distinct write needs its
        own pair, and a retry of the same write (after a timeout or a NotLeaderError, to this member or
        another) must keep it. The retry cache (raft.server.retrycache.expirytime) then answers a retry of a
        write already applied with its first result, and one still in the log waits for that entry: a write
        is applied once, however often it is retried.

        `data`: state machine data that travels with the entry but stays out of the log (a `DataStateMachine`
        only; Ratis's stateMachineData): every member writes it (`write_data`) before it acknowledges the
        entry. `client_id` "" asks for no retry cache (each submission is appended: its operation must be
        idempotent, as a datanode's container operations are)."""
        size = len(payload) + len(client_id.encode()) + (len(data) if data is not None else 0)
        if size > self._settings.append_byte_limit:
            raise EntryTooLargeError(
                f"a request of {size} bytes (its payload, data and client id) is above "
                f"raft.server.log.appender.buffer.byte-limit ({self._settings.append_byte_limit} bytes)"
            )
        if data is not None and self._data is None:
            raise ValueError(f"Raft member {self.me}: its state machine takes no state machine data")
        view = memoryview(data) if data is not None else None
        call = ClientCall(client_id, call_id, payload, len(view) if view is not None else 0)
        future = self._wait(_Waiting.WRITE, call)
        if self._data is None or view is None or not len(view):
            self._ask(partial(self._running_core().submit, call))
            return await future
        self._data.submitting(call, view)
        try:
            self._ask(partial(self._running_core().submit, call))
        finally:
            self._data.submitting(call, None)
        return await future

    async def watch(self, index: int, level: WatchLevel, timeout_s: float) -> CommitInfos:
        """Returns once entry `index` is committed on a majority of the members or on every one (`level`,
        Ratis's MAJORITY_COMMITTED / ALL_COMMITTED watch): each member's commit index then, as this leader
        knows it. NotReplicatedError with those indexes when not within `timeout_s` (or too many watches
        wait); NotLeaderError when this member does not lead or steps down."""
        call = ClientCall(f"watch@{self.me}", next(self._own_calls), b"")
        future = self._wait(_Waiting.WATCH, call)
        timeout_ms = max(1, round(timeout_s * 1000))
        try:
            self._ask(partial(self._running_core().watch, call, index, level, timeout_ms))
        except ValueError:
            self._waiting.pop((_Waiting.WATCH, call), None)
            raise
        return await future

    @property
    def data_reads(self) -> int:
        """Entries whose data this member, leading, read back from its state machine for a follower
        (evicted from its cache, or from before it led)."""
        return self._data.reads if self._data is not None else 0

    def commit_infos(self) -> CommitInfos:
        """Each member's commit index as this member knows it (Ratis's commitInfos; a follower knows only
        its own)."""
        return self._running_core().commit_infos()

    async def read_index(self) -> int:
        """A linearizable read barrier (ReadIndex): returns once this member, confirmed as the leader after
        the call, has applied every entry committed before it; a read of the state machine then sees every
        write acknowledged before `read_index` was called."""
        call = ClientCall(f"read@{self.me}", next(self._own_calls), b"")
        future = self._wait(_Waiting.READ, call)
        self._ask(partial(self._running_core().read, call))
        return await future

    async def transfer_leadership(self, target: RaftPeerId) -> bool:
        """Hands leadership to `target` (Ratis's TransferLeadership); True once this member stepped down,
        False when `target` did not take over in time (raft.server.rpc.timeout.max). ValueError when
        `target` is not another member."""
        call = ClientCall(f"transfer@{self.me}", next(self._own_calls), target.id.encode())
        future = self._wait(_Waiting.TRANSFER, call)
        try:
            self._ask(partial(self._running_core().transfer_leadership, call, target))
        except ValueError:
            self._waiting.pop((_Waiting.TRANSFER, call), None)
            raise
        return await future

    async def set_configuration(self, peers: tuple[RaftPeer, ...]) -> int:
        """Makes `peers` the group's members (Ratis's SetConfiguration), one member added or removed at a
        time, and returns the index of the configuration entry once it committed. An added member is caught
        up as a learner first; it must be running with a group naming every member. NotLeaderError when
        this member does not lead; ReconfigurationError when another change or a transfer is in progress,
        or `peers` differs from the members in force by other than one member."""
        for peer in peers:
            known = self._addresses.get(peer.id)
            if known is not None and known.address != peer.address and peer.id in self.group.ids:
                raise ValueError(f"{peer.id} is a member at {known.address}, not {peer.address}")
        call = ClientCall(f"conf@{self.me}", next(self._own_calls), b"")
        future = self._wait(_Waiting.CONFIGURATION, call)
        # The added member's address must be known when the core first sends to it (in this input).
        self._proposed[call] = tuple(p.id for p in peers if p.id not in self._addresses)
        self._addresses.update({p.id: p for p in peers})
        try:
            self._ask(partial(self._running_core().set_configuration, call, tuple(p.id for p in peers)))
        except ValueError:
            self._forget_proposed(call)
            self._waiting.pop((_Waiting.CONFIGURATION, call), None)
            raise
        return await future

    def _forget_proposed(self, call: ClientCall) -> None:
        """A configuration change refused (or not led to its end): the addresses it brought are forgotten,
        so messages claiming to come from them are refused again, unless the core made them members."""
        for peer in self._proposed.pop(call, ()):
            if peer not in self._running_core().configuration:
                self._addresses.pop(peer, None)
                sender = self._senders.pop(peer, None)
                if sender is not None:
                    closing = asyncio.get_running_loop().create_task(sender.close())
                    self._closing.add(closing)
                    closing.add_done_callback(self._closing.discard)

    def snapshot_taken(self, snapshot: TermIndex) -> None:
        """The state machine durably checkpointed what it applied up to `snapshot` (OM after its om.db
        checkpoint): the log up to it is purged once raft.server.log.purge.gap entries gathered. Called on
        the event loop. ValueError when `snapshot` is past what this member applied or does not match its
        log."""
        self._ask(partial(self._running_core().snapshot_taken, snapshot))

    def silent_followers(self, silent_ms: int) -> tuple[RaftPeerId, ...]:
        """The followers that have not answered this leader for `silent_ms` (since it began to lead, for one
        that never did): a datanode's leader does not wait for them before it answers. Empty when this
        member does not lead."""
        core = self._core
        if core is None or not self.running or core.role is not RaftPeerRole.LEADER:
            return ()
        now = self._clock.now_ms()
        answered = self._answered_ms if self._match_term == core.current_term else {}
        return tuple(
            peer
            for peer in core.configuration
            if peer != self.me and now - answered.get(peer, self._leading_since_ms) >= silent_ms
        )

    def leading_term(self) -> int | None:
        """The term this member leads in, else None: `status`'s role and term without the rest (OM asks it
        on every call)."""
        core = self._core
        if core is None or not self.running or core.role is not RaftPeerRole.LEADER:
            return None
        return core.current_term

    def status(self) -> RaftStatus:
        core = self._running_core()
        leads = core.role is RaftPeerRole.LEADER
        last = core.log.last_index
        followers = ()
        if leads and self._match_term == core.current_term:
            followers = tuple(
                FollowerStatus(peer, self._match.get(peer, 0), last - self._match.get(peer, 0))
                for peer in self.group.ids
                if peer != self.me
            )
        elif leads:
            followers = tuple(FollowerStatus(peer, 0, last) for peer in self.group.ids if peer != self.me)
        return RaftStatus(
            self.group.group_id,
            self.me,
            core.role,
            core.current_term,
            core.leader_id,
            last,
            core.commit_index,
            self._applier.applied_index,
            followers,
            core.leader_commit_index,
        )

    # ---- inputs

    def _is_running(self) -> bool:
        return self.running

    def _persisted(self, seq: int) -> None:
        """Every Persist up to `seq` is durable (the log writer's group commit)."""
        self._step("persisted", partial(self._running_core().persisted, seq))

    def _running_core(self) -> RaftServer:
        if self._core is None:
            raise RuntimeError(f"Raft member {self.me} was not started")
        return self._core

    def _wait(self, kind: _Waiting, call: ClientCall) -> asyncio.Future[Any]:
        if not self.running:
            raise NotLeaderError(self.me, None, None)
        future = asyncio.get_running_loop().create_future()
        self._waiting.setdefault((kind, call), []).append(future)
        return future

    def _input(self, outputs: list[Output]) -> None:
        """Carries out what the core asked for one input, then moves the tick timer."""
        self._carry_out(outputs)
        self._schedule_tick()

    def _schedule_tick(self) -> None:
        if not self.running:
            return
        core = self._running_core()
        if self._data is not None and core.role is not RaftPeerRole.LEADER:
            self._data.not_leading()
        # Ratis's ServerState.setLeader notifies every leader set after none (a new term starts with none,
        # updateCurrentTerm): the requests waiting for a leader (PipelineGroups) wake on it.
        if core.leader_id is None:
            self._notified_leader = None
        elif (core.leader_id, core.current_term) != self._notified_leader:
            self._notified_leader = (core.leader_id, core.current_term)
            if core.leader_id == self.me:
                self._leading_since_ms = self._clock.now_ms()
            self._notify("notify_leader_changed", core.leader_id)
        self._follow_configuration()
        self._reschedule_tick()

    def _tick(self) -> None:
        self._timer = None
        self._timer_at = None
        if self.running:
            self._step("a tick", self._running_core().tick)

    def _ask(self, step: Callable[[], list[Output]]) -> None:
        """A caller's input (submit, a read, a transfer, a change, a snapshot): a ValueError is the core
        refusing the caller's arguments, raised to it; any other exception is a bug in the core: the member
        stops, and the caller gets the exception."""
        try:
            outputs = step()
        except ValueError:
            raise
        except Exception:
            self._fail("its core failed on a caller's input")
            raise
        self._input(outputs)

    def _step(self, what: str, step: Callable[[], list[Output]]) -> None:
        """An input no caller waits on (a tick, a flush, an install's end): an exception from the core is a
        bug, and the member stops rather than go on without its timer."""
        try:
            outputs = step()
        except Exception:
            self._fail(f"its core failed on {what}")
            return
        self._input(outputs)

    def _reschedule_tick(self) -> None:
        deadline = self._running_core().deadline_ms()
        if deadline == self._timer_at and self._timer is not None:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._timer_at = deadline
        if deadline is None:
            self._timer = None
            return
        delay_s = max(0, deadline - self._clock.now_ms()) / 1000
        self._timer = asyncio.get_running_loop().call_later(delay_s, self._tick)

    def receive(self, envelopes: list[RaftEnvelope]) -> None:
        """A peer's messages, already checked (`_RaftService`). One the core refuses (a member removed from
        the configuration in force, a malformed append) is logged and dropped; the rest are taken."""
        core = self._running_core()
        try:
            for envelope in envelopes:
                message = envelope.message
                impossible = self._inbound.impossible(core, envelope.sender, message)
                if impossible:
                    log.warning(
                        "Raft member %s refused a message of %s: %s", self.me, envelope.sender, impossible
                    )
                    continue
                if isinstance(message, AppendEntriesReply):
                    self._note_match(core, message)
                if not self.running:
                    return
                if envelope.data and self._data is None:
                    log.warning(
                        "Raft member %s refused an append of %s: its entries carry state machine data, "
                        "which its state machine does not take",
                        self.me,
                        envelope.sender,
                    )
                    continue
                if envelope.data and self._data is not None:
                    assert isinstance(message, AppendEntriesRequest)
                    self._data.arrived(message, envelope.data)
                try:
                    outputs = core.receive(envelope.sender, message)
                except ValueError as refused:
                    log.warning("Raft member %s: %s", self.me, refused)
                    continue
                except Exception:
                    self._fail(f"its core failed on a message from {envelope.sender}")
                    return
                self._carry_out(outputs)
        finally:
            if self._data is not None:
                self._data.received()
            self._schedule_tick()

    def _note_match(self, core: RaftServer, reply: AppendEntriesReply) -> None:
        """The followers' match indexes, for `status` (the core keeps its own, for the commit rule)."""
        if core.role is not RaftPeerRole.LEADER or reply.term != core.current_term:
            return
        if self._match_term != core.current_term:
            self._match, self._match_term = {}, core.current_term
            self._answered_ms = {}
        self._answered_ms[reply.follower_id] = self._clock.now_ms()
        if reply.result is AppendResult.SUCCESS:
            peer = reply.follower_id
            self._match[peer] = max(self._match.get(peer, 0), reply.match_index)
            if self._data is not None and self._data.cache:
                followers = [p for p in core.configuration if p != self.me]
                self._data.cache.drop_through(min((self._match.get(p, 0) for p in followers), default=0))

    def refusal(
        self, envelopes: list[RaftEnvelope], context: rpc.CallContext
    ) -> tuple[rpc.StatusCode | None, str]:
        """Why a call's messages are refused (the status and the reason), or (None, ""): `InboundChecks`
        (inbound.py) against the members in force."""
        return self._inbound.refusal(self.group, envelopes, context)

    # ---- outputs

    def _carry_out(self, outputs: list[Output]) -> None:
        """Carries out outputs in order; those the state machine's results produce follow them."""
        self._outputs.extend(outputs)
        if self._carrying_out:
            return
        self._carrying_out = True
        try:
            while self._outputs and self.running:
                output = self._outputs.popleft()
                try:
                    self._carry_out_one(output)
                except ApplyFailedError as error:
                    self._fail(str(error))
                except Exception:
                    self._fail(f"carrying out {type(output).__name__} failed")
        finally:
            self._carrying_out = False

    def _carry_out_one(self, output: Output) -> None:
        if isinstance(output, Send):
            message = output.message
            if isinstance(message, AppendEntriesRequest):
                self._inbound.sent(output.to, message)
            sender = self._sender(output.to)
            if sender is not None:
                sender.send(output.message)
        elif isinstance(output, Appended):
            if self._data is not None:
                self._data.appended(output.call, output.index)
        elif isinstance(output, Persist):
            self._log_writer.persist(output)
        elif isinstance(output, PurgeLog):
            self._log_writer.purge(output)
        elif isinstance(output, InstallSnapshot):
            self._applier.install(output)
        elif isinstance(output, Apply):
            self._outputs.extend(self._applier.apply(output))
        elif isinstance(output, Reply):
            self._answer(_Waiting.WRITE, output.call, output.result)
        elif isinstance(output, ReadReady):
            self._answer(_Waiting.READ, output.call, output.read_index)
        elif isinstance(output, TransferDone):
            self._answer(_Waiting.TRANSFER, output.call, output.stepped_down)
        elif isinstance(output, TransferRefused):
            target = RaftPeerId(output.call.payload.decode())
            refused = TransferRefusedError(self.me, target, output.in_progress_to)
            self._answer(_Waiting.TRANSFER, output.call, refused)
        elif isinstance(output, WatchDone):
            self._answer(_Waiting.WATCH, output.call, output.infos)
        elif isinstance(output, WatchFailed):
            self._answer(_Waiting.WATCH, output.call, NotReplicatedError(output.infos, output.reason))
        elif isinstance(output, ConfigurationDone):
            self._proposed.pop(output.call, None)
            self._answer(_Waiting.CONFIGURATION, output.call, output.index)
        elif isinstance(output, ConfigurationRefused):
            self._forget_proposed(output.call)
            self._answer(_Waiting.CONFIGURATION, output.call, ReconfigurationError(self.me, output.reason))
        elif isinstance(output, NoLeader):
            self._notify("notify_no_leader")
        elif isinstance(output, FollowerSlow):
            self._notify("notify_follower_slow", output.peer)
        elif isinstance(output, NotLeader):
            self._forget_proposed(output.call)
            hint = output.leader_hint
            error = NotLeaderError(self.me, hint, self._address_of(hint))
            for kind in _Waiting:
                self._answer(kind, output.call, error)

    def _notify(self, hook: str, *args: object) -> None:
        """Calls the state machine's optional hook `hook` (`StateMachineEvents`), if it has one; an
        exception from it is logged, and the member goes on."""
        notify = getattr(self._state_machine, hook, None)
        if notify is None:
            return
        try:
            notify(*args)
        except Exception:
            log.exception("Raft member %s: its state machine's %s failed", self.me, hook)

    def _data_unreadable(self, why: str) -> None:
        """The leader cannot read back an entry's data a follower needs (Ozone: readStateMachineData
        failed, the state machine is unhealthy and the pipeline closes): the member fails for this group
        rather than resend to that follower forever."""
        if self.running:
            self._fail(why)

    def _answer(self, kind: _Waiting, call: ClientCall, result: object) -> None:
        futures = self._waiting.get((kind, call))
        if not futures:
            return
        future = futures.pop(0)
        if not futures:
            del self._waiting[(kind, call)]
        if future.done():
            return
        if isinstance(result, BaseException):
            future.set_exception(result)
        else:
            future.set_result(result)
