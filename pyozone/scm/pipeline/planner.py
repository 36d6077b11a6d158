"""How many Ratis pipelines SCM will keep for a set of datanodes, found by running the real code.

`pyozone plan pipelines` runs it on an inventory file, SCM's web UI on the live healthy datanodes.

The planner registers the inventory as healthy datanodes in a real NodeManager and runs the real
BackgroundPipelineCreator against a real PipelineManager until every replication config is refused.
The calculation steps it prints are explanations; the number is what the code did.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from pyozone.hdds.clock import ManualClock
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.ids import RATIS_ONE, RATIS_THREE
from pyozone.hdds.topology import NetworkTopology
from pyozone.scm.events import EventQueue
from pyozone.scm.node.node_manager import NodeManager
from pyozone.scm.node.storage_report import node_report
from pyozone.scm.pipeline.creator import BackgroundPipelineCreator
from pyozone.scm.pipeline.manager import PipelineManager
from pyozone.scm.pipeline_limits import check_ratis_three_limit
from pyozone.scm.store import SCMMetadataStore

if TYPE_CHECKING:
    from pyozone.scm.settings import ScmSettings


@dataclass(frozen=True, slots=True)
class InventoryNode:
    """A datanode as the planner sees it: from an inventory file, or a live SCM's registered node."""

    id: str
    rack: str
    data_disks: int
    metadata_disks: int


@dataclass(frozen=True, slots=True)
class NodeGroup:
    count: int
    metadata_disks: int
    data_disks: int
    per_node_limit: int

    @property
    def slots(self) -> int:
        return self.count * self.per_node_limit


@dataclass(frozen=True, slots=True)
class PipelinePlan:
    datanodes: int
    racks: int
    datanode_pipeline_limit: int
    per_metadata_disk: int
    ratis_pipeline_limit: int
    auto_factor_one: bool
    groups: tuple[NodeGroup, ...]
    node_slots: int
    node_target: int
    cluster_branch: str
    ratis_one: int
    ratis_three: int
    three_refusal: str
    steps: tuple[str, ...]

    def to_dict(self) -> dict:
        data = asdict(self)
        data["groups"] = [asdict(g) | {"slots": g.slots} for g in self.groups]
        return data


def plan_pipelines(settings: ScmSettings, inventory: list[InventoryNode], seed: int = 0) -> PipelinePlan:
    clock = ManualClock()
    topology = NetworkTopology({node.id: node.rack for node in inventory})
    nodes = NodeManager(settings, clock, EventQueue(), topology)
    for node in inventory:
        details = DatanodeDetails(node.id, node.id, "127.0.0.1")
        nodes.register(details, node_report(node.id, node.data_disks, node.metadata_disks))
    pipelines = PipelineManager(
        settings, clock, EventQueue(), SCMMetadataStore.in_memory(), nodes, rng=random.Random(seed)
    )
    run = BackgroundPipelineCreator(settings.pipeline, pipelines).create_pipelines()
    three, one = pipelines.count(RATIS_THREE), pipelines.count(RATIS_ONE)
    groups = _groups(inventory, nodes)
    slots = sum(g.slots for g in groups)
    limit = check_ratis_three_limit(pipelines.limits, pipelines.count, len(nodes.healthy_in_service()))
    refusal = run.refusals.get(RATIS_THREE, "")
    return PipelinePlan(
        datanodes=len(inventory),
        racks=topology.rack_count(),
        datanode_pipeline_limit=pipelines.limits.datanode_pipeline_limit,
        per_metadata_disk=settings.pipeline_limits.per_metadata_disk,
        ratis_pipeline_limit=pipelines.limits.ratis_pipeline_limit,
        auto_factor_one=settings.pipeline.creation_auto_factor_one,
        groups=groups,
        node_slots=slots,
        node_target=slots // 3,
        cluster_branch=limit.branch,
        ratis_one=one,
        ratis_three=three,
        three_refusal=refusal,
        steps=tuple(_steps(groups, slots, limit.branch, limit.allowed, one, three, pipelines.limits)),
    )


def _groups(inventory: list[InventoryNode], nodes: NodeManager) -> tuple[NodeGroup, ...]:
    shapes = Counter((n.metadata_disks, n.data_disks, nodes.pipeline_limit(n.id)) for n in inventory)
    return tuple(
        NodeGroup(count, meta, data, limit)
        for (meta, data, limit), count in sorted(shapes.items(), key=lambda kv: (-kv[0][0], -kv[0][1]))
    )


def _steps(groups, slots, branch, allowed, one, three, limits) -> list[str]:
    steps = []
    for i, g in enumerate(groups, 1):
        if limits.datanode_pipeline_limit > 0:
            why = f"ozone.scm.datanode.pipeline.limit = {limits.datanode_pipeline_limit}"
        elif g.per_node_limit == 0:
            why = "no healthy data disk, so no pipelines"
        else:
            per_disk = g.per_node_limit // max(g.metadata_disks, 1)
            why = f"{per_disk} pipelines/disk * {g.metadata_disks} disks/datanode"
        steps.append(f"Group {i}: {g.count} datanodes * ({why}) = {g.slots} pipeline slots")
    steps.append(f"Raw target from per-datanode limits: {slots} / 3 = {slots // 3}")
    if branch == "datanode":
        steps.append(
            f"Cluster limit (fixed per-datanode branch): floor({limits.datanode_pipeline_limit} * healthy "
            f"datanodes / 3) = {allowed}; ozone.scm.ratis.pipeline.limit is not consulted in this branch"
        )
    elif branch == "global":
        if one:
            steps.append(
                f"Global cap: ozone.scm.ratis.pipeline.limit {limits.ratis_pipeline_limit} counts the {one} "
                f"RATIS/ONE pipelines too (ozone.scm.pipeline.creation.auto.factor.one=true), so "
                f"{limits.ratis_pipeline_limit} - {one} = {allowed} remain for RATIS/THREE"
            )
        else:
            steps.append(f"Global cap: ozone.scm.ratis.pipeline.limit = {allowed}")
    else:
        steps.append("No cluster-level cap (ozone.scm.ratis.pipeline.limit = 0)")
    bound = slots // 3 if allowed is None else min(slots // 3, allowed)
    steps.append(f"Target: min({slots // 3}, {'none' if allowed is None else allowed}) = {bound}")
    if three < bound:
        steps.append(
            f"Placement created {three}: the nodes left with free slots could not form another "
            "pipeline (three distinct nodes, across racks when there are several)"
        )
    if one:
        steps.append(f"The background creator also keeps {one} RATIS/ONE pipelines")
    steps.append(f"SCM keeps {three} open RATIS/THREE pipelines")
    return steps
