"""ContainerStateMachine, idempotence (docs/write-pipeline.md "V1: the pipeline log on the Raft core"):
every logged container op applied again, at its index (a replay after a restart) or at a new one (a client's
retry after a leader change), changes nothing. Harness: csm_helpers.py."""

from __future__ import annotations

from pyozone.hdds.ids import BlockID
from pyozone.hdds.states import ReplicaState
from tests.unit.datanode.dns_helpers import block_writes, close, get_small_file, payload, read, small_file
from tests.unit.datanode.ratis.csm_helpers import CID, Member, finalize, piggybacked, replica, twice


def test_a_write_chunk_twice_is_once(members: list[Member]) -> None:
    """The same chunk bytes again pass the overwrite check, committed or not."""
    writes, _ = block_writes(CID, 1, payload(1, 2048), 1024)
    twice(members, writes, [0, 1])
    _, bcsid, blocks = replica(members[0])
    assert (bcsid, blocks) == (3, [(1, 3, ("1_chunk_0", "1_chunk_1"))])
    answer = members[0].ask(read(CID, 1, writes[1].writeChunk.chunkData))
    assert answer.readChunk.data == payload(1, 2048)[1024:]


def test_a_put_block_twice_is_once(members: list[Member]) -> None:
    """Replayed at its index: a no-op; resent: the same block again, at the higher BCSID."""
    writes, _ = block_writes(CID, 1, payload(1, 2048), 1024)
    twice(members, writes, [2])
    assert replica(members[0])[1:] == (4, [(1, 4, ("1_chunk_0", "1_chunk_1"))])


def test_a_piggybacked_write_chunk_twice_is_once(members: list[Member]) -> None:
    twice(members, [piggybacked(CID, 1, payload(1, 800))], [0])
    assert replica(members[0])[1:] == (2, [(1, 2, ("1_chunk_0",))])


def test_a_put_small_file_twice_is_once(members: list[Member]) -> None:
    """The same chunk again passes `_refuse_other_chunks` and commits the same block."""
    twice(members, [small_file(CID, 1, payload(1, 300))], [0])
    assert replica(members[0])[1:] == (2, [(1, 2, ("1_chunk",))])
    assert members[0].ask(get_small_file(CID, 1)).getSmallFile.data.data == payload(1, 300)


def test_a_finalize_block_twice_is_once(members: list[Member]) -> None:
    twice(members, [small_file(CID, 1, payload(1, 300)), finalize(1)], [1])
    assert members[0].container().get_block(BlockID(CID, 1)).finalized


def test_a_close_container_twice_is_once(members: list[Member]) -> None:
    twice(members, [small_file(CID, 1, payload(1, 300)), close(CID)], [1])
    assert replica(members[0])[:2] == (ReplicaState.CLOSED, 1)
