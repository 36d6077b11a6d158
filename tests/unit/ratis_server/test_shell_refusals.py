"""What a member refuses from its peers' port (RaftMember's checks): a message for another group, for another
member, from a peer not in the group, one naming a sender its certificate does not speak for, a damaged,
truncated or oversized call. Each is refused with a clear status, nothing of it reaches the core (no term
moves, nothing is applied), and the group keeps serving."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

import pytest

from pyozone import rpc
from pyozone.common.net import HostPort
from pyozone.common.tls import TlsStore
from pyozone.hdds.clock import ManualClock
from pyozone.hdds.security import x509 as X
from pyozone.proto import Raft_pb2 as pb
from pyozone.protocol.raft import message_to_proto
from pyozone.ratis.messages import (
    AppendEntriesReply,
    AppendEntriesRequest,
    AppendResult,
    LogEntry,
    RaftPeerId,
)
from pyozone.ratis.roles import RaftPeerRole
from pyozone.ratis_server.member_api import ReconfigurationError
from pyozone.ratis_server.server import RaftMember
from pyozone.ratis_server.transport import DELIVER, MESSAGE_OVERHEAD_BYTES, RaftPeer, RefusalLog
from tests.tls_certs import CertAuthority
from tests.unit.ratis_server.shell_support import GROUP_ID, SETTINGS, Group, put, running_group

EVIL_TERM = 99


def evil_append(sender: str, receiver: RaftPeerId, group: str = GROUP_ID) -> pb.RaftServerMessagesProto:
    """An append of a far higher term that commits an entry at once: taken, it would depose the leader and
    apply "evil"."""
    append = AppendEntriesRequest(
        RaftPeerId(sender), EVIL_TERM, 0, 0, (LogEntry(EVIL_TERM, 1, put("evil", "1")),), 1, 1
    )
    return pb.RaftServerMessagesProto(messages=[message_to_proto(group, receiver, append)])


async def follower(group: Group, not_named: str = "") -> RaftMember:
    leader = await group.leader()
    return next(m for m in group.running() if m is not leader and m.me.id != not_named)


async def refused(
    group: Group, target: RaftMember, request: object, tls: TlsStore | None = None
) -> tuple[rpc.StatusCode, str, RaftMember]:
    """Sends `request` to `target` and returns the status it was refused with, after checking nothing of
    it was taken and the group still takes a write."""
    settings = rpc.ChannelSettings(max_message_bytes=1 << 20)
    async with rpc.Channel(target.address, settings, tls, X.CertRole.OM if tls else None) as channel:
        with pytest.raises(rpc.RpcError) as error:
            await channel.unary(DELIVER.path, request, None, timeout=10)
    # the evil term never reached the member (an election of a loaded machine's own may move the term)
    assert target.status().term < EVIL_TERM
    leader = await group.leader()
    index = await leader.submit(put("after", "1"), "c", 1)
    await group.applied_everywhere(index)
    assert all("evil" not in n.machine.values for n in group.nodes.values())
    return error.value.code(), error.value.details(), target


def run(
    scenario: Callable[[Group], Awaitable[tuple[rpc.StatusCode, str, RaftMember]]], **kwargs: object
) -> tuple:
    async def main() -> tuple[rpc.StatusCode, str, RaftMember]:
        async with running_group(**kwargs) as group:  # type: ignore[arg-type]
            return await scenario(group)

    return asyncio.run(asyncio.wait_for(main(), 60))


def test_a_message_for_another_group_is_refused() -> None:
    async def scenario(group: Group) -> tuple[rpc.StatusCode, str, RaftMember]:
        target = await follower(group, not_named="om1")
        return await refused(group, target, evil_append("om1", target.me, group="another-group"))

    code, details, _ = run(scenario)
    assert code is rpc.StatusCode.FAILED_PRECONDITION
    assert "GroupMismatchException" in details and "another-group" in details


def test_a_message_from_a_peer_not_in_the_group_is_refused() -> None:
    async def scenario(group: Group) -> tuple[rpc.StatusCode, str, RaftMember]:
        target = await follower(group, not_named="om1")
        return await refused(group, target, evil_append("om9", target.me))

    code, details, _ = run(scenario)
    assert code is rpc.StatusCode.PERMISSION_DENIED
    assert details == f"om9 is not another member of group {GROUP_ID}"


def test_a_message_for_another_member_is_refused() -> None:
    async def scenario(group: Group) -> tuple[rpc.StatusCode, str, RaftMember]:
        leader = await group.leader()
        return await refused(group, await follower(group), evil_append(leader.me.id, leader.me))

    code, details, target = run(scenario)
    assert code is rpc.StatusCode.FAILED_PRECONDITION and f"reached {target.me}" in details


def test_a_call_speaking_for_two_members_is_refused() -> None:
    async def scenario(group: Group) -> tuple[rpc.StatusCode, str, RaftMember]:
        target = await follower(group, not_named="om1")
        other = next(p.id for p in group.nodes if p not in (target.me, RaftPeerId("om1")))
        request = evil_append("om1", target.me)
        request.messages.extend(evil_append(other, target.me).messages)
        return await refused(group, target, request)

    code, details, _ = run(scenario)
    assert code is rpc.StatusCode.INVALID_ARGUMENT and "one call speaks for one member" in details


def test_a_damaged_message_is_refused() -> None:
    """Entries that do not follow their previous entry (what the core's log takes for granted)."""

    async def scenario(group: Group) -> tuple[rpc.StatusCode, str, RaftMember]:
        target = await follower(group, not_named="om1")
        request = evil_append("om1", target.me)
        request.messages[0].appendEntries.entries[0].index = 5
        return await refused(group, target, request)

    code, details, _ = run(scenario)
    assert code is rpc.StatusCode.INVALID_ARGUMENT and "does not follow" in details


def test_a_truncated_message_is_refused() -> None:
    async def scenario(group: Group) -> tuple[rpc.StatusCode, str, RaftMember]:
        target = await follower(group, not_named="om1")
        raw = evil_append("om1", target.me).SerializeToString()
        return await refused(group, target, raw[:-3])

    code, details, _ = run(scenario)
    assert code is rpc.StatusCode.INVALID_ARGUMENT and "INVALID_REQUEST" in details


def test_an_oversized_message_is_refused() -> None:
    async def scenario(group: Group) -> tuple[rpc.StatusCode, str, RaftMember]:
        target = await follower(group, not_named="om1")
        request = evil_append("om1", target.me)
        request.messages[0].appendEntries.entries[0].stateMachineLogEntry.logData = b"x" * (
            SETTINGS.append_byte_limit + MESSAGE_OVERHEAD_BYTES
        )
        return await refused(group, target, request)

    code, _, _ = run(scenario)
    assert code is rpc.StatusCode.RESOURCE_EXHAUSTED


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> CertAuthority:
    return CertAuthority(tmp_path_factory.mktemp("ca"))


@pytest.fixture(scope="module")
def om_stores(ca: CertAuthority) -> dict[str, TlsStore]:
    om = X.Identity(X.CertRole.OM, "om", "127.0.0.1")
    return {f"om{i}": ca.store(f"om{i}", om) for i in (1, 2, 3)}


@pytest.mark.parametrize(
    ("caller", "why"),
    [
        (X.Identity(X.CertRole.USER, "alice"), "alice may not send Raft messages to group"),
        (X.Identity(X.CertRole.DATANODE, "dn", "127.0.0.1"), "dn@127.0.0.1 may not send Raft messages"),
        (
            X.Identity(X.CertRole.OM, "om", "10.9.9.9"),
            "om@10.9.9.9 may not speak for om1, a member on 127.0.0.1",
        ),
    ],
    ids=["user", "datanode", "om-of-another-host"],
)
def test_over_tls_only_a_member_s_certificate_is_taken(
    ca: CertAuthority, om_stores: dict[str, TlsStore], caller: X.Identity, why: str
) -> None:
    store = ca.store(
        f"caller-{caller.common_name}", caller, hosts=("127.0.0.1",) if caller.role.is_service else None
    )

    async def scenario(group: Group) -> tuple[rpc.StatusCode, str, RaftMember]:
        target = await follower(group, not_named="om1")
        return await refused(group, target, evil_append("om1", target.me), tls=store)

    code, details, _ = run(scenario, tls=om_stores)
    assert code is rpc.StatusCode.PERMISSION_DENIED
    assert why in details


def test_an_answer_claiming_entries_the_leader_never_sent_is_refused() -> None:
    """A follower answering SUCCESS up to an index past what the leader sent it (well formed on the wire):
    the leader drops it (the core would count it toward commit, and resend from past its own log)."""

    async def scenario() -> None:
        async with running_group() as group:
            leader = await group.leader()
            await leader.submit(put("a", "1"), "c", 1)
            liar = next(p for p in group.nodes if p != leader.me)
            term = leader.status().term
            lie = AppendEntriesReply(liar, term, AppendResult.SUCCESS, 10**6, 10**6 + 1, 10**6)
            settings = rpc.ChannelSettings(max_message_bytes=1 << 20)
            async with rpc.Channel(leader.address, settings) as channel:
                request = pb.RaftServerMessagesProto(messages=[message_to_proto(GROUP_ID, leader.me, lie)])
                await channel.unary(DELIVER.path, request, None, timeout=10)
            index = await leader.submit(put("b", "2"), "c", 2)
            await group.applied_everywhere(index)
            status = leader.status()
            assert (status.role, status.term) == (RaftPeerRole.LEADER, term)
            assert all(f.match_index <= status.last_index for f in status.followers)

    asyncio.run(asyncio.wait_for(scenario(), 60))


def test_a_refused_configuration_change_leaves_no_address_behind() -> None:
    """A change the leader refuses (two members added at once) does not make the members it named senders
    the leader takes messages from."""

    async def scenario(group: Group) -> tuple[rpc.StatusCode, str, RaftMember]:
        leader = await group.leader()
        om4, om5 = (
            RaftPeer(RaftPeerId(f"om{i}"), HostPort("127.0.0.1", port)) for i, port in ((4, 1), (5, 2))
        )
        with pytest.raises(ReconfigurationError, match="other than one member"):
            await leader.set_configuration((*group.group.peers, om4, om5))
        return await refused(group, leader, evil_append("om4", leader.me))

    code, details, _ = run(scenario)
    assert code is rpc.StatusCode.PERMISSION_DENIED
    assert "om4 is not another member" in details


def test_an_append_overwriting_a_committed_entry_under_the_leaders_name_is_logged_and_dropped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Well formed on the wire, from the leader's name, of a higher term, but contradicting an entry the
    follower committed: the core refuses it before it changes anything (it once reached an assertion that
    stopped the member); the follower keeps its term and entries, and the group keeps serving."""

    async def scenario() -> None:
        async with running_group() as group:
            leader = await group.leader()
            index = await leader.submit(put("a", "1"), "c", 1)
            await group.applied_everywhere(index)
            target = await follower(group)
            term = target.status().term
            lie = AppendEntriesRequest(
                leader.me, term + 5, index - 1, term, (LogEntry(term + 5, index, put("evil", "1")),), index, 1
            )
            settings = rpc.ChannelSettings(max_message_bytes=1 << 20)
            async with rpc.Channel(target.address, settings) as channel:
                request = pb.RaftServerMessagesProto(messages=[message_to_proto(GROUP_ID, target.me, lie)])
                await channel.unary(DELIVER.path, request, None, timeout=10)
            assert target.running and target.status().term == term
            after = await leader.submit(put("b", "2"), "c", 2)
            await group.applied_everywhere(after)
            assert all("evil" not in n.machine.values for n in group.nodes.values())

    with caplog.at_level("WARNING", logger="pyozone.ratis_server.server"):
        asyncio.run(asyncio.wait_for(scenario(), 60))
    assert "contradicts committed entry" in caplog.text


def test_a_peer_refused_again_and_again_is_logged_once_a_minute_with_a_count(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """R9: a removed OM that keeps running sends a vote request or two a second; each member logged each
    refusal (~110 WARN lines a minute). Once a minute per reason now, the next line counting the rest."""
    clock = ManualClock()
    refusals = RefusalLog(clock)
    me, why = RaftPeerId("om1"), f"om4 is not another member of group {GROUP_ID}"
    with caplog.at_level(logging.WARNING, logger="pyozone.ratis_server.transport"):
        for _ in range(110):
            refusals.refused(me, "127.0.0.1:5000", why)
            clock.advance(500)
        refusals.refused(me, "127.0.0.1:5000", "om5 is not another member")  # another peer: its own line
        clock.advance(5_000)
        refusals.refused(me, "127.0.0.1:5000", why)
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 3, lines
    assert lines[0].endswith(why) and "om5" in lines[1]
    assert lines[2].endswith("(109 more like it since 60 s ago)")
