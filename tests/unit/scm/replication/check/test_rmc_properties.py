"""Properties of the whole chain over random containers: at most one queue entry per container (never
both under and over), and read-only mode records the same report while acting on nothing."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.node_status import NodeStatus
from pyozone.hdds.states import LifeCycleState, NodeOperationalState, NodeState, ReplicaState
from pyozone.scm.replication.check import run_chain
from pyozone.scm.replication.pending_ops import PendingOp, PendingOpType
from pyozone.scm.replication.queue import ReplicationQueue
from tests.unit.scm.replication.check.rmc_fakes import (
    CID,
    SEQ,
    RecordingServices,
    always_satisfied,
    container,
    make_request,
    rack_placement,
)

DNS = [f"dn{i}" for i in range(8)]
ORIGINS = ["A", "B", "C", "D"]

node_status = st.one_of(
    st.none(), st.builds(NodeStatus, st.sampled_from(NodeOperationalState), st.sampled_from(NodeState))
)


@st.composite
def scenarios(
    draw: st.DrawFn, ec: bool
) -> tuple[ContainerInfo, list[ContainerReplica], tuple[PendingOp, ...], dict]:
    config = "EC/RS-3-2-1024k" if ec else draw(st.sampled_from(["RATIS/THREE", "RATIS/ONE"]))
    states = [LifeCycleState.CLOSED, LifeCycleState.QUASI_CLOSED, *LifeCycleState]
    info = container(
        draw(st.sampled_from(states)).name,
        config,
        keys=draw(st.sampled_from([0, 10])),
        pipeline=draw(st.sampled_from(["pipeline-1", None])),
        suppressed=draw(st.booleans()),
    )
    index = st.integers(1, 5) if ec else st.just(0)
    hosts = draw(st.lists(st.sampled_from(DNS), max_size=7, unique=True))
    replicas = [
        ContainerReplica(
            CID,
            dn,
            draw(st.sampled_from(list(ReplicaState)[:5])),  # OPEN .. UNHEALTHY: what SCM keeps
            draw(st.sampled_from([*ORIGINS, dn])),
            draw(st.sampled_from([SEQ - 2, SEQ - 1, SEQ, SEQ + 1])),
            10,
            10,
            draw(index),
            draw(st.booleans()),
        )
        for dn in hosts
    ]
    pending = tuple(
        draw(
            st.lists(
                st.builds(
                    PendingOp,
                    st.sampled_from(PendingOpType),
                    st.sampled_from(DNS),
                    index,
                    st.none(),
                    st.just(1),
                ),
                max_size=3,
            )
        )
    )
    nodes = draw(st.dictionaries(st.sampled_from(DNS), node_status))
    racks = draw(
        st.one_of(st.none(), st.dictionaries(st.sampled_from(DNS), st.sampled_from(["r1", "r2", "r3"])))
    )
    return info, replicas, pending, {"nodes": nodes, "racks": racks}


def services_for(setup: dict) -> RecordingServices:
    racks = setup["racks"]
    placement = always_satisfied if racks is None else rack_placement(racks, total_racks=3)
    return RecordingServices(nodes=dict(setup["nodes"]), placement=placement)


def check_properties(info, replicas, pending, setup) -> None:
    normal_services, ro_services = services_for(setup), services_for(setup)
    normal = make_request(info, replicas, normal_services, pending)
    health = run_chain(normal, normal_services)
    assert normal.queue.under_size() + normal.queue.over_size() <= 1
    assert not (normal.queue.under_size() and normal.queue.over_size())

    ro = make_request(info, replicas, ro_services, pending, read_only=True, queue=ReplicationQueue())
    assert run_chain(ro, ro_services) is health
    assert ro_services.calls == [] and ro.queue.is_empty()
    assert ro.report == normal.report


@settings(max_examples=400, deadline=None)
@given(scenarios(ec=False))
def test_random_ratis_containers(scenario) -> None:
    check_properties(*scenario)


@settings(max_examples=200, deadline=None)
@given(scenarios(ec=True))
def test_random_ec_containers(scenario) -> None:
    check_properties(*scenario)
