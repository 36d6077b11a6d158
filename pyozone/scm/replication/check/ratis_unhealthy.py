"""(12) RatisUnhealthyReplicationCheckHandler, as Ozone's: Ratis containers with only unhealthy
replicas (UNHEALTHY, or QUASI_CLOSED with the wrong BCSID of a CLOSED container).

No good copy exists, so the container is UNHEALTHY whatever happens; still, the unhealthy copies are the
best data there is, so keep `factor` of them: copy when fewer (UNHEALTHY_UNDER_REPLICATED), delete when
more (UNHEALTHY_OVER_REPLICATED). With exactly enough it is reported UNHEALTHY and the chain goes on.
"""

from __future__ import annotations

from pyozone.hdds.container_health import ContainerHealthState
from pyozone.hdds.states import ReplicationType
from pyozone.scm.replication.check.request import CheckServices, ContainerCheckRequest
from pyozone.scm.replication.ratis_count import RatisContainerReplicaCount
from pyozone.scm.replication.replica_match import is_unhealthy

S = ContainerHealthState


class RatisUnhealthyReplicationCheckHandler:
    def handle(self, request: ContainerCheckRequest, services: CheckServices) -> bool:
        container = request.container
        replicas = request.replicas
        if container.replication_config.type is not ReplicationType.RATIS:
            return False
        # The count's "healthy == 0 and unhealthy > 0", decided before paying for the count.
        if not replicas or not all(is_unhealthy(container, r) for r in replicas):
            return False
        count = RatisContainerReplicaCount(
            container,
            replicas,
            request.pending_ops,
            request.maintenance_redundancy,
            True,
            services.node_status,
        )
        if not count.is_sufficiently_replicated(False):
            request.record(S.UNHEALTHY_UNDER_REPLICATED)
            under = count.to_under_health_result()
            if not under.replicated_ok_after_pending:
                request.enqueue_under(under)
            return True
        if count.is_over_replicated(False):
            request.record(S.UNHEALTHY_OVER_REPLICATED)
            over = count.to_over_health_result()
            if not over.replicated_ok_after_pending:
                request.enqueue_over(over)
            return True
        request.record(S.UNHEALTHY)
        return False
