"""Groups whose entries carry state machine data (docs/architecture.md "The Raft shell": `DataStateMachine`,
the leader's `DataCache`, `write_data` gating the acknowledgement, `read_data` for evicted entries, async
apply, watches), three in-process members on real connections: what Ozone's ContainerStateMachine relies on
from Ratis."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import pytest

from pyozone import rpc
from pyozone.hdds.errors import ProtocolError
from pyozone.proto import Raft_pb2 as pb
from pyozone.protocol.raft import (
    append_entry_bytes,
    append_entry_pieces,
    append_message_pieces,
    entry_wire_bytes,
    message_to_proto,
    messages_from_bytes,
)
from pyozone.ratis.messages import AppendEntriesRequest, LogEntry, RaftPeerId, WatchLevel
from pyozone.ratis.outputs import Persist
from pyozone.ratis_server import transport
from pyozone.ratis_server.member_api import NotLeaderError, NotReplicatedError
from pyozone.ratis_server.segmented_log import SegmentedRaftLog
from pyozone.ratis_server.transport import DELIVER
from tests.polling import wait_for_async
from tests.unit.ratis_server.data_support import DataMachine, data_groups
from tests.unit.ratis_server.shell_support import SETTINGS, running_group

G = "pipeline-1"
SECOND = "pipeline-2"


def chunk(i: int, size: int = 32 * 1024) -> bytes:
    return bytes([i % 251]) * size


def run(scenario: object, timeout_s: float = 90) -> None:
    asyncio.run(asyncio.wait_for(scenario, timeout_s))  # type: ignore[arg-type]


def test_a_follower_acknowledges_an_entry_only_after_its_write_data() -> None:
    """Both followers received the entry, but their `write_data` waits: its record is not written to their
    logs (it follows its data), so no acknowledgement can leave them and the leader does not commit it
    (acknowledged first, a power loss could leave it committed without its data); once one follower's write
    finishes, the entry commits and the caller hears its result."""

    async def scenario() -> None:
        async with data_groups() as groups:
            leader = await groups.leader(G)
            followers = [m for m in groups.members(G) if m is not leader]
            for f in followers:
                groups.machine(f.me, G).gate = asyncio.Event()
            write = asyncio.create_task(leader.submit(b"put", "", 1, data=chunk(1)))
            index = await wait_for_async(
                lambda: leader.status().last_index if leader.status().last_index > 1 else 0
            )
            await wait_for_async(
                lambda: all(index in groups.machine(f.me, G).writes_started for f in followers),
                what="both followers writing the entry's data",
            )
            assert leader.status().commit_index < index and not write.done()
            assert all(commit < index for peer, commit in leader.commit_infos() if peer != leader.me)
            for f in followers:
                storage = groups.nodes[f.me].storages[G]
                assert all(e.index < index for e in storage.entries)
                assert not any(e.index == index for p in storage._written for e in p.entries)
            gate = groups.machine(followers[0].me, G).gate
            assert gate is not None
            gate.set()
            assert await asyncio.wait_for(write, 15) == index
            infos = dict(leader.commit_infos())
            assert leader.status().commit_index >= index and infos[followers[1].me] < index
            last = groups.machine(followers[1].me, G).gate
            assert last is not None
            last.set()
            await groups.applied_everywhere(G, index)
            for node in groups.nodes.values():
                assert node.machines[G].contents()[index] == (b"put", chunk(1))

    run(scenario())


def test_a_failed_write_data_fails_that_members_group_only() -> None:
    """A follower whose state machine cannot write an entry's data fails for that group (stops, its state
    machine told: Ozone closes the pipeline); its member of another group on the same port goes on, and
    the failed group still commits at majority."""

    async def scenario() -> None:
        async with data_groups(group_ids=(G, SECOND)) as groups:
            leader = await groups.leader(G)
            victim = next(m for m in groups.members(G) if m is not leader)
            groups.machine(victim.me, G).fail_writes = True
            index = await leader.submit(b"w1", "", 1, data=chunk(1))
            await wait_for_async(lambda: not victim.running, what="the failed member stopped")
            failures = groups.machine(victim.me, G).failures
            assert len(failures) == 1 and "failed to write an entry's data" in failures[0]
            assert index not in groups.machine(victim.me, G).data
            assert all(i < index for i, _, _ in groups.machine(victim.me, G).applied)
            assert (await leader.submit(b"w2", "", 2, data=chunk(2))) == index + 1  # majority still
            other = await groups.leader(SECOND)
            second = await other.submit(b"x", "", 1, data=chunk(3))
            await groups.applied_everywhere(SECOND, second)
            survivor = groups.nodes[victim.me].members[SECOND]
            assert survivor.running and survivor.status().applied_index >= second
            assert groups.machine(victim.me, SECOND).contents()[second] == (b"x", chunk(3))
            assert groups.machine(victim.me, SECOND).failures == []

    run(scenario())


def test_data_evicted_from_the_cache_is_read_back_for_a_follower_that_was_down() -> None:
    """The leader keeps at most `leader_pending_bytes` of data for its followers; a follower that was down
    while more was written gets the older entries' data read back from the leader's state machine
    (`read_data`), and ends with the same data."""

    async def scenario() -> None:
        async with data_groups(pending_bytes=100 * 1024) as groups:
            leader = await groups.leader(G)
            down = next(m.me for m in groups.members(G) if m is not leader)
            await groups.stop(down, G)
            indexes = [await leader.submit(f"w{i}".encode(), "", i, data=chunk(i)) for i in range(10)]
            reads_before = leader.data_reads
            await groups.start(down, G)
            await groups.applied_everywhere(G, indexes[-1])
            assert leader.data_reads > reads_before
            assert groups.machine(leader.me, G).reads
            back = groups.machine(down, G).contents()
            for i, index in enumerate(indexes):
                assert back[index] == (f"w{i}".encode(), chunk(i))

    run(scenario())


def test_a_killed_member_restarts_and_catches_up_with_equal_data() -> None:
    """Writers keep writing while a follower is stopped at once (its log keeps only what it flushed, as a
    kill -9 leaves it; its written data stays) and, later, the leader: after both restart, every member
    applied the same entries with the same data, each acknowledged write among them, none twice."""

    async def scenario() -> None:
        async with data_groups() as groups:
            acked: dict[int, tuple[bytes, bytes]] = {}
            stop = asyncio.Event()

            async def writer(w: int) -> None:
                n = 0
                while not stop.is_set():
                    leader = await groups.leader(G)
                    payload, data = f"w{w}-{n}".encode(), chunk(w * 1000 + n, 8 * 1024)
                    try:
                        acked[await leader.submit(payload, "", w * 1000 + n, data=data)] = (payload, data)
                    except Exception:
                        await asyncio.sleep(0.05)
                    n += 1

            writers = [asyncio.create_task(writer(w)) for w in range(3)]
            await wait_for_async(lambda: len(acked) >= 20, what="20 writes")
            leader = await groups.leader(G)
            follower = next(m.me for m in groups.members(G) if m is not leader)
            await groups.stop(follower, G)
            await wait_for_async(lambda: len(acked) >= 40, what="20 more writes")
            await groups.start(follower, G)
            await groups.stop(leader.me, G)
            await wait_for_async(lambda: len(acked) >= 60, 30, "20 more writes under a new leader")
            await groups.start(leader.me, G)
            stop.set()
            await asyncio.gather(*writers)
            final = await groups.leader(G)
            last = await final.submit(b"last", "", 99_999, data=chunk(9))
            await groups.applied_everywhere(G, last, 30)
            contents = [groups.machine(p, G).contents() for p in groups.nodes]
            for machine in (groups.machine(p, G) for p in groups.nodes):
                indexes = [i for i, _, _ in machine.applied]
                assert len(indexes) == len(set(indexes)), "an entry applied twice"
            upto = {i: c for i, c in contents[0].items() if i <= last}
            assert all({i: c for i, c in other.items() if i <= last} == upto for other in contents[1:])
            assert all(upto[i] == write for i, write in acked.items())

    run(scenario(), 120)


def test_an_entrys_data_goes_to_every_follower_and_to_write_data_uncopied(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No copy per follower: the entry's head is serialized once (`DataCache`), and each follower's append
    carries those same pieces, not a copy built for it. No copy at all (issue 30): the shells copy no data:
    the leader's append piece and its `write_data` get views of the bytes `submit` was given, a follower's
    `write_data` a view of the bytes of the call its append came in."""
    carried: dict[RaftPeerId, list[tuple[int, object]]] = {}
    real = transport.append_message_pieces

    def spy(group_id, receiver, append, entries):  # type: ignore[no-untyped-def]
        held = zip(entries, append.entries, strict=True)
        carried.setdefault(receiver, []).extend((id(wire), wire[-1]) for wire, e in held if e.data_size)
        return real(group_id, receiver, append, entries)

    monkeypatch.setattr(transport, "append_message_pieces", spy)
    written: dict[RaftPeerId, list[memoryview]] = {}

    def keep_writes(peer: RaftPeerId, machine: DataMachine) -> None:
        write = machine.write_data

        async def keep(entry: LogEntry, data: memoryview) -> None:
            written.setdefault(peer, []).append(data)
            await write(entry, data)

        machine.write_data = keep  # type: ignore[method-assign]

    async def scenario() -> None:
        async with data_groups() as groups:
            leader = await groups.leader(G)
            for member in groups.members(G):
                keep_writes(member.me, groups.machine(member.me, G))
            data = chunk(1, 1 << 20)
            index = await leader.submit(b"w", "", 1, data=data)
            await groups.applied_everywhere(G, index)
            sent = [held for peer, held in carried.items() if peer != leader.me]
            assert len(sent) == 2 and sent[0] and {i for i, _ in sent[0]} == {i for i, _ in sent[1]}
            assert all(
                isinstance(piece, memoryview) and piece.obj is data for held in sent for _, piece in held
            )
            assert [view.obj for view in written.pop(leader.me)] == [data]
            assert len(written) == 2
            for views in written.values():  # the call's body: the data, its entry's head and the append's
                assert [(type(v.obj), v == data, len(v.obj) > len(data)) for v in views] == [
                    (bytes, True, True)
                ]
            assert leader.data_reads == 0

    run(scenario())


def test_entries_applied_out_of_order_answer_each_caller_with_its_own_result() -> None:
    async def scenario() -> None:
        async with data_groups() as groups:
            leader = await groups.leader(G)
            results = await asyncio.gather(
                *(leader.submit(f"w{i}".encode(), "", i, data=chunk(i, 1024)) for i in range(40))
            )
            await groups.applied_everywhere(G, max(results))
            contents = groups.machine(leader.me, G).contents()
            assert [contents[r][0] for r in results] == [f"w{i}".encode() for i in range(40)]

    run(scenario())


def test_watch_all_fails_not_replicated_with_commit_infos_while_a_member_is_down() -> None:
    settings = dataclasses.replace(SETTINGS, push_commit=True)

    async def scenario() -> None:
        async with data_groups(settings=settings) as groups:
            leader = await groups.leader(G)
            index = await leader.submit(b"w", "", 1, data=chunk(1))
            infos = await leader.watch(index, WatchLevel.ALL, 10)
            assert all(commit >= index for _, commit in infos)
            down = next(m.me for m in groups.members(G) if m is not leader)
            await groups.stop(down, G)
            later = await leader.submit(b"w2", "", 2, data=chunk(2))
            assert dict(await leader.watch(later, WatchLevel.MAJORITY, 10))[leader.me] >= later
            with pytest.raises(NotReplicatedError) as failed:
                await leader.watch(later, WatchLevel.ALL, 0.5)
            assert dict(failed.value.infos)[down] < later

    run(scenario())


def test_a_member_without_a_data_state_machine_refuses_data() -> None:
    async def scenario() -> None:
        async with running_group() as group:
            leader = await group.leader()
            with pytest.raises(ValueError, match="takes no state machine data"):
                await leader.submit(b"x", "c", 1, data=b"data")

    run(scenario())


@pytest.mark.parametrize("size", [1, 127, 128, 16_383, 16_384, 4 << 20])
def test_an_entrys_wire_bytes_count_its_data_as_the_core_sizes_appends(size: int) -> None:
    """The core fills an append by `entry_wire_bytes`; the bytes the sender frames by hand are exactly that
    long, and the follower reads the entry and its data back."""
    entry = LogEntry(3, 7, b"header", client_id="", call_id=5, data_size=size)
    data = chunk(size, size)
    wire = append_entry_pieces(entry, data)
    assert entry_wire_bytes(entry) == len(append_entry_bytes(entry, data)) == sum(map(len, wire))
    append = AppendEntriesRequest(RaftPeerId("dn1"), 3, 6, 3, (entry,), 6, 1)
    [envelope] = messages_from_bytes(b"".join(append_message_pieces(G, RaftPeerId("dn2"), append, [wire])))
    assert envelope.message == append and envelope.data == {7: data}


def test_an_append_whose_data_is_not_its_counted_size_is_refused() -> None:
    entry = LogEntry(3, 7, b"header", data_size=10)
    append = AppendEntriesRequest(RaftPeerId("dn1"), 3, 6, 3, (entry,), 6, 1)
    batch = pb.RaftServerMessagesProto(messages=[message_to_proto(G, RaftPeerId("dn2"), append)])
    batch.messages[0].appendEntries.entries[0].stateMachineLogEntry.stateMachineData = b"x" * 9
    with pytest.raises(ProtocolError, match="counts 10 bytes of data but carries 9"):
        messages_from_bytes(batch.SerializeToString())


def test_the_log_keeps_an_entrys_data_size_never_its_data(tmp_path: Path) -> None:
    entry = LogEntry(1, 1, b"header", data_size=4096)
    storage = SegmentedRaftLog(tmp_path / "g")
    storage.load()
    storage.write(Persist(1, 1, None, (entry,)))
    storage.flush()
    storage.close()
    reopened = SegmentedRaftLog(tmp_path / "g")
    assert reopened.load().entries == (entry,)
    reopened.close()
    assert sum(f.stat().st_size for f in (tmp_path / "g").rglob("log_*")) < 200


def test_a_member_without_a_data_state_machine_drops_appends_carrying_data() -> None:
    """An OM member (a plain StateMachine) takes no entry with state machine data: such an append is logged
    and dropped before its core sees it, and the member goes on."""

    async def scenario() -> None:
        async with running_group() as group:
            leader = await group.leader()
            target = next(m for m in group.running() if m is not leader)
            term = target.status().term
            entry = LogEntry(99, 1, b"evil", data_size=4)
            append = AppendEntriesRequest(leader.me, 99, 0, 0, (entry,), 1, 1)
            wire = append_entry_pieces(entry, b"data")
            batch = b"".join(append_message_pieces(group.group.group_id, target.me, append, [wire]))
            settings = rpc.ChannelSettings(max_message_bytes=1 << 20)
            async with rpc.Channel(target.address, settings) as channel:
                await channel.unary(DELIVER.path, batch, None, timeout=10)
            assert target.running and target.status().term == term
            await group.applied_everywhere(await leader.submit(b'{"put": ["a", "1"]}', "c", 1))

    run(scenario())


def test_a_leader_whose_write_data_fails_stops_and_the_others_elect_and_go_on() -> None:
    """The leader writes each entry's data too before it counts itself: when it cannot, it fails for the
    group (the caller hears NotLeaderError), and the two others elect a leader that commits."""

    async def scenario() -> None:
        async with data_groups() as groups:
            leader = await groups.leader(G)
            groups.machine(leader.me, G).fail_writes = True
            with pytest.raises(NotLeaderError):
                await leader.submit(b"lost", "", 1, data=chunk(1))
            assert not leader.running and groups.machine(leader.me, G).failures
            groups.nodes[leader.me].members.pop(G)
            successor = await groups.leader(G)
            index = await successor.submit(b"w", "", 2, data=chunk(2))
            await groups.applied_everywhere(G, index)
            assert all(
                groups.machine(m.me, G).contents()[index] == (b"w", chunk(2)) for m in groups.members(G)
            )

    run(scenario())


def test_a_leader_that_cannot_read_back_an_entrys_data_fails_its_group() -> None:
    """R13 D2: a follower that was down needs an entry whose data the leader no longer caches, and the
    leader's state machine cannot read it back. Before, the leader dropped the append on every attempt,
    for good and silently (the follower answered heartbeats, so nothing noticed). Now the leader fails for
    the group (its state machine hears notify_failed: Ozone's unhealthy state machine, the pipeline
    closes), and the two others elect a leader that catches the follower up."""

    async def scenario() -> None:
        async with data_groups(pending_bytes=64 * 1024) as groups:
            leader = await groups.leader(G)
            down = next(m.me for m in groups.members(G) if m is not leader)
            await groups.stop(down, G)
            indexes = [await leader.submit(f"w{i}".encode(), "", i, data=chunk(i)) for i in range(6)]
            machine = groups.machine(leader.me, G)

            async def unreadable(entry: LogEntry) -> bytes:
                raise FileNotFoundError(f"entry {entry.index}: its block file is gone")

            machine.read_data = unreadable  # type: ignore[method-assign]
            await groups.start(down, G)
            await wait_for_async(lambda: not leader.running, 15, "the leader failing for the group")
            assert any("could not read back the data of entry" in f for f in machine.failures)
            groups.nodes[leader.me].members.pop(G)
            await groups.applied_everywhere(G, indexes[-1], timeout_s=30)
            back = groups.machine(down, G).contents()
            assert all(back[index] == (f"w{i}".encode(), chunk(i)) for i, index in enumerate(indexes))

    run(scenario())


def test_a_single_member_groups_data_cache_is_released_once_applied() -> None:
    """R13 D5: a one-member group (Ozone's RATIS/ONE pipelines) has no follower whose answer would drop
    its cached data: each entry's goes once it is applied (durable first), not at leader_pending_bytes."""

    async def scenario() -> None:
        async with data_groups(size=1) as groups:
            leader = await groups.leader(G)
            for i in range(20):
                await leader.submit(f"w{i}".encode(), "", i, data=chunk(i))
            await groups.applied_everywhere(G, leader.status().last_index)
            cache = leader._data.cache  # type: ignore[union-attr]
            assert len(cache) == 0 and cache.bytes == 0

    run(scenario())
