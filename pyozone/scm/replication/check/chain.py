"""The container check chain (Ozone's ReplicationManager): handlers in a fixed order, the first to return True
ends the chain ("chain of responsibility", Ozone's "Replication Manager" doc).

Order matters: state-specific handlers (open, closing, empty, deleting) must see a container before any
replication check, the quasi-closed and mismatched handlers act but never stop the chain, and the
unhealthy-only handlers run after the main checks have stepped aside.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from pyozone.hdds.container_health import ContainerHealthState
from pyozone.scm.replication.check.closed_with_unhealthy import ClosedWithUnhealthyReplicasHandler
from pyozone.scm.replication.check.closing import ClosingContainerHandler
from pyozone.scm.replication.check.deleting import DeletingContainerHandler
from pyozone.scm.replication.check.ec_mis_replication import ECMisReplicationCheckHandler
from pyozone.scm.replication.check.ec_replication import ECReplicationCheckHandler
from pyozone.scm.replication.check.empty import EmptyContainerHandler
from pyozone.scm.replication.check.mismatched import MismatchedReplicasHandler
from pyozone.scm.replication.check.open_container import OpenContainerHandler
from pyozone.scm.replication.check.quasi_closed import QuasiClosedContainerHandler
from pyozone.scm.replication.check.quasi_closed_stuck import QuasiClosedStuckReplicationCheck
from pyozone.scm.replication.check.ratis_replication import RatisReplicationCheckHandler
from pyozone.scm.replication.check.ratis_unhealthy import RatisUnhealthyReplicationCheckHandler
from pyozone.scm.replication.check.request import CheckServices, ContainerCheckRequest
from pyozone.scm.replication.check.vulnerable import VulnerableUnhealthyReplicasHandler


class CheckHandler(Protocol):
    def handle(self, request: ContainerCheckRequest, services: CheckServices) -> bool:
        """Report, queue and act for the container; True stops the chain."""
        ...


_DEFAULT_CHAIN: tuple[CheckHandler, ...] = (
    OpenContainerHandler(),
    ClosingContainerHandler(),
    QuasiClosedContainerHandler(),
    MismatchedReplicasHandler(),
    EmptyContainerHandler(),
    DeletingContainerHandler(),
    QuasiClosedStuckReplicationCheck(),
    ECReplicationCheckHandler(),
    RatisReplicationCheckHandler(),
    ClosedWithUnhealthyReplicasHandler(),
    ECMisReplicationCheckHandler(),
    RatisUnhealthyReplicationCheckHandler(),
    VulnerableUnhealthyReplicasHandler(),
)


def default_chain() -> tuple[CheckHandler, ...]:
    """The 13 handlers in Ozone's order. Handlers are stateless, so one chain serves every check."""
    return _DEFAULT_CHAIN


def run_chain(
    request: ContainerCheckRequest,
    services: CheckServices,
    chain: Sequence[CheckHandler] | None = None,
) -> ContainerHealthState:
    """Check one container (processContainer) and return its new health state: the last state a handler
    recorded, HEALTHY if none. A suppressed container is skipped entirely (HEALTHY, nothing recorded).
    Counting the container's lifecycle state in the report is the caller's job (the full scan)."""
    if request.container.suppressed:
        return ContainerHealthState.HEALTHY
    request.report.reset_current()
    for handler in _DEFAULT_CHAIN if chain is None else chain:
        if handler.handle(request, services):
            break
    return request.report.current_health
