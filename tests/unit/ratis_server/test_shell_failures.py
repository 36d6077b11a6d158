"""A member whose storage or core fails stops at once (as Ratis's RaftServerImpl terminates on a log I/O
error): nothing written after a failed write is reported persisted, no reply or apply it held is released,
and a failure inside a tick does not leave a member running without its timer. Two stops at once: the second
waits for the first."""

from __future__ import annotations

import asyncio
import errno
import threading

import pytest

from pyozone.common.net import HostPort
from pyozone.protocol.raft import RaftEnvelope
from pyozone.ratis.messages import AppendEntriesRequest, LogEntry, RaftPeerId
from pyozone.ratis.outputs import Persist
from pyozone.ratis_server.member_api import ApplyFailedError
from pyozone.ratis_server.server import RaftMember
from pyozone.ratis_server.transport import RaftGroup, RaftPeer
from tests.polling import wait_for_async
from tests.unit.ratis_server.shell_support import (
    GROUP_ID,
    SETTINGS,
    Group,
    KeyValues,
    MemoryStorage,
    ports_of,
    put,
)

OM1, OM2 = RaftPeerId("om1"), RaftPeerId("om2")


def run(coroutine: object) -> object:
    return asyncio.run(asyncio.wait_for(coroutine, 60))  # type: ignore[arg-type]


class FailingStorage(MemoryStorage):
    """A disk that fails once (ENOSPC) on the first write `fails` selects, then works again."""

    def __init__(self, fails: str) -> None:
        super().__init__()
        self.fails = fails
        self.failed_seq: int | None = None

    def write(self, persist: Persist) -> None:
        selected = bool(persist.entries) if self.fails == "entries" else persist.term > self.term
        if self.failed_seq is None and selected:
            self.failed_seq = persist.seq
            raise OSError(errno.ENOSPC, "No space left on device")
        super().write(persist)


def _entries(first: int, last: int) -> tuple[LogEntry, ...]:
    return tuple(LogEntry(1, i, put(f"k{i}", "v"), client_id="c", call_id=i) for i in range(first, last + 1))


def test_a_failed_write_stops_the_member_and_nothing_after_it_is_reported_persisted() -> None:
    async def scenario() -> None:
        ports = ports_of(2)
        group = RaftGroup(
            GROUP_ID,
            tuple(
                RaftPeer(p, HostPort("127.0.0.1", port)) for p, port in zip((OM1, OM2), ports, strict=True)
            ),
        )
        storage = FailingStorage("entries")
        member = RaftMember(OM2, group, storage, KeyValues(), SETTINGS)
        await member.start()
        core = member._core
        assert core is not None
        heard: list[int] = []
        persisted = core.persisted

        def spy(seq: int) -> list[object]:
            heard.append(seq)
            return persisted(seq)  # type: ignore[return-value]

        core.persisted = spy  # type: ignore[method-assign]

        def deliver(message: AppendEntriesRequest) -> None:
            member.receive([RaftEnvelope(GROUP_ID, OM1, OM2, message)])

        deliver(AppendEntriesRequest(OM1, 1, 0, 0, _entries(1, 5), 0, 1))
        assert storage.failed_seq is not None
        assert not member.running
        deliver(AppendEntriesRequest(OM1, 1, 5, 1, _entries(6, 8), 0, 2))  # taken no more
        await member.stop()
        assert all(seq < storage.failed_seq for seq in heard), heard
        assert storage.load().entries == ()

    run(scenario())


def test_a_failure_inside_a_tick_stops_the_member() -> None:
    async def scenario() -> None:
        (port,) = ports_of(1)
        group = RaftGroup(GROUP_ID, (RaftPeer(OM1, HostPort("127.0.0.1", port)),))
        storage = FailingStorage("term")  # the election's new term: written by a tick
        member = RaftMember(OM1, group, storage, KeyValues(), SETTINGS)
        await member.start()
        try:
            await wait_for_async(lambda: storage.failed_seq is not None, 10, "the election's write")
            assert not member.running
        finally:
            await member.stop()

    run(scenario())


def test_a_bug_in_the_core_on_a_tick_stops_the_member() -> None:
    async def scenario() -> None:
        (port,) = ports_of(1)
        group = RaftGroup(GROUP_ID, (RaftPeer(OM1, HostPort("127.0.0.1", port)),))
        member = RaftMember(OM1, group, MemoryStorage(), KeyValues(), SETTINGS)
        await member.start()
        core = member._core
        assert core is not None
        ticked = threading.Event()

        def broken() -> list[object]:
            ticked.set()
            raise AssertionError("a bug")

        core.tick = broken  # type: ignore[method-assign]
        try:
            await wait_for_async(ticked.is_set, 10, "a tick")
            assert not member.running
        finally:
            await member.stop()

    run(scenario())


def test_a_second_stop_waits_for_the_first() -> None:
    async def scenario() -> None:
        group = Group(3)
        for peer in group.nodes:
            await group.start(peer)
        try:
            leader = await group.leader()
            node = group.nodes[leader.me]
            closed = threading.Event()
            close = node.storage.close

            def tracked_close() -> None:
                closed.set()
                close()

            node.storage.close = tracked_close  # type: ignore[method-assign]
            node.storage.hold = threading.Event()  # a slow disk: the flush under way takes a while
            write = asyncio.ensure_future(leader.submit(put("k", "v"), "c", 1))
            await wait_for_async(lambda: node.storage.flushes_begun > node.storage.flushes, 10, "a flush")
            first = asyncio.ensure_future(leader.stop())
            await asyncio.sleep(0)
            second = asyncio.ensure_future(leader.stop())
            for _ in range(20):  # loop turns, not time: the first stop waits on the held flush
                await asyncio.sleep(0)
            assert not second.done() and not closed.is_set()
            node.storage.hold.set()
            await asyncio.gather(first, second)
            assert closed.is_set()
            await asyncio.gather(write, return_exceptions=True)
        finally:
            for peer in group.nodes:
                await group.stop(peer)

    run(scenario())


def test_a_bug_in_the_core_on_a_caller_s_input_stops_the_member() -> None:
    async def scenario() -> None:
        (port,) = ports_of(1)
        group = RaftGroup(GROUP_ID, (RaftPeer(OM1, HostPort("127.0.0.1", port)),))
        member = RaftMember(OM1, group, MemoryStorage(), KeyValues(), SETTINGS)
        await member.start()
        core = member._core
        assert core is not None

        def broken(call: object) -> list[object]:
            raise AssertionError("a bug")

        core.submit = broken  # type: ignore[method-assign]
        try:
            with pytest.raises(AssertionError, match="a bug"):
                await member.submit(put("k", "v"), "c", 1)
            assert not member.running
        finally:
            await member.stop()

    run(scenario())


class FailingMachine(KeyValues):
    """A state machine whose store fails on one entry (ENOSPC): it raises ApplyFailedError, and
    `failures` records what `notify_failed` heard."""

    def __init__(self, fails_at: int) -> None:
        super().__init__()
        self.fails_at = fails_at
        self.failures: list[str] = []

    def apply(self, entry: LogEntry) -> object:
        if entry.index == self.fails_at:
            raise ApplyFailedError(f"entry {entry.index} not written: No space left on device")
        return super().apply(entry)

    def notify_failed(self, reason: str) -> None:
        self.failures.append(reason)


def test_an_entry_its_state_machine_could_not_apply_stops_the_member_and_is_not_counted_applied() -> None:
    """R19 D1: an ApplyFailedError is not the entry's result: the member fails for its group (as Ozone's
    SCM and OM terminate on an applyTransaction failure) and applies nothing after it."""

    async def scenario() -> None:
        (port,) = ports_of(1)
        group = RaftGroup(GROUP_ID, (RaftPeer(OM1, HostPort("127.0.0.1", port)),))
        machine = FailingMachine(fails_at=3)
        member = RaftMember(OM1, group, MemoryStorage(), machine, SETTINGS)
        await member.start()
        try:
            await wait_for_async(lambda: member.leading_term() is not None, 10, "the lone member leads")
            assert await member.submit(put("a", "1"), "c", 1) == 2  # index 1: the leader's no-op
            with pytest.raises(Exception):  # noqa: B017 - the member stops under the caller
                await member.submit(put("b", "2"), "c", 2)
            assert not member.running
            assert machine.failures == ["entry 3 not written: No space left on device"]
            assert machine.applied == [2] and member._applier.applied_index == 2
        finally:
            await member.stop()

    run(scenario())
