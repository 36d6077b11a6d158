"""XceiverClientProtocolService.send over a real pyozone.rpc server on 127.0.0.1."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pyozone import rpc
from pyozone.datanode.xceiver import XceiverService, add_xceiver_service, xceiver_server
from pyozone.hdds.limits import MiB
from pyozone.hdds.states import ReplicaState
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from tests.polling import wait_for_async
from tests.unit.datanode.dns_helpers import (
    Node,
    block_writes,
    close,
    create,
    exchange,
    flip_byte,
    get,
    open_node,
    payload,
    read,
    request,
    results,
    serve,
    write,
)


def test_write_put_get_read_through_the_stream(node_a: Node, executor: ThreadPoolExecutor) -> None:
    data = payload(1, 300_000)

    async def scenario() -> None:
        async with serve(node_a, executor) as dn:
            writes, chunks = block_writes(1, 1, data, 64 * 1024)
            answers = await exchange(dn.xceiver, [create(1), *writes, get(1, 1)])
            assert results(answers) == ["SUCCESS"] * (len(writes) + 2)
            block = answers[-1].getBlock.blockData
            assert block.size == len(data) and list(block.chunks) == chunks
            reads = await exchange(dn.xceiver, [read(1, 1, c) for c in block.chunks])
            assert b"".join(r.readChunk.data for r in reads) == data

    asyncio.run(scenario())


def test_answers_keep_request_order_and_a_bad_request_does_not_end_the_stream(
    node_a: Node, executor: ThreadPoolExecutor
) -> None:
    async def scenario() -> None:
        async with serve(node_a, executor) as dn:
            stream: list[pb.ContainerCommandRequestProto] = []
            for cid in (1, 2, 3):  # interleaved containers: they may run in parallel, answers stay in order
                stream.append(create(cid))
            for lid in range(1, 6):
                for cid in (1, 2, 3):
                    stream.extend(block_writes(cid, lid, payload(lid, 5000), 1000)[0])
                stream.append(request(pb.WriteChunk, 1))  # malformed: no body
            for n, r in enumerate(stream):
                r.traceID = f"t{n}"
            answers = await exchange(dn.xceiver, stream)
            assert [a.traceID for a in answers] == [r.traceID for r in stream]
            assert [a.cmdType for a in answers] == [r.cmdType for r in stream]
            expected = [
                "MALFORMED_REQUEST"
                if not r.HasField("writeChunk") and r.cmdType == pb.WriteChunk
                else "SUCCESS"
                for r in stream
            ]
            assert results(answers) == expected
            assert [node_a.containers.require(c).bcsid for c in (1, 2, 3)] == [5, 5, 5]

    asyncio.run(scenario())


def test_closed_container_refuses_writes(node_a: Node, executor: ThreadPoolExecutor) -> None:
    async def scenario() -> None:
        async with serve(node_a, executor) as dn:
            writes, chunks = block_writes(1, 1, payload(1, 2000), 1000)
            more = write(1, 2, chunks[0], payload(1, 2000)[:1000])
            answers = await exchange(dn.xceiver, [*writes, close(1), more, get(1, 1)])
            assert results(answers) == ["SUCCESS"] * 4 + ["CLOSED_CONTAINER_IO", "SUCCESS"]
            assert "CLOSED" in answers[-2].message
            assert node_a.containers.require(1).state is ReplicaState.CLOSED

    asyncio.run(scenario())


def test_corrupt_chunk_on_disk_is_refused_and_marks_the_replica_unhealthy(
    node_a: Node, executor: ThreadPoolExecutor
) -> None:
    async def scenario() -> None:
        async with serve(node_a, executor) as dn:
            writes, chunks = block_writes(1, 1, payload(1, 4096), 4096)
            await exchange(dn.xceiver, writes)
            flip_byte(node_a.containers.require(1).chunks_dir / "1.block", 10)
            [answer] = await exchange(dn.xceiver, [read(1, 1, chunks[0])])
            assert answer.result == pb.CHECKSUM_MISMATCH and not answer.readChunk.data
            assert node_a.containers.require(1).state is ReplicaState.UNHEALTHY
            assert node_a.reports[-1].state is ReplicaState.UNHEALTHY

    asyncio.run(scenario())


def test_parallel_streams_to_different_containers(node_a: Node, executor: ThreadPoolExecutor) -> None:
    async def one_client(dn, cid: int) -> bytes:  # type: ignore[no-untyped-def]
        stream = [create(cid)]
        for lid in range(1, 4):
            stream.extend(block_writes(cid, lid, payload(cid * 10 + lid, 50_000), 8192)[0])
        answers = await exchange(dn.xceiver, stream)
        assert results(answers) == ["SUCCESS"] * len(stream)
        reads = [
            read(cid, lid, c)
            for lid in range(1, 4)
            for c in block_writes(cid, lid, payload(cid * 10 + lid, 50_000), 8192)[1]
        ]
        return b"".join(r.readChunk.data for r in await exchange(dn.xceiver, reads))

    async def scenario() -> None:
        async with serve(node_a, executor) as dn:
            got = await asyncio.gather(*(one_client(dn, cid) for cid in (1, 2, 3, 4)))
        for cid, data in zip((1, 2, 3, 4), got, strict=True):
            assert data == b"".join(payload(cid * 10 + lid, 50_000) for lid in range(1, 4))
            assert node_a.containers.require(cid).key_count == 3

    asyncio.run(scenario())


def test_in_flight_requests_are_capped(node_a: Node, executor: ThreadPoolExecutor) -> None:
    """While answers are held back, a stream takes at most max_in_flight requests in."""
    seen: list[int] = []
    taken: list[int] = []
    release = asyncio.Event()

    class Gate:
        def dispatch(self, request: pb.ContainerCommandRequestProto) -> pb.ContainerCommandResponseProto:
            seen.append(request.containerID)
            return pb.ContainerCommandResponseProto(cmdType=request.cmdType, result=pb.SUCCESS)

    async def scenario() -> None:
        service = XceiverService(Gate(), executor, max_in_flight=3)  # type: ignore[arg-type]
        original = service._dispatch

        async def held(request, previous):  # type: ignore[no-untyped-def]
            taken.append(request.containerID)
            await release.wait()
            return await original(request, previous)

        service._dispatch = held  # type: ignore[method-assign]
        server = xceiver_server()
        add_xceiver_service(server, service)
        port = await server.start("127.0.0.1", 0)
        try:
            async with rpc.Channel(f"127.0.0.1:{port}", rpc.ChannelSettings(MiB)) as channel:
                call = rpc.Stub(channel, rpc.service(pb, "XceiverClientProtocolService")).send()

                async def send_all() -> None:  # past the stream's window: writes wait for room
                    for cid in range(1, 11):
                        await call.write(request(pb.Echo, cid, echo=pb.EchoRequestProto()))
                    await call.done_writing()

                sending = asyncio.create_task(send_all())
                await wait_for_async(lambda: len(taken) >= 3, 5, "three requests taken", interval_s=0.05)
                await asyncio.sleep(0.2)  # time enough for a fourth, if one could be taken
                assert taken == [1, 2, 3] and seen == []
                release.set()
                answers = [a async for a in call]
                await sending
                assert len(answers) == 10 and seen == list(range(1, 11))
        finally:
            await server.stop(None)

    asyncio.run(scenario())


def test_64mib_in_4mib_chunks_round_trips_through_one_stream(
    tmp_path: Path, executor: ThreadPoolExecutor
) -> None:
    """64 MiB in 4 MiB chunks (16 KiB checksum pieces, Ozone's client defaults) through one stream."""
    node = open_node(tmp_path / "dn", "cccccccc-0000-4000-8000-000000000003", container_size="256MB")
    data = payload(64, 64 * MiB)

    async def scenario() -> None:
        async with serve(node, executor) as dn:
            writes, chunks = block_writes(1, 1, data, 4 * MiB, bpc=16 * 1024)
            assert results(await exchange(dn.xceiver, writes)) == ["SUCCESS"] * len(writes)
            reads = await exchange(dn.xceiver, [read(1, 1, c) for c in chunks])
            assert b"".join(r.readChunk.data for r in reads) == data

    try:
        asyncio.run(scenario())
    finally:
        node.close()


def test_a_client_that_goes_away_mid_stream_leaves_the_service_working(
    node_a: Node, executor: ThreadPoolExecutor
) -> None:
    async def scenario() -> None:
        async with serve(node_a, executor) as dn:
            call = dn.xceiver.send()
            writes, _ = block_writes(1, 1, payload(1, 400_000), 100_000)
            for w in writes[:3]:
                await call.write(w)
            await call.read()
            call.cancel()
            # time for the server to see the cancel (nothing to poll for); new streams must work after it
            await asyncio.sleep(0.2)
            writes, chunks = block_writes(2, 1, payload(2, 10_000), 5_000)
            answers = await exchange(dn.xceiver, [*writes, read(2, 1, chunks[1])])
            assert (
                results(answers) == ["SUCCESS"] * 4
                and answers[-1].readChunk.data == payload(2, 10_000)[5000:]
            )

    asyncio.run(scenario())
