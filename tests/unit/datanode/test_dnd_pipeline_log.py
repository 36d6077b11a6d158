"""Write pipeline V1 on three in-process datanodes, each pipeline a group of the Raft core: the leader (SCM's
suggested one, elected at once with its priority) logs writes without their chunk data, which every member
writes at append; it answers once the entry committed and it applied it, and a watch for ALL_COMMITTED tells
when every member committed it; a silent follower fails the watch and, after
hdds.ratis.raft.server.rpc.slowness.timeout, makes the leader ask SCM to close the pipeline; a close goes
through the log so every replica closes at the same BCSID."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, ExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

from pyozone import rpc
from pyozone.datanode.daemon import Datanode
from pyozone.datanode.storage.errors import ContainerError
from pyozone.hdds.checksum import ChecksumType, compute
from pyozone.hdds.commands import CloseContainerCommand, ClosePipelineCommand, CreatePipelineCommand
from pyozone.hdds.ids import BlockID
from pyozone.hdds.states import ReplicaState
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.protocol import MAX_DATA_MESSAGE_BYTES
from pyozone.protocol.data import finalize_block_request, finalized_length_from_proto
from pyozone.protocol.ratis import entry_request
from pyozone.ratis.messages import EntryKind, LogEntry
from tests.polling import wait_for_async
from tests.unit.datanode.dnd_helpers import (
    FakeScm,
    allocated_on,
    async_test,
    dn_conf,
    running,
    wait_for_beat,
)

PID = "22222222-0000-4000-8000-000000000001"
CID = 7
BPC = 16 * 1024

XCEIVER = rpc.service(pb, "XceiverClientProtocolService")


class Cluster:
    def __init__(self, dns: list[Datanode], scms: list[FakeScm], stops: list[Callable[[], Awaitable[None]]]):
        self.dns, self.scms, self._stops = dns, scms, stops

    async def stop(self, i: int) -> None:
        """Stops datanode i: its servers close, so its peers' streams to it break (as after a kill)."""
        await self._stops[i]()


@asynccontextmanager
async def three_datanodes(tmp_path: Path) -> AsyncIterator[Cluster]:
    with ExitStack() as scms_stack:
        scms = [scms_stack.enter_context(FakeScm()) for _ in range(3)]
        async with AsyncExitStack() as stack:
            dns, stops = [], []
            for i, scm in enumerate(scms):
                conf = dn_conf(
                    tmp_path / f"dn{i}", scm.address,
                    **{
                        "hdds.ratis.raft.server.watch.timeout": "2s",
                        "hdds.ratis.raft.server.rpc.slowness.timeout": "3s",
                    },
                )  # fmt: skip
                ctx = running(conf, lookup=allocated_on(PID))
                dns.append(await ctx.__aenter__())
                stack.push_async_exit(ctx)
                stops.append(_once(ctx))
            await wait_for_async(lambda: all(scm.beats() for scm in scms), what="heartbeats")
            await _create_pipeline(scms, dns, PID)
            yield Cluster(dns, scms, stops)


def _once(ctx: AbstractAsyncContextManager[Datanode]) -> Callable[[], Awaitable[None]]:
    """Exits the datanode's context now; the exit stack's later exit is then a no-op."""
    done = False
    original = ctx.__aexit__

    async def stop() -> None:
        nonlocal done
        if not done:
            done = True
            await original(None, None, None)

    async def aexit(*_: object) -> None:
        await stop()

    ctx.__aexit__ = aexit  # type: ignore[method-assign]
    return stop


def _logged(dn: Datanode, pipeline_id: str = PID) -> tuple[LogEntry, ...]:
    """The pipeline's log on `dn` (its member's), every entry."""
    group = dn.groups.get(pipeline_id)
    assert group is not None
    core = group.member._core
    assert core is not None
    return core.log.entries()


async def _applied_everywhere(dns: Sequence[Datanode], bcsid: int) -> None:
    """Every replica of CID applied the putBlock at `bcsid` (followers apply after the leader answered)."""
    await wait_for_async(
        lambda: all(CID in dn.containers and dn.containers.require(CID).bcsid >= bcsid for dn in dns),
        what=f"every replica at BCSID {bcsid}",
    )


def _chunk(local_id: int, n: int, offset: int, data: bytes) -> pb.ChunkInfo:
    sums = compute(data, ChecksumType.CRC32, BPC)
    return pb.ChunkInfo(
        chunkName=f"{local_id}_chunk_{n}", offset=offset, len=len(data),
        checksumData=pb.ChecksumData(type=pb.CRC32, bytesPerChecksum=BPC, checksums=list(sums.checksums)),
    )  # fmt: skip


def _requests(local_id: int, data: bytes, chunk_size: int) -> list[pb.ContainerCommandRequestProto]:
    block = pb.DatanodeBlockID(containerID=CID, localID=local_id)
    chunks, requests = [], []
    for n, offset in enumerate(range(0, len(data), chunk_size)):
        piece = data[offset : offset + chunk_size]
        chunk = _chunk(local_id, n, offset, piece)
        chunks.append(chunk)
        requests.append(
            pb.ContainerCommandRequestProto(
                cmdType=pb.WriteChunk,
                containerID=CID,
                pipelineID=PID,
                writeChunk=pb.WriteChunkRequestProto(blockID=block, chunkData=chunk, data=piece),
            )
        )
    put = pb.PutBlockRequestProto(
        blockData=pb.BlockData(blockID=block, chunks=chunks, size=len(data)), eof=True
    )
    requests.append(
        pb.ContainerCommandRequestProto(cmdType=pb.PutBlock, containerID=CID, pipelineID=PID, putBlock=put)
    )
    return requests


def _watch(index: int) -> pb.ContainerCommandRequestProto:
    return pb.ContainerCommandRequestProto(
        cmdType=pb.WatchForCommit, containerID=CID, pipelineID=PID,
        watchForCommit=pb.WatchForCommitRequestProto(index=index, replication=pb.ALL_COMMITTED),
    )  # fmt: skip


async def _send(
    dn: Datanode, requests: list[pb.ContainerCommandRequestProto]
) -> list[pb.ContainerCommandResponseProto]:
    target = f"127.0.0.1:{dn.ports.standalone}"
    async with rpc.Channel(target, rpc.ChannelSettings(MAX_DATA_MESSAGE_BYTES)) as channel:
        return [a async for a in rpc.Stub(channel, XCEIVER).send(iter(requests), timeout=20)]


def _ok(answers: list[pb.ContainerCommandResponseProto]) -> None:
    assert all(a.result == pb.SUCCESS for a in answers), [
        (pb.Result.Name(a.result), a.message) for a in answers
    ]


@async_test
async def test_leader_orders_replicates_and_watch_all_sees_every_replica(tmp_path: Path) -> None:
    async with three_datanodes(tmp_path) as cluster:
        dns = cluster.dns
        data = bytes(range(256)) * 1024  # 256 KiB in 4 chunks
        answers = await _send(dns[0], _requests(1, data, 64 * 1024))
        _ok(answers)
        indexes = [a.logIndex for a in answers]
        assert indexes == sorted(indexes) and len(set(indexes)) == len(indexes)
        put = answers[-1]
        bcsid = put.putBlock.committedBlockLength.blockID.blockCommitSequenceId
        assert bcsid == put.logIndex
        assert sum(1 for info in put.commitInfos if info.commitIndex >= put.logIndex) >= 2  # a majority
        (watched,) = await _send(dns[0], [_watch(put.logIndex)])
        _ok([watched])
        assert all(info.commitIndex >= put.logIndex for info in watched.commitInfos)
        await _applied_everywhere(dns, bcsid)  # committed everywhere; followers apply after
        for dn in dns:  # every replica has the block, committed at the log index
            container = dn.containers.require(CID)
            assert container.bcsid == bcsid
            block = container.get_block(BlockID(CID, 1))
            got = b"".join(container.read_chunk(BlockID(CID, 1), c) for c in block.chunks)
            assert got == data
            records = [e for e in _logged(dn) if e.kind is EntryKind.STATE_MACHINE]
            assert [r.index for r in records] == indexes  # metadata only, data in the block file
            assert all(not entry_request(r.payload).writeChunk.data for r in records)
            assert [r.data_size for r in records] == [64 * 1024] * 4 + [0]


@async_test
async def test_followers_and_strangers_refuse_client_writes(tmp_path: Path) -> None:
    async with three_datanodes(tmp_path) as cluster:
        dns = cluster.dns
        (answer,) = await _send(dns[1], _requests(2, b"x" * 100, 100)[:1])
        assert answer.result == pb.NOT_LEADER and dns[0].uuid in answer.message
        stranger = _requests(2, b"x" * 100, 100)[0]
        stranger.pipelineID = "22222222-0000-4000-8000-0000000000ff"
        (answer,) = await _send(dns[0], [stranger])
        assert answer.result == pb.GROUP_MISMATCH


@async_test
async def test_failed_follower_fails_watch_all_and_asks_scm_to_close_the_pipeline(tmp_path: Path) -> None:
    async with three_datanodes(tmp_path) as cluster:
        dns, scms = cluster.dns, cluster.scms
        _ok(await _send(dns[0], _requests(1, b"a" * 1000, 1000)))
        # Stop the last follower; a majority (leader + one follower) remains.
        victim = dns[2]
        await cluster.stop(2)
        answers = await _send(dns[0], _requests(2, b"b" * 1000, 1000))
        _ok(answers)  # committed at majority
        (watched,) = await _send(dns[0], [_watch(answers[-1].logIndex)])
        assert watched.result == pb.NOT_REPLICATED
        behind = {i.datanodeUuid for i in watched.commitInfos if i.commitIndex < answers[-1].logIndex}
        assert behind == {victim.uuid}
        beat = await wait_for_beat(scms[0], lambda hb: hb.pipeline_actions)
        assert beat.pipeline_actions[0].pipeline_id == PID and victim.uuid in beat.pipeline_actions[0].reason


@async_test
async def test_close_through_the_log_closes_every_replica_at_one_bcsid(tmp_path: Path) -> None:
    async with three_datanodes(tmp_path) as cluster:
        dns, scms = cluster.dns, cluster.scms
        _ok(await _send(dns[0], _requests(1, b"c" * 5000, 2000)))
        for scm in reversed(scms):  # followers first: they only mark CLOSING and wait for the log
            scm.send(CloseContainerCommand(container_id=CID, pipeline_id=PID, force=False))
        await wait_for_async(
            lambda: all(dn.containers.require(CID).state is ReplicaState.CLOSED for dn in dns), what="CLOSED"
        )
        assert len({dn.containers.require(CID).bcsid for dn in dns}) == 1
        (late,) = await _send(dns[0], _requests(3, b"d" * 10, 10)[:1])
        assert late.result == pb.CLOSED_CONTAINER_IO


@async_test
async def test_a_follower_waiting_for_the_close_entry_quasi_closes_when_the_pipeline_goes(
    tmp_path: Path,
) -> None:
    async with three_datanodes(tmp_path) as cluster:
        dns, scms = cluster.dns, cluster.scms
        _ok(await _send(dns[0], _requests(1, b"e" * 100, 100)))
        await wait_for_async(lambda: CID in dns[1].containers, what="the follower's replica")
        scms[1].send(CloseContainerCommand(container_id=CID, pipeline_id=PID))
        await wait_for_async(
            lambda: dns[1].containers.require(CID).state is ReplicaState.CLOSING, what="CLOSING"
        )
        scms[1].send(ClosePipelineCommand(pipeline_id=PID))
        await wait_for_async(
            lambda: dns[1].containers.require(CID).state is ReplicaState.QUASI_CLOSED, what="QUASI"
        )
        assert PID not in dns[1].groups and not (dns[1].groups.directory / PID).exists()


@async_test
async def test_a_client_that_goes_away_mid_stream_leaves_no_gap_in_the_log(tmp_path: Path) -> None:
    async with three_datanodes(tmp_path) as cluster:
        dns = cluster.dns
        requests = _requests(1, bytes(64 * 1024) * 30, 64 * 1024)[:-1]  # 30 chunks, no putBlock

        async def abandoned() -> None:
            target = f"127.0.0.1:{dns[0].ports.standalone}"
            async with rpc.Channel(target, rpc.ChannelSettings(MAX_DATA_MESSAGE_BYTES)) as ch:
                call = rpc.Stub(ch, XCEIVER).send(iter(requests))
                await call.read()  # the first answer: entries are in the log
                call.cancel()

        await abandoned()
        answers = await _send(dns[0], _requests(2, b"after" * 100, 500))
        _ok(answers)
        (watched,) = await _send(dns[0], [_watch(answers[-1].logIndex)])
        _ok([watched])
        # What the client sent before it went away may still be ordered after the next writer's: pyozone.rpc
        # has no per-stream window (gRPC's held most of the 30 chunks back), so all of them may reach the
        # leader, which takes them in arrival order until it reads the cancel or the connection's end.
        for dn in dns:
            await wait_for_async(lambda dn=dn: _logged(dn)[-1].index >= answers[-1].logIndex, what="logged")
            indexes = [r.index for r in _logged(dn)]
            assert indexes == list(range(1, len(indexes) + 1)) and indexes[-1] >= answers[-1].logIndex


@async_test
async def test_a_follower_whose_replica_went_unhealthy_keeps_the_pipeline_and_lacks_the_block(
    tmp_path: Path,
) -> None:
    """CONTAINER_UNHEALTHY is a refusal every member could reach (protocol.ratis.DETERMINISTIC): the member
    whose replica went unhealthy commits the entry (its log holds it) and applies it as a refusal, so the
    pipeline goes on; its replica, UNHEALTHY, lacks the block and SCM replaces it from the healthy ones
    (docs/write-pipeline.md, "Failures close the pipeline through SCM"; Ozone would close it instead)."""
    async with three_datanodes(tmp_path) as cluster:
        dns, scms = cluster.dns, cluster.scms
        _ok(await _send(dns[0], _requests(1, b"f" * 1000, 1000)))
        await wait_for_async(lambda: CID in dns[2].containers, what="the follower's replica")
        dns[2].containers.require(CID).mark_unhealthy("damaged on this replica only")
        answers = await _send(dns[0], _requests(2, b"g" * 1000, 1000))
        _ok(answers)
        (watched,) = await _send(dns[0], [_watch(answers[-1].logIndex)])
        _ok([watched])
        await _applied_everywhere(dns[:2], answers[-1].logIndex)
        for dn in dns[:2]:
            (got,) = await _send(dn, [_get_block(2)])
            _ok([got])
        replica = dns[2].containers.require(CID)
        assert replica.state is ReplicaState.UNHEALTHY
        assert all(b.block_id.local_id != 2 for b in replica.list_blocks())
        assert not any(hb.pipeline_actions for scm in scms for hb in scm.beats())


def _direct(request: pb.ContainerCommandRequestProto, bcsid: int = 0) -> pb.ContainerCommandRequestProto:
    """The request sent outside the pipeline (no pipelineID), its block id claiming BCSID `bcsid`."""
    direct = pb.ContainerCommandRequestProto()
    direct.CopyFrom(request)
    direct.ClearField("pipelineID")
    if direct.HasField("putBlock"):
        direct.putBlock.blockData.blockID.blockCommitSequenceId = bcsid
    return direct


def _get_block(local_id: int) -> pb.ContainerCommandRequestProto:
    return pb.ContainerCommandRequestProto(
        cmdType=pb.GetBlock, containerID=CID,
        getBlock=pb.GetBlockRequestProto(blockID=pb.DatanodeBlockID(containerID=CID, localID=local_id)),
    )  # fmt: skip


@async_test
async def test_a_client_cannot_set_a_containers_bcsid_outside_the_log(tmp_path: Path) -> None:
    """Issue 28 defect 1: a direct putBlock claiming BCSID 2^62 on every member made each later putBlock
    through the log a replay, dropped while the leader answered SUCCESS. A RATIS container takes writes
    only through its pipeline's log; its BCSID is the log's index, never the client's number."""
    async with three_datanodes(tmp_path) as cluster:
        dns = cluster.dns
        mine = _requests(1, b"m" * 1000, 1000)
        answers = await _send(dns[0], mine)
        _ok(answers)
        await _applied_everywhere(dns, answers[-1].logIndex)
        before = {dn.uuid: dn.containers.require(CID).bcsid for dn in dns}
        for dn in dns:
            close = pb.ContainerCommandRequestProto(
                cmdType=pb.CloseContainer, containerID=CID, closeContainer=pb.CloseContainerRequestProto()
            )
            for attack in (_direct(mine[-1], 1 << 62), _direct(mine[0]), close):
                (answer,) = await _send(dn, [attack])
                assert pb.Result.Name(answer.result) == "UNSUPPORTED_REQUEST", answer.message
                assert "through its pipeline's log" in answer.message
        assert {dn.uuid: dn.containers.require(CID).bcsid for dn in dns} == before
        assert all(dn.containers.require(CID).state is ReplicaState.OPEN for dn in dns)
        theirs = b"t" * 3000
        answers = await _send(dns[0], _requests(2, theirs, 1000))
        _ok(answers)
        _ok(await _send(dns[0], [_watch(answers[-1].logIndex)]))
        await _applied_everywhere(dns, answers[-1].logIndex)
        for dn in dns:  # every replica has the other writer's block, at the log's index
            (got,) = await _send(dn, [_get_block(2)])
            _ok([got])
            assert got.getBlock.blockData.size == len(theirs)
            assert got.getBlock.blockData.blockID.blockCommitSequenceId == answers[-1].logIndex


@async_test
async def test_a_leader_without_room_for_a_new_container_refuses_it_and_keeps_the_pipeline(
    tmp_path: Path,
) -> None:
    """Issue 28 defect 16: a leader whose volume could not take the write's new container applied the
    entry, refused it with DISK_OUT_OF_SPACE and failed itself, so every full disk closed a pipeline and SCM
    built another. The leader refuses such a write before it enters the log (nothing to diverge, the
    client turns elsewhere) and the pipeline stays, for its other containers and once space returns."""
    async with three_datanodes(tmp_path) as cluster:
        dns = cluster.dns
        for v in dns[0].volumes.data_volumes:
            v.reserved_bytes = 1 << 62  # the leader's disk fills
        (answer,) = await _send(dns[0], _requests(1, b"h" * 1000, 1000)[:1])
        assert answer.result == pb.DISK_OUT_OF_SPACE, answer
        assert not answer.logIndex and all(CID not in dn.containers for dn in dns)
        for v in dns[0].volumes.data_volumes:
            v.reserved_bytes = 0  # space returns: the same pipeline takes the container
        _ok(await _send(dns[0], _requests(1, b"h" * 1000, 1000)))
        assert not any(hb.pipeline_actions for scm in cluster.scms for hb in scm.beats())


PID2 = "22222222-0000-4000-8000-000000000002"


async def _create_pipeline(scms: Sequence[Any], dns: Sequence[Any], pipeline_id: str) -> None:
    """Pipeline `pipeline_id` on `dns` (three datanodes), led by the first, as SCM creates one."""
    details = [dn.identity.identity.details() for dn in dns]
    for scm in scms:
        scm.send(
            CreatePipelineCommand(
                pipeline_id=pipeline_id,
                factor=3,
                nodes=tuple(d.uuid for d in details),
                suggested_leader=details[0].uuid,
                datanodes=tuple(details),
            )
        )
    await wait_for_async(lambda: all(pipeline_id in dn.groups for dn in dns), what=f"pipeline {pipeline_id}")

    def led() -> bool:
        groups = [dn.groups.get(pipeline_id) for dn in dns]
        return all(g is not None and g.leader_id == dns[0].uuid for g in groups)

    await wait_for_async(led, 15, f"pipeline {pipeline_id} led by its suggested leader")


async def _second_pipeline(cluster: Cluster) -> None:
    """Pipeline PID2 on the same three datanodes, led by the same one (the default cluster has two
    RATIS/THREE pipelines on its three datanodes)."""
    await _create_pipeline(cluster.scms, cluster.dns, PID2)


def _via(
    requests: list[pb.ContainerCommandRequestProto], pipeline_id: str
) -> list[pb.ContainerCommandRequestProto]:
    """The requests sent to `pipeline_id`'s leader, naming that pipeline."""
    out = []
    for request in requests:
        moved = pb.ContainerCommandRequestProto()
        moved.CopyFrom(request)
        moved.pipelineID = pipeline_id
        out.append(moved)
    return out


@async_test
async def test_a_write_through_another_pipelines_log_is_refused(tmp_path: Path) -> None:
    """Issue 28 defect 1, through another pipeline: a block of container CID (pipeline PID) written through
    PID2's log committed at PID2's index on every replica, above CID's own log's; every later putBlock of
    CID through PID was then dropped as a replay (answered SUCCESS, then NO_SUCH_BLOCK). A write of a RATIS
    container is refused unless it names the container's own pipeline, before it takes an index."""
    async with three_datanodes(tmp_path) as cluster:
        dns = cluster.dns
        await _second_pipeline(cluster)
        first = await _send(dns[0], _requests(1, b"m" * 1000, 1000))
        _ok(first)
        await _applied_everywhere(dns, first[-1].logIndex)  # the last member too, before BCSIDs are read
        before = [dn.containers.require(CID).bcsid for dn in dns]
        last_index = _logged(dns[0], PID2)[-1].index
        answers = await _send(dns[0], _via(_requests(9, b"z" * 4000, 100), PID2))
        assert {pb.Result.Name(a.result) for a in answers} == {"CONTAINER_NOT_FOUND"}, answers[0].message
        assert f"not 0 of {PID2}" in answers[0].message
        assert _logged(dns[0], PID2)[-1].index == last_index  # refused before the log
        assert [dn.containers.require(CID).bcsid for dn in dns] == before
        theirs = b"t" * 3000
        answers = await _send(dns[0], _requests(2, theirs, 1000))
        _ok(answers)
        _ok(await _send(dns[0], [_watch(answers[-1].logIndex)]))
        await _applied_everywhere(dns, answers[-1].logIndex)
        for dn in dns:
            (got,) = await _send(dn, [_get_block(2)])
            _ok([got])
            assert got.getBlock.blockData.size == len(theirs)


@async_test
async def test_a_close_through_another_pipelines_log_is_refused(tmp_path: Path) -> None:
    async with three_datanodes(tmp_path) as cluster:
        dns = cluster.dns
        await _second_pipeline(cluster)
        _ok(await _send(dns[0], _requests(1, b"m" * 1000, 1000)))
        close = pb.ContainerCommandRequestProto(
            cmdType=pb.CloseContainer, containerID=CID, pipelineID=PID2,
            closeContainer=pb.CloseContainerRequestProto(),
        )  # fmt: skip
        (answer,) = await _send(dns[0], [close])
        assert pb.Result.Name(answer.result) == "CONTAINER_NOT_FOUND", answer.message
        _ok(await _send(dns[0], _requests(2, b"t" * 1000, 1000)))  # in the log after the refused close
        assert [dn.containers.require(CID).state for dn in dns] == [ReplicaState.OPEN] * 3


@async_test
async def test_a_put_block_must_carry_the_checksums_its_chunks_were_written_with(tmp_path: Path) -> None:
    """Issue 28 (dn2 defect 2): a putBlock whose chunk list carried checksums other than those its
    writeChunks were verified with was committed on every replica; a read of that block then made every
    replica UNHEALTHY, and every other writer of the container failed CONTAINER_UNHEALTHY. The putBlock is
    refused (CHECKSUM_MISMATCH) on every member alike, and the pipeline stays healthy."""
    async with three_datanodes(tmp_path) as cluster:
        dns = cluster.dns
        victim = _requests(1, b"v" * 2000, 1000)
        _ok(await _send(dns[0], victim))
        mine = _requests(5, b"m" * 1000, 1000)
        lying = mine[-1].putBlock.blockData.chunks[0]
        lying.checksumData.checksums[0] = b"\0\0\0\0"
        *written, refused = await _send(dns[0], mine)
        _ok(written)
        assert pb.Result.Name(refused.result) == "CHECKSUM_MISMATCH", refused.message
        assert "5_chunk_0" in refused.message
        her_block = pb.DatanodeBlockID(containerID=CID, localID=5)
        read = pb.ContainerCommandRequestProto(
            cmdType=pb.ReadChunk, containerID=CID,
            readChunk=pb.ReadChunkRequestProto(blockID=her_block, chunkData=lying, readChunkVersion=pb.V1),
        )  # fmt: skip
        for dn in dns:  # nothing committed: her read finds no block, and blames no replica
            (got,) = await _send(dn, [read])
            assert got.result != pb.SUCCESS
        assert [dn.containers.require(CID).state for dn in dns] == [ReplicaState.OPEN] * 3
        answers = await _send(dns[0], _requests(2, b"w" * 1000, 1000))  # others write on, on every replica
        _ok(answers)
        _ok(await _send(dns[0], [_watch(answers[-1].logIndex)]))
        await _applied_everywhere(dns, answers[-1].logIndex)
        for dn in dns:
            _ok(await _send(dn, [_get_block(1), _get_block(2)]))


@async_test
async def test_a_finalize_through_the_log_makes_every_replica_refuse_writes_to_the_block(
    tmp_path: Path,
) -> None:
    """Issue 28 defect 2, review D: OM's FinalizeBlock, sent to the leader at a key's commit under a quota,
    is ordered in the pipeline's log after the block's putBlock; every member applies it (the followers
    too), and later writes to the block are refused alike everywhere (BLOCK_ALREADY_FINALIZED) without
    failing the pipeline, which goes on taking other blocks."""
    async with three_datanodes(tmp_path) as cluster:
        dns = cluster.dns
        data = bytes(range(256)) * 256
        _ok(await _send(dns[0], _requests(1, data, 32 * 1024)))
        (finalized,) = await _send(dns[0], [finalize_block_request(BlockID(CID, 1), PID, dns[0].uuid)])
        _ok([finalized])
        assert finalized_length_from_proto(finalized) == len(data)
        (watched,) = await _send(dns[0], [_watch(finalized.logIndex)])
        _ok([watched])

        def finalized_everywhere() -> bool:
            try:
                return all(dn.containers.require(CID).get_block(BlockID(CID, 1)).finalized for dn in dns)
            except ContainerError:  # a follower applies after the watch, which counts commit indexes
                return False

        await wait_for_async(finalized_everywhere, what="the block finalized on every replica")
        late = await _send(dns[0], _requests(1, data + data, 32 * 1024)[2:])
        assert [pb.Result.Name(a.result) for a in late] == ["BLOCK_ALREADY_FINALIZED"] * 3
        _ok(await _send(dns[0], _requests(2, data, 32 * 1024)))  # the pipeline is healthy
        for dn in dns:
            assert dn.containers.require(CID).committed_size(BlockID(CID, 1)) == len(data)
        assert not any(hb.pipeline_actions for scm in cluster.scms for hb in scm.beats())
