"""The members' connections (the role of Ratis's GrpcService and its GrpcServerProtocolClient): the core's
messages to each peer over pyozone.rpc, one-way, the group's table of who is where, and the port that takes
them (`RaftDivisions`, the role of Ratis's RaftServerProxy: one port serving the divisions of many groups,
each message routed by its group id).

Every message is one-way: a reply is a message of its own, sent back as its own call, and a call returns
as soon as the receiver has taken its messages in (the core matches replies by their call ids). So no call
waits on the receiving core, and a slow or dead peer holds up only its own `PeerSender`: one task and one
channel per peer, sending what was queued for it since its last call as one batch. The queue is bounded:
when it is full the oldest append is dropped (else the oldest message). Raft tolerates the loss: a lost
append shows up at the leader as an INCONSISTENCY answer to a later append or heartbeat, which resends
from where the follower is; a lost vote or heartbeat is a lost message, which the election timer and the
next heartbeat cover. A failed call drops its batch and what queued behind it for the same reason, and the
sender waits for the core's next message (a heartbeat interval at most on a leader) before trying again,
so an unreachable peer costs one failing call per heartbeat, never a busy loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Protocol

from pyozone import rpc
from pyozone.common.net import HostPort
from pyozone.common.tls import TlsStore
from pyozone.hdds.clock import Clock, SystemClock
from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.security.x509 import CertRole
from pyozone.proto import Raft_pb2 as pb
from pyozone.protocol.raft import (
    EntryPieces,
    RaftEnvelope,
    append_message_pieces,
    entry_wire_bytes,
    message_to_proto,
    messages_from_bytes,
)
from pyozone.ratis.messages import AppendEntriesRequest, LogEntry, Message, RaftPeerId

log = logging.getLogger(__name__)


class _MessagesAsSent:
    """`deliver`'s request as it came: `RaftDivisions.deliver` parses it (`messages_from_bytes`), so each
    entry's state machine data is a view of the call's bytes, not a copy out of the message."""

    FromString = bytes  # bytes(b) is b


_SERVICE = rpc.service(pb, "RaftServerProtocolService")
DELIVER = replace(_SERVICE.methods["deliver"], request=_MessagesAsSent)
RAFT_SERVICE = replace(_SERVICE, methods={**_SERVICE.methods, "deliver": DELIVER})

MESSAGE_OVERHEAD_BYTES = 1 << 20
"""What a call may carry beyond `raft.server.log.appender.buffer.byte-limit`: a member refuses a larger
call (Ratis's raft.grpc.message.size.max must exceed the appender's buffer the same way). The core fills
an append's entries up to the limit in their wire bytes (`protocol.raft.entry_wire_bytes`: an entry's
framing and client id, 18-24 bytes and the id's length beyond its payload), so the overhead carries the
append's header and the batch's framing, and one entry as large as the limit (the daemon refuses a larger
one: `EntryTooLargeError`)."""
REQUEST_TIMEOUT_S = 3.0
"""How long one call to a peer may take (Ratis's raft.server.rpc.request.timeout, 3 s)."""
QUEUE_MESSAGES = 1024
"""Messages queued for one peer before the oldest append is dropped."""
_ACK_BYTES = 1024


@dataclass(frozen=True)
class RaftPeer:
    """A member and the address of its Raft port (Ratis's RaftPeer)."""

    id: RaftPeerId
    address: HostPort


@dataclass(frozen=True)
class RaftGroup:
    """The group's id and its members (Ratis's RaftGroup): every message names the group, and a member
    takes messages only for its own group and only from its members."""

    group_id: str
    peers: tuple[RaftPeer, ...]

    def __post_init__(self) -> None:
        ids = [p.id for p in self.peers]
        if len(set(ids)) != len(ids):
            raise ValueError(f"group {self.group_id}: a member is listed twice in {[str(i) for i in ids]}")

    @property
    def ids(self) -> tuple[RaftPeerId, ...]:
        return tuple(p.id for p in self.peers)

    def address(self, peer: RaftPeerId) -> HostPort | None:
        return next((p.address for p in self.peers if p.id == peer), None)


def split_append(append: AppendEntriesRequest, byte_limit: int) -> list[AppendEntriesRequest]:
    """`append` as consecutive appends whose entries take at most `byte_limit` wire bytes each (at least one
    entry each; `entry_wire_bytes`, as the core counts them, so an append the core sized stays whole: this
    guards a core given a smaller cost, never the common path). Each piece follows the one before it and
    keeps the append's call id, so the follower's answer to each is an answer to that append: SUCCESS up to
    the piece's last entry, or INCONSISTENCY for every piece after one it could not take."""
    pieces: list[AppendEntriesRequest] = []
    previous, previous_term = append.previous_index, append.previous_term
    entries: list[LogEntry] = []
    size = 0
    for entry in append.entries:
        entry_bytes = entry_wire_bytes(entry)
        if entries and size + entry_bytes > byte_limit:
            pieces.append(
                replace(append, previous_index=previous, previous_term=previous_term, entries=tuple(entries))
            )
            previous, previous_term = entries[-1].index, entries[-1].term
            entries, size = [], 0
        entries.append(entry)
        size += entry_bytes
    pieces.append(
        replace(append, previous_index=previous, previous_term=previous_term, entries=tuple(entries))
    )
    return pieces


EntryWire = Callable[[LogEntry], Awaitable[EntryPieces]]
"""An entry with state machine data as an append carries it (`protocol.raft.append_entry_pieces`): the same
pieces for every follower, from the leader's `DataCache` or read back from its state machine."""


class PeerSender:
    """The messages for one peer: a bounded queue and one task that sends it, a batch per call. With
    `entry_wire` (a group whose entries carry state machine data), an append's entries with data are framed
    by hand around the bytes `entry_wire` gives, which the batch's byte limit counts."""

    def __init__(
        self,
        group_id: str,
        peer: RaftPeer,
        tls: TlsStore | None,
        role: CertRole,
        batch_bytes: int,
        queue_messages: int = QUEUE_MESSAGES,
        entry_wire: EntryWire | None = None,
        on_sent: Callable[[RaftPeerId, int], None] | None = None,
    ) -> None:
        """`on_sent(peer, nbytes)`: each call delivered, its bytes (the datanode counts its pipelines' traffic
        per peer)."""
        self._group_id = group_id
        self._entry_wire = entry_wire
        self._on_sent = on_sent
        self.peer = peer
        self._batch_bytes = batch_bytes
        self._queue: deque[Message] = deque()
        self._queue_messages = queue_messages
        self._wake = asyncio.Event()
        # Over TLS the peer's server must present a certificate of the group's role for its host.
        self._channel = rpc.Channel(
            peer.address, rpc.ChannelSettings(max_message_bytes=_ACK_BYTES), tls, role if tls else None
        )
        self.dropped = 0
        """Messages dropped: the queue overflowed, or their call failed."""
        self._reachable = True
        self._task = asyncio.get_running_loop().create_task(self._run(), name=f"raft-send-{peer.id}")

    @property
    def queued(self) -> tuple[Message, ...]:
        """What waits for the next call, oldest first."""
        return tuple(self._queue)

    def send(self, message: Message) -> None:
        if len(self._queue) >= self._queue_messages:
            self._drop_oldest()
        self._queue.append(message)
        self._wake.set()

    def _drop_oldest(self) -> None:
        for position, queued in enumerate(self._queue):
            if isinstance(queued, AppendEntriesRequest):
                del self._queue[position]
                break
        else:
            self._queue.popleft()
        self.dropped += 1

    def _batch(self) -> pb.RaftServerMessagesProto:
        """The queued messages, oldest first, up to the batch's bytes (always at least one); an append whose
        entries alone exceed them goes as several (`split_append`; its header rides on the overhead)."""
        batch = pb.RaftServerMessagesProto()
        size = 0
        while self._queue:
            wire = message_to_proto(self._group_id, self.peer.id, self._queue[0])
            if wire.ByteSize() > self._batch_bytes and isinstance(self._queue[0], AppendEntriesRequest):
                pieces = split_append(self._queue[0], self._batch_bytes)
                if len(pieces) > 1:
                    self._queue.popleft()
                    self._queue.extendleft(reversed(pieces))
                    wire = message_to_proto(self._group_id, self.peer.id, self._queue[0])
            size += wire.ByteSize()
            if batch.messages and size > self._batch_bytes:
                break
            batch.messages.append(wire)
            self._queue.popleft()
        return batch

    async def _data_batch(self) -> tuple[list[bytes | memoryview], int]:
        """`_batch` for a group whose entries carry data: the batch's bytes, as pieces the call sends without
        joining them (each entry's wire bytes are shared by every follower's call), and how many messages it
        holds.
        Each entry's wire bytes come from `entry_wire` (no per-follower encoding of the data); the batch
        holds at least one message and, past it, what fits in its bytes (entries counted as the core
        sized them: `entry_wire_bytes`, so an append stays whole)."""
        assert self._entry_wire is not None
        pieces: list[bytes | memoryview] = []
        size = count = 0
        while self._queue:
            message = self._queue[0]
            carries = isinstance(message, AppendEntriesRequest) and any(e.data_size for e in message.entries)
            if carries:
                assert isinstance(message, AppendEntriesRequest)
                cost = sum(entry_wire_bytes(e) for e in message.entries)
            else:
                wire = pb.RaftServerMessagesProto(
                    messages=[message_to_proto(self._group_id, self.peer.id, message)]
                ).SerializeToString()
                cost = len(wire)
            if count and size + cost > self._batch_bytes:
                break
            self._queue.popleft()  # before any wait: `send` may drop the oldest meanwhile
            if carries:
                assert isinstance(message, AppendEntriesRequest)
                entries = [await self._entry_wire(e) for e in message.entries]
                pieces.extend(append_message_pieces(self._group_id, self.peer.id, message, entries))
            else:
                pieces.append(wire)
            size += cost
            count += 1
        return pieces, count

    async def _run(self) -> None:
        task = asyncio.current_task()
        assert task is not None
        while not task.cancelling():  # a failed call must not hide a close that asked this task to end
            await self._wake.wait()
            self._wake.clear()
            while self._queue:
                batch: pb.RaftServerMessagesProto | list[bytes | memoryview]
                if self._entry_wire is None:
                    batch = self._batch()
                    count = len(batch.messages)
                else:
                    try:
                        batch, count = await self._data_batch()
                    except Exception:  # the leader's state machine could not read an entry's data back
                        log.exception("Raft peer %s: an append's data could not be read", self.peer.id)
                        self.dropped += len(self._queue) + 1
                        self._queue.clear()
                        break
                try:
                    await self._channel.unary(DELIVER.path, batch, None, timeout=REQUEST_TIMEOUT_S)
                    if self._on_sent is not None:
                        self._on_sent(
                            self.peer.id,
                            sum(map(len, batch)) if isinstance(batch, list) else batch.ByteSize(),
                        )
                except rpc.RpcError as error:
                    self.dropped += count + len(self._queue)
                    self._queue.clear()
                    if self._reachable:
                        log.warning("Raft peer %s at %s: %s", self.peer.id, self.peer.address, error)
                    self._reachable = False
                    break
                if not self._reachable:
                    log.info("Raft peer %s at %s is reachable again", self.peer.id, self.peer.address)
                    self._reachable = True

    async def close(self) -> None:
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        await self._channel.close()


REFUSAL_LOG_INTERVAL_MS = 60_000
"""A refusal of the members' service is logged once a minute per reason (each names its sender): a removed
member that keeps running sends a vote request or two a second, which every member logged."""


class RefusalLog:
    """The members' service's refusals, logged at most once per reason per `REFUSAL_LOG_INTERVAL_MS`, the
    next with how many were not; reasons are forgotten once a minute passed without them (at most
    `_KEPT`, since a caller names what it likes)."""

    _KEPT = 1024

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._seen: dict[str, tuple[int, int]] = {}  # why -> (logged at, refusals not logged since)

    def refused(self, me: object, peer: str, why: str) -> None:
        now = self._clock.now_ms()
        seen = self._seen.get(why)
        if seen is not None and now - seen[0] < REFUSAL_LOG_INTERVAL_MS:
            self._seen[why] = (seen[0], seen[1] + 1)
            return
        if len(self._seen) >= self._KEPT:
            self._seen = {k: v for k, v in self._seen.items() if now - v[0] < REFUSAL_LOG_INTERVAL_MS}
            if len(self._seen) >= self._KEPT:
                self._seen.clear()
        more = f" ({seen[1]} more like it since {(now - seen[0]) // 1000} s ago)" if seen and seen[1] else ""
        self._seen[why] = (now, 0)
        log.warning("Raft member %s refused a call from %s: %s%s", me, peer, why, more)


class Division(Protocol):
    """What `RaftDivisions` routes a group's messages to (`server.RaftMember`)."""

    me: RaftPeerId
    group: RaftGroup
    running: bool

    def refusal(
        self, envelopes: list[RaftEnvelope], context: rpc.CallContext
    ) -> tuple[rpc.StatusCode | None, str]: ...

    def receive(self, envelopes: list[RaftEnvelope]) -> None: ...


class RaftDivisions:
    """One Raft port serving the members ("divisions") of many groups (Ratis's RaftServerProxy): it owns the
    rpc server and hands each call's messages to the member of the group they name, after that member's
    own checks (`refusal`: the caller's certificate role and host, the sender a member). A group with no
    member here is refused FAILED_PRECONDITION "GroupMismatchException" (Ratis's answer). `batch_bytes`: the
    largest append a member here takes (`raft.server.log.appender.buffer.byte-limit`), its call that plus
    `MESSAGE_OVERHEAD_BYTES`. A member stopping (or failed) leaves its group; the port stays for the rest."""

    def __init__(
        self,
        address: HostPort,
        tls: TlsStore | None,
        role: CertRole,
        batch_bytes: int,
        clock: Clock | None = None,
    ) -> None:
        self.address = address
        self.role = role
        self.tls = tls
        self._divisions: dict[str, Division] = {}
        self._refusals = RefusalLog(clock or SystemClock())
        self._rpc = rpc.Server(rpc.ServerSettings(max_message_bytes=batch_bytes + MESSAGE_OVERHEAD_BYTES))
        self._rpc.add_service(RAFT_SERVICE, self)
        self._started = False

    @property
    def groups(self) -> tuple[str, ...]:
        return tuple(self._divisions)

    def register(self, division: Division) -> None:
        group_id = division.group.group_id
        if group_id in self._divisions:
            raise ValueError(f"group {group_id} already has a member on {self.address}")
        self._divisions[group_id] = division

    def unregister(self, division: Division) -> None:
        if self._divisions.get(division.group.group_id) is division:
            del self._divisions[division.group.group_id]

    async def start(self) -> int:
        """Listens; returns the port (port 0: the one the OS chose, which `address` then names)."""
        port = await self._rpc.start(self.address.host, self.address.port, self.tls)
        self.address = HostPort(self.address.host, port)
        self._started = True
        return port

    async def stop(self) -> None:
        if self._started:
            self._started = False
            await self._rpc.stop(0)

    async def deliver(self, request: bytes, context: rpc.CallContext) -> pb.RaftServerMessagesAckProto:
        try:
            envelopes = messages_from_bytes(request)
        except ProtocolError as error:
            await context.abort(rpc.StatusCode.INVALID_ARGUMENT, f"INVALID_REQUEST: {error}")
        if not envelopes:
            return pb.RaftServerMessagesAckProto()
        group_id = envelopes[0].group_id
        member = self._divisions.get(group_id)
        if member is None:
            why = (
                f"GroupMismatchException: a message for group {group_id!r} reached {self.address}, which "
                f"serves no member of it"
            )
            self._refusals.refused(self.address, context.peer(), why)
            await context.abort(rpc.StatusCode.FAILED_PRECONDITION, why)
        if not member.running:
            await context.abort(rpc.StatusCode.UNAVAILABLE, f"Raft member {member.me} is stopping")
        code, why = member.refusal(envelopes, context)
        if code is not None:
            self._refusals.refused(member.me, context.peer(), why)
            await context.abort(code, why)
        member.receive(envelopes)
        return pb.RaftServerMessagesAckProto()
