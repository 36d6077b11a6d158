"""The full scan's shortcut (plainly_healthy.py) must only skip containers the chain would find HEALTHY
without recording, queueing, sending or changing anything: checked on generated containers."""

from __future__ import annotations

from dataclasses import replace
from functools import cache

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from pyozone.hdds.container_health import ContainerHealthState
from pyozone.hdds.replication_report import ReplicationManagerReport
from pyozone.hdds.states import LifeCycleState, NodeOperationalState
from pyozone.scm.replication.check import ContainerCheckRequest, run_chain
from pyozone.scm.replication.queue import ReplicationQueue
from tests.unit.scm.replication.rm_harness import RMHarness

Op = NodeOperationalState
NODES = 6


@cache
def harness(racks: int) -> RMHarness:
    return RMHarness(datanodes=NODES, racks=racks)


def often(common, *others):
    """`common` nine times in ten: most generated containers are near the plain case, where the
    shortcut's edges are."""
    return st.sampled_from([common] * 9 * max(1, len(others)) + list(others))


@st.composite
def cases(draw):
    config = draw(often("RATIS/THREE", "RATIS/ONE", "EC/RS-3-2-1024k"))
    required = 5 if config.startswith("EC") else int(config.endswith("THREE")) * 2 + 1
    count = draw(often(required, 0, 1, 2, 4, 5))
    nodes = draw(st.permutations(range(NODES)))[:count]
    replicas = [
        (
            node,
            draw(often("CLOSED", "QUASI_CLOSED", "UNHEALTHY", "OPEN", "CLOSING")),
            draw(often(False, True)),
        )
        for node in nodes
    ]
    return dict(
        racks=draw(st.sampled_from([1, 2, 3])),
        state=draw(often("CLOSED", "QUASI_CLOSED", "CLOSING", "OPEN", "DELETING")),
        config=config,
        specs=replicas,
        ops=[draw(often(Op.IN_SERVICE, *Op)) for _ in range(NODES)],
        pending=draw(often(False, True)),
        suppressed=draw(often(False, True)),
    )


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases())
def test_shortcut_only_skips_what_the_chain_finds_plainly_healthy(case):
    racks, state, config, specs = case["racks"], case["state"], case["config"], case["specs"]
    h = harness(racks)
    h.drain()
    for dn, op in zip(h.dns, case["ops"], strict=True):
        info = h.scm.nodes.node(dn)
        info.status = info.status.with_operational_state(op)
    cid = h.container([], state=state, config=config)
    for index, (node, replica_state, empty) in enumerate(specs):
        ec_index = index + 1 if config.startswith("EC") else 0
        h.add_replica(cid, h.dns[node], replica_state, index=ec_index, empty=empty)
    if case["pending"]:
        h.rm.pending_ops.schedule_add(cid, h.dns[0], 0, None, h.clock.wall_ms() + 60_000)
    container = h.scm.containers.get(cid)
    if case["suppressed"]:
        container = replace(container, suppressed=True)
    replicas = h.scm.containers.replicas(cid)

    skipped = h.rm._plainly_healthy()(container, replicas)
    event(f"skipped={skipped}")
    if not skipped:
        return
    report, queue = ReplicationManagerReport(), ReplicationQueue()
    request = ContainerCheckRequest(container, replicas, (), report, queue, 2, read_only=False)
    assert run_chain(request, h.rm.services) is ContainerHealthState.HEALTHY
    assert all(report.stat(s) == 0 for s in ContainerHealthState), report.to_dict()
    assert queue.is_empty()
    assert h.queued() == []
    assert h.scm.containers.get(cid).state is LifeCycleState[state]


def test_a_full_replica_set_in_service_is_skipped_and_anything_less_is_not():
    h = RMHarness(racks=2)
    plain = h.container(h.dns[:3])
    one_rack = h.container([h.dns[0], h.dns[2], h.dns[4]])  # racks 1,1,1
    short = h.container(h.dns[:2])
    test = h.rm._plainly_healthy()
    c = h.scm.containers
    assert test(c.get(plain), c.replicas(plain))
    assert not test(c.get(one_rack), c.replicas(one_rack))  # mis-replicated: the chain must see it
    assert not test(c.get(short), c.replicas(short))
    report = h.rm.process_all()
    assert report.stat(ContainerHealthState.MIS_REPLICATED) == 1
    assert report.stat(ContainerHealthState.UNDER_REPLICATED) == 1
