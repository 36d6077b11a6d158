"""What the core hands its state machine and how it hears back (issue 30): calls announced with
their index before their entry is written, so the shell can file their state machine data; calls without a
client id bypass the retry cache; results reported in any order, each answering its own call, with reads and
snapshots waiting for the gap-free applied prefix."""

import pytest

from pyozone.ratis.messages import ClientCall, TermIndex
from pyozone.ratis.outputs import Appended, Persist, ReadReady, Reply
from tests.unit.ratis.group import A, B, C, Group


def test_the_leader_announces_each_call_it_appends_before_the_entrys_write():
    group = Group(A, B, C)
    group.elect(A)
    call = ClientCall("client-1", 7, b"writeChunk", data_size=4096)
    outputs = group.take(A, group.servers[A].submit(call))
    kinds = [type(o) for o in outputs]
    assert kinds.index(Appended) < kinds.index(Persist)
    assert outputs[kinds.index(Appended)] == Appended(call, 2)
    (entry,) = outputs[kinds.index(Persist)].entries
    assert (entry.index, entry.payload, entry.data_size) == (2, b"writeChunk", 4096)
    group.appended.clear()
    group.take(A, group.servers[A].submit(call))  # a retry waits for the entry already in the log
    assert group.appended == []


def test_a_call_without_a_client_id_is_appended_again_when_resent_and_never_retry_cached():
    group = Group(A, B, C)
    group.elect(A)
    leader = group.servers[A]
    call = ClientCall("", 7, b"writeChunk", data_size=10)
    group.take(A, leader.submit(call))
    group.take(A, leader.submit(call))  # resent while in the log: a second entry
    group.settle()
    group.take(A, leader.submit(call))  # resent once applied: a third, not the first's cached answer
    group.settle()
    assert [a.index for a in group.appended] == [2, 3, 4]
    assert group.replies == [Reply(call, i, f"result {i}") for i in (2, 3, 4)]
    group.tick(A, 75)
    group.settle()
    assert all(len(group.applied[m]) == 4 for m in (A, B, C))
    assert all(len(group.servers[m]._retry_cache) == 0 for m in (A, B, C))


def test_a_call_with_a_negative_data_size_is_refused_before_anything_changes():
    """Followers refuse an append carrying a negative data size (`validation.validate`): taken by the leader,
    the entry would stay in its log and no follower would take an append again (review R10)."""
    group = Group(A, B, C)
    group.elect(A)
    leader = group.servers[A]
    last = leader.log.last_index
    with pytest.raises(ValueError, match="-1 bytes of data"):
        leader.submit(ClientCall("c", 1, b"x", data_size=-1))
    assert leader.log.last_index == last and group.appended == []
    call = ClientCall("c", 2, b"y")
    group.take(A, leader.submit(call))
    group.settle()
    assert group.replies == [Reply(call, last + 1, f"result {last + 1}")]


def held_group() -> tuple[Group, list[ClientCall]]:
    """A leader whose state machine was handed three calls (indexes 2-4) and has reported none."""
    group = Group(A, B, C, hold_applies=True)
    group.elect(A)
    group.report(A, 1)  # the no-op
    calls = [ClientCall("c", n, b"%d" % n) for n in (1, 2, 3)]
    for call in calls:
        group.take(A, group.servers[A].submit(call))
    group.settle()
    assert [e.index for e in group.applied[A]] == [1, 2, 3, 4]
    return group, calls


def test_results_reported_out_of_order_answer_each_call_with_its_own_entrys_result():
    group, calls = held_group()
    leader = group.servers[A]
    group.report(A, 4)
    assert group.replies == [Reply(calls[2], 4, "result 4")]
    assert leader.applied_index == 1  # 2 and 3 are not applied yet: the prefix has a gap after 1
    group.report(A, 2)
    assert group.replies[1:] == [Reply(calls[0], 2, "result 2")] and leader.applied_index == 2
    group.report(A, 3)
    assert group.replies[2:] == [Reply(calls[1], 3, "result 3")] and leader.applied_index == 4


def test_reads_and_snapshots_wait_for_the_gap_free_applied_prefix():
    group, _ = held_group()
    leader = group.servers[A]
    group.report(A, 4)
    group.report(A, 3)
    group.take(A, leader.read(ClientCall("r", 1, b"")))
    group.settle()  # leadership confirmed at read index 4, but 2 is not applied
    assert group.reads == []
    with pytest.raises(ValueError, match="past the applied index 1"):
        leader.snapshot_taken(TermIndex(1, 3))
    group.report(A, 2)
    assert group.reads == [ReadReady(ClientCall("r", 1, b""), 4)]
    leader.snapshot_taken(TermIndex(1, 3))


@pytest.mark.parametrize("index", [1, 4, 5])
def test_an_index_reported_twice_or_never_handed_out_is_refused_before_anything_changes(index):
    group, _ = held_group()
    leader = group.servers[A]
    group.report(A, 4)
    with pytest.raises(ValueError, match=f"applied index {index}: not an entry handed"):
        leader.applied(index, "again")
    assert leader.applied_index == 1 and len(group.replies) == 1
