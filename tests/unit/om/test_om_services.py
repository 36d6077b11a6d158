"""KeyDeletingService (with partial failures) and OpenKeyCleanupService, run once on an injected clock."""

from __future__ import annotations

from pathlib import Path

from om_fakes import FakeScm, make_om

from pyozone.common.clock import ManualClock
from pyozone.hdds.ids import BlockID
from pyozone.om.metadata import DELETED_TABLE, OPEN_KEY_TABLE
from pyozone.om.records import KeyBlock
from pyozone.om.services import KeyDeletingService, OpenKeyCleanupService
from pyozone.protocol.block import DeleteResult


def setup(tmp_path: Path, **settings):
    scm, clock = FakeScm(), ManualClock()
    om = make_om(tmp_path, scm, clock, **settings)
    om.create_volume("vol1")
    om.create_bucket("vol1", "bkt1")
    return om, scm, clock


def write_and_delete(om, key: str) -> BlockID:
    session = om.open_key("vol1", "bkt1", key, 10)
    block = session.key.blocks[0].block_id
    om.commit_key("vol1", "bkt1", key, session.client_id, 10, [KeyBlock(block, 0, 10)])
    om.delete_key("vol1", "bkt1", key)
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
    old = [om.open_key("vol1", "bkt1", f"old{i}", 10) for i in range(3)]
    clock.advance(hour // 2)
    young = om.open_key("vol1", "bkt1", "young", 10)
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
    from pyozone.om.codec import decode_key

    return [b.block_id for b in decode_key(value).blocks]
