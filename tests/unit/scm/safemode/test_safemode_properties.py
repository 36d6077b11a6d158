"""Property: whatever the order of reports, safe mode only ever moves forward, through the pre-check."""

from __future__ import annotations

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.safemode_status import SafeModeStatus
from pyozone.hdds.states import LifeCycleState

DNS = [f"d{i}" for i in range(1, 6)]
PIPELINES = {"p1": ("d1", "d2", "d3"), "p2": ("d3", "d4", "d5"), "p3": ("d1", "d4", "d5")}
CONTAINERS = range(1, 7)
RS_3_2 = ReplicationConfig.parse("EC/RS-3-2-1024k")
ORDER = list(SafeModeStatus)

registration = st.tuples(
    st.just("register"), st.sampled_from(DNS), st.lists(st.sampled_from(CONTAINERS), max_size=6)
)
pipeline_report = st.tuples(
    st.just("report"), st.sampled_from(DNS), st.lists(st.sampled_from(sorted(PIPELINES)), max_size=3)
)
# Registrations and reports are weighted up so that a good share of runs gets out of safe mode.
actions = st.one_of(
    registration,
    registration,
    pipeline_report,
    st.tuples(st.just("open"), st.sampled_from(sorted(PIPELINES))),
    st.tuples(st.just("delete"), st.sampled_from(CONTAINERS)),
    st.tuples(st.just("refresh")),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    min_datanodes=st.integers(0, 4),
    pct=st.sampled_from(["0", "0.5", "0.99", "1.0"]),
    ec_default=st.booleans(),
    steps=st.lists(actions, max_size=80),
    settle=st.booleans(),
)
def test_status_never_goes_backwards_nor_skips_the_pre_check(
    make_harness, min_datanodes, pct, ec_default, steps, settle
):
    """With `settle`, the whole cluster reports in at the end, and then SCM must be out of safe mode."""
    conf = {
        "hdds.scm.safemode.min.datanode": str(min_datanodes),
        "hdds.scm.safemode.threshold.pct": pct,
        "hdds.scm.safemode.healthy.pipeline.pct": pct,
        "hdds.scm.safemode.atleast.one.node.reported.pipeline.pct": pct,
    }
    if ec_default:
        conf |= {"ozone.replication.type": "EC", "ozone.replication": "rs-3-2-1024k"}
    h = make_harness(conf)
    for cid in CONTAINERS:
        if cid % 2:
            h.add_container(cid, config=RS_3_2)
        else:
            h.add_container(cid)
    for pid, nodes in PIPELINES.items():
        h.add_pipeline(pid, nodes)
    h.build()
    seen = [h.manager.status]
    if settle:
        steps = [
            *steps,
            *(("register", dn, list(CONTAINERS)) for dn in DNS),
            *(("open", pid) for pid in PIPELINES),
            ("report", "d1", list(PIPELINES)),
        ]
    for step in steps:
        match step:
            case ("register", dn, cids):
                h.register(dn, cids)
            case ("open", pid):
                h.open_pipeline(pid)
            case ("report", dn, pids):
                h.report_pipelines(dn, pids)
            case ("delete", cid):
                h.containers.set_state(cid, LifeCycleState.DELETED)
            case ("refresh",):
                h.manager.refresh()
        seen.append(h.manager.status)
        if not h.manager.in_safe_mode():
            assert all(s.validated for s in h.manager.rule_statuses())
            assert h.manager.exited_at_ms is not None

    event(f"ended {h.manager.status.name}")
    if settle:
        assert h.manager.status is SafeModeStatus.OUT_OF_SAFE_MODE
    ranks = [ORDER.index(s) for s in seen]
    assert ranks == sorted(ranks)
    emitted = [SafeModeStatus.INITIAL, *h.statuses]
    assert [ORDER.index(s) for s in emitted] == list(range(len(emitted)))  # one step at a time
    assert h.prechecks_completed == (1 if h.manager.precheck_passed() else 0)
