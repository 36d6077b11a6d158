"""The full scan's shortcut for the overwhelmingly common container: one the check chain would find
HEALTHY without recording, queueing or sending anything.

A million-container scan cannot afford the chain's counting objects for every container (issue 5 asks
for 250,000 containers/s), yet nearly all of them are CLOSED Ratis containers with exactly their
replicas. The test below holds exactly for: a CLOSED Ratis container, not suppressed, with no pending
op, whose replicas are one per required node, all CLOSED, not all empty, all on nodes whose operational
state is IN_SERVICE (or unknown: counting treats that as IN_SERVICE), and, when the cluster has two or
more racks, on at least two racks.

Walking the chain (ReplicationManager's handlers) for such a container: handlers (1)-(3), (6)-(8) and
(10)-(13) do not apply to its state, type or replica mix; (4) finds no replica to close; (5) needs every
replica empty; (9) counts `factor` healthy matching replicas, neither under- nor over-replicated, none
unhealthy; and rack-aware placement (SCMContainerPlacementRackAware) of a full replica set is satisfied as
soon as it spans two racks: it needs min(2, racks) racks and allows all but one copy per rack, which two racks
already guarantee. Anything else, including a one-rack set the policy might still accept, goes through the
chain, which decides exactly. tests/unit/scm/replication checks the equivalence on generated containers.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence

from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.ids import ContainerID, DatanodeID, ReplicationConfig
from pyozone.hdds.states import LifeCycleState, ReplicaState, ReplicationType

PlainTest = Callable[[ContainerInfo, Sequence[ContainerReplica]], bool]


def plainly_healthy_test(
    leaving: Collection[DatanodeID],
    pending: Collection[ContainerID],
    racks: Mapping[DatanodeID, str | None] | None,
) -> PlainTest:
    """The test for one scan, over a snapshot: `leaving` are the nodes not IN_SERVICE, `pending` the
    containers with pending ops, `racks` each node's rack (None when the cluster has under two racks, so
    placement cannot fail). None of them change during a scan: the chain only queues work and sends
    commands, which never alter a node's state or rack.

    A closure over locals, not a class: it runs a million times per scan."""
    closed, replica_closed, ratis = LifeCycleState.CLOSED, ReplicaState.CLOSED, ReplicationType.RATIS
    required: dict[ReplicationConfig, int] = {}
    rack_of = racks.get if racks is not None else None

    def test(container: ContainerInfo, replicas: Sequence[ContainerReplica]) -> bool:
        if container.state is not closed or container.suppressed or container.container_id in pending:
            return False
        config = container.replication_config
        n = required.get(config)
        if n is None:
            n = required[config] = config.required_nodes if config.type is ratis else -1
        if len(replicas) != n:
            return False
        has_data = spread = False
        first_rack = None
        for replica in replicas:
            dn = replica.datanode
            if replica.state is not replica_closed or dn in leaving:
                return False
            if not replica.is_empty:
                has_data = True
            if rack_of is not None and not spread:
                rack = rack_of(dn)
                if rack is not None:
                    if first_rack is None:
                        first_rack = rack
                    elif rack != first_rack:
                        spread = True
        return has_data and (spread or rack_of is None)

    return test
