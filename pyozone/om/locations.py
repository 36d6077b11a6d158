"""Where a key's blocks can be read: container locations from SCM, cached, turned into the pipeline a
reader gets in each KeyLocation.

An OPEN container is read through its pipeline (from the leader, which has every committed write). Any
other container is read from the datanodes holding a replica, nearest to the reader first, as SCM's
getContainerWithPipeline builds a STANDALONE read pipeline for a closed container in Ozone. An EC container's
pipeline says which replica index each member holds (memberReplicaIndexes) and carries the EC config: the
open container's EC pipeline (member i holds index i+1), else the replicas SCM knows with their indexes, in
the same order (per index, the nearest readable replica first).

The cache (Ozone's ScmClient container location cache) keeps answers for
ozone.om.container.location.cache.ttl, but for a few seconds only those of a container that has not settled
yet (OPEN, CLOSING, QUASI_CLOSED: it closes at any moment, its replicas change state with it) or that names
no replica (SCM restarted and has not heard from the datanodes yet). A reader whose locations failed it
asks again with forceUpdateContainerCache, as Ozone's client does, and OM then asks SCM afresh.
"""

from __future__ import annotations

import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING

from pyozone.framework.scm_admin import ReplicaLocation
from pyozone.hdds.clock import Clock
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.pipeline import Pipeline
from pyozone.hdds.states import LifeCycleState, PipelineState, ReplicaState, ReplicationType
from pyozone.om.scm import ContainerLocation
from pyozone.protocol.admin_records import pipeline_to_proto

if TYPE_CHECKING:
    from pyozone.proto import hdds_pb2

UNSETTLED_CONTAINER_MAX_AGE_MS = 3_000
"""A cached location of a container not yet CLOSED, or with no replica, older than this is fetched again."""

_UNSETTLED = frozenset({LifeCycleState.OPEN, LifeCycleState.CLOSING, LifeCycleState.QUASI_CLOSED})

_READABLE = (ReplicaState.OPEN, ReplicaState.CLOSING, ReplicaState.QUASI_CLOSED, ReplicaState.CLOSED)


class LocationCache:
    """An LRU of container locations with a time to live, on an injected clock; thread-safe.

    Two threads missing the same container may both ask SCM; the later answer wins, both are correct.
    """

    def __init__(
        self, fetch: Callable[[int], ContainerLocation], clock: Clock, size: int, ttl_ms: int
    ) -> None:
        self._fetch = fetch
        self._clock = clock
        self._size = max(0, size)
        self._ttl_ms = ttl_ms
        self._entries: OrderedDict[int, tuple[ContainerLocation, int]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def _fresh(self, location: ContainerLocation, fetched_ms: int, now_ms: int) -> bool:
        age = now_ms - fetched_ms
        if location.state in _UNSETTLED or not location.replicas:
            return age < min(self._ttl_ms, UNSETTLED_CONTAINER_MAX_AGE_MS)
        return age < self._ttl_ms

    def get(self, container_id: int, refresh: bool = False) -> ContainerLocation:
        """The cached location, or SCM's answer (then cached) when there is none, it is stale, or
        `refresh` asks for SCM's answer."""
        now = self._clock.now_ms()
        with self._lock:
            entry = self._entries.get(container_id)
            if entry is not None and not refresh and self._fresh(entry[0], entry[1], now):
                self._entries.move_to_end(container_id)
                self.hits += 1
                return entry[0]
            self.misses += 1
        location = self._fetch(container_id)  # outside the lock: a slow SCM must not stall other readers
        with self._lock:
            if self._size:
                self._entries[container_id] = (location, self._clock.now_ms())
                self._entries.move_to_end(container_id)
                while len(self._entries) > self._size:
                    self._entries.popitem(last=False)
        return location

    def __len__(self) -> int:
        return len(self._entries)


def _distance(replica: ReplicaLocation, client_host: str, client_rack: str) -> int:
    """Network distance from the reader, as Ozone's sortDatanodes ranks it: its own host 0, a host on its
    rack 1, anything else 2 (an unknown reader sees every replica at 2, in SCM's order)."""
    host = client_host.strip().lower()
    details = replica.datanode
    if host and host in (details.hostname.lower(), details.ip_address):
        return 0
    return 1 if client_rack and details.network_location == client_rack else 2


def read_order(
    replicas: tuple[ReplicaLocation, ...], client_host: str, client_rack: str = ""
) -> list[ReplicaLocation]:
    """Readable replicas, UNHEALTHY ones last; within each group nearest to the reader first, then SCM's
    order (a stable sort keeps it)."""
    usable = [r for r in replicas if r.state in _READABLE or r.state is ReplicaState.UNHEALTHY]
    return sorted(
        usable,
        key=lambda r: (r.state is ReplicaState.UNHEALTHY, _distance(r, client_host, client_rack)),
    )


def read_pipeline(
    location: ContainerLocation, client_host: str, client_rack: str = ""
) -> hdds_pb2.Pipeline | None:
    """The pipeline of a KeyLocation; None when SCM does not know the container."""
    if location.state is None:
        return None
    pipeline = location.pipeline
    config = location.replication
    ec = config if config is not None and config.type is ReplicationType.EC else None
    if (
        location.state is LifeCycleState.OPEN
        and pipeline is not None
        and pipeline.state is PipelineState.OPEN
        and all(n in location.members for n in pipeline.nodes)
    ):
        return pipeline_to_proto(pipeline, location.members.get)  # an EC one: member i holds index i+1
    ordered = read_order(location.replicas, client_host, client_rack)
    if ec is not None:  # a replica without a valid index cannot be placed in the group
        ordered = [r for r in ordered if 1 <= r.replica_index <= ec.required_nodes]
        read_config = ec
    else:
        factor = 1 if config is not None and config.required_nodes == 1 else 3
        read_config = ReplicationConfig(ReplicationType.STAND_ALONE, factor)
    replicas: dict[str, ReplicaLocation] = {}
    for replica in ordered:  # a datanode holds one replica of a container: its first listing counts
        replicas.setdefault(replica.datanode.uuid, replica)
    standalone = Pipeline(
        id=pipeline.id
        if pipeline is not None
        else str(uuid.uuid5(uuid.NAMESPACE_OID, f"container-{location.container_id}")),
        replication_config=read_config,
        state=PipelineState.CLOSED,
        nodes=tuple(replicas),
        created_ms=0,
        state_entered_ms=0,
    )
    indexes = [r.replica_index for r in replicas.values()] if ec is not None else None
    return pipeline_to_proto(standalone, lambda node: replicas[node].datanode, indexes)
