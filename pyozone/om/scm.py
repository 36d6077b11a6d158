"""How the OM reaches SCM: a small interface (ScmGateway) the core depends on, its RPC implementation
(GrpcScm: pyozone.framework's block client for blocks and the cluster id, its admin client's getContainer
for container locations), and the one place SCM's failures become OM result codes.

Unit tests give the core a fake gateway; the fake raises the same ScmClientError the real clients do, so
the translation below is exercised by them too.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Protocol

from pyozone import rpc
from pyozone.common.scm_ha import ScmAddresses, ScmProtocol
from pyozone.common.tls import TlsStore
from pyozone.framework.scm_admin import ContainerWithPipeline, ReplicaLocation, ScmAdminClient, ScmInfo
from pyozone.framework.scm_block import ScmBlockClient
from pyozone.framework.scm_errors import ScmClientError
from pyozone.framework.scm_failover import ScmFailoverPolicy, ScmNodes
from pyozone.hdds.block import ExcludeList
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.pipeline import Pipeline
from pyozone.hdds.states import LifeCycleState
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.protocol.block import BlockLocation, KeyBlocks, KeyBlocksResult

SAFE_MODE_PREFIX = "SAFE_MODE_EXCEPTION"


@dataclass(frozen=True, slots=True)
class ContainerLocation:
    """What SCM knows of where a container can be read. `state` None: SCM does not know the container;
    `replication` of an EC container is its EC config (replicas then carry their indexes)."""

    container_id: int
    state: LifeCycleState | None
    replication: ReplicationConfig | None = None
    pipeline: Pipeline | None = None
    members: dict[str, DatanodeDetails] = field(default_factory=dict)
    replicas: tuple[ReplicaLocation, ...] = ()


class ScmGateway(Protocol):
    """The SCM calls the OM makes. Failures are ScmClientError (with the call's status in `.code`)."""

    def scm_info(self) -> ScmInfo: ...

    def allocate_blocks(
        self, size: int, config: ReplicationConfig, num_blocks: int, excluded: ExcludeList, owner: str
    ) -> list[BlockLocation]: ...

    def delete_key_blocks(self, keys: Sequence[KeyBlocks]) -> list[KeyBlocksResult]: ...

    def container_location(self, container_id: int) -> ContainerLocation: ...


def translate(error: ScmClientError, what: str, otherwise: OMResultCode) -> OMException:
    """SCM in safe mode -> SCM_IN_SAFE_MODE; unreachable or no OPEN pipeline yet -> SCM_UNAVAILABLE (the
    client retries); anything else -> `otherwise`."""
    message = str(error)
    if error.code is rpc.StatusCode.FAILED_PRECONDITION and message.startswith(SAFE_MODE_PREFIX):
        return OMException(OMResultCode.SCM_IN_SAFE_MODE, f"{what}: SCM is in safe mode ({message})")
    if error.retryable:
        return OMException(OMResultCode.SCM_UNAVAILABLE, f"{what}: {message}")
    return OMException(otherwise, f"{what}: SCM refused: {message}")


@contextmanager
def scm_call(what: str, otherwise: OMResultCode = OMResultCode.KEY_ALLOCATION_ERROR) -> Iterator[None]:
    try:
        yield
    except ScmClientError as e:
        raise translate(e, what, otherwise) from None


def container_location(answer: ContainerWithPipeline) -> ContainerLocation:
    """Where OM's readers find a container: the replicas on datanodes SCM still knows, and its pipeline."""
    info = answer.info
    pipeline, members = (answer.pipeline.pipeline, answer.pipeline.members) if answer.pipeline else (None, {})
    return ContainerLocation(
        info.container_id, info.state, info.replication_config, pipeline, members, answer.located
    )


class GrpcScm:
    """The real gateway: two synchronous clients, safe to use from several threads (rpc.SyncChannel is),
    each failing over between the SCMs of a service (framework/scm_failover.py: the block protocol at each
    SCM's block client port, the admin protocol at its client port) by `policy` (Ozone's SCMClientConfig).
    `tls`: OM's certificate, when hdds.grpc.tls.enabled."""

    def __init__(
        self,
        scms: ScmAddresses,
        policy: ScmFailoverPolicy,
        timeout_s: float = 30.0,
        tls: TlsStore | None = None,
    ) -> None:
        self._blocks = ScmBlockClient(ScmNodes.of(scms, ScmProtocol.BLOCK, policy), timeout_s, tls)
        self._admin = ScmAdminClient(ScmNodes.of(scms, ScmProtocol.CLIENT, policy), timeout_s, tls)

    def scm_info(self) -> ScmInfo:
        return self._blocks.scm_info()

    def allocate_blocks(
        self, size: int, config: ReplicationConfig, num_blocks: int, excluded: ExcludeList, owner: str
    ) -> list[BlockLocation]:
        return self._blocks.allocate_blocks(size, config, owner, num_blocks, excluded, client="om")

    def delete_key_blocks(self, keys: Sequence[KeyBlocks]) -> list[KeyBlocksResult]:
        return self._blocks.delete_key_blocks(keys)

    def container_location(self, container_id: int) -> ContainerLocation:
        try:
            return container_location(self._admin.container_with_pipeline(container_id))
        except ScmClientError as e:
            if e.not_found:
                return ContainerLocation(container_id, None)
            raise

    def close(self) -> None:
        self._blocks.close()
        self._admin.close()
