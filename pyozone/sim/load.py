"""The replication load on every simulated datanode, sampled over virtual time.

A datanode is busy as a target while a running replication or reconstruction writes to it (the
coordinator of a reconstruction is one of its targets) and as a source while one reads from it
(SimDatanode.running_work). Sampling both for every node shows what a throttling rule does to hot spots:
the peak is the busiest node at its busiest moment, the p95 the load a node stays under while busy
(idle samples are left out, so the figure does not depend on how long the run idles).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from pyozone.sim.datanode import SimDatanode

ROLES = ("target", "source", "total")


def work_load(datanodes: Mapping[str, SimDatanode]) -> dict[str, Counter[str]]:
    """Per role ("target", "source", "total"), the running commands keeping each node busy."""
    load: dict[str, Counter[str]] = {role: Counter() for role in ROLES}
    for node in datanodes.values():
        if not node.alive:
            continue
        for role, dn in node.running_work():
            load[role][dn] += 1
            load["total"][dn] += 1
    return load


def percentile(values: Iterable[int], fraction: float) -> int:
    """Nearest-rank percentile (0 for no values)."""
    ordered = sorted(values)
    if not ordered:
        return 0
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


@dataclass(slots=True)
class LoadSampler:
    """Samples of every live node's load in each role, one per node per `sample` call."""

    samples: dict[str, list[int]] = field(default_factory=lambda: {role: [] for role in ROLES})

    def sample(self, datanodes: Mapping[str, SimDatanode]) -> None:
        load = work_load(datanodes)
        live = [dn for dn, node in datanodes.items() if node.alive]
        for role in ROLES:
            self.samples[role].extend(load[role][dn] for dn in live)

    def peak(self, role: str) -> int:
        return max(self.samples[role], default=0)

    def p95(self, role: str) -> int:
        """Over the (node, sample) pairs where the node was busy in that role."""
        return percentile((n for n in self.samples[role] if n > 0), 0.95)
