"""The pipeline target of the Pipeline Statistics page: the real planner (`plan_pipelines`, which `pyozone
plan pipelines` runs) on the live healthy in-service datanodes.

The planner runs a real PipelineManager to exhaustion, and placement scans every node per pipeline, so its
cost grows with the square of the cluster: milliseconds for a few datanodes, about 3 s for 1,000 and 45 s
for 5,000, and more with a higher per-datanode limit. A plan whose work (pipelines x datanodes) is small
is made inline; a larger one on a worker thread while the page shows
the last plan (or none yet) and says so. A plan is made again only when the inventory it was made for
changes, and at most one runs at a time. The planner touches none of the core's objects (it builds its
own from the inventory, taken on the event loop), so the thread races nothing.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

from pyozone.hdds.datanode import DatanodeInfo
from pyozone.scm.pipeline.planner import InventoryNode, PipelinePlan, plan_pipelines
from pyozone.scm.pipeline_limits import datanode_pipeline_limit
from pyozone.scm.settings import ScmSettings

log = logging.getLogger(__name__)

INLINE_MAX_WORK = 4_000
"""Pipelines x datanodes (placement scans every node for each pipeline) up to which a plan takes a few tens
of milliseconds and is made within the request: 200 datanodes at the default limit are ~27,000 and took
0.23 s, at limit 50 2.4 s."""


def inventory_node(info: DatanodeInfo) -> InventoryNode:
    """A live datanode as the planner sees one: its rack and its healthy data and metadata volumes, from
    its last node report."""
    return InventoryNode(
        info.uuid, info.details.network_location, info.healthy_volume_count(), info.metadata_volume_count()
    )


@dataclass(frozen=True, slots=True)
class _Made:
    inventory: tuple[InventoryNode, ...]
    plan: PipelinePlan
    seconds: float


class PlanCache:
    def __init__(self, settings: ScmSettings, inline_max: int = INLINE_MAX_WORK) -> None:
        self.settings = settings
        self.inline_max = inline_max
        self._limits = settings.pipeline_limits
        self._lock = threading.Lock()
        self._made: _Made | None = None  # the last plan made
        self._running: tuple[InventoryNode, ...] | None = None
        self._failed: tuple[tuple[InventoryNode, ...], str] | None = (
            None  # not tried again for the same nodes
        )

    def plan(self, inventory: tuple[InventoryNode, ...]) -> dict[str, Any]:
        """`{"plan": PipelinePlan.to_dict() | None, "current", "computing", "seconds", "error"}`: the last
        plan made (current when made for exactly this inventory), whether one is being made, and why the
        planner failed on this inventory, if it did."""
        with self._lock:
            made, running, failed = self._made, self._running, self._failed
        stale = made is None or made.inventory != inventory
        if stale and running is None and (failed is None or failed[0] != inventory):
            if self._work(inventory) <= self.inline_max:
                self._make(inventory)
            else:
                self._start(inventory)
        with self._lock:
            made, running, failed = self._made, self._running, self._failed
        return {
            "plan": None if made is None else made.plan.to_dict(),
            "current": made is not None and made.inventory == inventory,
            "computing": running is not None,
            "seconds": None if made is None else round(made.seconds, 3),
            "error": failed[1] if failed is not None and failed[0] == inventory else None,
        }

    def _work(self, inventory: tuple[InventoryNode, ...]) -> int:
        """An upper bound of the planner's work: the pipelines the nodes' limits allow, times the nodes."""
        slots = sum(datanode_pipeline_limit(self._limits, _Volumes(node)) for node in inventory)
        return slots // 3 * len(inventory)

    def _make(self, inventory: tuple[InventoryNode, ...]) -> None:
        started = time.perf_counter()
        try:
            plan = plan_pipelines(self.settings, list(inventory))
        except Exception as e:
            log.exception("The pipeline plan for %d datanodes failed", len(inventory))
            with self._lock:
                self._failed = (inventory, f"{type(e).__name__}: {e}")
            return
        with self._lock:
            self._made = _Made(inventory, plan, time.perf_counter() - started)

    def _start(self, inventory: tuple[InventoryNode, ...]) -> None:
        with self._lock:
            self._running = inventory

        def run() -> None:
            try:
                self._make(inventory)
            finally:
                with self._lock:
                    self._running = None

        # A daemon thread: a plan still running does not hold up the process's exit.
        threading.Thread(target=run, name="scm-web-pipeline-plan", daemon=True).start()


@dataclass(frozen=True, slots=True)
class _Volumes:
    """An inventory node as the pipeline limit rule reads a datanode (pipeline_limits.NodeVolumes)."""

    node: InventoryNode

    def metadata_volume_count(self) -> int:
        return self.node.metadata_disks

    def healthy_volume_count(self) -> int:
        return self.node.data_disks
