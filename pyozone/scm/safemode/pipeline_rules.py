"""Pipeline rules: writable RATIS/THREE pipelines exist, and open ones can serve reads, before exit."""

from __future__ import annotations

import logging
import math
from typing import Protocol

from pyozone.hdds.ids import RATIS_THREE, DatanodeID, PipelineID, ReplicationConfig
from pyozone.hdds.messages import PipelineReport
from pyozone.hdds.node_status import NodeStatus
from pyozone.hdds.pipeline import Pipeline
from pyozone.hdds.states import NodeOperationalState, NodeState, PipelineState
from pyozone.scm.events import SCMEvent
from pyozone.scm.safemode.rule import SafeModeExitRule

log = logging.getLogger(__name__)

SAMPLE_PIPELINE_DISPLAY_LIMIT = 5


class PipelineSource(Protocol):
    """What the pipeline rules read of the PipelineManager."""

    def find(self, pid: PipelineID) -> Pipeline | None: ...
    def pipelines(
        self, replication_config: ReplicationConfig | None = None, state: PipelineState | None = None
    ) -> list[Pipeline]: ...


class NodeRecord(Protocol):
    @property
    def status(self) -> NodeStatus: ...


class NodeSource(Protocol):
    """What the healthy-pipeline rule reads of the NodeManager."""

    def get(self, dn: DatanodeID) -> NodeRecord | None: ...


def _open_ratis_three(pipeline_manager: PipelineSource) -> set[PipelineID]:
    return {p.id for p in pipeline_manager.pipelines(RATIS_THREE, PipelineState.OPEN)}


def _sample(ids: set[PipelineID]) -> str:
    if not ids:
        return ""
    return f"\nSample pipelines not satisfying the criteria : {sorted(ids)[:SAMPLE_PIPELINE_DISPLAY_LIMIT]}"


class HealthyPipelineSafeModeRule(SafeModeExitRule):
    """Enough RATIS/THREE pipelines on fully healthy, in-service nodes, so writes can start at exit."""

    event = SCMEvent.OPEN_PIPELINE

    def __init__(
        self, pipeline_manager: PipelineSource, node_manager: NodeSource, percent: float, min_datanodes: int
    ) -> None:
        self.pipeline_manager = pipeline_manager
        self.node_manager = node_manager
        self.percent = percent
        self.min_healthy_pipelines = min_datanodes // 3
        self._processed: set[PipelineID] = set()
        self._open: set[PipelineID] = set()
        self.threshold = 0
        self.refresh()

    @property
    def healthy_count(self) -> int:
        return len(self._processed)

    def validate(self) -> bool:
        return self.healthy_count >= self.threshold

    def process(self, payload: Pipeline) -> None:
        if payload.replication_config != RATIS_THREE or payload.id in self._processed:
            return
        if len(payload.nodes) != 3:
            log.warning("Pipeline %s has %d nodes, all 3 should report it", payload.id, len(payload.nodes))
            return
        bad = [dn for dn in payload.nodes if not self._in_service_healthy(dn)]
        if bad:
            log.debug("Pipeline %s has members not IN_SERVICE and HEALTHY: %s", payload.id, bad)
            return
        self._processed.add(payload.id)
        log.info(
            "SCM in safe mode. Healthy pipelines reported count is %d, required is %d",
            self.healthy_count,
            self.threshold,
        )

    def _in_service_healthy(self, dn: DatanodeID) -> bool:
        info = self.node_manager.get(dn)
        return (
            info is not None
            and info.status.operational_state is NodeOperationalState.IN_SERVICE
            and info.status.health is NodeState.HEALTHY
        )

    def refresh(self) -> None:
        """Pipelines created or closed since start change the threshold; counted ones stay counted."""
        self._open = _open_ratis_three(self.pipeline_manager)
        self.threshold = max(self.min_healthy_pipelines, math.ceil(self.percent * len(self._open)))
        log.info(
            "Total pipeline count is %d, healthy pipeline threshold count is %d",
            len(self._open),
            self.threshold,
        )

    def reinitialize(self) -> None:
        """The threshold re-read; an OPEN pipeline every member already reported counts now (a pipeline
        report before the record that opened it fired no OPEN_PIPELINE)."""
        self.refresh()
        for pipeline in self.pipeline_manager.pipelines(RATIS_THREE, PipelineState.OPEN):
            if pipeline.is_healthy():
                self.process(pipeline)

    def status_text(self) -> str:
        return (
            f"healthy {RATIS_THREE} pipelines (={self.healthy_count}) >= healthyPipelineThresholdCount"
            f" (={self.threshold})" + _sample(self._open - self._processed)
        )


class OneReplicaPipelineSafeModeRule(SafeModeExitRule):
    """Open pipelines that hold open containers need one reporting member, so their data is readable."""

    event = SCMEvent.PIPELINE_REPORT

    def __init__(self, pipeline_manager: PipelineSource, percent: float) -> None:
        self.pipeline_manager = pipeline_manager
        self.percent = percent
        self._expected: set[PipelineID] = set()
        self._reported: set[PipelineID] = set()
        self.threshold = 0
        self.refresh()

    @property
    def reported_count(self) -> int:
        return len(self._reported)

    def validate(self) -> bool:
        return self.reported_count >= self.threshold

    def process(self, payload: tuple[DatanodeID, list[PipelineReport]]) -> None:
        _, reports = payload
        for report in reports:
            if report.pipeline_id in self._reported or report.pipeline_id not in self._expected:
                continue
            pipeline = self.pipeline_manager.find(report.pipeline_id)
            if (
                pipeline is not None
                and pipeline.replication_config == RATIS_THREE
                and pipeline.state is PipelineState.OPEN
            ):
                self._reported.add(pipeline.id)
        log.debug(
            "SCM in safe mode. Pipelines with at least one datanode reported count is %d, required %d",
            self.reported_count,
            self.threshold,
        )

    def refresh(self) -> None:
        """Re-reads the open set; a reported pipeline that has since left it no longer counts."""
        self._expected = _open_ratis_three(self.pipeline_manager)
        self._reported.intersection_update(self._expected)
        self.threshold = math.ceil(self.percent * len(self._expected))
        log.info(
            "Total pipeline count is %d, pipelines with at least one datanode reported threshold count is %d",
            len(self._expected),
            self.threshold,
        )

    def reinitialize(self) -> None:
        """The open set re-read; an OPEN pipeline a member already reported counts now."""
        self.refresh()
        self._reported.update(
            p.id for p in self.pipeline_manager.pipelines(RATIS_THREE, PipelineState.OPEN) if p.reported
        )

    def status_text(self) -> str:
        return (
            f"reported Ratis/THREE pipelines with at least one datanode (={self.reported_count}) "
            f">= threshold (={self.threshold})" + _sample(self._expected - self._reported)
        )
