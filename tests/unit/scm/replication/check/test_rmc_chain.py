"""The chain itself (Ozone's ReplicationManager): order, stop semantics, suppressed containers, current
health."""

from __future__ import annotations

from dataclasses import dataclass

from pyozone.hdds.replication_report import ReplicationManagerReport
from pyozone.hdds.states import LifeCycleEvent, LifeCycleState
from pyozone.scm.replication.check import ContainerCheckRequest, default_chain, run_chain
from pyozone.scm.replication.check.request import CheckServices
from tests.unit.scm.replication.check.rmc_fakes import (
    CID,
    RecordingServices,
    S,
    check,
    container,
    make_request,
    ratis_replicas,
    replica,
)

SPEC_ORDER = [
    "OpenContainerHandler",
    "ClosingContainerHandler",
    "QuasiClosedContainerHandler",
    "MismatchedReplicasHandler",
    "EmptyContainerHandler",
    "DeletingContainerHandler",
    "QuasiClosedStuckReplicationCheck",
    "ECReplicationCheckHandler",
    "RatisReplicationCheckHandler",
    "ClosedWithUnhealthyReplicasHandler",
    "ECMisReplicationCheckHandler",
    "RatisUnhealthyReplicationCheckHandler",
    "VulnerableUnhealthyReplicasHandler",
]


def test_default_chain_is_spec_order() -> None:
    assert [type(h).__name__ for h in default_chain()] == SPEC_ORDER


@dataclass
class Spy:
    """Records that it ran, optionally records a state, and returns `stop`."""

    name: str
    stop: bool
    log: list[str]
    state: S | None = None

    def handle(self, request: ContainerCheckRequest, services: CheckServices) -> bool:
        self.log.append(self.name)
        if self.state is not None:
            request.record(self.state)
        return self.stop


def test_first_true_stops_the_chain_and_last_recorded_state_wins() -> None:
    log: list[str] = []
    chain = [
        Spy("a", False, log, S.QUASI_CLOSED_STUCK),
        Spy("b", True, log, S.UNDER_REPLICATED),
        Spy("c", True, log, S.OVER_REPLICATED),
    ]
    services = RecordingServices()
    request = make_request(container(), [], services)
    assert run_chain(request, services, chain) is S.UNDER_REPLICATED
    assert log == ["a", "b"]
    assert request.report.stat(S.QUASI_CLOSED_STUCK) == 1 and request.report.stat(S.OVER_REPLICATED) == 0


def test_no_handler_stopping_returns_the_last_recorded_state_or_healthy() -> None:
    log: list[str] = []
    services = RecordingServices()
    request = make_request(container(), [], services)
    assert run_chain(request, services, [Spy("a", False, log)]) is S.HEALTHY
    assert (
        run_chain(request, services, [Spy("a", False, log, S.UNHEALTHY), Spy("b", False, log)]) is S.UNHEALTHY
    )


def test_current_health_is_reset_before_each_container() -> None:
    services = RecordingServices()
    report = ReplicationManagerReport()
    report.increment_and_sample(S.MISSING, 99)
    request = make_request(container(), ratis_replicas("C C C"), services)
    request.report = report
    assert run_chain(request, services) is S.HEALTHY
    assert report.current_health is S.HEALTHY and report.stat(S.MISSING) == 1


def test_suppressed_container_is_skipped() -> None:
    services = RecordingServices(pipelines=set())
    for info, replicas in [
        (container("OPEN", suppressed=True), [replica("a", "CLOSED")]),
        (container("CLOSED", suppressed=True), []),
        (container("DELETING", suppressed=True), []),
    ]:
        request = make_request(info, replicas, services)
        request.report.current_health = S.MISSING  # untouched: not even reset
        assert run_chain(request, services) is S.HEALTHY
        assert request.report.current_health is S.MISSING
        assert request.report.to_dict() == _fresh_report_with(S.MISSING)
        assert request.queue.is_empty()
    assert services.calls == []


def _fresh_report_with(current: S) -> dict:
    report = ReplicationManagerReport()
    report.current_health = current
    return report.to_dict()


def test_lifecycle_state_is_not_counted_by_the_chain() -> None:
    out = check(container("CLOSED"), ratis_replicas("C C C"))
    assert all(out.report.stat(state) == 0 for state in LifeCycleState)
    assert out.recorded() == {}


def test_open_without_pipeline_versus_open_unhealthy() -> None:
    no_pipeline = check(container("OPEN", pipeline="gone"), [replica("a", "OPEN")])
    no_pipeline.assert_only(S.OPEN_WITHOUT_PIPELINE)
    assert no_pipeline.health is S.OPEN_WITHOUT_PIPELINE and no_pipeline.calls == [("fire_close", CID)]
    unhealthy = check(container("OPEN"), [replica("a", "OPEN"), replica("b", "UNHEALTHY")])
    unhealthy.assert_only(S.OPEN_UNHEALTHY)
    assert unhealthy.health is S.OPEN_UNHEALTHY and unhealthy.calls == [("fire_close", CID)]
    healthy = check(container("OPEN"), [replica("a", "OPEN")])
    assert healthy.recorded() == {} and healthy.health is S.HEALTHY and healthy.calls == []


def test_closing_in_the_chain() -> None:
    out = check(container("CLOSING"), [replica("a", "CLOSING"), replica("b", "UNHEALTHY")])
    assert out.recorded() == {} and out.under == [] and out.calls == [("close", "a", False)]
    out = check(container("CLOSING"), [replica("a", "UNHEALTHY")])
    assert out.calls == [("event", CID, LifeCycleEvent.QUASI_CLOSE)]


def test_mismatched_handler_does_not_stop_the_chain() -> None:
    out = check(container("CLOSED"), ratis_replicas("C Cg"))
    out.assert_only(S.UNDER_REPLICATED)
    assert out.calls == [("close", "Cg1", False)] and len(out.under) == 1
