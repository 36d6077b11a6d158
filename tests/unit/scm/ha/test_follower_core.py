"""A follower SCM core (SCMNodeManager; Ozone's SCMContext.isLeader): it takes every registration and report
into its views (replicas, node health and operational state, pipeline leaders) but writes nothing to its
store, sends no command and runs none of the leader's services. The same inputs on a leader of the same
service write and command, each command carrying the leader's term: the follower's silence is its branch, not
an idle script."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from pyozone.config import OzoneConfiguration
from pyozone.hdds.clock import ManualClock
from pyozone.hdds.commands import SCMCommand
from pyozone.hdds.container import ContainerInfo
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.exceptions import ResultCode, SCMException
from pyozone.hdds.ids import RATIS_THREE, ContainerID, DatanodeID
from pyozone.hdds.messages import (
    ContainerAction,
    ContainerActionReason,
    ContainerReplicaReport,
    Heartbeat,
    PipelineAction,
    PipelineReport,
)
from pyozone.hdds.pipeline import Pipeline
from pyozone.hdds.states import (
    LifeCycleState,
    NodeOperationalState,
    NodeState,
    PipelineState,
    ReplicaState,
    SCMCommandType,
)
from pyozone.scm.ha.context import ScmContext
from pyozone.scm.scm import StorageContainerManager
from pyozone.scm.settings import ScmSettings
from pyozone.scm.store import TABLE_NAMES, MemoryBackend, RecordCodec, SCMMetadataStore, StrKeyCodec
from tests.builders import dn_id, node_report

LEADER_TERM = 5
DNS = [dn_id(i) for i in range(6)]
P_OPEN, P_ALLOCATED, P_GONE = "pipeline-open", "pipeline-allocated", "pipeline-gone"
C_OPEN, C_CLOSING, C_DELETED, C_UNKNOWN = 1, 2, 3, 999
SEQ = 10
CONF = {
    "hdds.scm.unknown-container.action": "DELETE",  # the leader deletes what it does not know
    "ozone.scm.stale.node.interval": "90s",
    "ozone.scm.dead.node.interval": "180s",
    "hdds.scm.wait.time.after.safemode.exit": "30s",
}


class CountingBackend(MemoryBackend):
    """Counts the ops written to the backend: a follower's store takes records from the leader's log alone."""

    def __init__(self) -> None:
        super().__init__(TABLE_NAMES)
        self.writes = 0

    def write(self, ops) -> None:
        self.writes += len(ops)
        super().write(ops)


def applied_records() -> tuple[CountingBackend, SCMMetadataStore]:
    """What every SCM of the service holds, as if applied from the log: an OPEN pipeline on dns 0-2, an
    ALLOCATED one on dns 3-5, and containers OPEN and CLOSING on the first, one DELETED."""
    backend = CountingBackend()
    store = SCMMetadataStore(backend)
    pipelines = store.table("pipelines", StrKeyCodec(), RecordCodec(Pipeline))
    pipelines.put(P_OPEN, Pipeline(P_OPEN, RATIS_THREE, PipelineState.OPEN, tuple(DNS[:3]), 0, 0, DNS[0]))
    pipelines.put(
        P_ALLOCATED, Pipeline(P_ALLOCATED, RATIS_THREE, PipelineState.ALLOCATED, tuple(DNS[3:]), 0, 0, DNS[3])
    )
    containers = store.int_table("containers", RecordCodec(ContainerInfo))
    for cid, state, pipeline in (
        (C_OPEN, LifeCycleState.OPEN, P_OPEN),
        (C_CLOSING, LifeCycleState.CLOSING, P_OPEN),
        (C_DELETED, LifeCycleState.DELETED, None),
    ):
        containers.put(cid, ContainerInfo(cid, state, 0, pipeline, RATIS_THREE, "om", sequence_id=SEQ))
    backend.writes = 0
    return backend, store


def replica(cid: ContainerID, state: ReplicaState, seq: int = SEQ) -> ContainerReplicaReport:
    return ContainerReplicaReport(cid, state, seq, key_count=3, used_bytes=1 << 20)


@dataclass
class Run:
    """One SCM core fed the service's datanodes: every command it answered or still holds."""

    scm: StorageContainerManager
    backend: CountingBackend
    clock: ManualClock
    answered: list[tuple[DatanodeID, SCMCommand]]

    def details(self, i: int) -> DatanodeDetails:
        return DatanodeDetails(DNS[i], f"dn{i}.test", f"10.0.0.{i + 1}")

    def heartbeat(self, i: int, **reports) -> None:
        commands = self.scm.heartbeat(Heartbeat(self.details(i), **reports))
        self.answered += [(DNS[i], c) for c in commands]

    def commands(self) -> list[tuple[DatanodeID, SCMCommand]]:
        held = [(dn, c) for dn in DNS for c in self.scm.nodes.commands.peek(dn)]
        return self.answered + held


def feed(context: ScmContext) -> Run:
    """The same inputs for every SCM: registrations with full reports (one replica closing a CLOSING
    container, one of a DELETED container, one of a container nobody knows) and pipeline reports (one of
    a pipeline nobody knows), an ICR, pipeline and container actions, a datanode persisting DECOMMISSIONING,
    then ten minutes of heartbeats without dn2 (STALE, then DEAD) and ticks out of safe mode and past the
    services' wait."""
    clock = ManualClock()
    backend, store = applied_records()
    scm = StorageContainerManager(
        ScmSettings.from_conf(OzoneConfiguration(CONF)), clock, store, context=context
    )
    run = Run(scm, backend, clock, [])
    full_reports = {
        0: (replica(C_OPEN, ReplicaState.OPEN, 5), replica(C_CLOSING, ReplicaState.CLOSED)),
        1: (replica(C_OPEN, ReplicaState.OPEN, 5), replica(C_UNKNOWN, ReplicaState.CLOSED)),
        2: (replica(C_OPEN, ReplicaState.OPEN, 5),),
        3: (replica(C_DELETED, ReplicaState.CLOSED, 1),),
    }
    pipeline_reports = {
        0: (PipelineReport(P_OPEN, is_leader=True), PipelineReport(P_GONE)),
        3: (PipelineReport(P_ALLOCATED, is_leader=True),),
        4: (PipelineReport(P_ALLOCATED),),
        5: (PipelineReport(P_ALLOCATED),),
    }
    for i in range(len(DNS)):
        scm.register(run.details(i), node_report(), full_reports.get(i, ()), pipeline_reports.get(i, ()))
    run.heartbeat(
        1,
        incremental_container_reports=(replica(C_OPEN, ReplicaState.CLOSING, 7),),
        pipeline_reports=(PipelineReport(P_OPEN, is_leader=True),),
    )
    run.heartbeat(0, pipeline_actions=(PipelineAction(P_OPEN, "follower slow"), PipelineAction(P_GONE)))
    run.heartbeat(2, container_actions=(ContainerAction(C_OPEN, ContainerActionReason.CONTAINER_FULL),))
    run.heartbeat(4, persisted_op_state=NodeOperationalState.DECOMMISSIONING)
    scm.safe_mode.force_exit()
    for _ in range(60):  # 10 minutes
        clock.advance(10_000)
        for i in (0, 1, 3, 4, 5):
            run.heartbeat(i, persisted_op_state=NodeOperationalState.DECOMMISSIONING if i == 4 else None)
        scm.tick()
    return run


@pytest.fixture(scope="module")
def follower() -> Run:
    return feed(ScmContext.ha_follower(LEADER_TERM, "scm1"))


@pytest.fixture(scope="module")
def leader() -> Run:
    return feed(ScmContext.ha_leader(LEADER_TERM))


# ------------------------------------------------------------------------------------ the follower's views
def test_replicas_from_full_and_incremental_reports(follower: Run) -> None:
    containers = follower.scm.containers
    open_replicas = {r.datanode: r.state for r in containers.replicas(C_OPEN)}
    assert open_replicas == {DNS[0]: ReplicaState.OPEN, DNS[1]: ReplicaState.CLOSING}  # dn2 died
    assert [(r.datanode, r.state) for r in containers.replicas(C_CLOSING)] == [(DNS[0], ReplicaState.CLOSED)]
    assert [r.datanode for r in containers.replicas(C_DELETED)] == [DNS[3]]
    assert containers.get(C_OPEN).sequence_id == SEQ  # stats update everywhere: memory only
    assert C_OPEN in follower.scm.nodes.containers(DNS[1])


def test_container_states_stay_the_records_the_leader_wrote(follower: Run, leader: Run) -> None:
    states = {cid: follower.scm.containers.get(cid).state for cid in (C_OPEN, C_CLOSING, C_DELETED)}
    assert states == {
        C_OPEN: LifeCycleState.OPEN,
        C_CLOSING: LifeCycleState.CLOSING,
        C_DELETED: LifeCycleState.DELETED,
    }
    assert not follower.scm.containers.get(C_OPEN).replicas_reported
    assert follower.scm.close_containers.pending() == frozenset()
    # the leader moved them on the same reports
    assert leader.scm.containers.get(C_OPEN).state is LifeCycleState.CLOSING
    assert leader.scm.containers.get(C_CLOSING).state is LifeCycleState.CLOSED


def test_pipeline_reports_update_reported_members_and_leaders(follower: Run, leader: Run) -> None:
    allocated = follower.scm.pipelines.get(P_ALLOCATED)
    assert allocated.leader == DNS[3] and allocated.reported == frozenset(DNS[3:])
    assert allocated.state is PipelineState.ALLOCATED  # healthy, but opening it is the leader's
    opened = follower.scm.pipelines.get(P_OPEN)
    assert opened.leader == DNS[1] and opened.state is PipelineState.OPEN  # no close on action nor stale
    assert leader.scm.pipelines.get(P_ALLOCATED).state is PipelineState.OPEN
    assert leader.scm.pipelines.find(P_OPEN) is None  # closed on the action, removed when dn2 died


def test_node_health_follows_heartbeats(follower: Run) -> None:
    nodes = follower.scm.nodes
    assert nodes.node(DNS[2]).status.health is NodeState.DEAD
    assert nodes.containers(DNS[2]) == frozenset()
    assert {nodes.node(dn).status.health for dn in DNS if dn != DNS[2]} == {NodeState.HEALTHY}


def test_the_datanodes_operational_state_is_adopted(follower: Run, leader: Run) -> None:
    assert follower.scm.nodes.node(DNS[4]).status.operational_state is NodeOperationalState.DECOMMISSIONING
    assert follower.scm.nodes.node(DNS[4]).details.persisted_op_state is NodeOperationalState.DECOMMISSIONING
    # the leader keeps its own value and tells the datanode so
    assert leader.scm.nodes.node(DNS[4]).status.operational_state is NodeOperationalState.IN_SERVICE
    set_state = [c for dn, c in leader.commands() if c.type is SCMCommandType.setNodeOperationalStateCommand]
    assert set_state and {c.state for c in set_state} == {NodeOperationalState.IN_SERVICE}


# ------------------------------------------------------------------------------------ silence, and the term
def test_a_follower_writes_nothing_and_sends_nothing(follower: Run, leader: Run) -> None:
    assert follower.backend.writes == 0
    assert follower.commands() == []
    assert leader.backend.writes > 0


def test_every_command_of_the_leader_carries_its_term(leader: Run) -> None:
    kinds = {c.type for _, c in leader.commands()}
    assert {
        SCMCommandType.closePipelineCommand,
        SCMCommandType.deleteContainerCommand,
        SCMCommandType.setNodeOperationalStateCommand,
    } <= kinds
    assert {c.term for _, c in leader.commands()} == {LEADER_TERM}


def test_a_follower_has_no_term_to_give(follower: Run) -> None:
    context = follower.scm.context
    with pytest.raises(SCMException) as refused:
        context.term_of_leader()
    assert refused.value.code is ResultCode.SCM_NOT_LEADER and "SCM:scm1" in str(refused.value)
    assert context.known_term == LEADER_TERM  # what its heartbeat answers carry


def test_a_follower_refuses_to_create_a_pipeline_before_writing(follower: Run) -> None:
    with pytest.raises(SCMException) as refused:
        follower.scm.pipelines.create_pipeline(RATIS_THREE)
    assert refused.value.code is ResultCode.SCM_NOT_LEADER
    assert follower.backend.writes == 0


def test_an_unregistered_datanode_is_asked_to_register_with_the_known_term(follower: Run) -> None:
    stranger = DatanodeDetails(dn_id(42), "dn42.test", "10.0.0.42")
    [command] = follower.scm.heartbeat(Heartbeat(stranger))
    assert command.type is SCMCommandType.reregisterCommand and command.term == LEADER_TERM


def test_the_leader_only_services_do_not_run_on_a_follower(follower: Run) -> None:
    scm = follower.scm
    assert not scm.safe_mode.in_safe_mode() and not scm.services_ready()
    tasks = {task.name: task.runs for task in scm.tasks}
    assert tasks["NodeHealthCheck"] > 0
    ran = {
        name for name, runs in tasks.items() if runs and name not in ("NodeHealthCheck", "SafeModeRefresh")
    }
    assert ran == set()
