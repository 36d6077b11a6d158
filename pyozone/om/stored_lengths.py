"""What a key's blocks hold on the datanodes, learned before a commit is charged to a space quota (issue 28,
defect 2).

Ozone's OM charges a bucket and its volume with the lengths the client commits: a client that stored 8 MiB
and declared 1 byte was charged 1 byte. OM bounds each block by what it allocated (its block token's
maxLength, which datanodes enforce; core.written_blocks refuses a longer commit), and where a space quota is
in force on the key's bucket or volume it asks every datanode holding each replicated block for its
committed length (the container protocol's GetCommittedBlockLength, with a READ block token OM signs for
itself): all blocks and replicas at once, on the event loop, within one deadline
(`ozone.om.commit.block.length.check.timeout`). Each block is then charged (`charge`):

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

What is written into a block after its commit is not seen (docs/differences.md: the datanode would have to
refuse writes to a block OM finalized).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass

import grpc

from pyozone.common.grpc_client import user_metadata
from pyozone.common.net import HostPort
from pyozone.common.tls import AioRenewing, TlsStore, renewing_aio_channel
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.ids import BlockID, ReplicationConfig
from pyozone.hdds.limits import MAX_DATA_MESSAGE_BYTES, grpc_options
from pyozone.hdds.security.users import login_user
from pyozone.hdds.states import ReplicationType
from pyozone.om.block_tokens import READ, BlockTokenIssuer
from pyozone.om.core import OzoneManager
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.records import KeyBlock, replicated_size
from pyozone.om.replication import replica_bytes
from pyozone.proto import DatanodeClientProtocol_pb2 as data_pb2
from pyozone.proto import DatanodeClientProtocol_pb2_grpc as data_grpc
from pyozone.protocol.data import committed_length_from_proto, committed_length_request

log = logging.getLogger(__name__)

DATA_PORT = "STANDALONE"
"""The port of a datanode's xceiver service, as the datanode registers it."""


class NoAnswer(Exception):
    """One datanode did not answer with the block's length (unreachable, or it refused)."""


@dataclass(frozen=True, slots=True)
class Pending:
    """A block of a commit to be charged: what it declares and was allocated."""

    index: int  # in the commit's locations
    block: KeyBlock
    allocated: int
    """Key bytes OM allocated it (its token's maxLength); 0: an open key recorded before OM kept it."""
    replication: ReplicationConfig
    token: str = ""  # the READ token for its GetCommittedBlockLength, where datanodes require one

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
        self._channels: dict[str, AioRenewing] = {}

    def needed(self, volume: str, bucket: str) -> bool:
        """Whether a space quota is in force on the bucket or its volume (a missing one: the commit says)."""
        try:
            return bool(
                self.om.info_bucket(volume, bucket).quota_bytes or self.om.info_volume(volume).quota_bytes
            )
        except OMException:
            return False

    def plan(
        self, volume: str, bucket: str, key: str, client_id: int, blocks: Sequence[KeyBlock]
    ) -> tuple[Pending, ...]:
        """The blocks of a commit of an open key (a key or a multipart part) to charge, with the requests
        for their lengths (blocking: OM's executor). A block not allocated to it is left to the commit,
        which refuses it; so is a repeated commit of a session that committed (answered as the first)."""
        if self.om.committed_session(volume, bucket, key, client_id) is not None:
            return ()
        opened = self.om.open_key_record(volume, bucket, key, client_id)
        allocated = {b.block_id: b.length for b in opened.blocks}
        config = opened.replication
        asked = config.type is not ReplicationType.EC
        return tuple(
            Pending(i, block, allocated[block.block_id], config, self._token(block.block_id) if asked else "")
            for i, block in enumerate(blocks)
            if block.length > 0 and block.block_id in allocated
        )

    def _token(self, block: BlockID) -> str:
        return self.tokens.block_token(block, self.owner, READ) if self.tokens is not None else ""

    async def charges(self, plan: Sequence[Pending]) -> dict[BlockID, int]:
        """Each planned block's charge in replicated bytes (`charge`): its container located, then its
        replicas asked, all at once on the event loop; what has not answered by the deadline is given up."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout_s
        located = await self._locate({p.block.block_id.container_id for p in plan if p.asked}, deadline)
        asks = {
            asyncio.ensure_future(
                self._ask(datanode, committed_length_request(p.block.block_id, str(datanode.uuid), p.token))
            ): p
            for p in plan
            for datanode in located.get(p.block.block_id.container_id, ())
        }
        if asks:
            _, late = await asyncio.wait(asks, timeout=max(0.0, deadline - loop.time()))
            for task in late:
                task.cancel()
            await asyncio.gather(*late, return_exceptions=True)
        answered: dict[int, list[int]] = {p.index: [] for p in plan}
        silent: dict[int, list[str]] = {}
        for task, pending in asks.items():
            if task.cancelled():
                silent.setdefault(pending.index, []).append("no answer in time")
            elif task.exception() is not None:
                silent.setdefault(pending.index, []).append(str(task.exception()))
            else:
                answered[pending.index].append(task.result())
        charged = {}
        for p in plan:
            everyone = p.block.block_id.container_id in located and p.index not in silent
            charged[p.block.block_id] = charge(p, answered[p.index], everyone)
            if p.asked and not answered[p.index]:
                log.info(
                    "block %s charged its allocation, %d bytes: no replica's length (%s)", p.block.block_id,
                    p.bound, "; ".join(silent.get(p.index, ["its container not located in time"])),
                )  # fmt: skip
        return charged

    async def _locate(self, containers: set[int], deadline: float) -> dict[int, tuple[DatanodeDetails, ...]]:
        """The replicas of each container (OM's location cache, else SCM: blocking, so in a thread) that are
        known by the deadline."""
        loop = asyncio.get_running_loop()
        jobs = {c: loop.run_in_executor(None, self.om.locations.get, c) for c in containers}
        if jobs:
            await asyncio.wait(jobs.values(), timeout=max(0.0, deadline - loop.time()))
        located: dict[int, tuple[DatanodeDetails, ...]] = {}
        for container, job in jobs.items():
            if not job.done():
                job.cancel()  # SCM still answering: the thread ends on its own
            elif job.exception() is None:
                location = job.result()
                located[container] = tuple(r.datanode for r in location.replicas) or tuple(
                    location.members.values()
                )
        return located

    async def _ask(self, datanode: DatanodeDetails, request: data_pb2.ContainerCommandRequestProto) -> int:
        port = datanode.port(DATA_PORT)
        if not port:
            raise NoAnswer(f"{datanode.uuid}: no {DATA_PORT} port")
        address = str(HostPort(datanode.ip_address or datanode.hostname, port))
        channel = self._channels.get(address)
        if channel is None:
            channel = self._channels[address] = renewing_aio_channel(
                address,
                grpc_options(MAX_DATA_MESSAGE_BYTES),
                self.tls,
                data_grpc.XceiverClientProtocolServiceStub,
            )
        call = channel.stub.send(iter([request]), metadata=user_metadata(self.tls))
        try:
            response = await call.read()
        except grpc.aio.AioRpcError as e:
            raise NoAnswer(f"{address}: {e.code().name}: {e.details()}") from None
        finally:
            call.cancel()
        if response is grpc.aio.EOF:
            raise NoAnswer(f"{address}: no answer")
        try:
            return committed_length_from_proto(response)
        except ProtocolError as e:
            raise NoAnswer(f"{address}: {e}") from None

    async def close(self) -> None:
        channels, self._channels = list(self._channels.values()), {}
        for channel in channels:
            await channel.close()
