"""The retry cache (Ratis's RetryCacheImpl, `raft.server.retrycache.expirytime`): a retried client call is
never applied twice."""

from pyozone.hdds.clock import ManualClock
from pyozone.ratis.messages import ClientCall, EntryKind
from pyozone.ratis.outputs import NotLeader, Reply
from pyozone.ratis.retry_cache import RetryCache
from pyozone.ratis.roles import RaftPeerRole
from tests.unit.ratis.group import A, B, C, Group

CALL = ClientCall("client-1", 7, b"put k v")


def leader_group() -> Group:
    group = Group(A, B, C)
    group.elect(A)
    return group


def calls_in(group: Group, member) -> list[tuple[str, int]]:
    log = group.servers[member].log
    return [(e.client_id, e.call_id) for e in log.entries() if e.kind is EntryKind.STATE_MACHINE]


def test_entries_name_their_call_and_a_retry_of_an_applied_call_gets_the_original_result():
    group = leader_group()
    group.take(A, group.servers[A].submit(CALL))
    group.settle()
    assert group.replies == [Reply(CALL, 2, "result 2")]
    assert group.take(A, group.servers[A].submit(CALL)) == [Reply(CALL, 2, "result 2")]  # answered at once
    assert calls_in(group, A) == [("client-1", 7)]


def test_a_retry_of_a_call_still_in_the_log_waits_for_its_entry():
    group = leader_group()
    group.take(A, group.servers[A].submit(CALL))
    assert group.take(A, group.servers[A].submit(CALL)) == []  # no second entry, no answer yet
    group.settle()
    assert group.replies == [Reply(CALL, 2, "result 2")] * 2  # the first request and its retry
    assert calls_in(group, A) == [("client-1", 7)]


def test_after_a_failover_the_new_leader_answers_a_retry_from_what_it_applied():
    group = leader_group()
    group.take(A, group.servers[A].submit(CALL))
    group.settle()
    group.tick(A, 75)
    group.settle()  # B applies the call too
    group.replies.clear()
    group.tick(B, group.servers[B].deadline_ms() + 10_000)  # A is gone; B stands and wins
    group.settle(A)
    assert group.servers[B].leader_id == B
    assert group.take(B, group.servers[B].submit(CALL)) == [Reply(CALL, 2, "result 2")]
    assert calls_in(group, B) == [("client-1", 7)]


def test_after_a_failover_a_retry_of_a_call_the_new_leader_holds_uncommitted_waits_for_it():
    group = leader_group()
    group.take(A, group.servers[A].submit(CALL))
    group.sync(A)
    for message in group.sent(A, B):  # B gets the entry; A falls before it commits
        group.deliver(A, B, message)
    group.sync(B)
    group.outbox.clear()
    group.tick(B, group.servers[B].deadline_ms() + 10_000)
    while group.servers[B].role is not RaftPeerRole.LEADER:  # run B's election only, not its appends
        group.sync(B), group.sync(C)
        votes = [
            (s, send)
            for s, send in group.outbox
            if A not in (s, send.to) and "Vote" in type(send.message).__name__
        ]
        group.outbox = [item for item in group.outbox if item not in votes]
        for sender, send in votes:
            group.deliver(sender, send.to, send.message)
    assert group.take(B, group.servers[B].submit(CALL)) == []  # its entry is not committed yet: it waits
    group.settle(A)
    assert group.replies == [Reply(CALL, 2, "result 2")] and calls_in(group, B) == [("client-1", 7)]


def test_a_follower_refuses_a_retry_naming_the_leader():
    group = leader_group()
    assert group.servers[B].submit(CALL) == [NotLeader(CALL, A)]


def test_the_cache_forgets_after_the_expiry_time_by_the_clock():
    clock = ManualClock()
    cache = RetryCache(60_000)  # raft.server.retrycache.expirytime
    cache.record("c", 1, 5, "r5", clock.now_ms())
    clock.advance(30_000)
    cache.record("c", 2, 6, "r6", clock.now_ms())
    assert cache.get("c", 1, clock.now_ms()).result == "r5"
    clock.advance(30_000)
    assert cache.get("c", 1, clock.now_ms()) is None and len(cache) == 1
    clock.advance(30_000)
    assert cache.get("c", 2, clock.now_ms()) is None and len(cache) == 0
