"""WitnessedContainers: a container that went with a disk while the datanode was down is known to be missing
at the next start, so a write cannot create it again empty; deleted containers are not missing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pyozone.datanode.storage import ContainerError, ContainerSet, KeyValueContainer, Result
from pyozone.datanode.storage.witnessed import ContainerCreateInfo, WitnessedContainers
from pyozone.hdds.states import ReplicaState
from pyozone.hdds.store import StoreError
from tests.unit.datanode.storage.dn_helpers import Node, make_conf, volume_set, write_block


def _open(root: Path) -> tuple[Node, WitnessedContainers]:
    volumes = volume_set(make_conf(root, disks=2))
    witnessed = WitnessedContainers(root / "meta")
    return Node(root, volumes, ContainerSet(volumes, witnessed)), witnessed


def _close(node: Node, witnessed: WitnessedContainers) -> None:
    node.close()
    witnessed.close()


def _swap_disk(directory: Path) -> None:
    """The disk is replaced by an empty one: the datanode formats it anew at start."""
    shutil.rmtree(directory)
    directory.mkdir()


def test_a_container_on_a_replaced_disk_is_missing_after_a_restart(tmp_path: Path) -> None:
    node, witnessed = _open(tmp_path)
    kept, lost, deleted = (node.containers.create(cid, "o", f"pipe-{cid}") for cid in (1, 2, 3))
    assert kept.volume is not lost.volume and deleted.volume is kept.volume
    write_block(lost, 1, (100,), bcsid=4)
    deleted.mark_closing()
    node.containers.delete(3, force=True)
    assert sorted(witnessed.all()) == [1, 2]
    _close(node, witnessed)

    _swap_disk(lost.volume.root)
    node, witnessed = _open(tmp_path)
    assert [c.container_id for c in node.containers] == [1]
    assert node.containers.missing == {2: ContainerCreateInfo("OPEN", 0, "pipe-2")}
    assert node.containers.lost_from("pipe-2") == [2] and node.containers.lost_from("pipe-1") == []
    assert not node.containers.unrecorded_losses
    with pytest.raises(ContainerError) as e:
        node.containers.create(2, "o", "pipe-2")
    assert e.value.result is Result.CONTAINER_MISSING
    # an import (a replica copied from another datanode) brings it back, and it is recorded again
    volume = node.volumes.healthy_volumes()[0]
    node.containers.install(
        2, lambda: KeyValueContainer.create(volume, 2, 1 << 20, "o", "pipe-2"), restores=True
    )
    assert node.containers.missing == {} and sorted(witnessed.all()) == [1, 2]
    _close(node, witnessed)


def test_containers_from_before_the_record_are_recorded_at_start(tmp_path: Path) -> None:
    volumes = volume_set(make_conf(tmp_path, disks=2))
    unrecorded = ContainerSet(volumes)  # no witnessed store: as a datanode of an earlier version
    unrecorded.create(5, "o", "pipe-5")
    volumes.close()

    node, witnessed = _open(tmp_path)
    assert node.containers.missing == {}
    assert witnessed.all() == {5: ContainerCreateInfo("OPEN", 0, "pipe-5")}
    _close(node, witnessed)


def test_a_locked_or_corrupt_record_is_a_clear_error(tmp_path: Path) -> None:
    witnessed = WitnessedContainers(tmp_path)
    with pytest.raises(StoreError, match="locked by another process \\(is a datanode running on it\\?\\)"):
        WitnessedContainers(tmp_path)
    witnessed._db.write([("ContainerCreateInfoTable", (9).to_bytes(8, "big"), b"not json")])
    with pytest.raises(StoreError, match="corrupt record for container 9"):
        witnessed.all()
    witnessed.close()


def test_a_lost_closed_container_is_missing_but_its_pipeline_lost_nothing_it_writes_to(
    tmp_path: Path,
) -> None:
    node, witnessed = _open(tmp_path)
    closed = node.containers.create(1, "o", "pipe")
    closed.mark_closing()
    closed.close()
    assert witnessed.all()[1].state == "CLOSED"  # the record follows the replica's state
    _close(node, witnessed)

    _swap_disk(closed.volume.root)
    node, witnessed = _open(tmp_path)
    assert list(node.containers.missing) == [1] and node.containers.lost_from("pipe") == []
    _close(node, witnessed)


def test_a_container_is_forgotten_before_its_data_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crash while the directory goes must not leave it recorded yet gone, i.e. missing; a delete that
    fails leaves it recorded."""
    node, witnessed = _open(tmp_path)
    for cid in (1, 2):
        node.containers.create(cid, "o", "pipe").mark_closing()
    seen: list[list[int]] = []
    remove = KeyValueContainer.delete

    def delete(self: KeyValueContainer, force: bool = False, only_if: ReplicaState | None = None) -> bool:
        seen.append(sorted(witnessed.all()))
        if self.container_id == 2:
            raise ContainerError(Result.IO_EXCEPTION, "disk error")
        return remove(self, force, only_if)

    monkeypatch.setattr(KeyValueContainer, "delete", delete)
    node.containers.delete(1)
    with pytest.raises(ContainerError):
        node.containers.delete(2)
    assert seen == [[2], []] and sorted(witnessed.all()) == [2] and 2 in node.containers
    _close(node, witnessed)


def test_until_every_volume_was_read_once_a_failed_volume_may_have_lost_anything(tmp_path: Path) -> None:
    """Containers from before the record, on a volume that fails at the first start with it, were never
    recorded: nothing can say which pipelines lost some."""
    volumes = volume_set(make_conf(tmp_path, disks=2))
    before = ContainerSet(volumes)
    doomed = before.create(1, "o", "pipe").volume.root
    before.create(2, "o", "pipe")
    volumes.close()
    shutil.move(doomed, tmp_path / "unplugged")
    doomed.write_text("a file where the disk was")

    node, witnessed = _open(tmp_path)
    assert node.containers.missing == {} and node.containers.unrecorded_losses
    assert not witnessed.complete
    _close(node, witnessed)

    doomed.unlink()
    shutil.move(tmp_path / "unplugged", doomed)  # the disk is back: every volume read, the record complete
    node, witnessed = _open(tmp_path)
    assert not node.containers.unrecorded_losses and witnessed.complete and sorted(witnessed.all()) == [1, 2]
    _close(node, witnessed)
