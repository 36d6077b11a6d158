"""The command barrier of an HA leader (scm/node/commands.py): a command queued after a write leaves only once
the epoch of that write applied; the ones before it leave at once, in order, and the per-type counts the
Replication Manager throttles on count every queued command, held or not."""

from __future__ import annotations

from dataclasses import dataclass

from pyozone.hdds.commands import CloseContainerCommand, ReplicateContainerCommand
from pyozone.hdds.states import SCMCommandType as T
from pyozone.scm.node.commands import CommandQueue

DN = "dn-1"


@dataclass
class Epochs:
    epoch: int = 0
    applied_epoch: int = 0


def close(cid: int) -> CloseContainerCommand:
    return CloseContainerCommand(container_id=cid)


def test_a_lone_scms_queue_releases_everything() -> None:
    queue = CommandQueue()
    queue.add(DN, close(1))
    queue.add(DN, close(2))
    assert [c.container_id for c in queue.drain(DN)] == [1, 2] and queue.drain(DN) == []


def test_commands_wait_for_the_epoch_of_the_writes_before_them() -> None:
    epochs = Epochs()
    queue = CommandQueue(epochs)
    queue.add(DN, close(1))  # epoch 0: nothing staged before it
    epochs.epoch = 1
    queue.add(DN, close(2))
    epochs.epoch = 2
    queue.add(DN, ReplicateContainerCommand(container_id=3, sources=()))
    assert queue.held(DN) == 2
    assert [c.container_id for c in queue.drain(DN)] == [1]
    assert queue.count(DN, T.closeContainerCommand) == 1 and queue.count(DN, T.replicateContainerCommand) == 1
    epochs.applied_epoch = 1
    assert [c.container_id for c in queue.drain(DN)] == [2]
    assert queue.count(DN, T.closeContainerCommand) == 0 and queue.held(DN) == 1
    epochs.applied_epoch = 2
    assert [c.container_id for c in queue.drain(DN)] == [3] and queue.peek(DN) == ()


def test_a_step_down_clears_the_queues() -> None:
    epochs = Epochs(epoch=3)
    queue = CommandQueue(epochs)
    queue.add(DN, close(1))
    queue.clear()
    assert queue.peek(DN) == () and queue.count(DN, T.closeContainerCommand) == 0
    epochs.applied_epoch = 3
    assert queue.drain(DN) == []
