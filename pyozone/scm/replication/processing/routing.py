"""Which repair handler a queued result goes to (as Ozone's UnderReplicatedProcessor and
OverReplicatedProcessor)."""

from __future__ import annotations

from pyozone.hdds.states import ReplicationType
from pyozone.scm.replication.check import should_handle_as_quasi_closed_stuck
from pyozone.scm.replication.processing.context import RepairContext
from pyozone.scm.replication.processing.ec_over import handle_ec_over_replicated
from pyozone.scm.replication.processing.ec_under import handle_ec_under_replicated
from pyozone.scm.replication.processing.mis_replication import handle_mis_replicated
from pyozone.scm.replication.processing.qc_stuck import (
    handle_qc_stuck_over_replicated,
    handle_qc_stuck_under_replicated,
)
from pyozone.scm.replication.processing.ratis_over import handle_ratis_over_replicated
from pyozone.scm.replication.processing.ratis_under import handle_ratis_under_replicated
from pyozone.scm.replication.results import OverReplicatedHealthResult, UnderReplicatedHealthResult


def handle_under_replicated(result: UnderReplicatedHealthResult, ctx: RepairContext) -> int:
    """Mis-replicated results share the under-replicated queue; a Ratis container that is quasi-closed
    stuck (decided on the replicas as they are now) is repaired per origin. Returns commands sent."""
    container = result.container
    if result.is_mis_replicated:
        return handle_mis_replicated(result, ctx)
    if container.replication_config.type is ReplicationType.EC:
        return handle_ec_under_replicated(result, ctx)
    if should_handle_as_quasi_closed_stuck(container, ctx.replicas(container.container_id)):
        return handle_qc_stuck_under_replicated(result, ctx)
    return handle_ratis_under_replicated(result, ctx)


def handle_over_replicated(result: OverReplicatedHealthResult, ctx: RepairContext) -> int:
    container = result.container
    if container.replication_config.type is ReplicationType.EC:
        return handle_ec_over_replicated(result, ctx)
    if should_handle_as_quasi_closed_stuck(container, ctx.replicas(container.container_id)):
        return handle_qc_stuck_over_replicated(result, ctx)
    return handle_ratis_over_replicated(result, ctx)
