from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyozone.hdds.container_health import ContainerHealthState as S
from pyozone.hdds.replication_report import ReplicationManagerReport
from pyozone.hdds.states import LifeCycleState as L


def test_counts_lifecycle_and_health() -> None:
    r = ReplicationManagerReport()
    r.increment(L.OPEN)
    r.increment(L.CLOSED)
    r.increment(L.CLOSED)
    r.increment_and_sample(S.UNDER_REPLICATED, 1)
    r.increment_and_sample(S.UNDER_REPLICATED, 2)
    r.increment_and_sample(S.OVER_REPLICATED, 3)
    assert (r.stat(L.OPEN), r.stat(L.CLOSED), r.stat(L.QUASI_CLOSED)) == (1, 2, 0)
    assert (r.stat(S.UNDER_REPLICATED), r.stat(S.OVER_REPLICATED), r.stat(S.MIS_REPLICATED)) == (2, 1, 0)
    assert r.stat("CLOSED") == 2 and r.stat("UNDER_REPLICATED") == 2
    assert r.stat("unknownValue") == -1
    assert r.samples(S.UNDER_REPLICATED) == [1, 2]
    assert r.samples(S.MISSING) == []


def test_samples_are_limited_but_counts_are_not() -> None:
    r = ReplicationManagerReport(sample_limit=5)
    for cid in range(1, 21):
        r.increment_and_sample(S.MISSING, cid)
    assert r.stat(S.MISSING) == 20
    assert r.samples(S.MISSING) == [1, 2, 3, 4, 5]


def test_current_health_last_call_wins_and_resets() -> None:
    r = ReplicationManagerReport()
    assert r.current_health is S.HEALTHY
    r.increment_and_sample(S.QUASI_CLOSED_STUCK, 7)
    r.increment_and_sample(S.QUASI_CLOSED_STUCK_UNDER_REPLICATED, 7)
    assert r.current_health is S.QUASI_CLOSED_STUCK_UNDER_REPLICATED
    r.increment(L.CLOSED)  # lifecycle counting does not touch it
    assert r.current_health is S.QUASI_CLOSED_STUCK_UNDER_REPLICATED
    r.reset_current()
    assert r.current_health is S.HEALTHY


def test_json_shape() -> None:
    r = ReplicationManagerReport()
    r.increment(L.OPEN)
    r.increment_and_sample(S.UNDER_REPLICATED, 1)
    r.increment_and_sample(S.UNDER_REPLICATED, 2)
    r.increment_and_sample(S.OVER_REPLICATED, 3)
    r.set_complete(12345)
    data = json.loads(json.dumps(r.to_dict()))
    assert data["reportTimeStamp"] == 12345
    assert data["sampleLimit"] == 100
    assert set(data["stats"]) == {s.name for s in L} | {s.name for s in S}
    assert data["stats"]["OPEN"] == 1 and data["stats"]["UNDER_REPLICATED"] == 2
    assert data["stats"]["QUASI_CLOSED_STUCK_MISSING"] == 0
    assert data["samples"] == {"UNDER_REPLICATED": [1, 2], "OVER_REPLICATED": [3]}
    assert ReplicationManagerReport.from_dict(data) == r


def test_from_dict_ignores_unknown_names() -> None:
    data = {
        "reportTimeStamp": 5,
        "sampleLimit": 10,
        "stats": {"unknownValue": 15, "UNDER_REPLICATED": 20},
        "samples": {"unknownValue": [1], "UNDER_REPLICATED": [4, 5]},
    }
    r = ReplicationManagerReport.from_dict(data)
    assert r.stat(S.UNDER_REPLICATED) == 20 and r.samples(S.UNDER_REPLICATED) == [4, 5]
    assert r.sample_limit == 10 and r.timestamp_ms == 5


def test_negative_sample_limit_rejected() -> None:
    with pytest.raises(ValueError):
        ReplicationManagerReport(-1)


def _scan(ids: list[int], limit: int) -> ReplicationManagerReport:
    """A report as a scan in id order would build it: container id c is MISSING when c % 3 == 0."""
    r = ReplicationManagerReport(limit)
    for cid in sorted(ids):
        r.increment(L.CLOSED)
        if cid % 3 == 0:
            r.increment_and_sample(S.MISSING, cid)
    return r


@given(st.sets(st.integers(1, 500)), st.sets(st.integers(1, 500)), st.integers(0, 8))
def test_merge_equals_one_scan_over_both_parts(a: set[int], b: set[int], limit: int) -> None:
    b = b - a  # each container is scanned by one part
    merged = _scan(sorted(a), limit).merge(_scan(sorted(b), limit))
    assert merged == _scan(sorted(a | b), limit)
    assert _scan(sorted(b), limit).merge(_scan(sorted(a), limit)) == merged


def test_merge_keeps_later_timestamp() -> None:
    a, b = ReplicationManagerReport(timestamp_ms=5), ReplicationManagerReport(timestamp_ms=9)
    assert a.merge(b).timestamp_ms == 9
