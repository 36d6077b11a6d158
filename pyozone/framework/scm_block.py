"""ScmBlockClient: a synchronous client of ScmBlockLocationProtocolService (allocate and delete blocks;
Ozone's ScmBlockLocationProtocolClientSideTranslatorPB).

Failures are ScmClientError (scm_errors.py): `retryable` for UNAVAILABLE and DEADLINE_EXCEEDED (SCM
unreachable, or no OPEN pipeline yet: SCM is creating one), `code` the call's status for callers that care.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from pyozone import rpc
from pyozone.common.net import HostPort
from pyozone.common.tls import TlsStore
from pyozone.framework.scm_admin import ScmClient
from pyozone.framework.scm_errors import ScmClientError
from pyozone.framework.scm_failover import ScmNodes
from pyozone.hdds.block import ExcludeList
from pyozone.hdds.ids import ReplicationConfig
from pyozone.protocol import ProtocolError
from pyozone.protocol import block as wire
from pyozone.protocol.block import (
    MAX_BLOCK_MESSAGE_BYTES,
    AllocateRequest,
    BlockLocation,
    KeyBlocks,
    KeyBlocksResult,
    allocate_request_to_proto,
    allocate_response_from_proto,
    delete_request_to_proto,
    delete_response_from_proto,
)

T = TypeVar("T")

BLOCK_SERVICE = rpc.ServiceSpec.of(wire.BLOCK_SERVICE)


def _checked(build: Callable[[], T]) -> T:
    """The request `build` makes; one the protocol's rules refuse is the caller's error, sent to no one."""
    try:
        return build()
    except ProtocolError as e:
        raise ScmClientError(f"invalid request: {e}") from None


class ScmBlockClient(ScmClient):
    def __init__(
        self, nodes: ScmNodes | HostPort, timeout_s: float = 30.0, tls: TlsStore | None = None
    ) -> None:
        super().__init__(nodes, BLOCK_SERVICE, MAX_BLOCK_MESSAGE_BYTES, timeout_s, tls)

    def allocate_blocks(
        self,
        size: int,
        replication_config: ReplicationConfig,
        owner: str = "",
        num_blocks: int = 1,
        excluded: ExcludeList | None = None,
        client: str = "",
    ) -> list[BlockLocation]:
        request = _checked(
            lambda: allocate_request_to_proto(
                AllocateRequest(
                    size, num_blocks, replication_config, owner, excluded or ExcludeList(), client
                )
            )
        )
        return self._call(self._stub.allocateScmBlock, request, allocate_response_from_proto)

    def allocate_block(
        self,
        size: int,
        replication_config: ReplicationConfig,
        owner: str = "",
        excluded: ExcludeList | None = None,
    ) -> BlockLocation:
        blocks = self.allocate_blocks(size, replication_config, owner, 1, excluded)
        if len(blocks) != 1:
            raise ScmClientError(f"SCM at {self.address} answered {len(blocks)} blocks for 1")
        return blocks[0]

    def delete_key_blocks(self, keys: Sequence[KeyBlocks]) -> list[KeyBlocksResult]:
        request = _checked(lambda: delete_request_to_proto(keys))
        return self._call(self._stub.deleteScmKeyBlocks, request, delete_response_from_proto)
