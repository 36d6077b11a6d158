"""Choosing datanodes for a RATIS/THREE pipeline (Ozone's PipelinePlacementPolicy) and the leader to suggest.

One deliberate difference from Ozone: Ozone sorts candidates by pipeline count and picks the anchor
uniformly at random. A uniform pick strands free slots (two nodes with room cannot host a pipeline,
nor can one rack alone in a multi-rack cluster), so the cluster settles below the limit Ozone's "Calculating
Ratis Pipeline Limits" doc promises. We sort candidates by free slots (per-node limit minus pipelines, most
first; the same order as Ozone's when every node has the same limit) and pick the anchor at random among those
with the most free slots on the rack with the most free slots. Ties are broken by a seeded RNG.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from pyozone.hdds.datanode import DatanodeInfo, NodeReport
from pyozone.hdds.exceptions import ResultCode, SCMException
from pyozone.hdds.ids import DatanodeID
from pyozone.scm.node.node_manager import NodeManager

if TYPE_CHECKING:
    from pyozone.scm.settings import ScmSettings

MULTIPLE_RACK_PIPELINE_MSG = (
    "The cluster has multiple racks, but all nodes with available pipeline capacity are on a single "
    "rack. There are insufficient cross rack nodes available to create a pipeline."
)


class PipelinePlacementPolicy:
    def __init__(
        self,
        settings: ScmSettings,
        node_manager: NodeManager,
        pipeline_count: Callable[[DatanodeID], int],
        peers: Callable[[DatanodeID], set[DatanodeID]],
        rng: random.Random,
    ) -> None:
        self.nodes = node_manager
        self.pipeline_count = pipeline_count
        self.peers = peers
        self.rng = rng
        self.metadata_size_required = settings.pipeline.metadata_free_space_min_bytes
        self.data_size_required = settings.container.size_bytes
        self._space: dict[DatanodeID, tuple[NodeReport, bool]] = {}
        self.disallow_same_peers = (
            settings.pipeline.disallow_same_peers and settings.pipeline_limits.datanode_pipeline_limit != 1
        )

    def has_enough_space(self, info: DatanodeInfo) -> bool:
        """A data volume whose usable space (remaining less committed less the datanode's free-space
        floor), less the containers SCM allocated there since the report (the pending-allocation
        tracker), exceeds a container, and a metadata volume above the Ratis minimum
        (SCMCommonPlacementPolicy.hasEnoughSpace). A node out of space is no target until it reports
        space again.

        The metadata check is cached per node report: reports change every minute, placement asks on
        every creation.
        """
        if not self.nodes.has_room_for_container(info):
            return False
        cached = self._space.get(info.uuid)
        if cached is not None and cached[0] is info.report:
            return cached[1]
        ok = self.metadata_size_required <= 0 or any(
            s.remaining > self.metadata_size_required for s in info.report.metadata_storage
        )
        self._space[info.uuid] = (info.report, ok)
        return ok

    def filter_viable_nodes(self, excluded: Iterable[DatanodeID], required: int = 3) -> list[DatanodeID]:
        """Healthy in-service nodes with space, not excluded, below their limit; most free slots first.

        One pass over the nodes (this runs for every pipeline SCM creates); the errors come in Ozone's
        order: no healthy node, too few with space, too few after exclusions, too few below the limit.
        """
        healthy = self.nodes.healthy_in_service()
        if not healthy:
            raise SCMException(
                "No healthy node found to allocate pipeline.", ResultCode.FAILED_TO_FIND_HEALTHY_NODES
            )
        excluded_set = set(excluded)
        rack_of = self.nodes.topology.rack_of
        with_space = candidates = 0
        racks_with_space: set[str | None] = set()
        below_limit: list[tuple[int, DatanodeID]] = []
        for info in healthy:
            if not self.has_enough_space(info):
                continue
            dn = info.uuid
            with_space += 1
            if len(racks_with_space) < 2:
                racks_with_space.add(rack_of(dn))
            if dn in excluded_set:
                continue
            candidates += 1
            free = self.nodes.pipeline_limit(dn) - self.pipeline_count(dn)
            if free > 0:
                below_limit.append((free, dn))
        if with_space < required:
            raise SCMException(
                f"Pipeline creation failed due to no sufficient healthy nodes with enough space. "
                f"Required {required}. Found {with_space}.",
                ResultCode.FAILED_TO_FIND_NODES_WITH_SPACE,
            )
        if candidates < required:
            raise SCMException(
                f"Pipeline creation failed: required {required} nodes, found {candidates} after exclusions.",
                ResultCode.FAILED_TO_FIND_SUITABLE_NODE,
            )
        if len(below_limit) < required:
            raise SCMException(
                "Pipeline creation failed because nodes are engaged in other pipelines and every node can "
                f"only be engaged in its pipeline limit. Required {required}. Found {len(below_limit)}.",
                ResultCode.FAILED_TO_FIND_SUITABLE_NODE,
            )
        below_limit.sort(key=lambda entry: -entry[0])
        ordered = [dn for _, dn in below_limit]
        # Ozone judges "multiple racks" on the healthy nodes with space, before exclusions
        if len(racks_with_space) > 1 and len({rack_of(dn) for dn in ordered}) == 1:
            raise SCMException(MULTIPLE_RACK_PIPELINE_MSG, ResultCode.FAILED_TO_FIND_SUITABLE_NODE)
        return ordered

    def choose_datanodes(self, excluded: Iterable[DatanodeID] = ()) -> list[DatanodeID]:
        candidates = self.filter_viable_nodes(excluded)
        if self.nodes.topology.rack_count() <= 1:
            return self._choose_anywhere(candidates)
        return self._choose_rack_aware(candidates)

    def free_slots(self, dn: DatanodeID) -> int:
        return self.nodes.pipeline_limit(dn) - self.pipeline_count(dn)

    def _choose_node(self, candidates: list[DatanodeID]) -> DatanodeID | None:
        if not candidates:
            return None
        rack_of = self.nodes.topology.rack_of
        rack_free: dict[str | None, int] = {}
        for dn in candidates:
            rack_free[rack_of(dn)] = rack_free.get(rack_of(dn), 0) + self.free_slots(dn)
        score = {dn: (self.free_slots(dn), rack_free[rack_of(dn)]) for dn in candidates}
        best = max(score.values())
        pick = self.rng.choice([dn for dn in candidates if score[dn] == best])
        return self._take(candidates, pick)

    def _take(self, candidates: list[DatanodeID], pick: DatanodeID) -> DatanodeID:
        """Removes the pick from the candidates, and its peers too when same peers are disallowed."""
        candidates.remove(pick)
        if self.disallow_same_peers:
            peers = self.peers(pick)
            candidates[:] = [dn for dn in candidates if dn not in peers]
        return pick

    def _choose_anywhere(self, candidates: list[DatanodeID]) -> list[DatanodeID]:
        chosen: list[DatanodeID] = []
        for _ in range(3):
            pick = self._choose_node(candidates)
            if pick is None:
                raise SCMException(
                    "Unable to find required number of nodes.", ResultCode.FAILED_TO_FIND_SUITABLE_NODE
                )
            chosen.append(pick)
        return chosen

    def _choose_rack_aware(self, candidates: list[DatanodeID]) -> list[DatanodeID]:
        """Anchor, a second node on another rack, a third on the anchor's rack (PipelinePlacementPolicy)."""
        rack_of = self.nodes.topology.rack_of
        anchor = self._choose_node(candidates)
        if anchor is None:
            raise SCMException("Unable to find anchor node.", ResultCode.FAILED_TO_FIND_SUITABLE_NODE)
        chosen = [anchor]
        second = next((dn for dn in candidates if rack_of(dn) != rack_of(anchor)), None)
        if second is not None:
            chosen.append(self._take(candidates, second))
        while len(chosen) < 3:
            pick = None
            if second is not None:
                # on the anchor's rack; with none left there, on the second node's rack (as Ozone)
                for rack in (rack_of(anchor), rack_of(second)):
                    pick = next((dn for dn in candidates if rack_of(dn) == rack), None)
                    if pick is not None:
                        self._take(candidates, pick)
                        break
            if pick is None:
                pick = self._choose_node(candidates)
            if pick is None:
                raise SCMException(
                    "Unable to find suitable node in pipeline allocation.",
                    ResultCode.FAILED_TO_FIND_SUITABLE_NODE,
                )
            chosen.append(pick)
        return chosen


def choose_leader(members: Sequence[DatanodeID], leader_count: Callable[[DatanodeID], int]) -> DatanodeID:
    """MinLeaderCountChoosePolicy: the member that is suggested leader of the fewest pipelines."""
    return min(members, key=leader_count)
