"""What a key's blocks hold on the datanodes, learned before a commit is charged to a space quota (issue 28,
defect 2).

Ozone's OM charges a bucket and its volume with the lengths the client commits: a client that stored 8 MiB
and declared 1 byte was charged 1 byte. OM bounds each block by what it allocated (its block token's
maxLength, which datanodes enforce; KeyManager.written_blocks refuses a longer commit), and where a space
quota is in force on the key's bucket or volume it learns what each replicated block holds: the length its
FinalizeBlock answers (below), or else every replica's committed length (the container protocol's
GetCommittedBlockLength, with a READ block token OM signs for itself): all blocks and replicas at once, on
the event loop, within one deadline (`ozone.om.commit.block.length.check.timeout`). Each block is then
charged (`charge`):

- what its fullest replica stores, capped at its allocation, never less than declared: a replica may rightly
  hold more than the client commits (a putBlock applied but not acknowledged by every replica: the client
  commits the acknowledged length and rewrites the rest to a new block), and those bytes are stored;
- its allocation (the most its token lets any replica store: a safe upper bound) when that cannot be
  learned in time (a datanode hung or unreachable, SCM not saying in time where the container is): the
  commit never waits on, or fails for, a datanode;
- a commit is refused (INVALID_BLOCK_LIST) only when every replica answered and each holds less than
  declared: the client claims bytes no datanode has. The open key is kept (the client may retry).

EC block groups are charged their allocation on every index (docs/differences.md): after a failure an index
may rightly hold stripes past the group's committed length (client/ec_output.py), so no replica's length
says what the group holds, and each index may store what the group's token allows (its maxLength).

A replicated block is first finalized (the container protocol's FinalizeBlock, with a WRITE block token OM
signs for itself, sent to its pipeline's leader, which orders it in the pipeline's log after every putBlock
before it): from then on every replica refuses writes to it (BLOCK_ALREADY_FINALIZED), so a write token
cannot add bytes after the commit, and the answer's length, charged, is final. One request per block. Where
it cannot be finalized within half the time left (no OPEN pipeline: the container is closing and takes no
writes anyway; the leader down or not the leader any more; the block not there) its replicas are asked
their committed lengths instead, as above.

Every request goes through the datanode client (framework/datanode.py, `ChannelPool.call`): one stream per
request, kept for the next commit's when it was answered.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyozone.common.tls import TlsStore
from pyozone.framework.datanode import ChannelPool, DatanodeCallError
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.ids import BlockID, ReplicationConfig
from pyozone.hdds.locations import DatanodeRef
from pyozone.hdds.om_records import KeyBlock, replicated_size
from pyozone.hdds.security.block_token import AccessMode
from pyozone.hdds.security.users import login_user
from pyozone.hdds.states import LifeCycleState, PipelineState, ReplicationType
from pyozone.om.block_tokens import READ, WRITE, BlockTokenIssuer
from pyozone.om.core import OzoneManager
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.replication import replica_bytes
from pyozone.protocol.data import (
    committed_length_from_proto,
    committed_length_request,
    finalize_block_request,
    finalized_length_from_proto,
)
from pyozone.rpc.metadata import user_metadata

if TYPE_CHECKING:
    from pyozone.protocol.data import Request, Response

log = logging.getLogger(__name__)

DATA_PORT = "STANDALONE"
"""The port of a datanode's xceiver service, as the datanode registers it."""


class NoAnswer(Exception):
    """One datanode did not answer with the block's length (unreachable, or it refused)."""


@dataclass(frozen=True, slots=True)
class Located:
    """Where a container is: its replicas, and its pipeline's leader while both are OPEN (None: no
    finalize can be ordered, the container is closing and takes no more writes anyway)."""

    replicas: tuple[DatanodeDetails, ...]
    leader: DatanodeDetails | None
    pipeline_id: str


@dataclass(frozen=True, slots=True)
class Learned:
    """What a block's replicas said: the lengths they hold, whether every one asked answered, and why
    the others did not."""

    lengths: tuple[int, ...]
    everyone: bool
    problems: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Pending:
    """A block of a commit to be charged: what it declares and was allocated."""

    index: int  # in the commit's locations
    block: KeyBlock
    allocated: int
    """Key bytes OM allocated it (its token's maxLength); 0: an open key recorded before OM kept it."""
    replication: ReplicationConfig
    token: str = ""  # the READ token for its GetCommittedBlockLength, where datanodes require one
    finalize_token: str = ""  # the WRITE token for its FinalizeBlock, where datanodes require one

    @property
    def asked(self) -> bool:
        """Whether its replicas are asked for its length (an EC block group's are not)."""
        return self.replication.type is not ReplicationType.EC

    @property
    def bound(self) -> int:
        """The most the block may hold: its allocation (its declared length when that is not recorded)."""
        return max(self.allocated, self.block.length)


def charge(pending: Pending, stored: Sequence[int], everyone_answered: bool) -> int:
    """The replicated bytes a block is charged, from the lengths its replicas answered (module docstring);
    an EC block group: each index what its token allows it."""
    config = pending.replication
    if not pending.asked:
        return config.required_nodes * replica_bytes(config, pending.bound)
    declared = pending.block.length
    fullest = max(stored, default=-1)
    if fullest >= declared:
        return replicated_size(config, max(declared, min(fullest, pending.bound)))
    if stored and everyone_answered:
        raise OMException(
            OMResultCode.INVALID_BLOCK_LIST,
            f"locations[{pending.index}]: no datanode holds the {declared} bytes the commit declares of "
            f"block {pending.block.block_id} (the fullest of {len(stored)} holds {fullest})",
        )
    return replicated_size(config, pending.bound)


class StoredLengths:
    def __init__(
        self,
        om: OzoneManager,
        tls: TlsStore | None,
        tokens: BlockTokenIssuer | None,
        timeout_s: float,
        owner: str = "",
    ) -> None:
        """`tokens`: READ tokens for OM's own requests (hdds.block.token.enabled), else None; `timeout_s`:
        how long a commit waits for the lengths (ozone.om.commit.block.length.check.timeout); `owner`: the
        name the tokens carry (default: the login user)."""
        self.om = om
        self.tls = tls
        self.tokens = tokens
        self.timeout_s = timeout_s
        self.owner = owner or login_user()
        self._datanodes = ChannelPool(tls, metadata=user_metadata(tls))

    def needed(self, volume: str, bucket: str) -> bool:
        """Whether a space quota is in force on the bucket or its volume (a missing one: the commit says)."""
        try:
            return bool(
                self.om.bucket_info(volume, bucket).quota_bytes or self.om.volume_info(volume).quota_bytes
            )
        except OMException:
            return False

    def plan(
        self, volume: str, bucket: str, key: str, client_id: int, blocks: Sequence[KeyBlock]
    ) -> tuple[Pending, ...]:
        """The blocks of a commit of an open key (a key or a multipart part) to charge, with the requests
        for their lengths (blocking: OM's executor). A block not allocated to it is left to the commit,
        which refuses it; so is a repeated commit of a session that committed (answered as the first)."""
        if self.om.keys.committed_session(volume, bucket, key, client_id) is not None:
            return ()
        opened = self.om.keys.open_record(volume, bucket, key, client_id)
        allocated = {b.block_id: b.length for b in opened.blocks}
        config = opened.replication
        asked = config.type is not ReplicationType.EC
        return tuple(
            Pending(
                i,
                block,
                allocated[block.block_id],
                config,
                self._token(block.block_id, READ) if asked else "",
                self._token(block.block_id, WRITE) if asked else "",
            )
            for i, block in enumerate(blocks)
            if block.length > 0 and block.block_id in allocated
        )

    def _token(self, block: BlockID, modes: frozenset[AccessMode]) -> str:
        return self.tokens.block_token(block, self.owner, modes) if self.tokens is not None else ""

    async def charges(self, plan: Sequence[Pending]) -> dict[BlockID, int]:
        """Each planned block's charge in replicated bytes (`charge`): its container located, then its
        length learned (`_learn`), all blocks at once on the event loop, by the deadline."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout_s
        located = await self._locate({p.block.block_id.container_id for p in plan if p.asked}, deadline)
        learning = {
            asyncio.ensure_future(self._learn(p, located[p.block.block_id.container_id], deadline)): p
            for p in plan
            if p.block.block_id.container_id in located
        }
        if learning:
            await asyncio.wait(learning)  # each gives up at the deadline
        learned = {pending.index: task.result() for task, pending in learning.items()}
        charged = {}
        for p in plan:
            what = learned.get(p.index, Learned((), False, ("its container not located in time",)))
            charged[p.block.block_id] = charge(p, what.lengths, what.everyone)
            if p.asked and not what.lengths:
                log.info(
                    "block %s charged its allocation, %d bytes: no replica's length (%s)", p.block.block_id,
                    p.bound, "; ".join(what.problems),
                )  # fmt: skip
        return charged

    async def _learn(self, pending: Pending, location: Located, deadline: float) -> Learned:
        """A block's stored length: finalized through its pipeline's leader (one request; every replica
        then holds that length for good), else, where that cannot be done (no open pipeline, the leader
        refused or gave no answer within half the time left), each replica's committed length (one request
        each)."""
        block = pending.block.block_id
        problems: list[str] = []
        if location.leader is None:
            problems.append("finalize: its container or pipeline is not OPEN, or has no leader")
        else:
            request = finalize_block_request(
                block, location.pipeline_id, str(location.leader.uuid), pending.finalize_token
            )
            budget = max(0.0, deadline - asyncio.get_running_loop().time()) / 2
            try:
                length = await asyncio.wait_for(
                    self._ask(location.leader, request, finalized_length_from_proto), budget
                )
                return Learned((length,), True)
            except NoAnswer as e:
                problems.append(f"finalize: {e}")
            except TimeoutError:
                problems.append(f"finalize: {location.leader.uuid} gave no answer in time")
        log.info("block %s not finalized (%s): its replicas are asked its length", block, problems[0])
        token = pending.token
        asks = [
            asyncio.ensure_future(
                self._ask(d, committed_length_request(block, str(d.uuid), token), committed_length_from_proto)
            )
            for d in location.replicas
        ]
        lengths: list[int] = []
        silent: list[str] = []
        try:
            if asks:
                await asyncio.wait(asks, timeout=max(0.0, deadline - asyncio.get_running_loop().time()))
        finally:
            for task in asks:
                task.cancel()
            await asyncio.gather(*asks, return_exceptions=True)
        for task in asks:
            if task.cancelled():
                silent.append("no answer in time")
            elif isinstance(task.exception(), NoAnswer):
                silent.append(str(task.exception()))
            elif task.exception() is not None:
                raise task.exception()  # type: ignore[misc]
            else:
                lengths.append(task.result())
        return Learned(tuple(lengths), not silent, (*problems, *silent))

    async def _locate(self, containers: set[int], deadline: float) -> dict[int, Located]:
        """Where each container is (OM's location cache, else SCM: blocking, so in a thread), as known by
        the deadline: its replicas, and the leader of its pipeline while both are OPEN."""
        loop = asyncio.get_running_loop()
        jobs = {c: loop.run_in_executor(None, self.om.locations.get, c) for c in containers}
        if jobs:
            await asyncio.wait(jobs.values(), timeout=max(0.0, deadline - loop.time()))
        located: dict[int, Located] = {}
        for container, job in jobs.items():
            if not job.done():
                job.cancel()  # SCM still answering: the thread ends on its own
            elif job.exception() is None:
                location = job.result()
                pipeline = location.pipeline
                leader = None
                if (
                    location.state is LifeCycleState.OPEN
                    and pipeline is not None
                    and pipeline.state is PipelineState.OPEN
                    and pipeline.leader is not None
                ):
                    leader = location.members.get(pipeline.leader)
                located[container] = Located(
                    tuple(r.datanode for r in location.replicas) or tuple(location.members.values()),
                    leader,
                    pipeline.id if pipeline is not None else "",
                )
        return located

    async def _ask(
        self, datanode: DatanodeDetails, request: Request, length_of: Callable[[Response], int]
    ) -> int:
        port = datanode.port(DATA_PORT)
        if not port:
            raise NoAnswer(f"{datanode.uuid}: no {DATA_PORT} port")
        ref = DatanodeRef(str(datanode.uuid), datanode.hostname, datanode.ip_address, port)
        try:
            response = await self._datanodes.call(ref, request, self.timeout_s)
        except DatanodeCallError as e:
            raise NoAnswer(f"{ref.address}: {e.result}: {e.message}") from None
        try:
            return length_of(response)
        except ProtocolError as e:
            raise NoAnswer(f"{ref.address}: {e}") from None

    async def close(self) -> None:
        await self._datanodes.close()
