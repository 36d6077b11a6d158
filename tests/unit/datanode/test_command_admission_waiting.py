"""WaitingCommands: the order workers take commands in, and the tallies admission reads without a count."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from pyozone.datanode.command_admission import WaitingCommands
from pyozone.hdds.commands import (
    CloseContainerCommand,
    ReplicateContainerCommand,
    ReplicationCommandPriority,
    SCMCommand,
    is_low_priority_replication,
)


def _command(kind: int, cid: int) -> SCMCommand:
    if kind == 2:
        return CloseContainerCommand(container_id=cid, pipeline_id="p", id=cid)
    priority = ReplicationCommandPriority.LOW if kind else ReplicationCommandPriority.NORMAL
    return ReplicateContainerCommand(container_id=cid, priority=priority, id=cid)


@given(st.lists(st.one_of(st.integers(0, 2), st.none()), max_size=60))
def test_the_tallies_equal_a_recount_and_workers_take_normal_before_low_in_arrival_order(
    steps: list[int | None],
) -> None:
    """Random pushes (a NORMAL or LOW replicate, a close) and pops (None); after each step the kept tallies
    equal counting what waits, and every pop is the oldest of the lowest priority waiting."""
    waiting, model = WaitingCommands(), []
    for n, step in enumerate(steps):
        if step is None:
            if not model:
                continue
            first = min(model, key=lambda pc: pc[0])
            model.remove(first)
            assert waiting.pop() is first[1]
        else:
            command = _command(step, n)
            waiting.push(command)
            model.append((int(is_low_priority_replication(command)), command))
        assert len(waiting) == len(model)
        assert waiting.low_priority == sum(is_low_priority_replication(c) for _, c in model)
        assert +waiting.of_type == Counter(c.type for _, c in model)
        assert sorted(c.id for c in waiting) == sorted(c.id for _, c in model)
    waiting.clear()
    assert len(waiting) == 0 and waiting.low_priority == 0 and not +waiting.of_type
