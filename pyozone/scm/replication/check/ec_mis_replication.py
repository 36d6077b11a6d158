"""(11) ECMisReplicationCheckHandler, as Ozone's: EC replicas not spread as the placement policy
wants (e.g. too many on one rack). Repair copies replicas to other racks, so the result goes to the
under-replicated queue (with the lowest priority, MIS_REPLICATED_REDUNDANCY), unless pending ops
already fix the placement.
"""

from __future__ import annotations

from pyozone.hdds.container_health import ContainerHealthState
from pyozone.hdds.states import ReplicationType
from pyozone.scm.replication.check.request import CheckServices, ContainerCheckRequest
from pyozone.scm.replication.health_check import apply_pending
from pyozone.scm.replication.results import MisReplicatedHealthResult


class ECMisReplicationCheckHandler:
    def handle(self, request: ContainerCheckRequest, services: CheckServices) -> bool:
        container = request.container
        if container.replication_config.type is not ReplicationType.EC:
            return False
        dns = [r.datanode for r in request.replicas]
        if services.placement_status(container, dns).satisfied:
            return False
        after_pending = services.placement_status(container, apply_pending(dns, request.pending_ops))
        health = MisReplicatedHealthResult.of(container, after_pending.satisfied)
        request.record(ContainerHealthState.MIS_REPLICATED)
        if not health.replicated_ok_after_pending:
            request.enqueue_under(health)
        return True
