"""OzoneManagerAdminService (Ozone's OMAdminProtocol) on OM's RPC port: `transferLeadership` hands the
leadership of an HA service to another OM (`pyozone admin om transfer`). Administrators only when ACLs
are on; a follower refuses as every OM call does (OMNotLeaderException naming the leader)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyozone.om.access import Access
from pyozone.om.exceptions import OMException
from pyozone.om.server.ha import AnsweredStatus, OmReplication
from pyozone.protocol.om_admin import ADMIN_SERVICE, transfer_answer
from pyozone.rpc import CallContext, Server, ServiceSpec, StatusCode

if TYPE_CHECKING:
    from pyozone.proto import OmAdminProtocol_pb2 as pb


class OzoneManagerAdminService:
    def __init__(self, access: Access, replication: OmReplication | None) -> None:
        self.access = access
        self.replication = replication

    async def transferLeadership(
        self, request: pb.TransferLeadershipRequest, context: CallContext
    ) -> pb.TransferLeadershipResponse:
        try:
            self.access.admin(self.access.caller(context), "transfer OM leadership")
            if self.replication is None:
                await context.abort(
                    StatusCode.FAILED_PRECONDITION,
                    "NOT_SUPPORTED_OPERATION: this OM runs alone (no ozone.om.service.ids): there is no "
                    "leadership to transfer",
                )
            target = None if request.random else request.nodeId
            new_leader = await self.replication.transfer_leadership(target)  # type: ignore[union-attr]
        except OMException as e:
            await context.abort(StatusCode[e.status_name], str(e))
        except AnsweredStatus as e:
            await context.abort(StatusCode[e.status], e.details)
        return transfer_answer(new_leader)


def add_om_admin_service(server: Server, service: OzoneManagerAdminService) -> None:
    server.add_service(ServiceSpec.of(ADMIN_SERVICE), service)
