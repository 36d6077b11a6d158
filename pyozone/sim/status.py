"""A one-line-per-sample view of a simulated cluster: what an operator watches on SCM's web UI."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass

from pyozone.hdds.ids import RATIS_ONE, RATIS_THREE
from pyozone.hdds.states import NodeState, PipelineState
from pyozone.scm.scm import StorageContainerManager


@dataclass(frozen=True, slots=True)
class ClusterStatus:
    minute: float
    safe_mode: str
    healthy: int
    healthy_readonly: int
    stale: int
    dead: int
    three_open: int
    three_allocated: int
    one_open: int
    closed: int
    containers: int

    def to_dict(self) -> dict:
        return asdict(self)


def cluster_status(scm: StorageContainerManager, now_ms: int) -> ClusterStatus:
    health = Counter(info.status.health for info in scm.nodes.nodes())
    states = Counter((p.replication_config, p.state) for p in scm.pipelines.pipelines())
    return ClusterStatus(
        minute=round(now_ms / 60_000, 2),
        safe_mode=scm.safe_mode.status.name,
        healthy=health[NodeState.HEALTHY],
        healthy_readonly=health[NodeState.HEALTHY_READONLY],
        stale=health[NodeState.STALE],
        dead=health[NodeState.DEAD],
        three_open=states[(RATIS_THREE, PipelineState.OPEN)],
        three_allocated=states[(RATIS_THREE, PipelineState.ALLOCATED)],
        one_open=states[(RATIS_ONE, PipelineState.OPEN)],
        closed=sum(n for (_, state), n in states.items() if state is PipelineState.CLOSED),
        containers=len(scm.containers.containers()),
    )


HEADER = (
    f"{'minute':>7} {'safe mode':<17} {'HEALTHY':>7} {'READONLY':>8} {'STALE':>5} {'DEAD':>4} "
    f"{'THREE open':>10} {'THREE alloc':>11} {'ONE open':>8} {'closed':>6} {'containers':>10}"
)


def format_row(s: ClusterStatus) -> str:
    return (
        f"{s.minute:>7.2f} {s.safe_mode:<17} {s.healthy:>7} {s.healthy_readonly:>8} {s.stale:>5} "
        f"{s.dead:>4} {s.three_open:>10} {s.three_allocated:>11} {s.one_open:>8} {s.closed:>6} "
        f"{s.containers:>10}"
    )
