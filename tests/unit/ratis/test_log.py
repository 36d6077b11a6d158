import time

import pytest

from pyozone.ratis.log import RaftLog
from pyozone.ratis.messages import LogEntry, TermIndex
from pyozone.ratis.settings import RaftSettings
from tests.unit.ratis.group import entries


def test_term_at_knows_the_empty_prefix_and_nothing_past_the_end():
    log = RaftLog(entries(1, 1, 2))
    assert (log.term_at(0), log.term_at(3), log.term_at(4)) == (0, 2, None)
    assert (log.last_index, log.last_term) == (3, 2)


def test_a_log_must_start_at_index_1_without_gaps():
    with pytest.raises(ValueError, match="position 2 has index 3"):
        RaftLog((LogEntry(1, 1), LogEntry(1, 3)))


def test_merge_keeps_the_entries_it_holds_so_a_late_or_repeated_append_changes_nothing():
    log = RaftLog(entries(1, 1, 2, 2))
    assert log.merge(entries(1, 1, 2)[1:]) == ()
    assert log.last_index == 4  # an old, shorter append does not cut the tail (Figure 2: only conflicts do)


def test_merge_deletes_a_conflicting_entry_and_all_that_follow_then_appends():
    log = RaftLog(entries(1, 1, 2, 2))
    written = log.merge(entries(1, 1, 3)[2:])
    assert [(e.index, e.term) for e in written] == [(3, 3)]
    assert [log.term_at(i) for i in range(1, log.last_index + 1)] == [1, 1, 3]


def test_an_append_naming_a_committed_entry_with_another_term_contradicts_the_log():
    log = RaftLog(entries(1, 1, 2))
    assert log.contradiction(TermIndex(1, 1), entries(1, 3)[1:], commit_index=2) == (
        "entry 2 of term 3 contradicts committed entry 2 of term 1"
    )
    assert "previous entry 2 of term 2" in log.contradiction(TermIndex(2, 2), (), commit_index=2)
    assert log.contradiction(TermIndex(1, 2), entries(1, 1, 3)[2:], commit_index=2) == ""  # past the commit


def test_entries_from_batches_by_bytes_and_count_but_always_sends_one():
    log = RaftLog(entries(1, 1, 1, 1))  # payloads of 3 bytes each
    assert len(log.entries_from(1, byte_limit=7, element_limit=0)) == 2
    assert len(log.entries_from(1, byte_limit=100, element_limit=3)) == 3
    assert len(log.entries_from(2, byte_limit=1, element_limit=0)) == 1


def test_first_index_of_term_finds_the_start_of_the_run():
    log = RaftLog(entries(1, 2, 2, 2, 3))
    assert [log.first_index_of_term_at(i) for i in (1, 3, 4, 5)] == [1, 2, 2, 5]


def test_up_to_date_compares_last_terms_then_lengths():
    log = RaftLog(entries(1, 2, 2))
    assert log.is_up_to_date(3, 1)
    assert log.is_up_to_date(2, 3)
    assert not log.is_up_to_date(2, 2)
    assert not log.is_up_to_date(1, 9)


def test_settings_are_ratis_defaults_and_refuse_an_inverted_timeout_range():
    settings = RaftSettings()
    assert (settings.rpc_timeout_min_ms, settings.rpc_timeout_max_ms, settings.pre_vote) == (150, 300, True)
    assert settings.append_byte_limit == 4 * 1024 * 1024
    with pytest.raises(ValueError, match=r"raft.server.rpc.timeout.min \(400 ms\)"):
        RaftSettings(rpc_timeout_min_ms=400)


def test_a_heartbeat_interval_below_1_ms_is_refused():
    with pytest.raises(ValueError, match="at least 2 ms"):
        RaftSettings(rpc_timeout_min_ms=1, rpc_timeout_max_ms=10)
    assert RaftSettings(rpc_timeout_min_ms=2, rpc_timeout_max_ms=10).heartbeat_interval_ms == 1


def test_the_start_of_a_term_is_found_without_walking_a_long_log():
    log = RaftLog(tuple(LogEntry(1 + i // 100_000, i + 1) for i in range(200_000)))
    started = time.monotonic()
    assert [log.first_index_of_term_at(200_000 - i) for i in range(5000)] == [100_001] * 5000
    assert time.monotonic() - started < 1  # a linear walk back would take minutes
    log.merge((LogEntry(3, 150_001),))
    assert (log.first_index_of_term_at(150_000), log.first_index_of_term_at(150_001)) == (100_001, 150_001)


def test_the_log_after_a_snapshot_starts_after_it_and_knows_its_term():
    log = RaftLog((LogEntry(2, 6, b"x", client_id="c", call_id=1),), snapshot=TermIndex(2, 5))
    assert (log.first_index, log.last_index, log.term_at(5), log.term_at(4)) == (6, 6, 2, None)
    assert log.index_of_call("c", 1) == 6
    log.purge(TermIndex(2, 6))
    assert (log.first_index, log.last_index, log.last_term, log.index_of_call("c", 1)) == (7, 6, 2, None)
