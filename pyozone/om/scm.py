"""How the OM reaches SCM: a small interface (ScmGateway) the core depends on, its RPC implementation
(GrpcScm: the block protocol for blocks and the cluster id, the admin protocol for container locations),
and the one place SCM's failures become OM result codes.

Unit tests give the core a fake gateway; the fake raises the same BlockClientError the real clients do, so
the translation below is exercised by them too.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Protocol

from pyozone import rpc
from pyozone.common.net import HostPort, scm_client_address
from pyozone.common.tls import TlsStore
from pyozone.config import OzoneConfiguration
from pyozone.hdds.block import ExcludeList
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.limits import MAX_ADMIN_MESSAGE_BYTES
from pyozone.hdds.pipeline import Pipeline
from pyozone.hdds.security.x509 import CertRole
from pyozone.hdds.states import LifeCycleState, ReplicaState
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.proto import ScmAdminProtocol_pb2 as admin_pb
from pyozone.protocol import ProtocolError
from pyozone.protocol.admin import container_info_from_proto, pipeline_from_proto, pipeline_members
from pyozone.protocol.block import BlockLocation, KeyBlocks, KeyBlocksResult
from pyozone.protocol.common import datanode_details_from_proto, is_reference
from pyozone.rpc.rpc_client import RpcClient
from pyozone.scm.client.admin_client import ADMIN_SERVICE, ScmInfo
from pyozone.scm.client.block_client import BlockClientError, ScmBlockClient, scm_block_address

SAFE_MODE_PREFIX = "SAFE_MODE_EXCEPTION"


@dataclass(frozen=True, slots=True)
class ReplicaLocation:
    datanode: DatanodeDetails
    state: ReplicaState
    replica_index: int = 0
    """EC: which index (1..data+parity) the replica holds; 0 for a replicated container."""


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
    """The SCM calls the OM makes. Failures are BlockClientError (with the call's status in `.code`)."""

    def scm_info(self) -> ScmInfo: ...

    def allocate_blocks(
        self, size: int, config: ReplicationConfig, num_blocks: int, excluded: ExcludeList, owner: str
    ) -> list[BlockLocation]: ...

    def delete_key_blocks(self, keys: Sequence[KeyBlocks]) -> list[KeyBlocksResult]: ...

    def container_location(self, container_id: int) -> ContainerLocation: ...


def translate(error: BlockClientError, what: str, otherwise: OMResultCode) -> OMException:
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
    except BlockClientError as e:
        raise translate(e, what, otherwise) from None


class _ScmAdmin(RpcClient):
    """getContainer with the replicas' full details (ScmAdminClient keeps only their uuids)."""

    PEER = CertRole.SCM

    def __init__(self, address: HostPort, timeout_s: float, tls: TlsStore | None) -> None:
        super().__init__(address, ADMIN_SERVICE, MAX_ADMIN_MESSAGE_BYTES, timeout_s, tls)

    def _error(self, e: rpc.RpcError) -> BlockClientError:
        code = e.code()
        details = e.details() or code.name
        if code in (rpc.StatusCode.UNAVAILABLE, rpc.StatusCode.DEADLINE_EXCEEDED):
            details = f"SCM at {self.address}: {details}"
        return BlockClientError(details, code)

    def _malformed(self, e: ProtocolError) -> BlockClientError:
        return BlockClientError(f"SCM at {self.address} sent a malformed answer: {e}")

    def container_location(self, container_id: int) -> ContainerLocation:
        try:
            return self._call(
                self._stub.getContainer,
                admin_pb.GetContainerRequestProto(containerID=container_id),
                container_location_from_proto,
            )
        except BlockClientError as e:
            if e.code is rpc.StatusCode.NOT_FOUND:
                return ContainerLocation(container_id, None)
            raise


def container_location_from_proto(r: admin_pb.GetContainerResponseProto) -> ContainerLocation:
    info = container_info_from_proto(r.containerInfo, "containerInfo")
    replicas = []
    for i, x in enumerate(r.replicas):
        if is_reference(x.datanodeDetails) or x.state not in ReplicaState.__members__:
            continue  # a datanode SCM no longer knows: no address to read from
        details = datanode_details_from_proto(x.datanodeDetails, f"replicas[{i}].datanodeDetails")
        replicas.append(ReplicaLocation(details, ReplicaState[x.state], x.replicaIndex))
    pipeline, members = None, {}
    if r.HasField("pipeline"):
        pipeline = pipeline_from_proto(r.pipeline, "pipeline")
        members = pipeline_members(r.pipeline, "pipeline")
    return ContainerLocation(
        info.container_id, info.state, info.replication_config, pipeline, members, tuple(replicas)
    )


class GrpcScm:
    """The real gateway: two synchronous clients, safe to use from several threads (rpc.SyncChannel is).
    `tls`: OM's certificate, when hdds.grpc.tls.enabled."""

    def __init__(
        self, conf: OzoneConfiguration, timeout_s: float = 30.0, tls: TlsStore | None = None
    ) -> None:
        self.block_address = scm_block_address(conf)
        self.admin_address = scm_client_address(conf)
        self._blocks = ScmBlockClient(self.block_address, timeout_s, tls)
        self._admin = _ScmAdmin(self.admin_address, timeout_s, tls)

    def scm_info(self) -> ScmInfo:
        return self._blocks.scm_info()

    def allocate_blocks(
        self, size: int, config: ReplicationConfig, num_blocks: int, excluded: ExcludeList, owner: str
    ) -> list[BlockLocation]:
        return self._blocks.allocate_blocks(size, config, owner, num_blocks, excluded, client="om")

    def delete_key_blocks(self, keys: Sequence[KeyBlocks]) -> list[KeyBlocksResult]:
        return self._blocks.delete_key_blocks(keys)

    def container_location(self, container_id: int) -> ContainerLocation:
        return self._admin.container_location(container_id)

    def close(self) -> None:
        self._blocks.close()
        self._admin.close()
