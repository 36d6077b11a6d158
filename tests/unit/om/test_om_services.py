"""KeyDeletingService (with partial failures) and OpenKeyCleanupService, run once on an injected clock."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyozone.hdds.clock import ManualClock
from pyozone.hdds.ids import RATIS_THREE, BlockID
from pyozone.hdds.om_records import KeyBlock, KeyRecord
from pyozone.om import services
from pyozone.om.metadata import DELETED_TABLE, OPEN_KEY_TABLE
from pyozone.om.services import KeyDeletingService, OpenKeyCleanupService
from pyozone.proto import ScmBlockLocationProtocol_pb2 as block_pb2
from pyozone.protocol import om_records
from pyozone.protocol.block import DeleteResult, KeyBlocks, KeyBlocksResult, key_blocks_to_proto
from tests.unit.om.om_fakes import FakeScm, make_om


def setup(tmp_path: Path, **settings):
    scm, clock = FakeScm(), ManualClock()
    om = make_om(tmp_path, scm, clock, **settings)
    om.volumes.create("vol1")
    om.buckets.create("vol1", "bkt1")
    return om, scm, clock


def write_and_delete(om, key: str) -> BlockID:
    session = om.keys.open("vol1", "bkt1", key, 10)
    block = session.key.blocks[0].block_id
    om.keys.commit("vol1", "bkt1", key, session.client_id, 10, [KeyBlock(block, 0, 10)])
    om.keys.delete("vol1", "bkt1", key)
    return block


def test_deleted_blocks_reach_scm_and_leave_the_table(tmp_path: Path) -> None:
    om, scm, _ = setup(tmp_path)
    blocks = [write_and_delete(om, f"k{i}") for i in range(3)]
    run = KeyDeletingService(om).run_once()
    assert (run.sent, run.purged) == (3, 3)
    assert sorted(b for k in scm.deletes[0] for b in k.blocks) == sorted(blocks)
    assert all(k.key.startswith("/vol1/bkt1/k") for k in scm.deletes[0])
    assert list(om.store.scan(DELETED_TABLE)) == []
    assert KeyDeletingService(om).run_once().sent == 0


def test_partial_failure_keeps_the_entries_scm_did_not_take(tmp_path: Path) -> None:
    om, scm, _ = setup(tmp_path)
    gone = write_and_delete(om, "gone")
    refused = write_and_delete(om, "refused")
    done = write_and_delete(om, "done")
    scm.delete_answer = {gone: DeleteResult.errorNotFound, refused: DeleteResult.safeMode}
    run = KeyDeletingService(om).run_once()
    assert (run.sent, run.purged) == (3, 2)
    left = [name for name, _ in om.store.scan(DELETED_TABLE)]
    assert len(left) == 1 and left[0].startswith("/vol1/bkt1/refused/")
    scm.delete_answer = {}
    assert KeyDeletingService(om).run_once().purged == 1
    assert done in [b for k in scm.deletes[0] for b in k.blocks]


def test_an_unreachable_scm_keeps_everything(tmp_path: Path) -> None:
    om, scm, _ = setup(tmp_path)
    write_and_delete(om, "k")
    scm.unreachable = True
    run = KeyDeletingService(om).run_once()
    assert (run.sent, run.purged) == (1, 0) and "connection refused" in run.error
    assert len(list(om.store.scan(DELETED_TABLE))) == 1


def test_the_limit_per_task(tmp_path: Path) -> None:
    om, scm, _ = setup(tmp_path, key_deleting_limit=2)
    for i in range(5):
        write_and_delete(om, f"k{i}")
    service = KeyDeletingService(om)
    assert [service.run_once().purged for _ in range(4)] == [2, 2, 1, 0]
    assert [len(call) for call in scm.deletes] == [2, 2, 1]


def test_expired_open_keys_give_their_blocks_to_deletion(tmp_path: Path) -> None:
    hour = 3600_000
    om, _, clock = setup(tmp_path, open_key_expire_ms=hour, open_key_cleanup_limit=2)
    old = [om.keys.open("vol1", "bkt1", f"old{i}", 10) for i in range(3)]
    clock.advance(hour // 2)
    young = om.keys.open("vol1", "bkt1", "young", 10)
    clock.advance(hour // 2)
    service = OpenKeyCleanupService(om)
    assert service.run_once() == 2
    assert service.run_once() == 1
    assert service.run_once() == 0
    open_keys = [name for name, _ in om.store.scan(OPEN_KEY_TABLE)]
    assert open_keys == [f"/vol1/bkt1/young/{young.client_id}"]
    deleted = sorted(b for _, v in om.store.scan(DELETED_TABLE) for b in _blocks(v))
    assert deleted == sorted(s.key.blocks[0].block_id for s in old)
    clock.advance(hour)
    assert service.run_once() == 1


def _blocks(value: bytes) -> list[BlockID]:
    from pyozone.protocol.om_records import decode_key

    return [b.block_id for b in decode_key(value).blocks]


def _deleted(om, name: str, blocks: int, first_local: int) -> list[BlockID]:
    """A deletedTable entry of `blocks` blocks, as a delete of such a key leaves it."""
    ids = [BlockID(1, first_local + i) for i in range(blocks)]
    located = tuple(KeyBlock(b, i * 10, 10) for i, b in enumerate(ids))
    record = KeyRecord("vol1", "bkt1", name, 10 * blocks, 1, 1, RATIS_THREE, located, 1)
    om.store.write(
        [(DELETED_TABLE, f"/vol1/bkt1/{name}/1", om_records.encode(om_records.key_to_proto(record)))]
    )
    return ids


def _request_bytes(keys: list[KeyBlocks]) -> int:
    return block_pb2.DeleteScmKeyBlocksRequestProto(
        keyBlocks=[key_blocks_to_proto(k) for k in keys]
    ).ByteSize()


def test_requests_stay_under_the_size_limit_however_long_the_names_or_many_the_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch capped by entry count alone could exceed the protocol's message limit, fail every run
    and hold back every entry behind it for good."""
    monkeypatch.setattr(services, "MAX_DELETE_REQUEST_BYTES", 2048)
    om, scm, _ = setup(tmp_path)
    expected = [b for i in range(5) for b in _deleted(om, f"{'n' * 600}{i}", 1, 100 + i)]
    expected += _deleted(om, "big", 200, 1000)
    run = KeyDeletingService(om).run_once()
    assert (run.sent, run.purged, run.error) == (6, 6, "")
    assert len(scm.deletes) > 4 and all(_request_bytes(call) <= 2048 for call in scm.deletes)
    assert sorted(b for call in scm.deletes for k in call for b in k.blocks) == sorted(expected)
    assert list(om.store.scan(DELETED_TABLE)) == []


def test_an_entry_split_over_requests_stays_until_scm_took_every_piece(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(services, "MAX_DELETE_REQUEST_BYTES", 2048)
    om, scm, _ = setup(tmp_path)
    _deleted(om, "big", 200, 1000)
    calls = 0
    take = scm.delete_key_blocks

    def fail_the_second(keys: list[KeyBlocks]) -> list[KeyBlocksResult]:
        nonlocal calls
        calls += 1
        scm.unreachable = calls == 2
        return take(keys)

    scm.delete_key_blocks = fail_the_second  # type: ignore[method-assign]
    run = KeyDeletingService(om).run_once()
    assert (run.purged, calls) == (0, 2) and run.error
    assert len(list(om.store.scan(DELETED_TABLE))) == 1
    scm.unreachable = False
    assert KeyDeletingService(om).run_once().purged == 1


def test_a_deleted_entrys_block_ids_are_read_without_the_rest_of_its_record() -> None:
    """issue 29: KeyDeletingService reads only the block ids of each deletedTable entry."""
    blocks = tuple(KeyBlock(BlockID(c, c * 10), 0, 5, bcsid=3) for c in (1, 2, 7))
    record = KeyRecord("v", "b", "k", 15, 1, 2, RATIS_THREE, blocks, 42, (("m", "x"),), (("t", "y"),), "me")
    data = om_records.encode(om_records.key_to_proto(record))
    assert om_records.decode_key_block_ids(data) == tuple(
        b.block_id for b in om_records.decode_key(data).blocks
    )
    assert om_records.decode_key_block_ids(om_records.encode(om_records.key_to_proto(KeyRecord(
        "v", "b", "k", 0, 1, 2, RATIS_THREE, (), 43
    )))) == ()  # fmt: skip
