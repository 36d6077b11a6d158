"""ContainerManager: allocation, state changes, indices, stats, replicas and restart recovery."""

from __future__ import annotations

import pytest

from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.exceptions import ResultCode, SCMException
from pyozone.hdds.ids import RATIS_ONE, RATIS_THREE
from pyozone.hdds.states import LifeCycleEvent, LifeCycleState, PipelineState, ReplicaState
from tests.unit.scm.container.scm_fakes import Harness, report_written

S, E = LifeCycleState, LifeCycleEvent


def test_allocate_takes_the_next_container_id_and_joins_the_pipeline(h: Harness) -> None:
    pipeline = h.pipelines.add(tuple(h.register(3)))
    first = h.containers.allocate_container(pipeline, "om")
    second = h.containers.allocate_container(pipeline, "om")
    assert (first.container_id, second.container_id) == (1, 2)
    assert first.state is S.OPEN and first.pipeline_id == pipeline.id and first.owner == "om"
    assert first.replication_config == RATIS_THREE and first.state_entered_ms == h.clock.wall_ms()
    assert h.pipelines.containers(pipeline.id) == {1, 2}
    assert h.sequence_ids.persisted_end("containerId") >= 2


def test_allocation_on_a_closed_pipeline_is_refused(h: Harness) -> None:
    pipeline = h.pipelines.add(tuple(h.register(3)), PipelineState.CLOSED)
    with pytest.raises(SCMException):
        h.containers.allocate_container(pipeline, "om")
    assert h.containers.count() == 0


def test_get_and_find(h: Harness) -> None:
    assert h.containers.find(99) is None
    with pytest.raises(SCMException) as err:
        h.containers.get(99)
    assert err.value.code is ResultCode.CONTAINER_NOT_FOUND
    with pytest.raises(SCMException):
        h.containers.update_state(99, E.FINALIZE)


def test_finalize_removes_the_container_from_its_pipeline(h: Harness) -> None:
    pipeline = h.pipelines.add(tuple(h.register(3)))
    info = h.containers.allocate_container(pipeline, "om")
    h.containers.update_state(info.container_id, E.FINALIZE)
    assert h.pipelines.containers(pipeline.id) == frozenset()
    assert h.containers.get(info.container_id).state is S.CLOSING


def test_indices_follow_state_changes(h: Harness) -> None:
    pipeline = h.pipelines.add(tuple(h.register(3)))
    ids = [h.containers.allocate_container(pipeline, "om").container_id for _ in range(4)]
    h.containers.update_state(ids[1], E.FINALIZE)
    h.containers.update_state(ids[2], E.FINALIZE)
    h.containers.update_state(ids[2], E.CLOSE)
    assert [c.container_id for c in h.containers.containers(S.OPEN)] == [ids[0], ids[3]]
    assert [c.container_id for c in h.containers.containers(S.CLOSING)] == [ids[1]]
    assert [c.container_id for c in h.containers.containers(S.CLOSED)] == [ids[2]]
    assert (
        h.containers.count() == 4 and h.containers.count(S.OPEN) == 2 and h.containers.count(S.DELETED) == 0
    )
    assert [c.container_id for c in h.containers.containers()] == ids
    assert [c.container_id for c in h.containers.pipeline_containers(pipeline.id)] == ids
    assert [c.container_id for c in h.containers.pipeline_containers(pipeline.id, S.CLOSED)] == [ids[2]]
    assert h.containers.pipeline_containers("no-such-pipeline") == []


def test_sorted_ids_follow_every_addition_and_state_change(h: Harness) -> None:
    """The id lists are sorted once and kept until a container is added or changes state."""
    pipeline = h.pipelines.add(tuple(h.register(3)))
    first = h.containers.allocate_container(pipeline, "om").container_id
    assert h.containers.container_ids(S.OPEN) == (first,) and h.containers.container_ids(S.CLOSING) == ()
    second = h.containers.allocate_container(pipeline, "om").container_id
    assert h.containers.container_ids() == (first, second)
    h.containers.update_state(first, E.FINALIZE)
    assert h.containers.container_ids(S.OPEN) == (second,)
    assert h.containers.container_ids(S.CLOSING) == (first,)
    report_written(h.containers, second, 1)  # stats change no membership: the same sorted tuple
    assert h.containers.container_ids() is h.containers.container_ids()


def test_resurrection_path(h: Harness) -> None:
    info = h.containers.allocate_container(h.pipelines.add(tuple(h.register(3))), "om")
    cid = info.container_id
    for event in (E.FINALIZE, E.CLOSE, E.DELETE):
        h.containers.update_state(cid, event)
    assert h.containers.transition_deleting_or_deleted_to(cid, S.QUASI_CLOSED).state is S.QUASI_CLOSED
    assert h.containers.count(S.DELETING) == 0 and h.containers.count(S.QUASI_CLOSED) == 1
    with pytest.raises(SCMException):
        h.containers.transition_deleting_or_deleted_to(cid, S.CLOSED)  # not DELETING/DELETED any more


def test_stats_are_in_memory_until_the_next_state_change(h: Harness) -> None:
    info = h.containers.allocate_container(h.pipelines.add(tuple(h.register(3))), "om")
    cid = info.container_id
    h.containers.update_stats(cid, sequence_id=7, used_bytes=100, number_of_keys=3)
    assert h.new_container_manager().get(cid).used_bytes == 0
    h.containers.update_state(cid, E.FINALIZE)
    reloaded = h.new_container_manager().get(cid)
    assert (reloaded.state, reloaded.sequence_id, reloaded.used_bytes, reloaded.number_of_keys) == (
        S.CLOSING,
        7,
        100,
        3,
    )


def test_replica_map_and_listeners(h: Harness) -> None:
    dns = h.register(3)
    info = h.containers.allocate_container(h.pipelines.add(tuple(dns)), "om")
    seen: list[tuple[str, ContainerReplica]] = []

    class Listener:
        def replica_updated(self, replica: ContainerReplica) -> None:
            seen.append(("updated", replica))

        def replica_removed(self, replica: ContainerReplica) -> None:
            seen.append(("removed", replica))

    h.containers.add_replica_listener(Listener())
    replicas = [ContainerReplica(info.container_id, dn, ReplicaState.OPEN, dn, 0) for dn in dns]
    for replica in replicas:
        h.containers.update_replica(replica)
    assert h.containers.replicas(info.container_id) == tuple(replicas)
    assert h.containers.replica(info.container_id, dns[1]) == replicas[1]
    assert h.containers.remove_replica(info.container_id, dns[1]) == replicas[1]
    assert h.containers.remove_replica(info.container_id, dns[1]) is None
    assert h.containers.replicas(info.container_id) == (replicas[0], replicas[2])
    assert [kind for kind, _ in seen] == ["updated"] * 3 + ["removed"]
    with pytest.raises(SCMException):
        h.containers.update_replica(ContainerReplica(42, dns[0], ReplicaState.OPEN, dns[0], 0))


def test_restart_restores_every_container_and_the_open_ones_pipeline_sets(h: Harness) -> None:
    dns = h.register(3)
    live = h.pipelines.add(tuple(dns))
    closed = h.pipelines.add(tuple(dns), config=RATIS_ONE)
    gone = h.pipelines.add(tuple(dns))
    open_on_live = h.containers.allocate_container(live, "om")
    closing = h.containers.allocate_container(live, "om")
    h.containers.update_state(closing.container_id, E.FINALIZE)
    open_on_closed = h.containers.allocate_container(closed, "om")
    open_on_gone = h.containers.allocate_container(gone, "om")
    before = {c.container_id: c for c in h.containers.containers()}

    h.pipelines.set_state(closed.id, PipelineState.CLOSED)
    h.pipelines.remove(gone.id)
    for pid in (live.id, closed.id):  # what a restarted PipelineManager knows: pipelines, no containers
        for cid in h.pipelines.containers(pid):
            h.pipelines.remove_container_from_pipeline(pid, cid)
    reloaded = h.new_container_manager()

    assert {c.container_id: c for c in reloaded.containers()} == before
    assert h.pipelines.containers(live.id) == {open_on_live.container_id}
    assert h.pipelines.containers(closed.id) == {open_on_closed.container_id}  # force-added
    assert reloaded.get(open_on_gone.container_id).state is S.OPEN  # kept; RM closes it later
    assert reloaded.count(S.OPEN) == 3 and reloaded.count(S.CLOSING) == 1


def test_record_round_trips_through_camel_case_json() -> None:
    info = ContainerInfo(5, S.QUASI_CLOSED, 123, "p-1", RATIS_THREE, "om", 10, 2, 9, True, True)
    data = info.to_dict()
    assert set(data) == {
        "containerID",
        "state",
        "stateEnterTime",
        "pipelineID",
        "replicationConfig",
        "owner",
        "usedBytes",
        "numberOfKeys",
        "sequenceId",
        "suppressed",
        "replicasReported",
    }
    assert data["state"] == "QUASI_CLOSED" and data["replicationConfig"] == "RATIS/THREE"
    assert ContainerInfo.from_dict(data) == info
