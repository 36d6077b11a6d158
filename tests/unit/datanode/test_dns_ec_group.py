"""One EC block group end to end over five datanodes' real dispatchers and storage (issue 14, contracts 3, 5
and 7): each index stores its cells as StripeLayout and the codec say, closes on SCM's word, is read back
through GetBlock/ReadChunk, and a lost index is rebuilt into a RECOVERING replica on a sixth datanode."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pyozone.datanode.pipelines import PipelineSet
from pyozone.datanode.xceiver import Dispatcher
from pyozone.datanode.xceiver.allocations import ContainerAllocations
from pyozone.hdds.container import ContainerInfo
from pyozone.hdds.ec.codec import codec_for
from pyozone.hdds.ec.layout import StripeLayout
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.states import LifeCycleState, ReplicaState
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from tests.unit.datanode.dns_helpers import Node, chunk, open_node, payload, results
from tests.unit.datanode.xceiver.test_dns_allocations import FakeScmContainers

CONFIG = ReplicationConfig.parse("rs-3-2-4k")
LAYOUT = StripeLayout.of(CONFIG)
CID, LID, PIPELINE = 40, 7, "ec-pipeline-40"
GROUP = payload(40, 2 * LAYOUT.stripe_bytes + 5000)  # two full stripes and a partial one


@pytest.fixture
def scm() -> FakeScmContainers:
    fake = FakeScmContainers()
    fake.records[CID] = ContainerInfo(CID, LifeCycleState.OPEN, 0, PIPELINE, CONFIG, "om")
    fake.holders[CID] = {n + 1: _uuid(n) for n in range(5)}  # datanode n holds replica index n + 1
    return fake


def _uuid(n: int) -> str:
    return f"{n:08x}-0000-4000-8000-000000000000"


@pytest.fixture
def nodes(tmp_path: Path, scm: FakeScmContainers) -> Iterator[list[tuple[Node, Dispatcher]]]:
    """Six datanodes: indexes 1..5 of the pipeline, and a reconstruction target."""
    opened = []
    for n in range(6):
        node = open_node(tmp_path / f"dn{n}", _uuid(n))
        allocations = ContainerAllocations(scm, PipelineSet(tmp_path / f"dn{n}", node.uuid))
        opened.append(
            (node, Dispatcher(node.containers, node.uuid, node.full.append, allocations=allocations))
        )
    yield opened
    for node, _ in opened:
        node.close()


def _request(kind: int, pipeline: str = "", **body: object) -> pb.ContainerCommandRequestProto:
    return pb.ContainerCommandRequestProto(
        cmdType=kind, containerID=CID, pipelineID=pipeline, datanodeUuid="c", **body
    )


def _index_cells() -> dict[int, list[bytes]]:
    """Every index's cells, stripe by stripe: data cells as the layout deals them, parity as coded."""
    codec, cells = codec_for(CONFIG), {i: [] for i in range(1, LAYOUT.nodes + 1)}
    for stripe in range(LAYOUT.stripes(len(GROUP))):
        lengths = LAYOUT.stripe_cell_lengths(len(GROUP), stripe)
        start = stripe * LAYOUT.stripe_bytes
        data = [GROUP[start + i * LAYOUT.cell : start + i * LAYOUT.cell + n] for i, n in enumerate(lengths)]
        padded = [d.ljust(lengths[0], b"\0") for d in data]
        for i, d in enumerate(data, 1):
            if d:
                cells[i].append(d)
        for p, parity in enumerate(codec.encode(padded), LAYOUT.data + 1):
            cells[p].append(bytes(parity))
    return cells


def _store(dispatcher: Dispatcher, index: int, cells: list[bytes], pipeline: str) -> list[str]:
    """The cells as chunks "{localID}_chunk_{n}", then the putBlock with blockGroupLen."""
    requests, chunks, offset = [], [], 0
    block_id = pb.DatanodeBlockID(containerID=CID, localID=LID, replicaIndex=index)
    for n, cell in enumerate(cells, 1):
        info = chunk(f"{LID}_chunk_{n}", offset, cell)
        chunks.append(info)
        requests.append(_request(pb.WriteChunk, pipeline, writeChunk=pb.WriteChunkRequestProto(
            blockID=block_id, chunkData=info, data=cell)))  # fmt: skip
        offset += len(cell)
    block = pb.BlockData(
        blockID=block_id, chunks=chunks, metadata=[pb.KeyValue(key="blockGroupLen", value=str(len(GROUP)))]
    )
    requests.append(_request(pb.PutBlock, pipeline, putBlock=pb.PutBlockRequestProto(blockData=block)))
    return results(dispatcher.dispatch(r) for r in requests)


def _read_cells(dispatcher: Dispatcher, index: int) -> tuple[int, list[bytes]]:
    """blockGroupLen and the cells of replica `index`, through GetBlock and ReadChunk."""
    block_id = pb.DatanodeBlockID(containerID=CID, localID=LID, replicaIndex=index)
    block = dispatcher.dispatch(_request(pb.GetBlock, getBlock=pb.GetBlockRequestProto(blockID=block_id)))
    assert results([block]) == ["SUCCESS"]
    group_length = int(dict((kv.key, kv.value) for kv in block.getBlock.blockData.metadata)["blockGroupLen"])
    cells = []
    for info in block.getBlock.blockData.chunks:
        answer = dispatcher.dispatch(
            _request(pb.ReadChunk, readChunk=pb.ReadChunkRequestProto(blockID=block_id, chunkData=info))
        )
        assert results([answer]) == ["SUCCESS"]
        cells.append(answer.readChunk.data)
    return group_length, cells


def test_a_block_group_is_stored_closed_read_and_a_lost_index_rebuilt(
    nodes: list[tuple[Node, Dispatcher]], scm: FakeScmContainers
) -> None:
    expected = _index_cells()
    for index in range(1, LAYOUT.nodes + 1):
        _, dispatcher = nodes[index - 1]
        assert _store(dispatcher, index, expected[index], PIPELINE) == ["SUCCESS"] * (
            len(expected[index]) + 1
        )
    for index in range(1, LAYOUT.nodes + 1):
        node, _ = nodes[index - 1]
        container = node.containers.require(CID)
        assert container.data.replica_index == index
        assert container.used_bytes == LAYOUT.index_length(len(GROUP), index)
        container.mark_closing()  # SCM's close of an EC replica: CLOSED at once (commands/close_container.py)
        container.close()
    scm.records[CID] = ContainerInfo(CID, LifeCycleState.CLOSED, 0, PIPELINE, CONFIG, "om")

    # index 2 is lost: rebuild it from 1, 3 and 4 into a RECOVERING replica on the sixth datanode
    sources = {i: _read_cells(nodes[i - 1][1], i) for i in (1, 3, 4)}
    assert {length for length, _ in sources.values()} == {len(GROUP)}
    target_node, target = nodes[5]
    create = pb.CreateContainerRequestProto(state=pb.ContainerDataProto.RECOVERING, replicaIndex=2)
    assert results([target.dispatch(_request(pb.CreateContainer, createContainer=create))]) == ["SUCCESS"]
    codec, rebuilt = codec_for(CONFIG), []
    for stripe in range(LAYOUT.stripes(len(GROUP))):
        lengths = LAYOUT.stripe_cell_lengths(len(GROUP), stripe)
        held = {i: cells[stripe] if stripe < len(cells) else b"" for i, (_, cells) in sources.items()}
        available = {i: cell.ljust(lengths[0], b"\0") for i, cell in held.items()}  # a partial stripe: padded
        rebuilt.append(bytes(codec.decode(available, [2])[2])[: lengths[1]])
    assert _store(target, 2, [c for c in rebuilt if c], "") == ["SUCCESS"] * 4
    assert target_node.reports == []  # RECOVERING: SCM hears nothing yet
    close = _request(pb.CloseContainer, closeContainer=pb.CloseContainerRequestProto())
    assert results([target.dispatch(close)]) == ["SUCCESS"]
    assert [(r.state, r.replica_index) for r in target_node.reports] == [(ReplicaState.CLOSED, 2)]
    assert _read_cells(target, 2) == (len(GROUP), expected[2])
