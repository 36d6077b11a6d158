"""SCM and the datanode agree on a node's replication pool while it leaves service (one rounding, Ozone's)."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from pyozone.datanode.command_queue import CommandQueue, QueueLimits
from pyozone.hdds.replication_limits import out_of_service_limit
from pyozone.hdds.states import NodeOperationalState
from pyozone.scm.replication import throttle

LEAVING = (
    NodeOperationalState.DECOMMISSIONING,
    NodeOperationalState.ENTERING_MAINTENANCE,
    NodeOperationalState.IN_MAINTENANCE,
)


def datanode_pool(streams: int, queue: int, factor: float, out_of_service: bool) -> tuple[int, int]:
    limits = QueueLimits(
        replication_streams=streams, replication_queue=queue, out_of_service_factor=factor, per_type={}
    )
    queue_ = CommandQueue({}, limits, out_of_service=out_of_service)
    return queue_.replication_workers, queue_.replication_queue_limit


@given(
    streams=st.integers(1, 200),
    factor=st.floats(1.0, 10.0, allow_nan=False),
    state=st.sampled_from(LEAVING),
)
def test_datanode_runs_the_workers_scm_queues_for(
    streams: int, factor: float, state: NodeOperationalState
) -> None:
    workers, _ = datanode_pool(streams, 4096, factor, out_of_service=True)
    assert workers == throttle.replication_limit(streams, state, factor)


@given(streams=st.integers(1, 200), factor=st.floats(-5.0, 50.0, allow_nan=False))
def test_in_service_nodes_are_not_scaled_and_factors_are_clamped(streams: int, factor: float) -> None:
    assert datanode_pool(streams, 10, factor, out_of_service=False) == (streams, 10)
    assert throttle.replication_limit(streams, NodeOperationalState.IN_SERVICE, factor) == streams
    clamped = min(10.0, max(1.0, factor))
    assert datanode_pool(streams, 10, factor, out_of_service=True)[0] == math.ceil(streams * clamped)


def test_the_case_that_once_disagreed_rounds_up() -> None:
    """streams=10, factor 1.25: SCM queues for 13, and the datanode now runs 13 (it used to run 12)."""
    assert out_of_service_limit(10, 1.25) == 13
    assert datanode_pool(10, 4096, 1.25, out_of_service=True) == (13, 5120)
    assert throttle.replication_limit(10, NodeOperationalState.DECOMMISSIONING, 1.25) == 13
