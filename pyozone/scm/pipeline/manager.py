"""PipelineManager: pipeline states, creation under the limits, reports, close and removal.

Sans-IO: createPipeline and closePipeline commands are queued on the NodeManager; containers are closed
through CLOSE_CONTAINER events; persisted state lives in the `pipelines` table.

EC pipelines (Ozone's ECPipelineProvider) are SCM's bookkeeping alone: created OPEN with data + parity
members chosen by rack scatter, member i holding replica index i + 1; datanodes never hear of them (no
create or close command, no reports). They close as Ratis ones do, when a member goes stale, dead or out
of service, and their container closes with them.
"""

from __future__ import annotations

import logging
import random
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from pyozone.hdds.commands import ClosePipelineCommand, CreatePipelineCommand
from pyozone.hdds.datanode import DatanodeInfo
from pyozone.hdds.exceptions import ResultCode, SCMException
from pyozone.hdds.ids import RATIS_ONE, RATIS_THREE, ContainerID, DatanodeID, PipelineID, ReplicationConfig
from pyozone.hdds.pipeline import Pipeline
from pyozone.hdds.states import PipelineState, ReplicationType
from pyozone.scm.events import EventQueue, SCMEvent
from pyozone.scm.node.node_manager import NodeManager
from pyozone.scm.pipeline.placement import PipelinePlacementPolicy, choose_leader
from pyozone.scm.pipeline_limits import LIVE_STATES, check_ratis_three_limit
from pyozone.scm.store import RecordCodec, SCMMetadataStore, StrKeyCodec

if TYPE_CHECKING:
    from pyozone.scm.settings import ScmSettings

log = logging.getLogger(__name__)

_IndexKey = tuple[ReplicationConfig, PipelineState]

RackOf = Callable[[DatanodeID], str | None]
ECPlacement = Callable[
    [Sequence[DatanodeInfo], RackOf, Sequence[DatanodeID], Sequence[DatanodeID], int, int, random.Random],
    list[DatanodeID],
]
"""The EC container placement (rack scatter): (nodes, rack_of, used, excluded, required, bytes each, rng)
-> exactly `required` nodes or SCMException. The SCM core passes the Replication Manager's, so pipelines
and reconstruction targets follow one definition (scm.replication imports this package, not the reverse)."""


class PipelineManager:
    def __init__(
        self,
        settings: ScmSettings,
        clock,
        events: EventQueue,
        store: SCMMetadataStore,
        node_manager: NodeManager,
        precheck_passed: Callable[[], bool] = lambda: True,
        in_safe_mode: Callable[[], bool] = lambda: False,
        rng: random.Random | None = None,
        ec_placement: ECPlacement | None = None,
    ) -> None:
        self._settings = settings.pipeline
        self.ec_placement = ec_placement
        self.clock = clock
        self.events = events
        self.nodes = node_manager
        self.precheck_passed = precheck_passed
        self.in_safe_mode = in_safe_mode
        self.rng = rng or random.Random()
        self.limits = settings.pipeline_limits
        self._table = store.table("pipelines", StrKeyCodec(), RecordCodec(Pipeline))
        self._pipelines: dict[PipelineID, Pipeline] = {}
        self._containers: dict[PipelineID, set[ContainerID]] = {}
        # (replication config, state) -> pipeline ids in creation order: counts and lookups without scans
        self._index: defaultdict[_IndexKey, dict[PipelineID, None]] = defaultdict(dict)
        self._leader_counts: Counter[DatanodeID] = Counter()
        # members' non-closed RATIS/THREE and RATIS/ONE pipelines: the per-node cap reads these per candidate
        self._three_per_node: Counter[DatanodeID] = Counter()
        self._one_per_node: Counter[DatanodeID] = Counter()
        self.placement = PipelinePlacementPolicy(
            settings, node_manager, self.ratis_three_count, self.peers, self.rng
        )
        self.frozen = False
        for pipeline in self._table.values():
            self._put(pipeline, persist=False)

    # ------------------------------------------------------------------ bookkeeping
    def _put(self, pipeline: Pipeline, persist: bool = True) -> None:
        old = self._pipelines.get(pipeline.id)
        if old is not None:
            del self._index[(old.replication_config, old.state)][old.id]
            if old.suggested_leader and not old.is_closed():
                self._leader_counts[old.suggested_leader] -= 1
        else:
            self._containers.setdefault(pipeline.id, set())
            self.nodes.add_pipeline(pipeline.id, pipeline.nodes)
        self._pipelines[pipeline.id] = pipeline
        self._count_members(old, -1)
        self._count_members(pipeline, +1)
        self._index[(pipeline.replication_config, pipeline.state)][pipeline.id] = None
        # MinLeaderCountChoosePolicy counts suggested-leader roles in pipelines that are not CLOSED
        if pipeline.suggested_leader and not pipeline.is_closed():
            self._leader_counts[pipeline.suggested_leader] += 1
        if persist and (old is None or _persisted_fields(old) != _persisted_fields(pipeline)):
            self._table.put(pipeline.id, pipeline)

    def _remove(self, pipeline: Pipeline, persist: bool = True) -> None:
        del self._pipelines[pipeline.id]
        self._count_members(pipeline, -1)
        self._containers.pop(pipeline.id, None)
        del self._index[(pipeline.replication_config, pipeline.state)][pipeline.id]
        if pipeline.suggested_leader and not pipeline.is_closed():
            self._leader_counts[pipeline.suggested_leader] -= 1
        self.nodes.remove_pipeline(pipeline.id, pipeline.nodes)
        if persist:
            self._table.delete(pipeline.id)

    def record_keys(self) -> list[bytes]:
        """The keys of the records in memory, as stored (`ScmReplication.reload_all`)."""
        return [self._table.key_codec.encode(pid) for pid in self._pipelines]

    def record_id(self, key: bytes) -> PipelineID:
        return self._table.key_codec.decode(key)

    def record_changed(self, key: bytes, value: bytes | None) -> None:
        """A `pipelines` record as it now stands (SCM HA's record listener): a follower applying the leader's
        record, or a deposed leader's undo back to the committed one (None: no record). Who reported the
        pipeline and who leads it stay as reports told this SCM; the set of OPEN containers is the
        container manager's to derive again (`ContainerManager.pipeline_changed`)."""
        pid = self._table.key_codec.decode(key)
        old = self._pipelines.get(pid)
        if value is None:
            if old is not None:
                self._remove(old, persist=False)
            return
        pipeline = self._table.value_codec.decode(value)
        if old is not None:
            pipeline = replace(pipeline, reported=old.reported, leader=old.leader)
        self._put(pipeline, persist=False)

    def count(
        self, replication_config: ReplicationConfig, states: Iterable[PipelineState] = LIVE_STATES
    ) -> int:
        return sum(len(self._index[(replication_config, s)]) for s in states)

    def state_counts(self) -> dict[_IndexKey, int]:
        """Pipelines per (replication config, state), from the index (what SCM's metrics export)."""
        return {key: len(ids) for key, ids in self._index.items()}

    def _count_members(self, pipeline: Pipeline | None, delta: int) -> None:
        if pipeline is None or pipeline.is_closed():
            return
        if pipeline.replication_config == RATIS_THREE:
            counter = self._three_per_node
        elif pipeline.replication_config == RATIS_ONE:
            counter = self._one_per_node
        else:
            return
        for dn in pipeline.nodes:
            counter[dn] += delta

    def ratis_three_count(self, dn: DatanodeID) -> int:
        """Non-closed RATIS/THREE pipelines the node is in: what the per-node cap compares."""
        return self._three_per_node[dn]

    def peers(self, dn: DatanodeID) -> set[DatanodeID]:
        result: set[DatanodeID] = set()
        for pid in self.nodes.pipelines(dn):
            p = self._pipelines.get(pid)
            if p is not None and p.state is not PipelineState.CLOSED:
                result.update(p.nodes)
        result.discard(dn)
        return result

    # ------------------------------------------------------------------ queries
    def find(self, pid: PipelineID) -> Pipeline | None:
        return self._pipelines.get(pid)

    def get(self, pid: PipelineID) -> Pipeline:
        pipeline = self._pipelines.get(pid)
        if pipeline is None:
            raise SCMException(f"pipeline {pid} not found", ResultCode.PIPELINE_NOT_FOUND)
        return pipeline

    def pipelines(
        self, replication_config: ReplicationConfig | None = None, state: PipelineState | None = None
    ) -> list[Pipeline]:
        if replication_config is not None and state is not None:
            return [self._pipelines[pid] for pid in self._index[(replication_config, state)]]
        return [
            p
            for p in self._pipelines.values()
            if (replication_config is None or p.replication_config == replication_config)
            and (state is None or p.state is state)
        ]

    def open_pipelines(
        self,
        replication_config: ReplicationConfig,
        excluded_nodes: frozenset[DatanodeID] = frozenset(),
        excluded_pipelines: frozenset[PipelineID] = frozenset(),
    ) -> list[Pipeline]:
        candidates = self.pipelines(replication_config, PipelineState.OPEN)
        if not excluded_nodes and not excluded_pipelines:
            return candidates
        return [
            p
            for p in candidates
            if p.id not in excluded_pipelines and not excluded_nodes.intersection(p.nodes)
        ]

    def containers(self, pid: PipelineID) -> frozenset[ContainerID]:
        return frozenset(self._containers.get(pid, ()))

    def add_container_to_pipeline(
        self, pid: PipelineID, container_id: ContainerID, force: bool = False
    ) -> None:
        pipeline = self.get(pid)
        if pipeline.is_closed() and not force:
            raise SCMException(
                f"cannot add container {container_id} to closed pipeline {pid}",
                ResultCode.PIPELINE_STATE_CHANGE_NOT_ALLOWED,
            )
        self._containers[pid].add(container_id)

    def remove_container_from_pipeline(self, pid: PipelineID, container_id: ContainerID) -> None:
        self._containers.get(pid, set()).discard(container_id)

    # ------------------------------------------------------------------ creation
    def create_pipeline(
        self, replication_config: ReplicationConfig, excluded_nodes: Iterable[DatanodeID] = ()
    ) -> Pipeline:
        """A new pipeline, refused past the limits (PipelineManagerImpl, RatisPipelineProvider): a Ratis one
        ALLOCATED, its members told to create it; an EC one OPEN at once, no datanode told."""
        rtype = replication_config.type
        if rtype not in (ReplicationType.RATIS, ReplicationType.EC):
            raise SCMException(f"cannot create {replication_config} pipelines", ResultCode.INTERNAL_ERROR)
        term = self.nodes.context.term_of_leader()  # a follower creates none: it raises before any write
        if self.frozen:
            raise SCMException("pipeline creation is frozen", ResultCode.FAILED_TO_FIND_SUITABLE_NODE)
        if (rtype is ReplicationType.EC or replication_config.factor == 3) and not self.precheck_passed():
            raise SCMException(
                "Pipeline creation is not allowed in safe mode (pre-check not passed)",
                ResultCode.SAFE_MODE_EXCEPTION,
            )
        if rtype is ReplicationType.EC:
            return self._create_ec_pipeline(replication_config, excluded_nodes)
        if replication_config.factor == 3:
            limit = check_ratis_three_limit(self.limits, self.count, len(self.nodes.healthy_in_service()))
            if limit.refusal:
                raise SCMException(limit.refusal, ResultCode.FAILED_TO_FIND_SUITABLE_NODE)
            members = self.placement.choose_datanodes(excluded_nodes)
        else:
            members = [self._choose_factor_one_node(set(excluded_nodes))]
        now = self.clock.wall_ms()
        leader = choose_leader(members, lambda dn: self._leader_counts[dn])
        pipeline = Pipeline(
            self._new_id(),
            replication_config,
            PipelineState.ALLOCATED,
            tuple(members),
            now,
            now,
            suggested_leader=leader,
        )
        self._put(pipeline)
        self._tell_members(pipeline, term)
        log.info("Created pipeline %s %s on %s", pipeline.id, replication_config, ",".join(members))
        return pipeline

    def _tell_members(self, pipeline: Pipeline, term: int) -> None:
        for dn in pipeline.nodes:
            self.nodes.add_datanode_command(
                dn,
                CreatePipelineCommand(
                    pipeline_id=pipeline.id,
                    replication_type=ReplicationType.RATIS,
                    factor=pipeline.replication_config.factor,
                    nodes=tuple(pipeline.nodes),
                    suggested_leader=pipeline.suggested_leader,
                    term=term,
                ),
            )

    def resend_create_commands(self) -> int:
        """A new leader (`ScmReplication.step_up`): the members of every ALLOCATED Ratis pipeline are told to
        create it again (a datanode that holds the group already ignores it). The deposed leader's queue
        went with its leadership, perhaps before its create commands left: such a pipeline would stay
        ALLOCATED, counted against the members' limits, until the scrubber's
        ozone.scm.pipeline.allocated.timeout. Returns how many pipelines."""
        term = self.nodes.context.term_of_leader()
        allocated = [
            p
            for p in self._pipelines.values()
            if p.state is PipelineState.ALLOCATED and p.replication_config.type is ReplicationType.RATIS
        ]
        for pipeline in allocated:
            self._tell_members(pipeline, term)
        return len(allocated)

    def _create_ec_pipeline(self, config: ReplicationConfig, excluded: Iterable[DatanodeID]) -> Pipeline:
        """ECPipelineProvider: data + parity members by rack scatter, each with room for a container."""
        if self.ec_placement is None:
            raise SCMException(
                f"cannot create {config} pipelines: this SCM has no EC placement policy",
                ResultCode.INTERNAL_ERROR,
            )
        rack_of = self.nodes.topology.rack_of
        # a node SCM no longer places (dead, gone) is no candidate anyway; counting it as excluded would
        # only make the choose ask for more nodes than it needs
        excluded_known = [dn for dn in dict.fromkeys(excluded) if rack_of(dn) is not None]
        members = self.ec_placement(
            self.nodes.nodes(),
            rack_of,
            (),
            excluded_known,
            config.required_nodes,
            self.placement.data_size_required,
            self.rng,
        )
        now = self.clock.wall_ms()
        pipeline = Pipeline(self._new_id(), config, PipelineState.OPEN, tuple(members), now, now)
        self._put(pipeline)
        log.info(
            "Created pipeline %s %s on %s (replica indexes 1..%d in order)",
            pipeline.id,
            config,
            ",".join(members),
            len(members),
        )
        return pipeline

    def _choose_factor_one_node(self, excluded: set[DatanodeID]) -> DatanodeID:
        for info in self.nodes.healthy_in_service():
            if (
                not self._one_per_node[info.uuid]
                and info.uuid not in excluded
                and self.placement.has_enough_space(info)
            ):
                return info.uuid
        raise SCMException(
            "Cannot create pipeline RATIS/ONE: every healthy node already has one",
            ResultCode.FAILED_TO_FIND_SUITABLE_NODE,
        )

    def _new_id(self) -> PipelineID:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    # ------------------------------------------------------------------ state changes
    def open_pipeline(self, pid: PipelineID) -> None:
        pipeline = self.get(pid)
        if pipeline.state is PipelineState.CLOSED:
            raise SCMException(
                f"cannot open closed pipeline {pid}", ResultCode.PIPELINE_STATE_CHANGE_NOT_ALLOWED
            )
        if pipeline.state is PipelineState.ALLOCATED:
            self._put(pipeline.with_state(PipelineState.OPEN, self.clock.wall_ms()))
            log.info("Pipeline %s moved to OPEN", pid)

    def deactivate_pipeline(self, pid: PipelineID) -> None:
        self._move(pid, PipelineState.OPEN, PipelineState.DORMANT)

    def activate_pipeline(self, pid: PipelineID) -> None:
        self._move(pid, PipelineState.DORMANT, PipelineState.OPEN)

    def _move(self, pid: PipelineID, source: PipelineState, target: PipelineState) -> None:
        pipeline = self.get(pid)
        if pipeline.state is target:
            return
        if pipeline.state is not source:
            raise SCMException(
                f"pipeline {pid} is {pipeline.state.name}; only {source.name} pipelines can "
                f"move to {target.name}",
                ResultCode.PIPELINE_STATE_CHANGE_NOT_ALLOWED,
            )
        self._put(pipeline.with_state(target, self.clock.wall_ms()))

    def close_pipeline(self, pid: PipelineID, failed: bool = False) -> None:
        """Closes its containers (OPEN ones finalize, CLOSING ones get close commands), then CLOSED. A
        CLOSED pipeline holds none of its members' slots.

        `failed`: a member reported the pipeline failed, so its log takes no close-container entry. The
        members are told at once (not when the scrubber deletes the pipeline, minutes later): each leaves
        the group and quasi-closes the replicas waiting for the log, and the Replication Manager's
        quasi-close path takes over. Otherwise (a member went stale, an administrator's close) the live
        members close the containers through the log, and hear the close at deletion."""
        pipeline = self.get(pid)
        if pipeline.is_closed():
            return
        for container_id in sorted(self._containers.get(pid, ())):
            self.events.fire(SCMEvent.CLOSE_CONTAINER, container_id)
        self._put(pipeline.with_state(PipelineState.CLOSED, self.clock.wall_ms()))
        if failed:
            self._send_close_commands(pipeline)
        log.info("Pipeline %s closed", pid)

    def delete_pipeline(self, pid: PipelineID) -> None:
        """Removes a CLOSED pipeline and tells its members to drop their Ratis group (again, after a
        failed pipeline's close: for a member that missed it). An EC pipeline has no group: its members
        never knew it."""
        pipeline = self.get(pid)
        if not pipeline.is_closed():
            raise SCMException(
                f"pipeline {pid} must be CLOSED before it is removed, it is {pipeline.state.name}",
                ResultCode.PIPELINE_STATE_CHANGE_NOT_ALLOWED,
            )
        self._remove(pipeline)
        self._send_close_commands(pipeline)

    def _send_close_commands(self, pipeline: Pipeline) -> None:
        if pipeline.replication_config.type is ReplicationType.EC:
            return
        for dn in pipeline.nodes:
            self.send_close_command(dn, pipeline.id)

    def send_close_command(self, dn: DatanodeID, pid: PipelineID) -> None:
        command = ClosePipelineCommand(pipeline_id=pid, term=self.nodes.context.term_of_leader())
        self.nodes.add_datanode_command(dn, command)

    def close_and_delete(self, pid: PipelineID) -> None:
        self.close_pipeline(pid)
        self.delete_pipeline(pid)

    # ------------------------------------------------------------------ reports
    def process_pipeline_report(self, dn: DatanodeID, pid: PipelineID, is_leader: bool) -> None:
        """Every SCM records who reported the pipeline and who leads it (memory on a follower, whose
        records come from the leader); the leader alone opens a pipeline or closes an unknown one
        (Ozone's PipelineReportHandler: openPipeline is replicated, the close command needs the term)."""
        leader = self.nodes.context.is_leader()
        pipeline = self._pipelines.get(pid)
        if pipeline is None:
            if leader:
                self.send_close_command(dn, pid)
            return
        if dn not in pipeline.nodes:
            log.warning("Datanode %s reported pipeline %s it is not a member of", dn, pid)
            return
        if pipeline.replication_config.type is ReplicationType.EC:
            log.warning("Datanode %s reported EC pipeline %s, which datanodes never hold", dn, pid)
            return
        updated = pipeline.with_report(dn, is_leader)
        if updated != pipeline or updated.reported != pipeline.reported:
            self._put(updated, persist=leader)
        if leader and updated.state is PipelineState.ALLOCATED and updated.is_healthy():
            self.open_pipeline(pid)
        current = self._pipelines[pid]
        if self.in_safe_mode() and current.state is PipelineState.OPEN:
            self.events.fire(SCMEvent.OPEN_PIPELINE, current)

    def process_pipeline_action(self, dn: DatanodeID, pid: PipelineID, reason: str) -> None:
        """Leader only (Ozone's PipelineActionHandler: closePipeline is replicated): a follower learns of
        the close from the leader's record."""
        log.error("pipeline Action CLOSE on pipeline %s. Reason : %s (from %s)", pid, reason, dn)
        if not self.nodes.context.is_leader():
            log.info("Follower SCM leaves the close of pipeline %s to the leader", pid)
            return
        if pid in self._pipelines:
            self.close_pipeline(pid, failed=True)
        else:
            self.send_close_command(dn, pid)

    # ------------------------------------------------------------------ scrubber
    def scrub_pipelines(self) -> None:
        """PipelineManagerImpl.scrubPipelines: stuck ALLOCATED and long-CLOSED pipelines go; an OPEN one with
        a lost member closes.

        EC pipelines too: a datanode never closes one (it does not know it), so this is what closes an
        EC pipeline whose member SCM forgot across a restart."""
        now = self.clock.wall_ms()
        allocated_timeout = self._settings.allocated_timeout_ms
        destroy_timeout = self._settings.destroy_timeout_ms
        for pipeline in list(self._pipelines.values()):
            if pipeline.state is PipelineState.ALLOCATED and now - pipeline.created_ms >= allocated_timeout:
                log.info("Scrubbing pipeline %s: ALLOCATED for %d ms", pipeline.id, now - pipeline.created_ms)
                self.close_and_delete(pipeline.id)
            elif (
                pipeline.state is PipelineState.CLOSED and now - pipeline.state_entered_ms >= destroy_timeout
            ):
                self.delete_pipeline(pipeline.id)
            elif pipeline.state is PipelineState.OPEN and not all(
                self.nodes.is_registered(dn) for dn in pipeline.nodes
            ):
                self.close_pipeline(pipeline.id)

    def pipelines_of_node(self, dn: DatanodeID) -> list[Pipeline]:
        return [self._pipelines[pid] for pid in sorted(self.nodes.pipelines(dn)) if pid in self._pipelines]


def _persisted_fields(p: Pipeline) -> tuple:
    return (p.state, p.state_entered_ms, p.leader, p.suggested_leader, p.nodes)
