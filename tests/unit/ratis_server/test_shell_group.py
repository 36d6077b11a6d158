"""Three members of one group in one process over real rpc connections on 127.0.0.1 (RaftMember, the Raft
core's I/O shell): they elect a leader and replicate; a follower refuses a write naming the leader; the
group survives its leader's stop and a stopped member catches up from its storage; reads wait for a
barrier; leadership moves on request; and the same group runs over mutual TLS."""

from __future__ import annotations

import asyncio
import threading

import pytest

from pyozone.hdds.security import x509 as X
from pyozone.ratis.messages import RaftPeerId
from pyozone.ratis.roles import RaftPeerRole
from pyozone.ratis_server.member_api import EntryTooLargeError, NotLeaderError
from tests.polling import wait_for_async
from tests.tls_certs import CertAuthority
from tests.unit.ratis_server.shell_support import SETTINGS, Group, put, running_group


def run(coroutine: object) -> object:
    return asyncio.run(asyncio.wait_for(coroutine, 60))  # type: ignore[arg-type]


async def _write(group: Group, key: str, value: str, client: str = "client", call: int = 1) -> int:
    leader = await group.leader()
    return await leader.submit(put(key, value), client, call)  # type: ignore[return-value]


def test_three_members_elect_a_leader_and_replicate() -> None:
    async def scenario() -> None:
        async with running_group() as group:
            leader = await group.leader()
            indexes = await asyncio.gather(*(leader.submit(put(f"k{i}", f"v{i}"), "c", i) for i in range(20)))
            assert sorted(indexes) == list(range(min(indexes), min(indexes) + 20))
            await group.applied_everywhere(max(indexes))
            for node in group.nodes.values():
                assert node.machine.values == {f"k{i}": f"v{i}" for i in range(20)}
            status = leader.status()
            assert status.role is RaftPeerRole.LEADER and status.commit_index >= max(indexes)
            await wait_for_async(
                lambda: all(f.lag == 0 for f in leader.status().followers), 10, "followers caught up"
            )
            assert {f.peer for f in leader.status().followers} == set(group.nodes) - {leader.me}

    run(scenario())


def test_a_follower_refuses_a_write_naming_the_leader_and_its_address() -> None:
    async def scenario() -> None:
        async with running_group() as group:
            leader = await group.leader()
            follower = next(m for m in group.running() if m is not leader)
            with pytest.raises(NotLeaderError) as refused:
                await follower.submit(put("k", "v"), "c", 1)
            assert refused.value.leader_id == leader.me
            assert refused.value.leader_address == leader.address
            with pytest.raises(NotLeaderError):
                await follower.read_index()
            assert all(not n.machine.values for n in group.nodes.values())

    run(scenario())


def test_a_new_leader_after_the_leader_stops_and_a_restarted_member_catches_up() -> None:
    async def scenario() -> None:
        async with running_group() as group:
            first = await _write(group, "a", "1")
            old = (await group.leader()).me
            await group.stop(old)
            new = await group.leader()
            assert new.me != old
            second = await new.submit(put("b", "2"), "c", 2)
            assert second > first
            await group.applied_everywhere(second)
            # The stopped member restarts from what its storage made durable and catches up.
            restarted = await group.start(old)
            await group.applied_everywhere(second)
            assert group.nodes[old].machine.values == {"a": "1", "b": "2"}
            assert restarted.status().leader is not None

    run(scenario())


def test_a_read_barrier_follows_every_acknowledged_write() -> None:
    async def scenario() -> None:
        async with running_group() as group:
            index = await _write(group, "k", "v")
            leader = await group.leader()
            read_index = await leader.read_index()
            assert read_index >= index
            assert leader.status().applied_index >= read_index
            assert group.nodes[leader.me].machine.values["k"] == "v"

    run(scenario())


def test_leadership_moves_to_the_member_named() -> None:
    async def scenario() -> None:
        async with running_group() as group:
            await _write(group, "k", "v")
            leader = await group.leader()
            target = next(p for p in group.nodes if p != leader.me)
            assert await leader.transfer_leadership(target) is True
            assert (await group.leader()).me == target
            with pytest.raises(ValueError, match="not another member"):
                await (await group.leader()).transfer_leadership(RaftPeerId("om9"))
            await _write(group, "k2", "v2", call=2)

    run(scenario())


def test_stop_answers_waiting_callers_and_leaves_no_task() -> None:
    """A write waiting for its disk when the member stops is answered (NotLeaderError: try another)."""

    async def scenario() -> None:
        tasks_before = asyncio.all_tasks()
        group = Group(size=1)
        peer = next(iter(group.nodes))
        member = await group.start(peer)
        await group.leader()
        await wait_for_async(lambda: member.status().applied_index == 1, 5, "the leader's no-op applied")
        storage = group.nodes[peer].storage
        storage.hold = threading.Event()
        begun = storage.flushes_begun
        write = asyncio.ensure_future(member.submit(put("k", "v"), "c", 1))
        await wait_for_async(lambda: storage.flushes_begun > begun, 5, "the write's flush began")
        storage.hold.set()
        await group.stop(peer)
        with pytest.raises(NotLeaderError):
            await write
        assert asyncio.all_tasks() == tasks_before

    run(scenario())


def test_writes_during_a_flush_go_in_the_next_one() -> None:
    """The group commit: while one flush runs, every write waits for the next; one flush makes them all
    durable."""

    async def scenario() -> None:
        group = Group(size=1)
        peer = next(iter(group.nodes))
        member = await group.start(peer)
        await group.leader()
        await wait_for_async(lambda: member.status().applied_index == 1, 5, "the leader's no-op applied")
        storage = group.nodes[peer].storage
        storage.hold = threading.Event()
        before = storage.flushes_begun
        first = asyncio.ensure_future(member.submit(put("k0", "v"), "c", 0))
        await wait_for_async(lambda: storage.flushes_begun > before, 5, "the first flush began")
        rest = [asyncio.ensure_future(member.submit(put(f"k{i}", "v"), "c", i)) for i in range(1, 30)]
        await asyncio.sleep(0)
        storage.hold.set()
        await asyncio.gather(first, *rest)
        assert storage.flushes_begun - before == 2, storage.flushes_begun - before
        await group.stop(peer)

    run(scenario())


def test_a_failing_disk_stops_the_member_and_answers_its_callers() -> None:
    """A flush that fails (the disk) stops the member, as Ratis terminates a server whose log fails: the
    write waiting for it is answered NotLeaderError (the client tries another member)."""

    async def scenario() -> None:
        group = Group(size=1)
        peer = next(iter(group.nodes))
        member = await group.start(peer)
        await group.leader()
        await wait_for_async(lambda: member.status().applied_index == 1, 5, "the leader's no-op applied")

        def broken() -> None:
            raise OSError("EIO")

        group.nodes[peer].storage.flush = broken  # type: ignore[method-assign]
        with pytest.raises(NotLeaderError):
            await member.submit(put("k", "v"), "c", 1)
        assert not member.running
        await group.stop(peer)

    run(scenario())


def test_a_state_machine_error_is_the_entry_s_result_on_every_member() -> None:
    """An entry the state machine fails on (a payload it cannot read) is answered with that error; every
    member applied it alike, and the group goes on."""

    async def scenario() -> None:
        async with running_group() as group:
            leader = await group.leader()
            with pytest.raises(ValueError):  # json's JSONDecodeError
                await leader.submit(b"not json", "c", 1)
            index = await leader.submit(put("k", "v"), "c", 2)
            await group.applied_everywhere(index)
            assert all(n.machine.values == {"k": "v"} for n in group.nodes.values())

    run(scenario())


def test_a_request_above_the_append_limit_is_refused() -> None:
    async def scenario() -> None:
        async with running_group(size=1) as group:
            leader = await group.leader()
            with pytest.raises(EntryTooLargeError, match=r"buffer\.byte-limit"):
                await leader.submit(b"x" * (SETTINGS.append_byte_limit + 1), "c", 1)
            # The client id is carried with the payload: it counts.
            with pytest.raises(EntryTooLargeError, match=r"buffer\.byte-limit"):
                await leader.submit(b"x" * SETTINGS.append_byte_limit, "c", 2)

    run(scenario())


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> CertAuthority:
    return CertAuthority(tmp_path_factory.mktemp("ca"))


def test_the_group_over_mutual_tls(ca: CertAuthority) -> None:
    om = X.Identity(X.CertRole.OM, "om", "127.0.0.1")
    stores = {f"om{i}": ca.store(f"om{i}", om) for i in (1, 2, 3)}

    async def scenario() -> None:
        async with running_group(tls=stores) as group:
            index = await _write(group, "k", "v")
            await group.applied_everywhere(index)
            old = (await group.leader()).me
            await group.stop(old)
            new = await group.leader()
            await group.applied_everywhere(await new.submit(put("k2", "v2"), "c", 2))

    run(scenario())
