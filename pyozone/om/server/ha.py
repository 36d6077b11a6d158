"""OM high availability on the Raft shell: leader-side execution (HDDS-11898; docs/om.md "High
availability").

The leader executes a request as a lone OM does, against the table cache (which shows the leader's own
uncommitted transactions, so the next request builds on them); om.db's double buffer only stages the
transaction (om/double_buffer.py `replicate`). `OmReplication` hands the staged transactions to the Raft
member in epoch order: a call's ops with the call and its answer (protocol/om_ratis.py), the calls that
finished in one turn of the loop in one entry, as HDDS-11898's leader batches them. Every OM applies the
committed entries (`apply`, the StateMachine): the leader queues its staged ops for the flusher, a follower
puts them in its cache and queues them; om.db receives them with `#TRANSACTIONINFO` (term#index) in the same
batch, unsynced (the Raft log is the WAL). The client is answered once its entry is applied on the leader:
committed, so durable in a majority's logs.

Step-down (the member no longer leads, or an entry of another leader is applied, or a submit fails): the OM
stops executing, forgets the staged transactions that were never applied (once everything applied is in
om.db, their cache entries go: a key then reads its committed value) and their callers get
OMNotLeaderException; they retry elsewhere with the same call id, and the retry cache there answers if the
entry did commit. A new leader answers OMLeaderNotReadyException until it has applied its log up to its
term's first entry, then takes the id counter om.db holds.

Reads are served by the leader only, after a ReadIndex round (Ratis's raft.server.read.option
LINEARIZABLE); concurrent reads share one round.

Every OM fills the retry cache (om/server/retry_cache.py) as it applies entries; only the leader answers
from it, after `check_leader`. A call stays in flight (a retry waits for it) until its entry is
applied or dropped, however long after the request timeout answered its first caller.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import heapq
import itertools
import logging
import random
import time
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from pyozone.common.net import HostPort
from pyozone.common.tls import TlsStore
from pyozone.framework.om_errors import OMLeaderNotReadyException, OMNotLeaderException
from pyozone.hdds.security.x509 import om_node_name
from pyozone.om.db_checkpoint import (
    CHECKPOINT_PATH,
    TRANSACTION_INFO,
    CheckpointError,
    fetch_and_install,
    transaction_info,
)
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.metadata import META_TABLE, OMMetadataStore, OMStoreError, Op
from pyozone.om.server.retry_cache import (
    RETRY_CACHE_TIMEOUT_MS,
    AnsweredStatus,
    RetryCache,
    call_key,
    replay,
)
from pyozone.protocol.om_ratis import CallAnswer, entry_from_bytes, entry_to_bytes
from pyozone.ratis.messages import LogEntry, RaftPeerId, TermIndex
from pyozone.ratis.roles import RaftPeerRole
from pyozone.ratis.settings import RaftSettings
from pyozone.ratis_server.auto_snapshot import AutoSnapshot
from pyozone.ratis_server.member_api import (
    ApplyFailedError,
    InstalledSnapshot,
    NotLeaderError,
    TransferRefusedError,
)
from pyozone.ratis_server.read_rounds import ReadRounds
from pyozone.ratis_server.roles import member_roles
from pyozone.ratis_server.server import RaftMember

if TYPE_CHECKING:
    from pyozone.om.core import OzoneManager

log = logging.getLogger(__name__)

REQUEST_TIMEOUT_MS = 3_000
"""ozone.om.ratis.server.request.timeout's default."""
ROLE_CHECK_INTERVAL_S = 0.1
"""How often the daemon has `OmReplication.follow_role` look at its member's role: a tenth of the
shortest election timeout Ozone allows (ozone.om.ratis.minimum.timeout, 1 s), one cheap look."""
SNAPSHOT_THRESHOLD = 400_000
"""ozone.om.ratis.snapshot.auto.trigger.threshold's default."""
BATCH_MAX = 128
"""At most this many transactions in one entry (and at most `entry_byte_limit` bytes)."""
ANSWER_ROOM = 64 * 1024
"""What an entry keeps free for its answers and framing: a transaction's ops may take the rest of
raft.server.log.appender.buffer.byte-limit."""
OP_FRAMING = 16
"""A record's protobuf framing in an entry, at most (tags and lengths), beside its table, key and value."""

READS = frozenset(
    {
        "infoVolume", "listVolumes", "infoBucket", "listBuckets", "lookupKey", "listKeys", "listParts",
        "listMultipartUploads", "getAcl", "getServiceInfo", "getS3Secret", "getS3SigningKey", "getBucketCors",
        "listKeyVersions", "getBucketLifecycle", "getBucketPolicy", "getBucketPublicAccessBlock",
        "getBucketOwnershipControls", "getBucketEncryption",
    }
)  # fmt: skip
"""The calls that read: each waits for a ReadIndex round first (a call that may also write, getS3Secret,
takes the write path as well)."""


def ops_bytes(ops: Sequence[Op]) -> int:
    """What `ops` take in an entry, at most."""
    return sum(len(t) + len(k.encode()) + len(v or b"") + OP_FRAMING for t, k, v in ops)


def _answer_bytes(answer: CallAnswer | None) -> int:
    if answer is None:
        return 0
    return len(answer.client_id) + len(answer.method) + len(answer.response) + len(answer.error_details)


@dataclass(eq=False)
class _Staged:
    epoch: int
    ops: Sequence[Op]
    client_id: str
    call_id: int
    sealed: bool = False
    answer: CallAnswer | None = None

    @property
    def size(self) -> int:
        return ops_bytes(self.ops) + _answer_bytes(self.answer)


@dataclass(eq=False)
class _Batch:
    """One Raft entry: staged transactions, in epoch order, and the bytes submitted for them."""

    staged: list[_Staged]
    payload: bytes
    term: int


@dataclass(eq=False)
class _Attempt:
    """One execution of a call, known (for a named call, in `_inflight`) until it committed or was dropped."""

    executed: asyncio.Future[None]
    """The handler returned: the request timeout runs from here."""
    outcome: asyncio.Future[Any]
    """The answer once committed, or the error."""


@dataclass(eq=False)
class _Call:
    client_id: str
    call_id: int
    cached: bool
    """Whether the client named the call (its answer goes to the retry cache)."""
    staged: list[_Staged] = field(default_factory=list)
    seen: int = 0
    """The last epoch the call's jobs could have read."""
    closed: bool = False


CALL: contextvars.ContextVar[_Call | None] = contextvars.ContextVar("om_ha_call", default=None)
"""The call a handler runs for (HA only): CoreCalls.run / on_loop (om/server/durability.py) record what
it saw, the buffer's stage hook what it wrote."""


class OmReplication:
    """The Raft member's state machine and the leader's replicator, on the serving loop. Create it on
    that loop before the member (`attach` it after)."""

    def __init__(
        self,
        store: OMMetadataStore,
        core: OzoneManager,
        node_id: str,
        rpc_addresses: Mapping[str, str],
        retry_cache_timeout_ms: int = RETRY_CACHE_TIMEOUT_MS,
        request_timeout_ms: int = REQUEST_TIMEOUT_MS,
        entry_byte_limit: int = RaftSettings().append_byte_limit,
        snapshot_threshold: int = SNAPSHOT_THRESHOLD,
        http_addresses: Mapping[str, str] | None = None,
        tls: TlsStore | None = None,
        service_id: str = "",
    ) -> None:
        """`rpc_addresses`: each OM's client address (host:port) by node id, named in refusals;
        `request_timeout_ms`: how long a call waits for its transactions to commit; `entry_byte_limit`:
        raft.server.log.appender.buffer.byte-limit, what one entry may carry; `snapshot_threshold`:
        ozone.om.ratis.snapshot.auto.trigger.threshold; `http_addresses`: each OM's web server (host:port),
        where a follower fetches the leader's om.db checkpoint (https with `tls`, from the certificate of
        `service_id`'s leader node)."""
        if snapshot_threshold <= 0:
            raise ValueError(
                f"ozone.om.ratis.snapshot.auto.trigger.threshold must be positive, got {snapshot_threshold}"
            )
        self._http_addresses = dict(http_addresses or {})
        self._tls = tls
        self._service_id = service_id
        self._entry_byte_limit = entry_byte_limit
        self._transaction_limit = max(1, entry_byte_limit - ANSWER_ROOM)
        self._request_timeout_s = request_timeout_ms / 1000
        self.store = store
        self._rpc_addresses = dict(rpc_addresses)
        self.core = core
        self.node_id = node_id
        self._buffer = store.buffer
        self._loop = asyncio.get_running_loop()
        self._applied_epoch = 0
        """The last epoch applied here (committed): what a call waits for before it is answered."""
        self._waiting: list[tuple[int, int, asyncio.Future[None]]] = []
        self._order = itertools.count()
        self.retry_cache = RetryCache(retry_cache_timeout_ms, lambda: time.monotonic() * 1000)
        self.db_applied = transaction_info(store.get(META_TABLE, TRANSACTION_INFO))
        """The last entry om.db held at start (or installed from the leader): the log's entries up to it
        are not applied again."""
        self.snapshot_index = self.db_applied.index
        """The last snapshot told to the member (`take_snapshot`)."""
        self.auto_snapshot = AutoSnapshot(snapshot_threshold, self.take_snapshot, self._loop, "om-snapshot")
        self._installing = False
        self.snapshots = 0
        self.installs = 0
        self.install_failures = 0
        self.members_at_install: Callable[[RaftPeerId], Awaitable[tuple[RaftPeerId, ...]]] | None = None
        """The group's members at a checkpoint installed from the leader (om.db records none): the daemon
        asks the leader for its members in force (om/server/membership.py); None, or () answered: the
        group's first members."""
        self.on_failed: Callable[[str], None] | None = None
        """What the daemon does once the member failed for its group (`notify_failed`): it exits."""
        self._member: RaftMember | None = None
        self._own_client = f"om-{node_id}-{uuid.uuid4()}"
        self._own_calls = itertools.count(1)
        self._staged: deque[_Staged] = deque()
        self._submitted: deque[_Batch] = deque()
        self._drain_scheduled = False
        self._ready_term: int | None = None
        self._hint: str | None = None
        """The leader `check_leader` last saw, when another."""
        self._generation = 0
        self._inflight: dict[tuple[str, int], _Attempt] = {}
        self._reads = ReadRounds(lambda: self.member.read_index(), self._read_refusal, f"OM {node_id}")
        self.stepdowns = 0
        self._buffer.refuse(self._refusal)
        self._buffer.replicate(self._on_stage, self._admit)

    def attach(self, member: RaftMember) -> None:
        self._member = member

    @property
    def member(self) -> RaftMember:
        if self._member is None:
            raise RuntimeError("OM's Raft member is not attached")
        return self._member

    def report(self) -> dict[str, Any]:
        """What the web UI's JSON shows (/api/v1/ratis): role, term, leader, indexes, each follower's lag."""
        member = self.member
        if not member.running:
            return {"nodeId": self.node_id, "running": False}
        status = member.status()
        return {
            "nodeId": self.node_id,
            "running": True,
            "groupId": status.group_id,
            "role": status.role.name,
            "ready": self.leading(),
            "term": status.term,
            "leader": status.leader.id if status.leader is not None else None,
            "lastIndex": status.last_index,
            "commitIndex": status.commit_index,
            "appliedIndex": status.applied_index,
            "omDbAppliedAtStart": self.db_applied.index,
            "followers": [
                {"nodeId": f.peer.id, "matchIndex": f.match_index, "lag": f.lag} for f in status.followers
            ],
            "members": member_roles(status, member.group.peers, self._rpc_addresses),
            "retryCacheEntries": len(self.retry_cache),
            "readIndexRounds": self.read_rounds,
            "stepDowns": self.stepdowns,
            "snapshotIndex": self.snapshot_index,
            "snapshots": self.snapshots,
            "snapshotInstalls": self.installs,
            "snapshotInstallFailures": self.install_failures,
        }

    # ------------------------------------------------------------------ who may serve
    def leading(self) -> bool:
        """This OM leads and executes (background services run only then)."""
        member = self._member
        return (
            member is not None and self._ready_term is not None and member.leading_term() == self._ready_term
        )

    def _not_leader(self, leader_id: str | None = None) -> AnsweredStatus:
        member = self._member
        if leader_id is None and member is not None and member.running:
            known = member.status().leader
            leader_id = known.id if known is not None and known.id != self.node_id else None
        address = self._rpc_addresses.get(leader_id) if leader_id is not None else None
        refusal = OMNotLeaderException(self.node_id, leader_id, address)
        return AnsweredStatus("UNAVAILABLE", refusal.details())

    def _refusal(self) -> Exception:
        """What a write staged while this OM does not execute raises (any thread: the last leader seen)."""
        return self._not_leader(self._hint)

    def check_leader(self) -> None:
        """Raises the refusal a call gets when this OM cannot execute it now; takes over as the leader
        once its log is applied up to its term's start."""
        member = self.member
        term = member.leading_term()
        if term is not None and term == self._ready_term:
            return
        status = member.status() if member.running else None
        if status is None or status.role is not RaftPeerRole.LEADER:
            if self._ready_term is not None or self._staged or self._submitted:
                self._reset("this OM no longer leads")
            leader = status.leader.id if status is not None and status.leader is not None else None
            self._hint = leader
            raise self._not_leader(leader)
        if self._ready_term == status.term:
            return
        if self._ready_term is not None:
            self._reset(f"term {status.term} began")
        if status.applied_index < status.last_index or self._buffer.dropping or self._submitted:
            raise AnsweredStatus("UNAVAILABLE", OMLeaderNotReadyException(self.node_id).details())
        self.core.reload_ids()
        self._buffer.refuse(None)
        self._ready_term = status.term
        log.info("OM %s leads its service from term %d (applied up to %d)", self.node_id, status.term,
                 status.applied_index)  # fmt: skip

    def follow_role(self) -> None:
        """Steps up, or down, without waiting for a call: an elected OM's background services and its
        /api/v1/ratis `ready` must not wait for the first client (Ozone's leader is ready once its state
        machine applied its term's first entry, OzoneManagerRatisServer.checkLeaderStatus), and a deposed
        one stops them at once. The daemon calls it every `ROLE_CHECK_INTERVAL_S`."""
        if self._member is not None:
            with contextlib.suppress(AnsweredStatus):
                self.check_leader()

    async def transfer_leadership(self, node_id: str | None) -> str:
        """Hands leadership to `node_id` (None: another OM at random), as Ozone's `admin om transfer`:
        returns the new leader's id once this OM stepped down. AnsweredStatus: INVALID_ARGUMENT for a
        target that is no other OM (or none to pick), FAILED_PRECONDITION while another transfer runs
        (Ratis's TransferLeadershipException), DEADLINE_EXCEEDED when the target did not take over."""
        self.check_leader()
        others = [p.id for p in self.member.group.peers if p.id.id != self.node_id]
        if not others:
            raise AnsweredStatus(
                "INVALID_ARGUMENT", f"INVALID_REQUEST: OM {self.node_id} is the only OM of its service: "
                "there is no other OM to hand the leadership to",
            )  # fmt: skip
        if node_id is None:
            target = random.choice(others)
        else:
            found = [p for p in others if p.id == node_id]
            if not found:
                named = ", ".join(p.id for p in others)
                raise AnsweredStatus(
                    "INVALID_ARGUMENT",
                    f"INVALID_REQUEST: {node_id!r} is not another OM of the service ({named})",
                )
            target = found[0]
        try:
            moved = await self.member.transfer_leadership(target)
        except TransferRefusedError as e:
            raise AnsweredStatus("FAILED_PRECONDITION", f"OM {self.node_id}: {e}") from None
        except NotLeaderError as e:
            raise self._not_leader(e.leader_id.id if e.leader_id is not None else None) from None
        if not moved:
            raise AnsweredStatus(
                "DEADLINE_EXCEEDED",
                f"OM {target.id} did not take over from OM {self.node_id} in time "
                "(raft.server.rpc.timeout.max): is it running and caught up?",
            )
        self._reset(f"leadership handed to {target.id}")
        return target.id

    # ------------------------------------------------------------------ serving a call
    async def serve(self, name: str, run: Callable[[], Awaitable[Any]], context: Any, user: str = "") -> Any:
        """Runs a handler as the leader: the retry cache first (after `check_leader`, for the same caller
        only), then (reads) a ReadIndex round, then the handler; its transactions are replicated with its
        answer, which is returned once they are in om.db. AnsweredStatus for a refusal or a replayed error.

        `user`: the authenticated caller (empty with ACLs off): a call id names a call of that caller only.
        The handler runs in a task of its own: a caller cancelled (its deadline) or answered UNAVAILABLE
        after ozone.om.ratis.server.request.timeout leaves it running; until its transactions commit or are
        dropped, a retry of the call waits for it and is never executed again."""
        self.check_leader()
        key = call_key(context, user)
        if key is not None:
            cached = self.retry_cache.get(key)
            if cached is not None:
                return replay(cached, name)
            running = self._inflight.get(key)
            if running is not None:
                return await self._answer(running)
        if key is None:
            call = _Call(self._own_client, next(self._own_calls), cached=False)
        else:
            call = _Call(key[0], key[1], cached=True)
        attempt = _Attempt(self._loop.create_future(), self._loop.create_future())
        if key is not None:
            self._inflight[key] = attempt
        task = self._loop.create_task(self._execute(name, run, call, self._generation, attempt))
        task.add_done_callback(partial(self._finished, key, attempt))
        return await self._answer(attempt)

    async def _answer(self, attempt: _Attempt) -> Any:
        """The attempt's answer once committed; UNAVAILABLE when its transactions take longer than the
        request timeout (Ratis's TimeoutIOException: the entry may still commit, the client retries with the
        same call id and this attempt or the retry cache answers it)."""
        await asyncio.shield(attempt.executed)
        done, _ = await asyncio.wait({attempt.outcome}, timeout=self._request_timeout_s)
        if not done:
            raise AnsweredStatus(
                "UNAVAILABLE",
                f"OM {self.node_id}: the call was not committed within "
                f"ozone.om.ratis.server.request.timeout ({self._request_timeout_s:g}s)",
            )
        return attempt.outcome.result()

    def _finished(self, key: tuple[str, int] | None, attempt: _Attempt, task: asyncio.Task[Any]) -> None:
        """The attempt committed, failed or was dropped: its callers get its outcome, a retry from now on
        the retry cache's answer (or a new execution when it recorded none)."""
        if key is not None and self._inflight.get(key) is attempt:
            del self._inflight[key]
        if not attempt.executed.done():
            attempt.executed.set_result(None)
        error = self._not_leader() if task.cancelled() else task.exception()
        if error is None:
            attempt.outcome.set_result(task.result())
        else:
            attempt.outcome.set_exception(error)
            attempt.outcome.exception()  # retrieved: no caller may be waiting any more

    async def _execute(
        self, name: str, run: Callable[[], Awaitable[Any]], call: _Call, generation: int, attempt: _Attempt
    ) -> Any:
        if name in READS:
            await self._reads.barrier()
            self.check_leader()
        token = CALL.set(call)
        answer: Any = None
        failure: BaseException | None = None
        try:
            answer = await run()
        except BaseException as error:  # a CancelledError too (OM stopping): its staged writes still go
            failure = error
        finally:
            CALL.reset(token)
            encoded = self._seal(call, name, answer, failure)
            attempt.executed.set_result(None)
        if failure is not None and not isinstance(failure, Exception):
            raise failure
        upto = max(call.seen, call.staged[-1].epoch if call.staged else 0)
        if generation != self._generation:
            raise self._not_leader()
        if upto > self._applied_epoch:
            future = self._loop.create_future()
            heapq.heappush(self._waiting, (upto, next(self._order), future))
            await future
            if generation != self._generation:
                raise self._not_leader()
        if failure is not None:
            raise failure
        return answer if encoded is None else encoded  # the rpc layer sends bytes as they are

    def _seal(self, call: _Call, name: str, answer: Any, failure: BaseException | None) -> bytes | None:
        """The call's staged transactions may go to the log now; the last carries its answer (none when the
        handler was interrupted: a retry executes again). Returns the answer's bytes when it encoded them
        for the log."""

        def close() -> None:
            call.closed = True

        self._buffer.locked(close)
        if not call.staged:
            return None
        encoded = None
        for staged in call.staged:
            staged.sealed = True
        if call.cached and not isinstance(failure, AnsweredStatus):
            if failure is None and answer is not None:
                encoded = answer.SerializeToString()
                recorded = CallAnswer(call.client_id, call.call_id, name, encoded)
            elif isinstance(failure, OMException):
                recorded = CallAnswer(
                    call.client_id, call.call_id, name, b"", failure.status_name, str(failure)
                )
            else:
                recorded = None
            call.staged[-1].answer = recorded
        if not self._drain_scheduled:
            self._drain_scheduled = True
            self._loop.call_soon(self._drain)
        return encoded

    # ------------------------------------------------------------------ to the log
    def _admit(self, ops: Sequence[Op]) -> None:
        """Refuses a transaction one entry could not carry, before anything sees it: submitted, it would
        fail with nothing to do but drop every transaction staged after it (and a record written whole,
        as a volume with ever more ACLs, would fail that way at each write)."""
        size = ops_bytes(ops)
        if size > self._transaction_limit:
            raise OMException(
                OMResultCode.INVALID_REQUEST,
                f"the request's write is {size} bytes, above the {self._transaction_limit} bytes one OM "
                f"Ratis log entry may carry (raft.server.log.appender.buffer.byte-limit "
                f"{self._entry_byte_limit} less {ANSWER_ROOM} for its answer)",
            )

    def _on_stage(self, epoch: int, ops: Sequence[Op]) -> None:
        """Under the buffer's lock, from any thread: a transaction the leader executed."""
        call = CALL.get()
        if call is None or call.closed:  # a background service's, or a call that stopped waiting
            staged = _Staged(epoch, ops, self._own_client, next(self._own_calls), sealed=True)
        else:
            staged = _Staged(epoch, ops, call.client_id, call.call_id)
            call.staged.append(staged)
        self._staged.append(staged)
        if staged.sealed and not self._drain_scheduled:
            self._drain_scheduled = True
            self._loop.call_soon_threadsafe(self._drain)

    def _drain(self) -> None:
        """Submits the sealed transactions at the head of the staged queue, in epoch order, those sealed
        in one turn of the loop as one entry (tasks start in the order they are created, so the log's
        order is the epochs')."""
        self._drain_scheduled = False
        member = self._member
        if member is None:
            return
        while self._staged and self._staged[0].sealed:
            staged = [self._staged.popleft()]
            size = staged[0].size
            while self._staged and self._staged[0].sealed and len(staged) < BATCH_MAX:
                size += self._staged[0].size
                if size > self._transaction_limit:
                    break
                staged.append(self._staged.popleft())
            ops = [op for s in staged for op in s.ops]
            payload = entry_to_bytes(ops, [s.answer for s in staged if s.answer is not None])
            self._submitted.append(_Batch(staged, payload, self._ready_term or 0))
            # The entry is OM's own call: its clients' calls ride in its payload and OM's retry cache
            # answers their replays; under a client's ids the core's retry cache would answer a batch
            # resubmitted after a failed one with the earlier entry's result.
            task = self._loop.create_task(member.submit(payload, self._own_client, next(self._own_calls)))
            task.add_done_callback(partial(self._submit_done, self._generation))

    def _submit_done(self, generation: int, task: asyncio.Task[object]) -> None:
        """An entry failed: what was staged after it may build on it, so the uncommitted transactions are
        dropped; only a NotLeaderError (or the member stopping) counts as a step-down."""
        if task.cancelled():
            error: BaseException | None = asyncio.CancelledError()
        else:
            error = task.exception()
        if error is not None and generation == self._generation:
            lost = isinstance(error, (NotLeaderError, asyncio.CancelledError))
            if not lost:
                log.error("OM %s: an entry was refused by the Raft member: %s", self.node_id, error)
            self._reset(f"an entry was not committed: {error}", stepdown=lost)

    # ------------------------------------------------------------------ the state machine
    def apply(self, entry: LogEntry) -> object:
        """A committed entry, in log order, on the loop (every OM). One that cannot be applied (bytes that
        are not an entry, om.db's flusher failed) is an ApplyFailedError: the member fails rather than go
        past it, as OzoneManagerStateMachine terminates on an applyTransaction failure."""
        try:
            return self._apply(entry)
        except Exception as error:
            raise ApplyFailedError(
                f"OM {self.node_id} could not apply log entry {entry.term}#{entry.index} "
                f"({type(error).__name__}: {error}); it stops rather than go past it: a restart applies it "
                "again from the log"
            ) from error

    def notify_failed(self, reason: str) -> None:
        """The member failed for its group (an entry not applied, its log not written): it serves no more
        (`check_leader` refuses), and the daemon exits (Ozone: ExitUtils.terminate)."""
        log.critical("OM %s: its Raft member failed: %s", self.node_id, reason)
        if self.on_failed is not None:
            self.on_failed(reason)

    def _apply(self, entry: LogEntry) -> object:
        info = (META_TABLE, TRANSACTION_INFO, f"{entry.term}#{entry.index}".encode())
        head = self._submitted[0] if self._submitted else None
        # the leader's own entry: the next it submitted, in its term (the same bytes)
        if head is not None and head.term == entry.term and head.payload == entry.payload:
            self._submitted.popleft()
            last = head.staged[-1]
            for staged in head.staged:
                self._buffer.enqueue(staged.epoch, [*staged.ops, info] if staged is last else staged.ops)
                if staged.answer is not None:
                    self.retry_cache.put(staged.answer)
            self._applied(last.epoch)
            self._snapshot_due(entry.index)
            return None
        decoded = entry_from_bytes(entry.payload)
        for answer in decoded.answers:
            self.retry_cache.put(answer)
        if entry.index <= self.db_applied.index:
            return None  # om.db holds it (a restart replays the log from its start)
        if self._ready_term is not None or self._staged or self._submitted:
            self._reset(f"entry {entry.index} of term {entry.term} is another leader's")
        self._applied(self._buffer.apply(decoded.ops, [info]))
        self._snapshot_due(entry.index)
        return None

    # ------------------------------------------------------------------ snapshots
    def _snapshot_due(self, index: int) -> None:
        self.auto_snapshot.applied(index, self.snapshot_index)

    def latest_snapshot(self) -> TermIndex | None:
        """What om.db held at start (its #TRANSACTIONINFO): the member resumes after it."""
        return self.db_applied if self.db_applied.index else None

    async def take_snapshot(self) -> TermIndex | None:
        """OzoneManagerStateMachine.takeSnapshot: om.db made to hold every applied entry durably
        (`snapshot_point`), then the member hears `snapshot_taken` with its #TRANSACTIONINFO and purges its
        log up to it past raft.server.log.purge.gap. Returns that point (None: nothing new, or the member
        stopped). Also on a clean stop."""
        try:
            raw = await asyncio.to_thread(self.store.snapshot_point)
            point = transaction_info(raw)
            member = self._member
            if point.index <= self.snapshot_index or member is None or not member.running or self._installing:
                return None
            member.snapshot_taken(point)
            self.snapshot_index = point.index
            self.snapshots += 1
            log.info("OM %s: snapshot at %s (om.db flushed)", self.node_id, point)
            return point
        except (OMStoreError, ValueError) as error:
            log.warning("OM %s: no snapshot taken: %s", self.node_id, error)
            return None

    async def install_snapshot(
        self, leader_id: RaftPeerId, leader_address: HostPort | None, first_available: TermIndex
    ) -> InstalledSnapshot | None:
        """OzoneManagerStateMachine.notifyInstallSnapshotFromLeader: the leader's log starts at
        `first_available`, past what this OM holds. Downloads the leader's om.db checkpoint from its web
        server (`/dbCheckpoint`), checks it (its SHA-256, that it opens, a #TRANSACTIONINFO reaching the
        leader's log) and swaps it in as om.db (om/db_checkpoint.py). A checkpoint refused is never
        installed: None, and the member asks again at the leader's next notification."""
        where = self._http_addresses.get(leader_id.id)
        if where is None:
            log.error("OM %s: no web address for OM %s: cannot fetch its checkpoint", self.node_id, leader_id)
            return None
        url = f"{'https' if self._tls is not None else 'http'}://{where}{CHECKPOINT_PATH}"
        await self.auto_snapshot.ended()
        self._installing = True
        try:
            context = self._tls.client_context() if self._tls is not None else None
            at_least = first_available.index - 1
            node = om_node_name(self._service_id, leader_id.id) if self._service_id else ""
            installed = await asyncio.to_thread(
                fetch_and_install, url, context, self.store.path, self.store.install, at_least, node
            )
        except (CheckpointError, OMStoreError, OSError) as error:  # OSError: the staging directory
            self.install_failures += 1
            log.error(
                "OM %s: the checkpoint of OM %s was refused, nothing installed (retried at the leader's next "
                "notification): %s", self.node_id, leader_id, error,
            )  # fmt: skip
            return None
        finally:
            self._installing = False
        self.db_applied = installed
        self.snapshot_index = installed.index
        self.installs += 1
        log.info("OM %s installed the checkpoint of OM %s at %s", self.node_id, leader_id, installed)
        asking = self.members_at_install
        return installed, (await asking(leader_id) if asking is not None else ())

    def _applied(self, epoch: int) -> None:
        """Answers the calls waiting for epochs up to `epoch`."""
        self._applied_epoch = epoch
        waiting = self._waiting
        while waiting and waiting[0][0] <= epoch:
            future = heapq.heappop(waiting)[2]
            if not future.done():
                future.set_result(None)

    def _reset(self, why: str, stepdown: bool = True) -> None:
        """Step-down (or a refused entry): execute nothing more, fail the callers of what was not applied,
        and drop it from the cache once everything applied is in om.db; a leader is ready again once
        `check_leader` finds the drop done."""
        self._generation += 1
        self._ready_term = None
        self.stepdowns += stepdown

        def take() -> set[int]:
            self._buffer.refuse(self._refusal)
            dropped = {s.epoch for s in self._staged}
            dropped.update(s.epoch for batch in self._submitted for s in batch.staged)
            self._staged.clear()
            self._submitted.clear()
            return dropped

        dropped = self._buffer.locked(take)
        waiting, self._waiting = self._waiting, []  # each waits for an epoch not applied: dropped
        for _, _, future in waiting:
            if not future.done():
                future.set_exception(self._not_leader(self._hint))
        self._buffer.drop_after_flush(dropped, self.store.stored_value, self._refusal)
        log.info(
            "OM %s stops executing: %s (%d transaction(s) not committed)", self.node_id, why, len(dropped)
        )

    # ------------------------------------------------------------------ linearizable reads
    @property
    def read_rounds(self) -> int:
        return self._reads.rounds

    def _read_refusal(self, error: Exception) -> BaseException:
        """A read whose ReadIndex round failed: OMNotLeaderException naming the leader the member named."""
        if isinstance(error, NotLeaderError):
            return self._not_leader(error.leader_id.id if error.leader_id is not None else None)
        return error
