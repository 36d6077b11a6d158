"""ContainerAllocations: a write creates a container here only if SCM allocated it on the write's pipeline.

Without this check a WriteChunk to a made-up container id created that container and stored the data,
data SCM knows nothing of (issue 11, defect 7). A container this datanode does not hold yet is created by a
write only when the write came through an open pipeline this datanode is a member of (it is in the
PipelineSet until SCM closes it) and SCM answers that it allocated the container on that pipeline and that
it is OPEN or CLOSING. The pipeline's leader asks, off the event loop, before the write enters the pipeline
log; the members apply the log without asking (ratis/groups.py). An approval is kept for the container's other
first writes until the container is created (at most APPROVAL_TTL_S); a container already here is never
checked, and one deleted here is asked about again.

EC containers (contract 5 of issue 14): an EC pipeline is SCM's alone (no createPipeline reaches its
members), so a write with a replica index > 0 naming a pipeline this datanode is not in is approved when SCM
says the container is EC, allocated on that pipeline, OPEN or CLOSING, the index is one of its config's, and
the pipeline SCM sends with the container (getContainer's `pipeline`, Ozone's getContainerWithPipeline)
places that index on this datanode: a datanode outside the pipeline, or holding another index of it, never
takes an index SCM placed elsewhere.
An EC reconstruction's target (a RECOVERING replica, created with no pipeline) is approved when SCM knows
the container as EC, not DELETING or DELETED, and the index is one of its config's (`check_recovering`).
Block tokens will also cover this once the security work lands.

A datastream (write pipeline V2) is forwarded only along its pipeline (`chain_refusal`, issue 28 defect 5):
every hop of a header's chain must be another member of the pipeline the header names, one this datanode
is in, each member at most once, at the datastream address SCM sent for it with createPipeline; and a
stream that comes from a client (known over mutual TLS: its certificate is no datanode's) names every
other member, so all hold the same bytes (issue 28). Anything
else is refused before any connection is made, with one answer whatever the hops name, so the port is
neither a port scanner nor a way to reach hosts outside the cluster (Ratis's DataStream routing table
names peers of the group, reached at the addresses the group's configuration holds).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from pyozone.common.net import HostPort
from pyozone.common.tls import TlsStore
from pyozone.datanode.pipelines import PipelineSet
from pyozone.datanode.storage import ContainerError, Result
from pyozone.framework.scm_admin import ContainerWithPipeline, ScmAdminClient
from pyozone.framework.scm_errors import ScmClientError
from pyozone.framework.scm_failover import ScmNodes
from pyozone.hdds.container import ContainerInfo
from pyozone.hdds.ids import DatanodeID
from pyozone.hdds.states import LifeCycleState, ReplicationType
from pyozone.protocol.datastream import Hop

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ScmContainer:
    """SCM's answer about a container: its record and, for an EC container whose pipeline SCM still has,
    the datanode holding each replica index of that pipeline."""

    info: ContainerInfo
    holders: Mapping[int, DatanodeID] = field(default_factory=dict)


ContainerLookup = Callable[[int], ScmContainer | None]
"""SCM's answer about a container, None if SCM has none; raises ScmUnreachable if SCM cannot answer."""

_CACHED = 4096  # approvals kept: containers whose first writes may still be arriving
APPROVAL_TTL_S = 30.0
"""How long SCM's approval stands: long enough for a container's first writes, short enough that a write
arriving after SCM closed or deleted the container is asked about again."""


class ScmUnreachable(Exception):
    """SCM could not be asked; the write is refused, not taken on trust."""


class ContainerAllocations:
    def __init__(self, lookup: ContainerLookup, pipelines: PipelineSet) -> None:
        self._lookup = lookup
        self._pipelines = pipelines
        self._approved: OrderedDict[int, tuple[str, int, float]] = OrderedDict()
        """container id -> (pipeline, replica index, until when) SCM's approval stands."""
        self._lock = threading.Lock()

    def check(self, container_id: int, pipeline_id: str, replica_index: int = 0) -> None:
        """Raises ContainerError unless SCM allocated `container_id` on `pipeline_id` and still takes writes
        to it (OPEN or CLOSING): an open pipeline this datanode is in, or (`replica_index` > 0) an EC
        pipeline that places that index on this datanode. Blocks on SCM: never call it on the event loop."""
        ec = replica_index > 0
        if not pipeline_id or not (ec or pipeline_id in self._pipelines):
            raise ContainerError(
                Result.CONTAINER_NOT_FOUND,
                f"no container {container_id} here, and the write did not come through a pipeline of this "
                f"datanode (pipeline {pipeline_id or 'none'})",
            )
        with self._lock:
            approved = self._approved.get(container_id)
            if (
                approved is not None
                and approved[:2] == (pipeline_id, replica_index)
                and time.monotonic() < approved[2]
            ):
                return
        scm = self._ask(container_id)
        info = scm.info if scm is not None else None
        refusal = _refusal(info, container_id, pipeline_id)
        if not refusal and ec:
            assert scm is not None
            refusal = _not_ec(scm.info, container_id, replica_index) or self._not_holder(
                scm, pipeline_id, replica_index
            )
        if refusal:
            log.warning("write to container %d refused: %s", container_id, refusal)
            raise ContainerError(Result.CONTAINER_NOT_FOUND, refusal)
        assert info is not None
        if info.state not in _WRITABLE:
            # SCM closed it before this datanode held a byte of it: the answer a closed replica gives, so
            # the client leaves the container and asks for another block (Ozone's CLOSED_CONTAINER_IO)
            result = Result.CLOSED_CONTAINER_IO if info.state in _CLOSED else Result.CONTAINER_NOT_FOUND
            raise ContainerError(result, f"container {container_id} is {info.state.name} in SCM")
        with self._lock:
            self._approved[container_id] = (pipeline_id, replica_index, time.monotonic() + APPROVAL_TTL_S)
            self._approved.move_to_end(container_id)
            while len(self._approved) > _CACHED:
                self._approved.popitem(last=False)

    def check_recovering(self, container_id: int, replica_index: int) -> None:
        """Raises ContainerError unless SCM knows `container_id` as an EC container with a replica
        `replica_index`, not DELETING or DELETED: what an EC reconstruction may create here (RECOVERING).
        Blocks on SCM."""
        scm = self._ask(container_id)
        info = scm.info if scm is not None else None
        refusal = "" if info is None else _not_ec(info, container_id, replica_index)
        if info is None:
            refusal = f"SCM has no container {container_id}"
        elif not refusal and info.state in (LifeCycleState.DELETING, LifeCycleState.DELETED):
            refusal = f"container {container_id} is {info.state.name} in SCM"
        if refusal:
            log.warning("recovering replica of container %d refused: %s", container_id, refusal)
            raise ContainerError(Result.CONTAINER_NOT_FOUND, refusal)

    def chain_refusal(self, pipeline_id: str, chain: Sequence[Hop], from_client: bool = False) -> str:
        """Why this datanode may not forward a datastream of `pipeline_id` along `chain` ("" if it may).
        The answer names no hop: what a hop names is never looked up or reached. `from_client`: the stream
        comes straight from a client (not from a member forwarding it), whose chain must then name every
        other member: each member then holds the very bytes this one received, and the putBlock that
        commits them through the pipeline log finds them alike on every member (a client streaming other
        bytes to each member, or to one alone, would have the others refuse what the leader commits, and
        fail the pipeline)."""
        if not chain and not from_client:
            return ""
        me = self._pipelines.datanode_uuid
        membership = self._pipelines.get(pipeline_id)
        if membership is None:
            return f"datanode {me} is not in pipeline {pipeline_id}: it forwards no datastream of it"
        seen: set[str] = set()
        for hop in chain:
            address = membership.stream_address(hop.uuid) if hop.uuid in membership.members else None
            if hop.uuid == me or hop.uuid in seen or address is None or not address.names(hop.host, hop.port):
                log.info("datastream of pipeline %s refused: its chain is not the pipeline's", pipeline_id)
                return (
                    f"the chain is not made of the other members of pipeline {pipeline_id}, each once, at "
                    f"the datastream addresses SCM gave: nothing was forwarded"
                )
            seen.add(hop.uuid)
        if from_client and seen != set(membership.members) - {me}:
            log.info("datastream of pipeline %s refused: a client's chain leaves members out", pipeline_id)
            return (
                f"a client's datastream of pipeline {pipeline_id} names every other member in its chain, "
                f"so each holds the bytes the block's putBlock commits: nothing was forwarded"
            )
        return ""

    def _not_holder(self, scm: ScmContainer, pipeline_id: str, replica_index: int) -> str:
        """Why this datanode may not take `replica_index` of `scm`'s container; "" if SCM placed it here."""
        holder = scm.holders.get(replica_index)
        if holder == self._pipelines.datanode_uuid:
            return ""
        where = f"on {holder}" if holder else "on no datanode SCM still knows"
        return (
            f"SCM's EC pipeline {pipeline_id} holds replica index {replica_index} of container "
            f"{scm.info.container_id} {where}, not on this datanode ({self._pipelines.datanode_uuid})"
        )

    def _ask(self, container_id: int) -> ScmContainer | None:
        try:
            return self._lookup(container_id)
        except ScmUnreachable as e:
            raise ContainerError(
                Result.CONTAINER_INTERNAL_ERROR, f"cannot ask SCM about container {container_id}: {e}"
            ) from None

    def forget(self, container_id: int) -> None:
        """The container exists here now; its approval is no longer needed."""
        with self._lock:
            self._approved.pop(container_id, None)


_WRITABLE = frozenset({LifeCycleState.OPEN, LifeCycleState.CLOSING})
"""CLOSING too: SCM closes a container once its space is handed out (or its pipeline closes), while the
blocks it handed out are still being written."""
_CLOSED = frozenset({LifeCycleState.QUASI_CLOSED, LifeCycleState.CLOSED})


def _refusal(info: ContainerInfo | None, container_id: int, pipeline_id: str) -> str:
    if info is None:
        return f"SCM has no container {container_id}"
    if info.pipeline_id != pipeline_id:
        return f"SCM allocated container {container_id} on pipeline {info.pipeline_id}, not {pipeline_id}"
    if info.state in (LifeCycleState.DELETING, LifeCycleState.DELETED):
        return f"container {container_id} is {info.state.name} in SCM"
    return ""


def _not_ec(info: ContainerInfo, container_id: int, replica_index: int) -> str:
    """Why `replica_index` is no replica of `info` as an EC container; "" if it is one."""
    config = info.replication_config
    if config.type is not ReplicationType.EC:
        return f"container {container_id} is {config}, not EC: it has no replica index {replica_index}"
    if not 1 <= replica_index <= config.required_nodes:
        count = config.required_nodes
        return f"container {container_id} is {config}: replica index {replica_index} is not 1..{count}"
    return ""


LOOKUP_FAILOVER_S = 30.0
"""How long a write waits at most for an SCM of the service to lead and answer its lookup: the write holds
a dispatcher thread meanwhile, where Ozone's clients of SCM (hdds.scmclient.max.retry.timeout) wait 10
minutes."""


class ScmContainerLookup:
    """A ContainerLookup through SCM's getContainer (ScmAdminClient, on the admin protocol's client port,
    failing over between the SCMs of a service), which sends the container's pipeline with it. `tls`: the
    datanode's certificate (hdds.grpc.tls.enabled)."""

    def __init__(
        self, nodes: ScmNodes | HostPort, timeout_s: float = 10.0, tls: TlsStore | None = None
    ) -> None:
        self._client = ScmAdminClient(nodes, timeout_s, tls)

    def __call__(self, container_id: int) -> ScmContainer | None:
        try:
            return _scm_container(self._client.container_with_pipeline(container_id))
        except ScmClientError as e:
            if e.not_found:
                return None
            raise ScmUnreachable(str(e)) from None

    def close(self) -> None:
        self._client.close()


def _scm_container(answer: ContainerWithPipeline) -> ScmContainer:
    info = answer.info
    if info.replication_config.type is not ReplicationType.EC or answer.pipeline is None:
        return ScmContainer(info)
    nodes = answer.pipeline.pipeline.nodes
    return ScmContainer(info, dict(zip(answer.pipeline_indexes, nodes, strict=True)))
