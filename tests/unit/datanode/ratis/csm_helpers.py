"""The harness of the ContainerStateMachine tests (issue 30): three members over three
temporary datanodes are fed the same committed log, as the Raft shell feeds them: `write_data` for each
entry that carries data (at append), then `apply_async` in log order (after commit). Each member may run
its data stages at another point of its applies (`Feed`): every healthy member must still answer every
entry alike and end with the same replicas. The fixtures (`executor`, `members`) are in conftest.py."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from pyozone.datanode.ratis.state_machine import ContainerStateMachine
from pyozone.datanode.storage import (
    ChecksumType,
    ChunkInfo,
    ContainerError,
    KeyValueContainer,
    Result,
    compute,
)
from pyozone.datanode.xceiver import Dispatcher, vouching
from pyozone.hdds.ids import BlockID
from pyozone.hdds.states import ReplicaState
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.protocol.data import finalize_block_request
from pyozone.protocol.ratis import entry_data, entry_payload, refused_alike, succeeded
from pyozone.ratis.messages import LogEntry
from pyozone.ratis_server.member_api import DataWriteError
from tests.unit.datanode.dns_helpers import BPC, PIPELINE, Node, block_id, chunk, open_node, request, write

CID, OTHER = 5, 6
UUIDS = tuple(f"{n}{n}{n}{n}0000-0000-4000-8000-00000000000{n}" for n in (1, 2, 3))


class Feed(Enum):
    ALL_DATA_FIRST = "every data stage, then every apply"
    EACH_IN_TURN = "each entry's data stage after the previous entry was applied"


@dataclass
class Member:
    node: Node
    dispatcher: Dispatcher
    sm: ContainerStateMachine
    failures: list[tuple[str, str]] = field(default_factory=list)
    write_failed: str | None = None

    def container(self, cid: int = CID) -> KeyValueContainer:
        found = self.node.containers.get(cid)
        assert found is not None, f"container {cid} is not on {self.node.uuid}"
        return found

    def ask(self, req: pb.ContainerCommandRequestProto) -> pb.ContainerCommandResponseProto:
        """A read as a client sends it (not through the log)."""
        return self.dispatcher.dispatch(req)


def make_member(root: Path, uuid: str, executor: ThreadPoolExecutor, **settings: Any) -> Member:
    node = open_node(root / "dn", uuid, container_size="4MB")
    dispatcher = Dispatcher(node.containers, uuid, lambda _cid: None)
    failures: list[tuple[str, str]] = []
    sm = ContainerStateMachine(
        PIPELINE, dispatcher, executor, root / "ratis" / PIPELINE,
        lambda pipeline, reason: failures.append((pipeline, reason)), **settings,
    )  # fmt: skip
    return Member(node, dispatcher, sm, failures)


def entries(
    requests: Sequence[pb.ContainerCommandRequestProto], first: int = 1, term: int = 1
) -> list[LogEntry]:
    """The log entries the leader makes of `requests` (payload without data, data_size beside it)."""
    return [
        LogEntry(term, index, entry_payload(r), data_size=len(entry_data(r)))
        for index, r in enumerate(requests, first)
    ]


def datas(requests: Sequence[pb.ContainerCommandRequestProto]) -> list[bytes]:
    return [entry_data(r) for r in requests]


async def feed(
    member: Member, log: Sequence[LogEntry], data: Sequence[bytes], how: Feed = Feed.ALL_DATA_FIRST
) -> list[pb.ContainerCommandResponseProto | None]:
    """What the shell does on one member: data stages at append (a failed one fails the member for the
    group: nothing after it is acknowledged or applied), applies after commit, in log order."""
    answers: list[Any] = []

    async def write(entry: LogEntry, blob: bytes) -> bool:
        if not entry.data_size or member.write_failed:
            return not member.write_failed
        try:
            await member.sm.write_data(entry, memoryview(blob))
        except DataWriteError as e:
            member.write_failed = str(e)
            member.sm.notify_failed(str(e))
            return False
        return True

    if how is Feed.ALL_DATA_FIRST:
        for entry, blob in zip(log, data, strict=True):
            await write(entry, blob)
        if member.write_failed:
            return [None] * len(log)
        return list(await asyncio.gather(*(member.sm.apply_async(e) for e in log)))
    for entry, blob in zip(log, data, strict=True):
        if not await write(entry, blob):
            break
        answers.append(await member.sm.apply_async(entry))
    return answers + [None] * (len(log) - len(answers))


async def feed_all(
    members: Sequence[Member],
    requests: Sequence[pb.ContainerCommandRequestProto],
    hows: Sequence[Feed] = (Feed.ALL_DATA_FIRST, Feed.EACH_IN_TURN, Feed.ALL_DATA_FIRST),
    first: int = 1,
) -> list[list[str]]:
    """Every member fed the same log; each member's answers' Result names."""
    log, data = entries(requests, first), datas(requests)
    answers = [await feed(m, log, data, how) for m, how in zip(members, hows, strict=True)]
    return [[pb.Result.Name(a.result) if a is not None else "-" for a in mine] for mine in answers]


def replica(
    member: Member, cid: int = CID
) -> tuple[ReplicaState, int, list[tuple[int, int, tuple[str, ...]]]]:
    """What must be equal on every member: state, BCSID and committed blocks (id, BCSID, chunk names)."""
    c = member.container(cid)
    blocks = [(b.block_id.local_id, b.bcsid, tuple(ch.name for ch in b.chunks)) for b in c.list_blocks()]
    return c.state, c.bcsid, blocks


def run(coroutine: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, 60))


def finalize(lid: int, cid: int = CID) -> pb.ContainerCommandRequestProto:
    return finalize_block_request(BlockID(cid, lid), PIPELINE, "leader")


def piggybacked(cid: int, lid: int, data: bytes) -> pb.ContainerCommandRequestProto:
    """A writeChunk that commits its block too (Ozone's writeChunk with a putBlock)."""
    info = chunk(f"{lid}_chunk_0", 0, data)
    body = pb.WriteChunkRequestProto(
        blockID=block_id(cid, lid), chunkData=info, data=data,
        block=pb.PutBlockRequestProto(blockData=pb.BlockData(blockID=block_id(cid, lid), chunks=[info])),
    )  # fmt: skip
    return request(pb.WriteChunk, cid, writeChunk=body)


def bad_checksum(cid: int, lid: int, offset: int, data: bytes) -> pb.ContainerCommandRequestProto:
    info = chunk(f"{lid}_bad", offset, data)
    return write(cid, lid, info, bytes([data[0] ^ 1]) + data[1:])


def io_error(what: str) -> Callable[..., Any]:
    def fail(*_args: Any, **_kwargs: Any) -> Any:
        raise ContainerError(Result.IO_EXCEPTION, f"{what}: injected")

    return fail


def streamed(member: Member, data: bytes) -> None:
    """Block CID/1 written as a V2 datastream writes it on one member: outside the log, checked."""
    container = member.dispatcher.writable(CID, PIPELINE)
    sums = compute(data, ChecksumType.CRC32, BPC)
    chunk = ChunkInfo("1_chunk_1", 0, len(data), sums)
    member.dispatcher.write(container, BlockID(CID, 1), chunk, data, streamed=True)


def restarted(member: Member, executor: ThreadPoolExecutor, log_last_index: int) -> ContainerStateMachine:
    """A new state machine over the member's replicas and directory, as after a restart."""
    again = ContainerStateMachine(
        PIPELINE, member.dispatcher, executor, member.sm.directory,
        lambda p, r: member.failures.append((p, r)),
    )  # fmt: skip
    again.check_restart(log_last_index=log_last_index, lost=(), unrecorded_losses=False)
    return again


def twice(members: list[Member], requests: list[pb.ContainerCommandRequestProto], resend: list[int]) -> None:
    """The entries applied, then applied again at the same indexes (a replay after a restart, without the
    data stages: the data were written before the member acknowledged them), then the requests at
    `resend` positions sent again by the client and logged at new indexes (its retry after a leader
    change)."""

    async def scenario(member: Member, how: Feed) -> None:
        log = entries(requests)
        await feed(member, log, datas(requests), how)
        before = replica(member)
        replayed = await asyncio.gather(*(member.sm.apply_async(e) for e in log))
        # a write replayed after its block's finalize or its container's close is refused alike: no change
        assert all(succeeded(a.result) or refused_alike(a.result) for a in replayed)
        assert replica(member) == before, "a replay at the same indexes changed the replica"
        assert member.failures == []
        again = [requests[i] for i in resend]
        answers = await feed(member, entries(again, len(log) + 1), datas(again), how)
        assert [a.result if a else None for a in answers] == [pb.SUCCESS] * len(again)

    for member, how in zip(
        members, (Feed.ALL_DATA_FIRST, Feed.EACH_IN_TURN, Feed.ALL_DATA_FIRST), strict=True
    ):
        run(scenario(member, how))
    assert replica(members[0]) == replica(members[1]) == replica(members[2])


def held_by_stream(leader: Member, req: pb.ContainerCommandRequestProto) -> Callable[[], bytes] | None:
    """What `leader` checks of a putBlock before it logs it, as PipelineGroups.route asks it: its own bytes
    for the chunks its log did not carry."""
    return vouching.held_by_stream(leader.dispatcher.containers, req, leader.sm.uncarried)
