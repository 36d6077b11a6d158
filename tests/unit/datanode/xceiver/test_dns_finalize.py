"""FinalizeBlock (issue 28 defect 2, review D): under a space quota OM finalizes each replicated block at its
key's commit, through the block's pipeline's log; from then on every replica refuses writes to it
(BLOCK_ALREADY_FINALIZED), also after a restart, so a write token cannot add bytes OM did not charge. Each
member applies the log's entries through its own dispatcher (`dispatch(request, index)`), as a follower
does."""

from __future__ import annotations

from pathlib import Path

from pyozone.datanode.xceiver import Dispatcher
from pyozone.datanode.xceiver.tokens import BLOCK_MODES
from pyozone.hdds.ids import BlockID
from pyozone.hdds.security.block_token import AccessMode
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.protocol.container import request_block_id
from pyozone.protocol.data import finalize_block_request, finalized_length_from_proto
from pyozone.protocol.ratis import DETERMINISTIC, LOGGED, commits
from tests.unit.datanode.dns_helpers import (
    PIPELINE,
    Node,
    block_id,
    chunk,
    close,
    open_node,
    payload,
    put,
    request,
    results,
    write,
)

CID, LID = 3, 1
DATA = payload(1, 3000)
LATE = payload(2, 2000)


def finalize(lid: int = LID) -> pb.ContainerCommandRequestProto:
    return finalize_block_request(BlockID(CID, lid), PIPELINE, "leader")


def log_entries() -> list[pb.ContainerCommandRequestProto]:
    """A pipeline log's entries 1..: a block written and put, its finalize, then a late write and putBlock
    of more bytes and a putSmallFile, as a token's holder would send after the commit."""
    c0, c1 = chunk(f"{LID}_chunk_0", 0, DATA[:2000]), chunk(f"{LID}_chunk_1", 2000, DATA[2000:])
    late = chunk(f"{LID}_chunk_2", 3000, LATE)
    whole = chunk(f"{LID}_chunk", 0, LATE)  # a small file starts at 0
    small = pb.PutSmallFileRequestProto(
        block=pb.PutBlockRequestProto(blockData=pb.BlockData(blockID=block_id(CID, LID), chunks=[whole])),
        chunkInfo=whole,
        data=LATE,
    )
    return [
        write(CID, LID, c0, DATA[:2000]),
        write(CID, LID, c1, DATA[2000:]),
        put(CID, LID, [c0, c1]),
        finalize(),
        write(CID, LID, late, LATE),
        put(CID, LID, [c0, c1, late]),
        request(pb.PutSmallFile, CID, putSmallFile=small),
    ]


def apply(dispatcher: Dispatcher, entries: list[pb.ContainerCommandRequestProto], first: int = 1) -> list:
    return [dispatcher.dispatch(entry, index) for index, entry in enumerate(entries, first)]


def committed_length(dispatcher: Dispatcher) -> int:
    body = pb.GetCommittedBlockLengthRequestProto(blockID=block_id(CID, LID))
    answer = dispatcher.dispatch(request(pb.GetCommittedBlockLength, CID, getCommittedBlockLength=body))
    assert answer.result == pb.SUCCESS, answer.message
    return answer.getCommittedBlockLength.blockLength


EXPECTED = ["SUCCESS"] * 4 + ["BLOCK_ALREADY_FINALIZED"] * 3


def test_leader_and_follower_refuse_writes_to_a_finalized_block_alike(node_a: Node, node_b: Node) -> None:
    leader = Dispatcher(node_a.containers, node_a.uuid, node_a.full.append)
    follower = Dispatcher(node_b.containers, node_b.uuid, node_b.full.append)
    for member in (leader, follower):
        answers = apply(member, log_entries())
        assert results(answers) == EXPECTED, [a.message for a in answers]
        assert finalized_length_from_proto(answers[3]) == len(DATA)  # what OM charges: the block's length
        assert committed_length(member) == len(DATA)
    # the refusal is the same on every member: an entry refused alike does not fail the pipeline
    assert pb.BLOCK_ALREADY_FINALIZED in DETERMINISTIC


def test_a_finalize_survives_a_restart_and_a_replay_of_the_log(tmp_path: Path, node_a: Node) -> None:
    """Persisted with the block's record: after a restart the block still refuses writes; re-applying the
    log's entries (a replay) leaves it finalized, each entry SUCCESS or refused alike on every member."""
    entries = log_entries()
    apply(Dispatcher(node_a.containers, node_a.uuid, node_a.full.append), entries[:4])
    node_a.close()
    again = open_node(tmp_path / "dn-a", node_a.uuid)
    try:
        restarted = Dispatcher(again.containers, again.uuid, again.full.append)
        assert results(apply(restarted, entries[4:], first=5)) == ["BLOCK_ALREADY_FINALIZED"] * 3
        replayed = apply(restarted, entries)
        assert all(r.result == pb.SUCCESS or r.result in DETERMINISTIC for r in replayed)
        assert results(replayed)[2:4] == [
            "SUCCESS",
            "SUCCESS",
        ]  # a putBlock replay is skipped; finalize again
        assert committed_length(restarted) == len(DATA)
    finally:
        again.close()


def test_a_finalize_goes_through_the_pipeline_log_of_a_ratis_container(node_a: Node) -> None:
    dispatcher = Dispatcher(node_a.containers, node_a.uuid, node_a.full.append)
    apply(dispatcher, log_entries()[:3])
    direct = finalize()
    direct.pipelineID = ""
    answer = dispatcher.dispatch(direct)
    assert answer.result == pb.UNSUPPORTED_REQUEST and "pipeline's log" in answer.message
    assert pb.FinalizeBlock in LOGGED and commits(finalize())  # ordered, and the log synced after it


def test_a_finalize_of_no_block_or_in_a_closed_container_is_refused(node_a: Node) -> None:
    dispatcher = Dispatcher(node_a.containers, node_a.uuid, node_a.full.append)
    apply(dispatcher, log_entries()[:3])
    assert results([dispatcher.dispatch(finalize(lid=9), 4)]) == ["NO_SUCH_BLOCK"]
    assert results([dispatcher.dispatch(close(CID), 5), dispatcher.dispatch(finalize())]) == [
        "SUCCESS",
        "CLOSED_CONTAINER_IO",
    ]
    missing = finalize_block_request(BlockID(8, 1), PIPELINE, "leader")
    assert results([dispatcher.dispatch(missing, 6)]) == ["CONTAINER_NOT_FOUND"]


def test_a_finalize_needs_a_write_token_for_its_block() -> None:
    """Ozone's BlockTokenVerifier asks WRITE of every request that is not read-only."""
    assert BLOCK_MODES[pb.FinalizeBlock] is AccessMode.WRITE
    assert request_block_id(finalize()) == BlockID(CID, LID)
