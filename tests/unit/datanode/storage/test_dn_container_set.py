"""ContainerSet: everything comes back after a restart; damaged or duplicated replicas are not dropped."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from pyozone.datanode.storage import KeyValueContainer
from pyozone.hdds.ids import BlockID
from pyozone.hdds.states import ReplicaState
from tests.unit.datanode.storage.dn_helpers import chunk_for, open_node, read_block, write_block

S = ReplicaState


def test_reopen_recovers_blocks_bcsid_state_and_usage(tmp_path: Path) -> None:
    node = open_node(tmp_path)
    written = {}
    for cid in (1, 2, 3):
        c = node.containers.create(cid, f"origin-{cid}", "pipe", replica_index=cid - 1)
        for lid in range(1, 6):
            block, data = write_block(c, lid, (1500, 700), bcsid=lid * 10)
            written[(cid, lid)] = (block, data)
    node.containers.get(2).mark_closing()
    node.containers.get(3).mark_closing()
    node.containers.get(3).quasi_close()
    before = sorted(node.containers.replica_reports(), key=lambda r: r.container_id)
    used = [v.used for v in node.volumes.data_volumes]
    node.close()

    again = open_node(tmp_path)
    after = sorted(again.containers.replica_reports(), key=lambda r: r.container_id)
    assert after == before
    assert [r.state for r in after] == [S.OPEN, S.CLOSING, S.QUASI_CLOSED]
    assert all(r.sequence_id == 50 and r.key_count == 5 and r.used_bytes == 5 * 2200 for r in after)
    assert [v.used for v in again.volumes.data_volumes] == used
    for (cid, _), (block, data) in written.items():
        c = again.containers.require(cid)
        assert c.get_block(block.block_id) == block
        assert read_block(c, block) == data
    assert len(again.containers) == 3 and again.containers.duplicates == []
    assert [c.container_id for c in again.containers.by_state(S.OPEN, S.CLOSING)] == [1, 2]
    again.close()


def test_containers_are_spread_over_volumes(tmp_path: Path) -> None:
    node = open_node(tmp_path, disks=2)
    volumes = [node.containers.create(cid, "o", "p").volume.root.name for cid in range(1, 5)]
    assert volumes == ["disk0", "disk1", "disk0", "disk1"]
    node.close()


def test_corrupt_container_file_loads_unhealthy(tmp_path: Path) -> None:
    node = open_node(tmp_path)
    c = node.containers.create(1, "o", "p")
    write_block(c, 1, (100,), bcsid=4)
    c.mark_closing()
    c.close()
    node.containers.create(2, "o", "p")
    node.close()
    doc = json.loads(c.container_file.read_text())
    doc["state"] = "OPEN"  # reopened behind the datanode's back: the checksum no longer matches
    c.container_file.write_text(json.dumps(doc))

    again = open_node(tmp_path)
    damaged = again.containers.require(1)
    assert damaged.state is S.UNHEALTHY and "checksum mismatch" in damaged.unhealthy_reason
    report = {r.container_id: r for r in again.containers.replica_reports()}[1]
    assert report.state is S.UNHEALTHY and report.sequence_id == 4 and report.key_count == 1
    assert again.containers.require(2).state is S.OPEN
    assert not damaged.mark_unhealthy("again")
    assert json.loads(c.container_file.read_text())["state"] == "OPEN"  # evidence left untouched
    again.close()


def test_unparsable_or_missing_container_file_loads_unhealthy(tmp_path: Path) -> None:
    node = open_node(tmp_path)
    a = node.containers.create(1, "o", "p")
    b = node.containers.create(2, "o", "p")
    node.close()
    a.container_file.write_bytes(b"\x00\xff garbage")
    b.container_file.unlink()
    again = open_node(tmp_path)
    assert {c.container_id: c.state for c in again.containers} == {1: S.UNHEALTHY, 2: S.UNHEALTHY}
    again.close()


def test_container_on_two_volumes_keeps_higher_bcsid(tmp_path: Path) -> None:
    node = open_node(tmp_path, disks=2)
    c = node.containers.create(7, "o", "p")
    write_block(c, 1, (100,), bcsid=3)
    stale_dir = node.volumes.data_volumes[1].container_dir(7)
    stale_dir.parent.mkdir(parents=True)
    shutil.copytree(c.directory, stale_dir)  # a stale copy (BCSID 0 in the other volume's DB)
    write_block(c, 2, (100,), bcsid=9)
    node.close()

    again = open_node(tmp_path, disks=2)
    kept = again.containers.require(7)
    assert kept.bcsid == 9 and kept.directory == c.directory
    [dup] = again.containers.duplicates
    assert (dup.container_id, dup.kept, dup.ignored) == (7, str(c.directory), str(stale_dir))
    assert stale_dir.exists()  # reported, not deleted
    again.close()


def test_failed_volume_containers_are_forgotten(tmp_path: Path) -> None:
    node = open_node(tmp_path, disks=2)
    made = [node.containers.create(cid, "o", "p") for cid in (1, 2, 3)]
    made[0].volume.mark_failed("disk pulled")
    assert node.containers.remove_failed_volume_containers() == [1, 3]
    assert [c.container_id for c in node.containers] == [2]
    node.close()


def test_listener_errors_do_not_break_operations(tmp_path: Path) -> None:
    node = open_node(tmp_path)
    seen = []

    def broken(_: object) -> None:
        raise RuntimeError("listener bug")

    node.containers.on_change(broken)
    node.containers.on_change(seen.append)
    c: KeyValueContainer = node.containers.create(1, "o", "p")
    assert c.mark_closing() and len(seen) == 2
    node.close()


def test_restart_removes_block_files_no_committed_block_owns(tmp_path: Path) -> None:
    """A stream cut off by a crash leaves a block file without its putBlock; no writer comes back for it
    after a restart, so the open replica drops it and counts only what its blocks hold. A closed
    replica is left alone."""
    node = open_node(tmp_path)
    open_one = node.containers.create(1, "origin", "pipe")
    closed = node.containers.create(2, "origin", "pipe")
    kept, data = write_block(open_one, 1, (1500,), bcsid=1)
    write_block(closed, 1, (700,), bcsid=1)
    for container in (open_one, closed):
        orphan = BlockID(container.container_id, 9)
        container.write_chunk(orphan, chunk_for(b"x" * 4000, "9_chunk_1"), b"x" * 4000)
    closed.mark_closing()
    closed.close()
    node.close()

    again = open_node(tmp_path)
    reopened, still_closed = again.containers.require(1), again.containers.require(2)
    assert not (reopened.chunks_dir / "9.block").exists()
    assert reopened.used_bytes == 1500 and read_block(reopened, kept) == data
    assert (still_closed.chunks_dir / "9.block").exists()
    assert sum(v.used for v in again.volumes.data_volumes) == 1500 + still_closed.used_bytes
    again.close()
