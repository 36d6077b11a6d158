"""What the shell carries out for the core beyond a write (RaftMember over real rpc connections): snapshots
taken by the state machine purge the log; a member that fell behind the purge is notified and its state
machine loads the leader's checkpoint; a restart resumes after the state machine's checkpoint, even one
ahead of the stored log; members are added and removed; a second transfer to another member is refused; a
retried write is applied once."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import pytest

from pyozone.common.net import HostPort
from pyozone.protocol.raft import RaftEnvelope
from pyozone.ratis.messages import (
    AppendEntriesRequest,
    InstallSnapshotRequest,
    LogEntry,
    RaftPeerId,
    TermIndex,
)
from pyozone.ratis.outputs import Persist
from pyozone.ratis_server.member_api import (
    NotLeaderError,
    ReconfigurationError,
    StateMachineBehindLogError,
    TransferRefusedError,
)
from pyozone.ratis_server.segmented_log import SegmentedRaftLog
from pyozone.ratis_server.server import RaftMember
from tests.polling import wait_for_async
from tests.unit.ratis_server.shell_support import (
    SETTINGS,
    Checkpoint,
    Group,
    KeyValues,
    put,
    running_group,
)

PURGE_GAP = 5
SNAPSHOTS = dataclasses.replace(SETTINGS, purge_gap=PURGE_GAP)


def run(coroutine: object) -> object:
    return asyncio.run(asyncio.wait_for(coroutine, 60))  # type: ignore[arg-type]


async def _writes(member: RaftMember, first: int, count: int, client: str = "c") -> int:
    indexes = [await member.submit(put(f"k{i}", f"v{i}"), client, i) for i in range(first, first + count)]
    return max(indexes)  # type: ignore[type-var]


def _same_state_everywhere(group: Group) -> None:
    machines = [n.machine for n in group.nodes.values() if n.member is not None]
    for machine in machines:
        assert machine.twice == []
        assert machine.applied == sorted(set(machine.applied))
        assert machine.values == machines[0].values and machine.applied == machines[0].applied


def test_a_member_behind_the_purge_installs_the_leader_s_checkpoint_and_applies_nothing_twice() -> None:
    async def scenario() -> None:
        async with running_group(settings=SNAPSHOTS) as group:
            leader = await group.leader()
            await group.applied_everywhere(await _writes(leader, 0, 3))
            behind = next(p for p in group.nodes if p != leader.me)
            other = next(p for p in group.nodes if p not in (leader.me, behind))
            await group.stop(behind)
            last = await _writes(leader, 3, 2 * PURGE_GAP)
            await group.applied_everywhere(last)
            for peer in (leader.me, other):
                group.checkpoint(peer)
            leader_storage = group.nodes[leader.me].storage
            await wait_for_async(lambda: leader_storage.purges > 0, 10, "the leader's log purged")
            assert leader_storage.snapshot.index > group.nodes[behind].storage.entries[-1].index
            last = await _writes(leader, 3 + 2 * PURGE_GAP, 2)

            await group.start(behind)
            await group.applied_everywhere(last)
            machine = group.nodes[behind].machine
            assert len(machine.installs) == 1 and machine.installs[0].index > 3
            _same_state_everywhere(group)
            assert group.nodes[behind].member.status().applied_index >= last  # type: ignore[union-attr]
            # Its log was reset after the checkpoint: a restart resumes from the checkpoint and the log.
            group.checkpoint(behind)
            await group.stop(behind)
            await group.start(behind)
            last = await _writes(await group.leader(), 100, 2)
            await group.applied_everywhere(last)
            _same_state_everywhere(group)

    run(scenario())


class _CountingLog(SegmentedRaftLog):
    """The real segmented log, counting its purges."""

    purges = 0

    def purge(self, up_to_index: int, configuration: tuple[RaftPeerId, ...] = ()) -> None:
        super().purge(up_to_index, configuration)
        self.purges += 1


def test_on_segmented_logs_a_purged_log_installs_and_restarts(tmp_path: Path) -> None:
    """The same on the real log files, with small segments so a purge drops some: the member behind gets
    the leader's checkpoint (its log reset after it), and every member restarts from its checkpoint and
    its purged log."""

    async def scenario() -> None:
        group = Group(settings=SNAPSHOTS)
        for peer, node in group.nodes.items():
            node.storage = _CountingLog(tmp_path / peer.id, segment_size_max=512)  # type: ignore[assignment]
        try:
            for peer in group.nodes:
                await group.start(peer)
            leader = await group.leader()
            behind = next(p for p in group.nodes if p != leader.me)
            await group.stop(behind)
            last = await _writes(leader, 0, 4 * PURGE_GAP)
            await group.applied_everywhere(last)
            for peer in group.nodes:
                if peer != behind:
                    group.checkpoint(peer)
            leader_log = group.nodes[leader.me].storage
            await wait_for_async(lambda: leader_log.purges > 0, 10, "the leader's log purged")  # type: ignore[attr-defined]
            assert not list((tmp_path / leader.me.id / "current").glob("log_1-*"))  # its first segment went
            await group.start(behind)
            last = await _writes(leader, 100, 2)
            await group.applied_everywhere(last)
            assert len(group.nodes[behind].machine.installs) == 1
            for peer in list(group.nodes):
                await group.stop(peer)
                await group.start(peer)
                last = await _writes(await group.leader(), 200 + 10 * int(peer.id[-1]), 2)
                await group.applied_everywhere(last)
            _same_state_everywhere(group)
        finally:
            for peer in group.nodes:
                await group.stop(peer)

    run(scenario())


class _WithoutSnapshots:
    """A state machine with `apply` only: the shell refuses the leader's notifications for it."""

    def __init__(self) -> None:
        self.applied: list[int] = []

    def apply(self, entry: LogEntry) -> object:
        self.applied.append(entry.index)
        return entry.index


def test_a_state_machine_without_snapshots_refuses_to_install_and_the_group_goes_on() -> None:
    async def scenario() -> None:
        async with running_group(settings=SNAPSHOTS) as group:
            leader = await group.leader()
            behind = next(p for p in group.nodes if p != leader.me)
            await group.stop(behind)
            last = await _writes(leader, 0, 2 * PURGE_GAP)
            await group.applied_everywhere(last)
            for peer in group.nodes:
                if peer != behind:
                    group.checkpoint(peer)
            await wait_for_async(lambda: group.nodes[leader.me].storage.purges > 0, 10, "purged")
            machine = _WithoutSnapshots()
            started = RaftMember(behind, group.group, group.nodes[behind].storage, machine, SNAPSHOTS)
            await started.start()
            try:
                await wait_for_async(
                    lambda: started.status().leader == leader.me, 10, "it follows the leader"
                )
                last = await _writes(leader, 50, 2)
                assert machine.applied == []  # it cannot catch up without the entries the leader purged
                assert group.nodes[leader.me].machine.applied[-1] == last
            finally:
                await started.stop()

    run(scenario())


def test_a_restart_resumes_after_a_checkpoint_ahead_of_the_segmented_log(tmp_path: Path) -> None:
    """The state machine loaded a leader's checkpoint and the member died before its log was reset: its
    log ends before the checkpoint. SegmentedRaftLog refuses entries past its end (a gap); the shell resets
    the log to start after the checkpoint, so the member resumes there and writes follow on."""
    directory = tmp_path / "om1"
    storage = SegmentedRaftLog(directory)
    storage.load()
    storage.write(Persist(1, 1, None, (LogEntry(1, 1, put("a", "1"), client_id="c", call_id=1),)))
    storage.flush()
    with pytest.raises(ValueError, match="would leave a gap"):
        storage.write(Persist(2, 1, None, (LogEntry(1, 9, put("b", "2"), client_id="c", call_id=2),)))
    storage.close()

    async def scenario() -> None:
        group = Group(size=1)
        peer = next(iter(group.nodes))
        ahead = TermIndex(1, 8)
        checkpoint = Checkpoint({"a": "1", "z": "8"}, (1, 8), ahead)
        group.nodes[peer].machine = KeyValues(checkpoint=checkpoint)
        group.nodes[peer].storage = SegmentedRaftLog(directory)  # type: ignore[assignment]
        member = await group.start(peer)
        try:
            await group.leader()
            index = await member.submit(put("b", "2"), "c", 2)
            assert index == ahead.index + 2  # after the new term's no-op
            assert group.nodes[peer].machine.values == {"a": "1", "z": "8", "b": "2"}
            assert group.nodes[peer].machine.twice == []
        finally:
            await group.stop(peer)
        reopened = SegmentedRaftLog(directory)
        state = reopened.load()
        reopened.close()
        assert state.snapshot == ahead and [e.index for e in state.entries] == [9, 10]

    run(scenario())


@pytest.mark.parametrize("holds", [TermIndex(1, 3), None], ids=["older", "empty"])
def test_a_state_machine_behind_the_start_of_its_log_is_refused(
    tmp_path: Path, holds: TermIndex | None
) -> None:
    """om.db lost what a snapshot claimed (or is an older copy) and the log was purged past it: the member
    started with a warning and applied the log after the gap, never holding the entries in it."""
    directory = tmp_path / "om1"
    storage = SegmentedRaftLog(directory)
    storage.load()
    storage.write(Persist(1, 1, None, (), TermIndex(1, 6)))  # the log starts after index 6
    storage.write(Persist(2, 1, None, (LogEntry(1, 7, put("g", "7"), client_id="c", call_id=7),)))
    storage.flush()
    storage.close()

    async def scenario() -> None:
        group = Group(size=1)
        peer = next(iter(group.nodes))
        if holds is not None:
            group.nodes[peer].machine = KeyValues(checkpoint=Checkpoint({"a": "1"}, (1, 2, 3), holds))
        group.nodes[peer].storage = SegmentedRaftLog(directory)  # type: ignore[assignment]
        with pytest.raises(StateMachineBehindLogError, match="its log starts after index 6") as refused:
            await group.start(peer)
        assert refused.value.state_machine_at == holds
        assert group.nodes[peer].machine.applied == (list((holds and (1, 2, 3)) or ()))

    run(scenario())
    reopened = SegmentedRaftLog(directory)  # the refused member closed its log (its lock is free)
    state = reopened.load()
    reopened.close()
    assert state.snapshot == TermIndex(1, 6) and [e.index for e in state.entries] == [7]


def test_a_fourth_member_is_added_and_one_removed_and_the_group_keeps_committing() -> None:
    async def scenario() -> None:
        group = Group(size=4)
        first_three = tuple(list(group.nodes)[:3])
        fourth = list(group.nodes)[3]
        try:
            for peer in first_three:
                await group.start(peer, first_three)
            leader = await group.leader()
            await _writes(leader, 0, 3)
            await group.start(fourth)  # knows every member, as a bootstrapped OM's configuration does
            index = await leader.set_configuration(group.group.peers)
            assert index > 0 and set(leader.group.ids) == set(group.nodes)
            last = await _writes(leader, 3, 3)
            await group.applied_everywhere(last)
            _same_state_everywhere(group)

            moved = dataclasses.replace(group.peer(fourth), address=HostPort("127.0.0.1", 1))
            with pytest.raises(ValueError, match="is a member at"):
                await leader.set_configuration((*group.group.peers[:3], moved))
            removed = next(p for p in first_three if p != leader.me)
            with pytest.raises(ReconfigurationError, match="other than one member"):
                await leader.set_configuration(tuple(group.peer(p) for p in first_three[:1]))
            await leader.set_configuration(tuple(p for p in group.group.peers if p.id != removed))
            assert removed not in leader.group.ids
            await group.stop(removed)
            last = await _writes(await group.leader(), 6, 3)
            await group.applied_everywhere(last)
            _same_state_everywhere(group)
            follower = next(m for m in group.running() if m.me != leader.me)
            with pytest.raises(NotLeaderError):
                await follower.set_configuration(group.group.peers)
        finally:
            for peer in group.nodes:
                await group.stop(peer)

    run(scenario())


def test_a_transfer_to_another_member_while_one_runs_is_refused() -> None:
    async def scenario() -> None:
        async with running_group() as group:
            leader = await group.leader()
            first, second = (p for p in group.nodes if p != leader.me)
            running = asyncio.ensure_future(leader.transfer_leadership(first))
            await asyncio.sleep(0)  # the first transfer starts
            with pytest.raises(TransferRefusedError, match=f"previous transfer to {first}") as refused:
                await leader.transfer_leadership(second)
            assert refused.value.in_progress_to == first
            assert await running is True
            assert (await group.leader()).me == first

    run(scenario())


def test_a_retried_write_returns_its_first_result_and_is_applied_once() -> None:
    """A retry keeps the write's client and call ids (Ratis's retry cache): on the same leader, at once or
    later, and on the next leader after a transfer, it is answered with the first result."""

    async def scenario() -> None:
        async with running_group() as group:
            leader = await group.leader()
            together = await asyncio.gather(*(leader.submit(put("k", "v1"), "client", 7) for _ in range(3)))
            assert len(set(together)) == 1
            index = together[0]
            assert await leader.submit(put("k", "v1"), "client", 7) == index
            assert await leader.submit(put("k", "v2"), "client", 8) == index + 1  # type: ignore[operator]
            await group.applied_everywhere(index + 1)  # type: ignore[operator]
            target = next(p for p in group.nodes if p != leader.me)
            assert await leader.transfer_leadership(target) is True
            new = await group.leader()
            assert await new.submit(put("k", "v1"), "client", 7) == index
            for node in group.nodes.values():
                assert node.machine.applied.count(index) == 1  # type: ignore[arg-type]
                assert node.machine.values == {"k": "v2"}

    run(scenario())


@dataclasses.dataclass
class SlowInstall(KeyValues):
    """A state machine whose download takes until `release` is set; its checkpoint covers 1..19."""

    release: asyncio.Event = dataclasses.field(default_factory=asyncio.Event)
    installing: bool = False
    during_install: list[int] = dataclasses.field(default_factory=list)

    def apply(self, entry: LogEntry) -> object:
        if self.installing:
            self.during_install.append(entry.index)
        return super().apply(entry)

    async def install_snapshot(
        self, leader_id: RaftPeerId, leader_address: HostPort | None, first_available: TermIndex
    ) -> tuple[TermIndex, tuple[RaftPeerId, ...]] | None:
        self.installing = True
        await self.release.wait()
        covers = TermIndex(1, 19)
        self.load(Checkpoint({f"k{i}": "v" for i in range(1, 20)}, tuple(range(1, 20)), covers))
        self.installing = False
        return covers, ()


def test_entries_committed_while_an_install_runs_are_applied_after_it() -> None:
    """A follower notified to install (its leader purged up to 19) is sent 6..30 by a new leader that still
    holds them while the download runs: none reaches the state machine before the checkpoint is loaded, and
    then those past it (20..30) do, so the state machine holds every committed entry."""

    async def scenario() -> None:
        group = Group(3)
        om1, om2, om3 = group.nodes
        machine = SlowInstall()
        member = RaftMember(om2, group.group, group.nodes[om2].storage, machine, SETTINGS)
        await member.start()
        try:

            def entries(first: int, last: int) -> tuple[LogEntry, ...]:
                return tuple(
                    LogEntry(1, i, put(f"k{i}", "v"), client_id="c", call_id=i)
                    for i in range(first, last + 1)
                )

            def deliver(sender: RaftPeerId, message: object) -> None:
                member.receive([RaftEnvelope(group.group.group_id, sender, om2, message)])  # type: ignore[arg-type]

            deliver(om1, AppendEntriesRequest(om1, 1, 0, 0, entries(1, 5), 5, 1))
            await wait_for_async(lambda: machine.applied == [1, 2, 3, 4, 5], 10, "1..5 applied")
            deliver(om1, InstallSnapshotRequest(om1, 1, TermIndex(1, 20), 2))
            await wait_for_async(lambda: machine.installing, 10, "the install to start")
            deliver(om3, AppendEntriesRequest(om3, 2, 5, 1, entries(6, 30), 30, 1))
            core = member._core
            assert core is not None
            await wait_for_async(lambda: core.commit_index == 30, 10, "30 committed")
            assert machine.during_install == []
            machine.release.set()
            await wait_for_async(lambda: machine.applied[-1:] == [30], 10, "30 applied")
            assert machine.values == {f"k{i}": "v" for i in range(1, 31)}
            assert machine.applied == list(range(1, 31))
            assert member.status().applied_index == 30
        finally:
            await member.stop()

    run(scenario())
