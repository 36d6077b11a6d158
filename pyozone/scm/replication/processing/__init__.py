"""The Replication Manager's processing stage (Ozone's UnhealthyReplicationProcessor): repair handlers for
queued results, routed by kind, and the processors that drain the queues within the throttling limits."""

from pyozone.scm.replication.processing.context import RepairContext
from pyozone.scm.replication.processing.processors import (
    OverReplicatedProcessor,
    UnderReplicatedProcessor,
    cluster_inflight_limit,
)
from pyozone.scm.replication.processing.routing import handle_over_replicated, handle_under_replicated

__all__ = [
    "OverReplicatedProcessor",
    "RepairContext",
    "UnderReplicatedProcessor",
    "cluster_inflight_limit",
    "handle_over_replicated",
    "handle_under_replicated",
]
