"""Limiting ops per node (Ozone's "Replication Manager" doc, "Future Ideas"): a pyozone rule, off by default.

Ozone throttles replication work only on the datanode that receives the command. An EC reconstruction
also reads from `data` source datanodes and writes to every target, so a wave of reconstructions whose
coordinators are spread over the cluster can still pile reads onto a few sources. With the rule on,
every command the under-replication processing sends counts one unit against each datanode it makes
work for: a reconstruction against each source it reads and each target (the coordinator is one), a
replication against its source and its target. A node carrying `limit` units is excluded as a target
and as a reconstruction source until the iteration ends.

SCM hears nothing when a command completes, so the counts are not kept over time: they live for one
pass of the under-replication processor and are reset at the start of the next one (the doc's "used
nodes" list). With the processor interval about a heartbeat or two, each datanode gets at most `limit`
new units of work per interval.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from pyozone.hdds.ids import DatanodeID


class NodeOpsCounter:
    """Units of replication work per datanode in the current iteration; `limit` 0 turns the rule off
    (nothing is counted, nothing excluded)."""

    def __init__(self, limit: int) -> None:
        if limit < 0:
            raise ValueError(f"the ops limit per node must be >= 0, not {limit}")
        self.limit = limit
        self._counts: Counter[DatanodeID] = Counter()

    @property
    def enabled(self) -> bool:
        return self.limit > 0

    def reset(self) -> None:
        """A new iteration of the under-replication processor: nobody is busy yet."""
        self._counts.clear()

    def charge(self, dns: Iterable[DatanodeID]) -> None:
        """One unit against each node a command makes work for."""
        if self.enabled:
            self._counts.update(dns)

    def count(self, dn: DatanodeID) -> int:
        return self._counts[dn]

    def is_saturated(self, dn: DatanodeID) -> bool:
        return self.enabled and self._counts[dn] >= self.limit

    def saturated(self) -> list[DatanodeID]:
        """Nodes to exclude as targets, in a stable order (placement is seeded and must repeat)."""
        if not self.enabled:
            return []
        return sorted(dn for dn, n in self._counts.items() if n >= self.limit)

    def choose_sources(
        self, copies: Mapping[int, Sequence[DatanodeID]], needed: int
    ) -> list[tuple[DatanodeID, int]] | None:
        """`needed` (index, node) sources for a reconstruction, one per index, none saturated: per index
        its first unsaturated copy, then the least-charged indexes first (lower index on ties, so data
        indexes before parity as the coordinator would pick them). None when fewer than `needed`
        indexes have an unsaturated copy: the reconstruction waits for the next iteration."""
        usable: list[tuple[int, int, DatanodeID]] = []
        for index in sorted(copies):
            dn = next((d for d in copies[index] if not self.is_saturated(d)), None)
            if dn is not None:
                usable.append((self._counts[dn], index, dn))
        if len(usable) < needed:
            return None
        chosen = sorted(usable)[:needed]
        return [(dn, index) for _, index, dn in sorted(chosen, key=lambda u: u[1])]
