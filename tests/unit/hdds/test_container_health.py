from __future__ import annotations

import pytest

from pyozone.hdds.container_health import ContainerHealthState as S


def test_numbers_are_ozones() -> None:
    assert [s.value for s in S][:10] == list(range(10))
    assert S.OPEN_WITHOUT_PIPELINE == 9
    assert [s.value for s in S if s.is_combination] == [100, 101, 102, 103, 104, 105]
    assert S.QUASI_CLOSED_STUCK_MISSING == 105


@pytest.mark.parametrize(
    ("state", "metric"),
    [
        (S.UNDER_REPLICATED, "UnderReplicatedContainers"),
        (S.QUASI_CLOSED_STUCK, "StuckQuasiClosedContainers"),
        (S.OPEN_WITHOUT_PIPELINE, "OpenContainersWithoutPipeline"),
        (S.MISSING_UNDER_REPLICATED, "MissingUnderReplicatedContainers"),
        (S.QUASI_CLOSED_STUCK_MISSING, "QuasiClosedStuckMissingContainers"),
    ],
)
def test_metric_names(state: S, metric: str) -> None:
    assert state.metric_name == metric


def test_every_state_has_unique_metric_and_description() -> None:
    assert len({s.metric_name for s in S}) == len(S)
    assert all(s.description for s in S)


@pytest.mark.parametrize(
    ("state", "camel"),
    [
        (S.UNDER_REPLICATED, "underReplicated"),
        (S.QUASI_CLOSED_STUCK, "quasiClosedStuck"),
        (S.QUASI_CLOSED_STUCK_UNDER_REPLICATED, "quasiClosedStuckUnderReplicated"),
        (S.UNHEALTHY_OVER_REPLICATED, "unhealthyOverReplicated"),
        (S.MISSING_UNDER_REPLICATED, "missingUnderReplicated"),
        (S.OPEN_UNHEALTHY, "openUnhealthy"),
        (S.OPEN_WITHOUT_PIPELINE, "openWithoutPipeline"),
        (S.MIS_REPLICATED, "misReplicated"),
        (S.EMPTY, "empty"),
    ],
)
def test_camel_names_round_trip(state: S, camel: str) -> None:
    assert state.camel_name == camel
    assert S.from_camel_name(camel) is state


def test_unknown_camel_name_is_an_error_naming_it() -> None:
    with pytest.raises(ValueError, match="underreplicated"):
        S.from_camel_name("underreplicated")


def test_from_value_maps_unknown_to_healthy() -> None:
    assert S.from_value(103) is S.QUASI_CLOSED_STUCK_UNDER_REPLICATED
    assert S.from_value(10) is S.HEALTHY
    assert S.from_value(-1) is S.HEALTHY


def test_components() -> None:
    assert S.UNHEALTHY_UNDER_REPLICATED.components == {S.UNHEALTHY, S.UNDER_REPLICATED}
    assert S.QUASI_CLOSED_STUCK_MISSING.components == {S.QUASI_CLOSED_STUCK, S.MISSING}
    assert S.EMPTY.components == {S.EMPTY}
    under = [s for s in S if S.UNDER_REPLICATED in s.components]
    assert set(under) == {
        S.UNDER_REPLICATED,
        S.UNHEALTHY_UNDER_REPLICATED,
        S.MISSING_UNDER_REPLICATED,
        S.QUASI_CLOSED_STUCK_UNDER_REPLICATED,
    }
