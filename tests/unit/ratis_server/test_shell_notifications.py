"""The shell passes a group's priorities and first-election timeouts to the core, and turns the core's
notifications into the state machine's optional hooks (Ratis's StateMachine.EventApi / LeaderEventApi, as
Ozone's ContainerStateMachine closes a pipeline on them): `notify_leader_changed`, `notify_no_leader`,
`notify_follower_slow`. A state machine without them (OM's) is unchanged."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace

from pyozone.ratis.messages import RaftPeerId
from pyozone.ratis.roles import RaftPeerRole
from pyozone.ratis_server.server import RaftMember
from tests.polling import wait_for_async
from tests.unit.ratis_server.shell_support import SETTINGS, Group, KeyValues, put

OM1, OM2, OM3 = RaftPeerId("om1"), RaftPeerId("om2"), RaftPeerId("om3")


def run(coroutine: object) -> object:
    return asyncio.run(asyncio.wait_for(coroutine, 60))  # type: ignore[arg-type]


@dataclass
class Notified(KeyValues):
    """KeyValues that records the hooks the shell calls."""

    leaders: list[RaftPeerId] = field(default_factory=list)
    no_leader: int = 0
    slow: list[RaftPeerId] = field(default_factory=list)

    def notify_leader_changed(self, leader: RaftPeerId) -> None:
        self.leaders.append(leader)

    def notify_no_leader(self) -> None:
        self.no_leader += 1

    def notify_follower_slow(self, peer: RaftPeerId) -> None:
        self.slow.append(peer)


async def _start(group: Group, peer: RaftPeerId, **kwargs: object) -> RaftMember:
    node = group.nodes[peer]
    if not isinstance(node.machine, Notified):
        node.machine = Notified()
    settings = kwargs.pop("settings", group.settings)
    node.member = RaftMember(peer, group.group, node.storage, node.machine, settings, **kwargs)  # type: ignore[arg-type]
    await node.member.start()
    return node.member


def _machine(group: Group, peer: RaftPeerId) -> Notified:
    machine = group.nodes[peer].machine
    assert isinstance(machine, Notified)
    return machine


async def _stop_all(group: Group) -> None:
    for peer in group.nodes:
        await group.stop(peer)
    await asyncio.sleep(0)


def test_the_member_of_top_priority_with_a_short_first_election_leads_a_fresh_group_at_once() -> None:
    """SCM's suggested leader of a pipeline (priority 1, first election within 5 ms) stands before the
    others' first timeout: it leads in term 1, and every member is told so (notify_leader_changed)."""

    async def scenario() -> None:
        group = Group()
        priorities = {OM1: 0, OM2: 1, OM3: 0}
        quick = replace(SETTINGS, first_election_timeout_min_ms=0, first_election_timeout_max_ms=5)
        try:
            for peer in group.nodes:
                settings = quick if peer == OM2 else SETTINGS
                await _start(group, peer, settings=settings, priorities=priorities)
            leader = await group.leader()
            assert leader.me == OM2
            assert leader.status().term == 1
            await wait_for_async(
                lambda: all(_machine(group, p).leaders == [OM2] for p in group.nodes),
                15,
                "every member told its leader is om2",
            )
        finally:
            await _stop_all(group)

    run(scenario())


def test_a_leader_yields_to_a_caught_up_member_of_higher_priority() -> None:
    """om3 (priority 1) starts after om1 and om2 elected one of them; once om3 holds the leader's log the
    leader hands over to it (Ratis's LeaderStateImpl priority check), and the members are told."""

    async def scenario() -> None:
        group = Group()
        priorities = {OM3: 1}
        try:
            for peer in (OM1, OM2):
                await _start(group, peer, priorities=priorities)
            first = await group.leader()
            assert first.me in (OM1, OM2)
            await first.submit(put("k", "v"), "c", 1)
            await _start(group, OM3, priorities=priorities)
            leader = await wait_for_async(
                lambda: next(
                    (m for m in group.running() if m.me == OM3 and m.status().role is RaftPeerRole.LEADER),
                    None,
                ),
                15,
                "om3 leads",
            )
            assert leader.status().term > 1
            await wait_for_async(
                lambda: all(_machine(group, p).leaders[-1:] == [OM3] for p in group.nodes),
                15,
                "every member told its leader is om3",
            )
            assert _machine(group, first.me).leaders == [first.me, OM3]
        finally:
            await _stop_all(group)

    run(scenario())


def test_a_leader_notifies_a_silent_follower_once_and_a_new_leader_is_told() -> None:
    """A follower stopped: the leader's state machine hears notify_follower_slow(it) after
    rpc_slowness_timeout_ms (Ozone's handleNodeSlowness). The leader stopped too: the last member, without a
    majority, hears notify_no_leader after no_leader_timeout_ms (handleNoLeader)."""

    async def scenario() -> None:
        settings = replace(SETTINGS, rpc_slowness_timeout_ms=1000, no_leader_timeout_ms=1500)
        group = Group(settings=settings)
        try:
            for peer in group.nodes:
                await _start(group, peer)
            leader = await group.leader()
            follower, other = (p for p in group.nodes if p != leader.me)
            await leader.submit(put("k", "v"), "c", 1)
            assert not _machine(group, leader.me).slow
            await group.stop(follower)
            await wait_for_async(
                lambda: _machine(group, leader.me).slow == [follower], 15, "the leader notified the silence"
            )
            assert _machine(group, other).no_leader == 0
            await group.stop(leader.me)
            await wait_for_async(
                lambda: _machine(group, other).no_leader == 1, 15, "the last member notified no leader"
            )
            assert _machine(group, other).slow == []
        finally:
            await _stop_all(group)

    run(scenario())


def test_the_same_leader_heard_again_after_a_leaderless_gap_is_notified_again() -> None:
    """A follower that hears nothing from its leader stands (pre-vote, no leader known, the term unchanged:
    the others still hear the leader and refuse it); once it hears the same leader again that leader is a
    change to notify (Ratis's ServerState.setLeader after none), so the requests waiting for a leader wake."""

    async def scenario() -> None:
        group = Group()
        try:
            for peer in group.nodes:
                await _start(group, peer)
            leader = await group.leader()
            follower = next(p for p in group.nodes if p != leader.me)
            member = group.nodes[follower].member
            assert member is not None
            await wait_for_async(
                lambda: _machine(group, follower).leaders == [leader.me], 15, "the follower told its leader"
            )
            term = leader.status().term
            hears = member.receive
            member.receive = lambda envelopes: hears(  # type: ignore[method-assign]
                [e for e in envelopes if e.sender != leader.me]
            )
            await wait_for_async(lambda: member.status().leader is None, 15, "the follower knows no leader")
            member.receive = hears  # type: ignore[method-assign]
            await wait_for_async(
                lambda: member.status().leader == leader.me, 15, "the follower hears its leader again"
            )
            assert leader.status().term == member.status().term == term
            await wait_for_async(
                lambda: _machine(group, follower).leaders == [leader.me, leader.me],
                15,
                "the follower told its leader again",
            )
        finally:
            await _stop_all(group)

    run(scenario())
