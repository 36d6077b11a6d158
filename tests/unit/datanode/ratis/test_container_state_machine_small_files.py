"""ContainerStateMachine: putSmallFile entries of one container handed to apply together are committed
as one batch (`_SmallFiles`, `Dispatcher.apply_small_files`), each still answered alone and in log order.
Harness: csm_helpers.py."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from tests.unit.datanode.dns_helpers import chunk, close, get_small_file, payload, request, small_file
from tests.unit.datanode.ratis.csm_helpers import CID, UUIDS, datas, entries, make_member, run


def test_small_files_handed_together_commit_in_one_batch(
    tmp_path: Path, executor: ThreadPoolExecutor
) -> None:
    """Six small files handed in one turn, the fourth refused by its data stage (checksums of other
    bytes), then a close and a small file after it: the first six are applied in one batch (the close ends
    it), each answered alone at its own index, the refused one CHECKSUM_MISMATCH without failing the
    pipeline; the one after the close is refused; the container's BCSID is the last committed file's."""
    member = make_member(tmp_path, UUIDS[0], executor)
    batches: list[list[int]] = []
    apply_small_files = member.dispatcher.apply_small_files

    def recorded(batch: Any) -> Any:
        batches.append([index for _, index, _ in batch])
        return apply_small_files(batch)

    member.dispatcher.apply_small_files = recorded  # type: ignore[method-assign]
    requests = [small_file(CID, n, payload(n, 100)) for n in (1, 2, 3)]
    requests.append(small_file(CID, 4, payload(4, 10), chunk("4_chunk", 0, payload(40, 10))))
    requests += [small_file(CID, n, payload(n, 100)) for n in (5, 6)]
    requests += [close(CID), small_file(CID, 8, payload(8, 100))]
    log = entries(requests)

    try:
        answers = run(handed_together(member, log, requests))
        names = [pb.Result.Name(a.result) for a in answers]
        assert names == ["SUCCESS"] * 3 + ["CHECKSUM_MISMATCH"] + ["SUCCESS"] * 3 + ["CLOSED_CONTAINER_IO"]
        assert batches == [[1, 2, 3, 4, 5, 6], [8]]
        assert [a.logIndex for a in answers] == [e.index for e in log]
        assert member.failures == [] and member.sm.failure is None
        assert member.container().bcsid == 6
        for lid in (1, 2, 3, 5, 6):
            answer = member.ask(get_small_file(CID, lid, lid))
            assert answer.result == pb.SUCCESS and answer.getSmallFile.data.data == payload(lid, 100)
    finally:
        member.node.close()


def test_a_small_file_without_its_body_is_refused_alone(tmp_path: Path, executor: ThreadPoolExecutor) -> None:
    """A putSmallFile entry without its body (nothing the leader checks reads it) joins no batch and is
    refused MALFORMED_REQUEST; the container's next entries are applied. It used to raise while joining,
    after it had become its container's tail, and every later entry of the container, on every replica,
    waited for it forever (R4's D1)."""
    member = make_member(tmp_path, UUIDS[0], executor)
    requests = [
        small_file(CID, 1, payload(1, 100)),
        request(pb.PutSmallFile, CID),
        small_file(CID, 3, payload(3, 100)),
    ]
    log = entries(requests)

    try:
        answers = run(handed_together(member, log, requests))
        assert [pb.Result.Name(a.result) for a in answers] == ["SUCCESS", "MALFORMED_REQUEST", "SUCCESS"]
        assert member.failures == [] and member.container().bcsid == 3
    finally:
        member.node.close()


async def handed_together(
    member: Any, log: list[Any], requests: list[Any]
) -> list[pb.ContainerCommandResponseProto]:
    """Each entry's data stage, then every entry handed to apply in one turn (a batch may form)."""
    for entry, blob in zip(log, datas(requests), strict=True):
        if entry.data_size:
            await member.sm.write_data(entry, memoryview(blob))
    return list(await asyncio.gather(*(member.sm.apply_async(e) for e in log)))
