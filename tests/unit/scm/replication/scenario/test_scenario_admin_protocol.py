"""Converters of the Replication Manager's admin calls: the report and a node's decommission progress
survive the wire, and malformed answers are refused naming the field."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyozone.hdds.container_health import ContainerHealthState
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.replication_report import ReplicationManagerReport
from pyozone.hdds.states import LifeCycleState, NodeOperationalState, NodeState
from pyozone.proto import ScmAdminProtocol_pb2 as pb
from pyozone.protocol import ProtocolError
from pyozone.protocol.admin_records import (
    DatanodeAdminProgress,
    DatanodeListing,
    node_from_proto,
    node_to_proto,
    rm_report_from_proto,
    rm_report_to_proto,
)

events = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(list(LifeCycleState)), st.just(0)),
        st.tuples(st.sampled_from(list(ContainerHealthState)), st.integers(1, 1 << 40)),
    ),
    max_size=40,
)


@given(events, st.integers(0, 5), st.integers(0, 1 << 42))
def test_a_report_survives_the_wire(recorded: list, limit: int, timestamp: int) -> None:
    report = ReplicationManagerReport(limit, timestamp)
    for state, cid in recorded:
        if isinstance(state, ContainerHealthState):
            report.increment_and_sample(state, cid)
        else:
            report.increment(state)
    assert rm_report_from_proto(rm_report_to_proto(report)) == report


def test_states_a_newer_scm_adds_are_dropped_and_bad_values_refused() -> None:
    proto = rm_report_to_proto(ReplicationManagerReport())
    proto.stat.append(pb.KeyIntValue(key="SOMETHING_NEW", value=3))
    proto.statSample.append(pb.KeyContainerIDList(key="SOMETHING_NEW", containerID=[1]))
    assert rm_report_from_proto(proto) == ReplicationManagerReport()
    proto.stat.append(pb.KeyIntValue(key="MISSING", value=-1))
    with pytest.raises(ProtocolError, match=r"report\.stat\[MISSING\]"):
        rm_report_from_proto(proto)
    bad_id = rm_report_to_proto(ReplicationManagerReport())
    bad_id.statSample.append(pb.KeyContainerIDList(key="MISSING", containerID=[0]))
    with pytest.raises(ProtocolError, match=r"report\.statSample\[MISSING\]"):
        rm_report_from_proto(bad_id)


def listing(progress: DatanodeAdminProgress | None) -> DatanodeListing:
    details = DatanodeDetails("00000000-0000-4000-8000-000000000001", "dn1", "10.0.0.1")
    return DatanodeListing(
        details, NodeState.HEALTHY, NodeOperationalState.DECOMMISSIONING, admin_progress=progress
    )


@given(st.integers(0, 1000), st.integers(0, 1000), st.integers(0, 1000), st.integers(0, 100))
def test_decommission_progress_survives_the_wire(
    under: int, unclosed: int, done: int, pipelines: int
) -> None:
    progress = DatanodeAdminProgress(under, unclosed, done, pipelines)
    proto = node_to_proto(listing(progress))
    assert proto.adminProgress.containersLeft == under + unclosed
    assert node_from_proto(proto) == listing(progress)


def test_a_node_without_progress_sends_none_and_an_inconsistent_total_is_refused() -> None:
    proto = node_to_proto(listing(None))
    assert not proto.HasField("adminProgress")
    assert node_from_proto(proto).admin_progress is None
    proto = node_to_proto(listing(DatanodeAdminProgress(2, 1)))
    proto.adminProgress.containersLeft = 7
    with pytest.raises(ProtocolError, match=r"node\.adminProgress\.containersLeft"):
        node_from_proto(proto)
