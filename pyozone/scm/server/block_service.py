"""ScmBlockLocationProtocolService: blocks for writers (allocateScmBlock) and the blocks of deleted keys
(deleteScmKeyBlocks), as a thin adapter over the core's BlockManager. Ozone's SCMBlockProtocolServer.

Runs on the event loop like the other services, so it sees the core between heartbeats. Failures:
INVALID_ARGUMENT for a malformed request; FAILED_PRECONDITION "SAFE_MODE_EXCEPTION: ..." while SCM is in
safe mode (and for the other refusals, e.g. INVALID_BLOCK_SIZE); UNAVAILABLE when no OPEN pipeline can
take the block yet (FAILED_TO_FIND_ACTIVE_PIPELINE: SCM has asked for one, the client retries).
deleteScmKeyBlocks answers per block, as Ozone does: safeMode for every block while in safe mode.

Over mutual TLS only OM (and SCM itself) may call it: a user's certificate could otherwise delete any
block (Ozone's service authorization). A plaintext port is open to whoever reaches it, as in Ozone's
simple authentication.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from pyozone.hdds.exceptions import ResultCode, SCMException
from pyozone.hdds.security.x509 import CertRole
from pyozone.protocol.admin import ScmInfo, scm_info_to_proto
from pyozone.protocol.block import (
    DeleteResult,
    KeyBlocksResult,
    allocate_request_from_proto,
    allocate_response_to_proto,
    delete_request_from_proto,
    delete_response_to_proto,
)
from pyozone.rpc import CallContext, StatusCode
from pyozone.scm.scm import StorageContainerManager
from pyozone.scm.server.resolve import details_resolver
from pyozone.scm.server.rpc import parse, rpc
from pyozone.security.service_access import ServiceAccess

if TYPE_CHECKING:
    from pyozone.proto import ScmAdminProtocol_pb2 as admin_pb
    from pyozone.proto import ScmBlockLocationProtocol_pb2 as pb

log = logging.getLogger(__name__)

Context = CallContext

CALLERS = frozenset({CertRole.OM, CertRole.SCM})
"""Who may call the block protocol over mutual TLS."""


class BlockService:
    def __init__(self, core: StorageContainerManager, scm_uuid: str, tls: bool = False) -> None:
        """`tls`: the port is mutual TLS, so only CALLERS may call."""
        self.core = core
        self.scm_uuid = scm_uuid
        self.access = ServiceAccess("SCM's block protocol", CALLERS, tls)
        self._resolve = details_resolver(core.nodes)

    @rpc
    async def allocateScmBlock(
        self, request: pb.AllocateScmBlockRequestProto, context: Context
    ) -> pb.AllocateScmBlockResponseProto:
        await self.access.require(context)
        wanted = parse(allocate_request_from_proto, request)
        blocks = self.core.blocks
        try:
            allocated = [
                blocks.allocate_block(wanted.size, wanted.replication_config, wanted.owner, wanted.excluded)
                for _ in range(wanted.num_blocks)
            ]
        except SCMException as e:
            if e.code is not ResultCode.FAILED_TO_FIND_ACTIVE_PIPELINE:
                raise
            log.info("allocateScmBlock from %s: %s", context.peer(), e)
            await context.abort(StatusCode.UNAVAILABLE, str(e))
        return allocate_response_to_proto(allocated, self._resolve)

    @rpc
    async def deleteScmKeyBlocks(
        self, request: pb.DeleteScmKeyBlocksRequestProto, context: Context
    ) -> pb.DeleteScmKeyBlocksResponseProto:
        await self.access.require(context)
        keys = parse(delete_request_from_proto, request)
        outcome = DeleteResult.success
        try:
            self.core.blocks.delete_blocks([block for key in keys for block in key.blocks])
        except SCMException as e:
            outcome = (
                DeleteResult.safeMode
                if e.code is ResultCode.SAFE_MODE_EXCEPTION
                else DeleteResult.unknownFailure
            )
            log.warning("deleteScmKeyBlocks of %d keys from %s: %s", len(keys), context.peer(), e)
        return delete_response_to_proto(
            KeyBlocksResult(k.key, tuple((b, outcome) for b in k.blocks)) for k in keys
        )

    @rpc
    async def getScmInfo(
        self, request: admin_pb.GetScmInfoRequestProto, context: Context
    ) -> admin_pb.GetScmInfoResponseProto:
        await self.access.require(context)
        safe_mode = self.core.safe_mode
        return scm_info_to_proto(
            ScmInfo(
                self.core.cluster_id, self.scm_uuid, safe_mode.in_safe_mode(), safe_mode.precheck_passed()
            )
        )
