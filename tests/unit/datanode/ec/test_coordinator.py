"""The reconstruction coordinator against real source datanodes (Dispatchers on tmp dirs) and in-memory
targets: the rebuilt replicas hold exactly the cells the striped writer would have written."""

from __future__ import annotations

import asyncio
from concurrent.futures import Executor
from pathlib import Path

import pytest

from pyozone.datanode.ec import ReconstructionError, reconstruct_container
from pyozone.datanode.ec.coordinator import Outcome, Reconstruction
from pyozone.datanode.xceiver import Dispatcher
from pyozone.hdds.ec import StripeLayout
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.states import ReplicaState
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from tests.unit.datanode.dns_helpers import open_node
from tests.unit.datanode.ec.ec_helpers import (
    CID,
    DispatcherPeer,
    FakeTarget,
    Request,
    Source,
    close_sources,
    connector,
    details,
    dispatch_ok,
    open_sources,
    payload,
    write_group,
)

RS32 = ReplicationConfig.parse("rs-3-2-4k")
XOR21 = ReplicationConfig.parse("xor-2-1-4k")
CELL = 4096
COORDINATOR = str(details(99).uuid)


class Cluster:
    """Source datanodes for the surviving indexes, a fake target for each missing one."""

    def __init__(
        self, root: Path, executor: Executor, config: ReplicationConfig, missing: list[int], **targets: int
    ) -> None:
        nodes = config.ec_data + config.ec_parity
        self.config = config
        self.executor = executor
        self.sources: dict[int, Source] = open_sources(
            root, [i for i in range(1, nodes + 1) if i not in missing]
        )
        self.peers: dict[str, object] = {
            str(details(i).uuid): DispatcherPeer(f"src{i}", s.dispatcher, executor)
            for i, s in self.sources.items()
        }
        self.targets = {
            i: FakeTarget(f"dst{i}", fail_writes_after=targets.get(f"fail{i}")) for i in missing
        }  # fmt: skip
        self.peers |= {str(details(50 + i).uuid): t for i, t in self.targets.items()}
        self.groups: dict[int, dict[int, list[bytes]]] = {}

    def write(self, local_id: int, size: int, **kwargs: int) -> None:
        self.groups[local_id] = write_group(
            self.sources, self.config, local_id, payload(size, local_id), **kwargs
        )

    async def run(self) -> Outcome:
        close_sources(self.sources)
        job = Reconstruction(
            CID,
            self.config,
            {i: details(i) for i in self.sources},
            {i: details(50 + i) for i in self.targets},
        )
        return await reconstruct_container(job, connector(self.peers), COORDINATOR, self.executor, 30)

    def assert_rebuilt(self) -> None:
        layout = StripeLayout.of(self.config)
        for index, target in self.targets.items():
            replica = target.replicas[CID]
            assert replica.state == "CLOSED"
            assert sorted(replica.blocks) == sorted(self.groups)
            for local_id, cells in self.groups.items():
                block = replica.blocks[local_id]
                group_len = int(dict((kv.key, kv.value) for kv in block.metadata)["blockGroupLen"])
                assert block.blockID.replicaIndex == index
                assert [c.chunkName for c in block.chunks] == [
                    f"{local_id}_chunk_{n + 1}" for n in range(len(cells[index]))
                ]
                assert replica.block_bytes(local_id) == b"".join(cells[index])
                assert block.size == layout.index_length(group_len, index)


@pytest.fixture
def cluster_of(tmp_path: Path, executor: Executor):
    made: list[Cluster] = []

    def make(config: ReplicationConfig, missing: list[int], **targets: int) -> Cluster:
        made.append(Cluster(tmp_path, executor, config, missing, **targets))
        return made[-1]

    yield make
    for cluster in made:
        for source in cluster.sources.values():
            source.node.close()


def test_one_missing_data_index_is_rebuilt(cluster_of) -> None:
    cluster = cluster_of(RS32, [2])
    cluster.write(1, 3 * CELL * 4)  # four full stripes
    outcome = asyncio.run(cluster.run())
    cluster.assert_rebuilt()
    assert outcome.block_groups == 1
    assert outcome.bytes_written == 4 * CELL


def test_a_data_and_a_parity_index_are_rebuilt_together(cluster_of) -> None:
    cluster = cluster_of(RS32, [1, 5])
    cluster.write(1, 3 * CELL * 2 + 1000)
    cluster.write(2, CELL * 5 + 17)
    asyncio.run(cluster.run())
    cluster.assert_rebuilt()


def test_xor_rebuilds_its_one_missing_index(cluster_of) -> None:
    cluster = cluster_of(XOR21, [1])
    cluster.write(1, 2 * CELL * 3 + 5)
    asyncio.run(cluster.run())
    cluster.assert_rebuilt()


@pytest.mark.parametrize("missing", [[3], [2, 4], [3, 5]])
def test_many_blocks_with_partial_last_stripes(cluster_of, missing: list[int]) -> None:
    """Groups shorter than a stripe leave data indexes empty: those get an empty block, nothing decoded."""
    cluster = cluster_of(RS32, missing)
    for local_id, size in enumerate(
        [1, CELL - 1, CELL, CELL + 1, 2 * CELL + 3, 3 * CELL, 3 * CELL * 3 - 1], 1
    ):
        cluster.write(local_id, size)
    asyncio.run(cluster.run())
    cluster.assert_rebuilt()
    empty = cluster.targets[missing[0]].replicas[CID].blocks[1]
    if missing[0] == 3:
        assert (empty.size, list(empty.chunks)) == (0, [])


def test_a_corrupt_source_cell_is_replaced_by_another_source(cluster_of) -> None:
    cluster = cluster_of(RS32, [2])
    cluster.write(1, 3 * CELL * 3)
    source = cluster.peers[str(details(1).uuid)]

    def flip(request: pb.ContainerCommandRequestProto, response: pb.ContainerCommandResponseProto) -> None:
        if request.cmdType == pb.ReadChunk and request.readChunk.chunkData.offset == CELL:
            data = bytearray(response.readChunk.data)
            data[10] ^= 0xFF
            response.readChunk.data = bytes(data)

    source.tamper = flip
    asyncio.run(cluster.run())
    cluster.assert_rebuilt()


def test_a_source_missing_a_cell_on_disk_is_dropped(cluster_of) -> None:
    """A cell the source's checksums refuse (CHECKSUM_MISMATCH from its datanode) is read elsewhere."""
    cluster = cluster_of(RS32, [5])
    cluster.write(1, 3 * CELL * 2)
    source = cluster.peers[str(details(3).uuid)]

    def refuse(request: pb.ContainerCommandRequestProto, response: pb.ContainerCommandResponseProto) -> None:
        if request.cmdType == pb.ReadChunk:
            response.result, response.message = pb.CHECKSUM_MISMATCH, "bad cell"

    source.tamper = refuse
    asyncio.run(cluster.run())
    cluster.assert_rebuilt()


def test_a_failing_target_deletes_every_recovering_replica(cluster_of) -> None:
    cluster = cluster_of(RS32, [1, 4], fail4=1)
    cluster.write(1, 3 * CELL * 4)
    with pytest.raises(ReconstructionError, match="IO_EXCEPTION"):
        asyncio.run(cluster.run())
    for target in cluster.targets.values():
        assert target.replicas == {}
        assert target.deleted == [CID]


class _CloseFails(FakeTarget):
    def _handle(self, request: Request) -> pb.ContainerCommandResponseProto:
        if request.cmdType == pb.CloseContainer:
            return pb.ContainerCommandResponseProto(result=pb.IO_EXCEPTION, message="disk gone at close")
        return super()._handle(request)


def test_a_failed_close_keeps_the_targets_already_closed(cluster_of) -> None:
    """Index 4 closed (complete, reported) before index 5's close failed: only 5 is deleted (Ozone deletes
    only RECOVERING or UNHEALTHY targets)."""
    cluster = cluster_of(RS32, [4, 5])
    cluster.targets[5] = _CloseFails("dst5")
    cluster.peers[str(details(55).uuid)] = cluster.targets[5]
    cluster.write(1, 20000)
    with pytest.raises(ReconstructionError, match="disk gone at close"):
        asyncio.run(cluster.run())
    assert cluster.targets[4].deleted == [] and cluster.targets[4].replicas[CID].state == "CLOSED"
    assert cluster.targets[5].deleted == [CID] and cluster.targets[5].replicas == {}


def test_too_few_readable_sources_fails_and_cleans_up(cluster_of) -> None:
    cluster = cluster_of(RS32, [2, 3])
    cluster.write(1, 3 * CELL * 2)

    def refuse(request: pb.ContainerCommandRequestProto, response: pb.ContainerCommandResponseProto) -> None:
        if request.cmdType == pb.ReadChunk:
            response.result, response.message = pb.IO_EXCEPTION, "unreadable"

    cluster.peers[str(details(4).uuid)].tamper = refuse
    with pytest.raises(ReconstructionError, match="2 of 3 cells readable"):
        asyncio.run(cluster.run())
    assert all(t.replicas == {} and t.deleted == [CID] for t in cluster.targets.values())


def test_an_empty_container_gets_empty_closed_replicas(cluster_of) -> None:
    cluster = cluster_of(RS32, [4])
    outcome = asyncio.run(cluster.run())
    replica = cluster.targets[4].replicas[CID]
    assert (replica.state, replica.blocks, outcome.block_groups) == ("CLOSED", {}, 0)


def test_sources_disagreeing_on_length_rebuild_the_shortest(cluster_of) -> None:
    """Ozone's safe length: the minimum blockGroupLen the sources recorded; orphans are skipped."""
    cluster = cluster_of(RS32, [1])
    cluster.write(1, 3 * CELL * 3)
    shorter = 3 * CELL * 2  # index 4 recorded two stripes: the third is garbage past the safe length
    source = cluster.sources[4].dispatcher
    get = pb.GetBlockRequestProto(blockID=pb.DatanodeBlockID(containerID=CID, localID=1))
    block = dispatch_ok(
        source, Request(cmdType=pb.GetBlock, containerID=CID, getBlock=get)
    ).getBlock.blockData
    del block.metadata[:]
    block.blockID.blockCommitSequenceId = 0  # not a replay: the putBlock overwrites
    block.metadata.add(key="blockGroupLen", value=str(shorter))
    put = pb.PutBlockRequestProto(blockData=block, eof=True)
    dispatch_ok(source, Request(cmdType=pb.PutBlock, containerID=CID, putBlock=put))
    orphan = {i: s for i, s in cluster.sources.items() if i == 2}
    write_group(orphan, RS32, 2, payload(3 * CELL, 2))  # on index 2 only: an orphan block
    asyncio.run(cluster.run())
    blocks = cluster.targets[1].replicas[CID].blocks
    assert sorted(blocks) == [1]
    assert blocks[1].size == 2 * CELL
    assert blocks[1].metadata[0].value == str(shorter)
    assert cluster.targets[1].replicas[CID].block_bytes(1) == b"".join(cluster.groups[1][1][:2])


def test_a_bad_job_is_refused_before_anything_runs() -> None:
    with pytest.raises(ValueError, match="both sources and targets"):
        Reconstruction(CID, RS32, {i: details(i) for i in (1, 2, 3)}, {3: details(53)})
    with pytest.raises(ValueError, match="needs 3"):
        Reconstruction(CID, RS32, {i: details(i) for i in (1, 2)}, {3: details(53)})
    with pytest.raises(ValueError, match=r"outside 1\.\.5"):
        Reconstruction(CID, RS32, {i: details(i) for i in (1, 2, 3)}, {6: details(56)})


def _real_targets(root: Path, executor: Executor, indexes: list[int]) -> dict[int, DispatcherPeer]:
    """Target datanodes with real storage (contract 7 as the datanode implements it)."""
    targets = {}
    for index in indexes:
        node = open_node(root / f"dst{index}", str(details(50 + index).uuid), container_size="64MB")
        peer = DispatcherPeer(
            f"dst{index}", Dispatcher(node.containers, node.uuid, node.full.append), executor
        )
        peer.node = node  # type: ignore[attr-defined]
        targets[index] = peer
    return targets


def test_real_targets_end_closed_with_the_rebuilt_blocks(tmp_path: Path, executor: Executor) -> None:
    sources = open_sources(tmp_path, [2, 3, 4])
    targets = _real_targets(tmp_path, executor, [1, 5])
    try:
        cells = {
            lid: write_group(sources, RS32, lid, payload(size, lid))
            for lid, size in ((1, 3 * CELL * 3 + 7), (2, 5))
        }
        close_sources(sources)
        peers = {
            str(details(i).uuid): DispatcherPeer(f"src{i}", s.dispatcher, executor)
            for i, s in sources.items()
        }
        peers |= {str(details(50 + i).uuid): t for i, t in targets.items()}
        job = Reconstruction(
            CID, RS32, {i: details(i) for i in sources}, {i: details(50 + i) for i in targets}
        )
        asyncio.run(reconstruct_container(job, connector(peers), COORDINATOR, executor, 30))
        for index, target in targets.items():
            container = target.node.containers.get(CID)  # type: ignore[attr-defined]
            assert (container.state, container.data.replica_index) == (ReplicaState.CLOSED, index)
            for lid, group in cells.items():
                get = pb.GetBlockRequestProto(blockID=pb.DatanodeBlockID(containerID=CID, localID=lid))
                block = dispatch_ok(
                    target.dispatcher, Request(cmdType=pb.GetBlock, containerID=CID, getBlock=get)
                ).getBlock.blockData
                data_length = sum(len(c) for i in (1, 2, 3) for c in group[i])
                assert {kv.key: kv.value for kv in block.metadata} == {"blockGroupLen": str(data_length)}
                data = b""
                for chunk in block.chunks:
                    read = pb.ReadChunkRequestProto(blockID=block.blockID, chunkData=chunk)
                    answer = dispatch_ok(
                        target.dispatcher, Request(cmdType=pb.ReadChunk, containerID=CID, readChunk=read)
                    )
                    data += answer.readChunk.data
                assert data == b"".join(group[index])
    finally:
        for holder in (*sources.values(), *targets.values()):
            holder.node.close()


def test_real_targets_lose_their_recovering_replicas_on_failure(tmp_path: Path, executor: Executor) -> None:
    sources = open_sources(tmp_path, [2, 3, 4])
    targets = _real_targets(tmp_path, executor, [1, 5])
    try:
        write_group(sources, RS32, 1, payload(3 * CELL * 3, 1))
        close_sources(sources)
        peers = {
            str(details(i).uuid): DispatcherPeer(f"src{i}", s.dispatcher, executor)
            for i, s in sources.items()
        }
        peers |= {str(details(50 + i).uuid): t for i, t in targets.items()}

        def fail_puts(
            request: pb.ContainerCommandRequestProto, response: pb.ContainerCommandResponseProto
        ) -> None:
            if request.cmdType == pb.PutBlock:
                response.result, response.message = pb.IO_EXCEPTION, "volume failed"

        targets[5].tamper = fail_puts
        job = Reconstruction(
            CID, RS32, {i: details(i) for i in sources}, {i: details(50 + i) for i in targets}
        )
        with pytest.raises(ReconstructionError, match="volume failed"):
            asyncio.run(reconstruct_container(job, connector(peers), COORDINATOR, executor, 30))
        for target in targets.values():
            assert target.node.containers.get(CID) is None  # type: ignore[attr-defined]
    finally:
        for holder in (*sources.values(), *targets.values()):
            holder.node.close()
