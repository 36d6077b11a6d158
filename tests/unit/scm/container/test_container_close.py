"""The close flow: CLOSE_CONTAINER, the 150 s lease, close commands; datanode container actions (7.2)."""

from __future__ import annotations

import pytest

from pyozone.hdds.container import ContainerReplica
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.messages import ContainerAction, ContainerActionReason
from pyozone.hdds.states import LifeCycleEvent, LifeCycleState, ReplicaState, SCMCommandType
from pyozone.scm.container.actions_handler import ContainerActionsHandler
from pyozone.scm.container.close_handler import CloseContainerEventHandler
from pyozone.scm.events import SCMEvent
from pyozone.scm.ha.context import ScmContext
from tests.unit.scm.container.scm_fakes import Harness

S = LifeCycleState
LEASE_MS = 150_000


@pytest.fixture
def close(h: Harness) -> CloseContainerEventHandler:
    handler = CloseContainerEventHandler(
        h.settings.container, h.clock, h.timers, h.containers, h.pipelines, h.nodes
    )
    h.events.add_handler(SCMEvent.CLOSE_CONTAINER, handler.on_close_container)
    return handler


def close_commands(h: Harness, dns: list[str]) -> dict[str, list[tuple[int, str | None, bool]]]:
    """Each datanode's closeContainer commands as (container id, pipeline id, force)."""
    return {
        dn: [
            (c.container_id, c.pipeline_id, c.force)
            for c in h.commands(dn)
            if c.type is SCMCommandType.closeContainerCommand
        ]
        for dn in dns
    }


def advance(h: Harness, ms: int) -> None:
    h.clock.advance(ms)
    h.timers.run_due(h.clock.now_ms())


def test_open_container_is_finalized_and_closed_on_its_pipeline_after_the_lease(
    h: Harness, close: CloseContainerEventHandler
) -> None:
    dns = h.register(3)
    pipeline = h.pipelines.add(tuple(dns))
    cid = h.containers.allocate_container(pipeline, "om").container_id
    h.events.fire(SCMEvent.CLOSE_CONTAINER, cid)
    assert h.containers.get(cid).state is S.CLOSING
    assert close.pending() == {cid}
    advance(h, LEASE_MS - 1)
    assert close_commands(h, dns) == {dn: [] for dn in dns}
    advance(h, 1)
    expected = (cid, pipeline.id, False)
    assert close_commands(h, dns) == {dn: [expected] for dn in dns}
    assert close.pending() == frozenset()


def test_duplicate_close_while_the_lease_is_pending_is_ignored(
    h: Harness, close: CloseContainerEventHandler
) -> None:
    dns = h.register(3)
    cid = h.containers.allocate_container(h.pipelines.add(tuple(dns)), "om").container_id
    h.events.fire(SCMEvent.CLOSE_CONTAINER, cid)
    advance(h, 100_000)
    h.events.fire(SCMEvent.CLOSE_CONTAINER, cid)
    advance(h, 50_000)
    assert all(len(commands) == 1 for commands in close_commands(h, dns).values())
    advance(h, LEASE_MS)
    assert all(len(commands) == 1 for commands in close_commands(h, dns).values())
    h.events.fire(SCMEvent.CLOSE_CONTAINER, cid)  # a new lease once the old one expired
    advance(h, LEASE_MS)
    assert all(len(commands) == 2 for commands in close_commands(h, dns).values())


def test_commands_go_to_replica_datanodes_when_the_pipeline_is_gone(
    h: Harness, close: CloseContainerEventHandler
) -> None:
    dns = h.register(4)
    pipeline = h.pipelines.add(tuple(dns[:3]))
    cid = h.containers.allocate_container(pipeline, "om").container_id
    h.events.fire(SCMEvent.CLOSE_CONTAINER, cid)
    for dn in (dns[1], dns[3]):
        h.containers.update_replica(ContainerReplica(cid, dn, ReplicaState.CLOSING, dn, 0))
    h.pipelines.remove(pipeline.id)
    advance(h, LEASE_MS)
    assert {dn for dn, commands in close_commands(h, dns).items() if commands} == {dns[1], dns[3]}


def test_non_ratis_containers_are_force_closed(h: Harness, close: CloseContainerEventHandler) -> None:
    dns = h.register(5)
    ec = ReplicationConfig.parse("EC/RS-3-2-1024k")
    cid = h.containers.allocate_container(h.pipelines.add(tuple(dns), config=ec), "om").container_id
    h.events.fire(SCMEvent.CLOSE_CONTAINER, cid)
    advance(h, LEASE_MS)
    for commands in close_commands(h, dns).values():
        _, _, force = commands[0]
        assert force is True


@pytest.mark.parametrize(
    "events",
    [[LifeCycleEvent.FINALIZE, LifeCycleEvent.CLOSE], [LifeCycleEvent.FINALIZE, LifeCycleEvent.QUASI_CLOSE]],
)
def test_containers_past_closing_get_no_command(
    h: Harness, close: CloseContainerEventHandler, events: list[LifeCycleEvent]
) -> None:
    dns = h.register(3)
    cid = h.containers.allocate_container(h.pipelines.add(tuple(dns)), "om").container_id
    for event in events:
        h.containers.update_state(cid, event)
    h.events.fire(SCMEvent.CLOSE_CONTAINER, cid)
    advance(h, LEASE_MS)
    assert close.pending() == frozenset() and len(h.timers) == 0


def test_unknown_container_is_logged(h: Harness, close: CloseContainerEventHandler, caplog) -> None:
    h.events.fire(SCMEvent.CLOSE_CONTAINER, 404)
    assert "404" in caplog.text and close.pending() == frozenset()


def test_commands_carry_the_term_at_close_time(h: Harness, close: CloseContainerEventHandler) -> None:
    dns = h.register(3)
    cid = h.containers.allocate_container(h.pipelines.add(tuple(dns)), "om").container_id
    h.nodes.context = ScmContext.ha_leader(4)
    h.events.fire(SCMEvent.CLOSE_CONTAINER, cid)
    advance(h, LEASE_MS)
    assert {c.term for dn in dns for c in h.commands(dn)} == {4}


@pytest.mark.parametrize("reason", list(ContainerActionReason))
def test_container_actions_fire_close_container(h: Harness, reason: ContainerActionReason) -> None:
    ContainerActionsHandler(h.events).process_actions(
        "dn-1", [ContainerAction(7, reason), ContainerAction(8, reason)]
    )
    assert h.fired_of(SCMEvent.CLOSE_CONTAINER) == [7, 8]
