"""One member of a Raft group on the event loop (the role of Ratis's RaftServerImpl around its state
machine): it runs one sans-IO `pyozone.ratis.RaftServer` and carries out the core's outputs, in order.

- `Persist`: written to `RaftStorage` on the loop, made durable by a group commit: one `flush` at a time
  on a worker thread; when it returns, the core hears `persisted(the last seq written before it began)`,
  and what was written meanwhile goes in the next flush. So a burst of writes costs one fsync, and the loop
  never waits for the disk.
- `Send`: to the peer's `PeerSender` (one-way messages, a bounded queue per peer: transport.py).
- `Apply`: each entry to the `StateMachine` in log order, its result back to the core (`applied`).
- `Reply`, `NotLeader`, `ReadReady`, `TransferDone`: the futures of the callers of `submit`, `read_index`
  and `transfer_leadership`.
- Ticks: one loop timer at the core's `deadline_ms()`, moved after every input.

What the daemon embedding it (OM) uses: `start`, `submit`, `read_index`, `transfer_leadership`, `status`,
`stop`. A member restarts from its storage; its state machine starts empty and is replayed from the first
entry as the core commits it again (snapshots come with the core's snapshot support).
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import itertools
import logging
import random
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

from pyozone import rpc
from pyozone.common.net import HostPort
from pyozone.common.tls import TlsStore
from pyozone.hdds.clock import SystemClock
from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.security.x509 import CertRole
from pyozone.proto import Raft_pb2 as pb
from pyozone.protocol.raft import RaftEnvelope, messages_from_proto
from pyozone.ratis.messages import (
    AppendEntriesReply,
    AppendResult,
    ClientCall,
    EntryKind,
    LogEntry,
    RaftPeerId,
)
from pyozone.ratis.outputs import (
    Apply,
    NotLeader,
    Output,
    Persist,
    ReadReady,
    Reply,
    Send,
    TransferDone,
)
from pyozone.ratis.roles import RaftPeerRole
from pyozone.ratis.server import RaftServer
from pyozone.ratis.settings import RaftSettings
from pyozone.ratis_server.storage import RaftStorage
from pyozone.ratis_server.transport import (
    MESSAGE_OVERHEAD_BYTES,
    RAFT_SERVICE,
    PeerSender,
    RaftGroup,
)
from pyozone.rpc.metadata import peer_identity

log = logging.getLogger(__name__)


class StateMachine(Protocol):
    """What the group replicates (Ratis's StateMachine.applyTransaction): `apply` is called with every
    committed client entry, in log order, once per entry per incarnation of the member, on the event loop.
    It must be deterministic: every member applies the same entries and must reach the same state. What it
    returns is the entry's result (the leader answers the client with it); an exception it raises is the
    result too, raised to the client."""

    def apply(self, entry: LogEntry) -> object: ...


class NotLeaderError(Exception):
    """Ratis's NotLeaderException: this member does not lead (or stopped); try `leader_id` at
    `leader_address` (both None when no leader is known): the client's failover proxy moves on."""

    def __init__(self, me: RaftPeerId, leader_id: RaftPeerId | None, leader_address: HostPort | None) -> None:
        hint = f"the leader is {leader_id} at {leader_address}" if leader_id else "no leader is known"
        super().__init__(f"{me} is not the leader: {hint}")
        self.leader_id = leader_id
        self.leader_address = leader_address


class EntryTooLargeError(ValueError):
    """A request larger than one append may carry (raft.server.log.appender.buffer.byte-limit)."""


@dataclass(frozen=True)
class FollowerStatus:
    peer: RaftPeerId
    match_index: int
    lag: int
    """Entries of the leader's log the follower is not known to hold."""


@dataclass(frozen=True)
class RaftStatus:
    """What the web UI and /prom show of a member (Ozone's `admin om roles` and OM's Ratis metrics)."""

    group_id: str
    me: RaftPeerId
    role: RaftPeerRole
    term: int
    leader: RaftPeerId | None
    last_index: int
    commit_index: int
    applied_index: int
    followers: tuple[FollowerStatus, ...]
    """Each follower's match index and lag, on the leader only."""


class _Waiting(enum.Enum):
    WRITE = "write"
    READ = "read"
    TRANSFER = "transfer"


class RaftMember:
    """One member of `group`, `me`, serving the members' service on its own address in the group.

    Security (mutual TLS when `tls`): the rpc server takes only callers whose certificate the cluster's CA
    signed, and this member takes a call's messages only when that certificate is a service certificate of
    `role` (OM's for OM's group) for the host the group lists for the member the messages name as their
    sender. What the certificate proves: the caller holds a key the CA certified for that role on that
    host. What it does not prove: which member of the group the caller is when members share a host (three
    OMs on one machine hold certificates alike, so each could speak as another), nor that the caller runs
    this group's software rather than another service of the same role on that host. On a plaintext port
    nothing is proven, as Ozone's simple authentication trusts whoever calls: the group id and the member
    table are checked, the sender is not.
    """

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
    ) -> None:
        address = group.address(me)
        if address is None:
            raise ValueError(f"{me} is not a member of group {group.group_id}")
        self.me = me
        self.group = group
        self.address = address
        self._bind_host = bind_host or address.host
        self._storage = storage
        self._state_machine = state_machine
        self._settings = settings or RaftSettings()
        self._tls = tls
        self._role = role
        self._rng = rng or random.Random()
        self._clock = SystemClock()
        self._core: RaftServer | None = None
        self._rpc: rpc.Server | None = None
        self._senders: dict[RaftPeerId, PeerSender] = {}
        self._outputs: deque[Output] = deque()
        self._carrying_out = False
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at: int | None = None
        self._written_seq = 0
        self._flushed_seq = 0
        self._flush_task: asyncio.Task[None] | None = None
        self._executor: ThreadPoolExecutor | None = None
        self._waiting: dict[tuple[_Waiting, ClientCall], list[asyncio.Future[Any]]] = {}
        self._own_calls = itertools.count(1)
        self._applied_index = 0
        self._match: dict[RaftPeerId, int] = {}
        self._match_term = 0
        self.running = False
        self._stopped = False
        self._failed: asyncio.Task[None] | None = None
        """The stop a storage failure started."""

    # ---- life cycle

    async def start(self) -> None:
        """Loads the storage, starts the core and listens on the member's address."""
        state = self._storage.load()
        self._core = RaftServer(self.me, self.group.ids, self._settings, self._clock, self._rng, state)
        self._executor = ThreadPoolExecutor(1, thread_name_prefix=f"raft-flush-{self.me}")
        batch_bytes = self._settings.append_byte_limit
        self._senders = {
            p.id: PeerSender(self.group.group_id, p, self._tls, self._role, batch_bytes)
            for p in self.group.peers
            if p.id != self.me
        }
        self._rpc = rpc.Server(rpc.ServerSettings(max_message_bytes=batch_bytes + MESSAGE_OVERHEAD_BYTES))
        self._rpc.add_service(RAFT_SERVICE, _RaftService(self))
        self.running = True
        try:
            await self._rpc.start(self._bind_host, self.address.port, self._tls)
        except BaseException:
            await self.stop()
            raise
        self._schedule_tick()

    async def stop(self) -> None:
        """Stops taking messages and calls, answers every waiting caller (NotLeaderError: try another
        member), lets a flush under way finish, and leaves no task behind. A second stop does nothing."""
        if self._core is None or self._stopped:
            return
        self._stopped = True
        self.running = False
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._rpc is not None:
            await self._rpc.stop(0)
            self._rpc = None
        for sender in self._senders.values():
            await sender.close()
        self._senders = {}
        if self._flush_task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(self._flush_task)
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None
        waiting, self._waiting = self._waiting, {}
        stopped = NotLeaderError(self.me, None, None)
        for futures in waiting.values():
            for future in futures:
                if not future.done():
                    future.set_exception(stopped)
        self._storage.close()

    # ---- the daemon's API

    async def submit(self, payload: bytes, client_id: str, call_id: int) -> object:
        """Replicates `payload` and returns the state machine's result for it, once applied on this leader;
        NotLeaderError naming the leader when this member does not lead."""
        if len(payload) > self._settings.append_byte_limit:
            raise EntryTooLargeError(
                f"a request of {len(payload)} bytes is above raft.server.log.appender.buffer.byte-limit "
                f"({self._settings.append_byte_limit} bytes)"
            )
        call = ClientCall(client_id, call_id, payload)
        future = self._wait(_Waiting.WRITE, call)
        self._input(self._running_core().submit(call))
        return await future

    async def read_index(self) -> int:
        """A linearizable read barrier (ReadIndex): returns once this member, confirmed as the leader after
        the call, has applied every entry committed before it; a read of the state machine then sees every
        write acknowledged before `read_index` was called."""
        call = ClientCall(f"read@{self.me}", next(self._own_calls), b"")
        future = self._wait(_Waiting.READ, call)
        self._input(self._running_core().read(call))
        return await future

    async def transfer_leadership(self, target: RaftPeerId) -> bool:
        """Hands leadership to `target` (Ratis's TransferLeadership); True once this member stepped down,
        False when `target` did not take over in time (raft.server.rpc.timeout.max). ValueError when
        `target` is not another member."""
        call = ClientCall(f"transfer@{self.me}", next(self._own_calls), target.id.encode())
        future = self._wait(_Waiting.TRANSFER, call)
        try:
            self._input(self._running_core().transfer_leadership(call, target))
        except ValueError:
            self._waiting.pop((_Waiting.TRANSFER, call), None)
            raise
        return await future

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
            self._applied_index,
            followers,
        )

    # ---- inputs

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

    def _tick(self) -> None:
        self._timer = None
        self._timer_at = None
        if self.running:
            self._input(self._running_core().tick())

    def _schedule_tick(self) -> None:
        if not self.running:
            return
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
        """A peer's messages, already checked (`_RaftService`)."""
        core = self._running_core()
        for envelope in envelopes:
            message = envelope.message
            if isinstance(message, AppendEntriesReply):
                self._note_match(core, message)
            self._carry_out(core.receive(envelope.sender, message))
        self._schedule_tick()

    def _note_match(self, core: RaftServer, reply: AppendEntriesReply) -> None:
        """The followers' match indexes, for `status` (the core keeps its own, for the commit rule)."""
        if core.role is not RaftPeerRole.LEADER or reply.term != core.current_term:
            return
        if self._match_term != core.current_term:
            self._match, self._match_term = {}, core.current_term
        if reply.result is AppendResult.SUCCESS:
            peer = reply.follower_id
            self._match[peer] = max(self._match.get(peer, 0), reply.match_index)

    def refusal(
        self, envelopes: list[RaftEnvelope], context: rpc.CallContext
    ) -> tuple[rpc.StatusCode | None, str]:
        """Why a call's messages are refused (the status and the reason), or (None, ""): the checks the
        class's docstring describes."""
        group = self.group
        identity = None
        if self._tls is not None:
            try:
                identity = peer_identity(context)
            except ValueError as error:
                return rpc.StatusCode.PERMISSION_DENIED, f"the caller's certificate names no service: {error}"
            if identity is None or identity.role is not self._role:
                named = "no certificate" if identity is None else identity.common_name
                return (
                    rpc.StatusCode.PERMISSION_DENIED,
                    f"{named} may not send Raft messages to group {group.group_id}: "
                    f"{self._role.name} certificates only",
                )
        senders = {e.sender for e in envelopes}
        if len(senders) > 1:
            named = ", ".join(sorted(p.id for p in senders))
            return rpc.StatusCode.INVALID_ARGUMENT, f"one call speaks for one member, not for {named}"
        for envelope in envelopes:
            if envelope.group_id != group.group_id:
                return (
                    rpc.StatusCode.FAILED_PRECONDITION,
                    f"GroupMismatchException: a message for group {envelope.group_id!r} reached "
                    f"{self.me} of group {group.group_id!r}",
                )
            if envelope.receiver != self.me:
                return (
                    rpc.StatusCode.FAILED_PRECONDITION,
                    f"a message for {envelope.receiver} reached {self.me}",
                )
            address = group.address(envelope.sender)
            if address is None or envelope.sender == self.me:
                return (
                    rpc.StatusCode.PERMISSION_DENIED,
                    f"{envelope.sender} is not another member of group {group.group_id}",
                )
            if identity is not None and identity.host != address.host:
                return (
                    rpc.StatusCode.PERMISSION_DENIED,
                    f"{identity.common_name} may not speak for {envelope.sender}, a member on {address.host}",
                )
        return None, ""

    # ---- outputs

    def _carry_out(self, outputs: list[Output]) -> None:
        """Carries out outputs in order; those the state machine's results produce follow them."""
        self._outputs.extend(outputs)
        if self._carrying_out:
            return
        self._carrying_out = True
        try:
            while self._outputs:
                self._carry_out_one(self._outputs.popleft())
        finally:
            self._carrying_out = False

    def _carry_out_one(self, output: Output) -> None:
        if isinstance(output, Send):
            sender = self._senders.get(output.to)
            if sender is not None:
                sender.send(output.message)
        elif isinstance(output, Persist):
            self._storage.write(output)
            self._written_seq = output.seq
            if self._flush_task is None:
                self._flush_task = asyncio.get_running_loop().create_task(self._flush())
        elif isinstance(output, Apply):
            core = self._running_core()
            for entry in output.entries:
                self._outputs.extend(core.applied(entry.index, self._apply(entry)))
        elif isinstance(output, Reply):
            self._answer(_Waiting.WRITE, output.call, output.result)
        elif isinstance(output, ReadReady):
            self._answer(_Waiting.READ, output.call, output.read_index)
        elif isinstance(output, TransferDone):
            self._answer(_Waiting.TRANSFER, output.call, output.stepped_down)
        elif isinstance(output, NotLeader):
            hint = output.leader_hint
            address = self.group.address(hint) if hint is not None else None
            error = NotLeaderError(self.me, hint, address)
            for kind in _Waiting:
                self._answer(kind, output.call, error)

    def _apply(self, entry: LogEntry) -> object:
        self._applied_index = entry.index
        if entry.kind is not EntryKind.STATE_MACHINE:
            return None
        try:
            return self._state_machine.apply(entry)
        except Exception as error:  # the entry's result: its client gets it raised
            return error

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

    async def _flush(self) -> None:
        """The group commit: one flush at a time; what was written during one goes in the next."""
        loop = asyncio.get_running_loop()
        try:
            while self._written_seq > self._flushed_seq and self._executor is not None:
                target = self._written_seq
                await loop.run_in_executor(self._executor, self._storage.flush)
                self._flushed_seq = target
                if self.running:
                    self._input(self._running_core().persisted(target))
        except Exception:
            log.exception("Raft member %s: its storage failed; it stops", self.me)
            self._flush_task = None
            self._failed = loop.create_task(self.stop())
            return
        self._flush_task = None


class _RaftService:
    """The members' service: checks who sends what before the core sees any of it."""

    def __init__(self, member: RaftMember) -> None:
        self._member = member

    async def deliver(
        self, request: pb.RaftServerMessagesProto, context: rpc.CallContext
    ) -> pb.RaftServerMessagesAckProto:
        member = self._member
        if not member.running:
            await context.abort(rpc.StatusCode.UNAVAILABLE, f"Raft member {member.me} is stopping")
        try:
            envelopes = messages_from_proto(request)
        except ProtocolError as error:
            await context.abort(rpc.StatusCode.INVALID_ARGUMENT, f"INVALID_REQUEST: {error}")
        code, why = member.refusal(envelopes, context)
        if code is not None:
            log.warning("Raft member %s refused a call from %s: %s", member.me, context.peer(), why)
            await context.abort(code, why)
        member.receive(envelopes)
        return pb.RaftServerMessagesAckProto()
