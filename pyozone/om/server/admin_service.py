"""OzoneManagerAdminService (Ozone's OMAdminProtocol) on OM's RPC port: `transferLeadership` hands the
leadership of an HA service to another OM (`pyozone admin om transfer`); `getOMConfiguration`,
`bootstrap` (Ozone's OMInterServiceProtocol) and `decommission` add and remove an OM
(om/server/membership.py). Administrators only when ACLs are on (bootstrap: the new OM itself, checked by
its certificate's host and OM node with mutual TLS); a follower refuses as every OM call does
(OMNotLeaderException naming the leader)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyozone.om.access import Access
from pyozone.om.server.ha import OmReplication
from pyozone.om.server.rpc import refusals_as_status
from pyozone.protocol.om_admin import ADMIN_SERVICE, bootstrap_answer, decommission_answer, transfer_answer
from pyozone.rpc import CallContext, Server, ServiceSpec, StatusCode
from pyozone.rpc.metadata import peer_identity
from pyozone.security.service_access import peer_node

if TYPE_CHECKING:
    from pyozone.om.server.membership import OmMembership
    from pyozone.proto import OmAdminProtocol_pb2 as pb

LONE_OM = (
    "NOT_SUPPORTED_OPERATION: this OM runs alone (no ozone.om.service.ids): it has no Ratis group to change"
)


class OzoneManagerAdminService:
    def __init__(
        self, access: Access, replication: OmReplication | None, membership: OmMembership | None = None
    ) -> None:
        self.access = access
        self.replication = replication
        self.membership = membership

    async def transferLeadership(
        self, request: pb.TransferLeadershipRequest, context: CallContext
    ) -> pb.TransferLeadershipResponse:
        async with refusals_as_status(context):
            self.access.admin(self.access.caller(context), "transfer OM leadership")
            if self.replication is None:
                await context.abort(
                    StatusCode.FAILED_PRECONDITION,
                    "NOT_SUPPORTED_OPERATION: this OM runs alone (no ozone.om.service.ids): there is no "
                    "leadership to transfer",
                )
            target = None if request.random else request.nodeId
            new_leader = await self.replication.transfer_leadership(target)  # type: ignore[union-attr]
        return transfer_answer(new_leader)

    async def getOMConfiguration(
        self, request: pb.OMConfigurationRequest, context: CallContext
    ) -> pb.OMConfigurationResponse:
        if self.membership is None:
            await context.abort(StatusCode.FAILED_PRECONDITION, LONE_OM)
        return self.membership.configuration()  # type: ignore[union-attr]

    async def bootstrap(self, request: pb.BootstrapOMRequest, context: CallContext) -> pb.BootstrapOMResponse:
        async with refusals_as_status(context):
            if self.membership is None:
                await context.abort(
                    StatusCode.FAILED_PRECONDITION,
                    "RATIS_NOT_ENABLED: New OM node cannot be bootstrapped as Ratis is not enabled on "
                    "existing OM (it runs alone: no ozone.om.service.ids)",
                )
            identity = peer_identity(context)
            if identity is None:  # no certificate to tell the new OM by: an administrator's call, with ACLs
                self.access.admin(self.access.caller(context), "bootstrap an OM")
            index = await self.membership.bootstrap(  # type: ignore[union-attr]
                request, identity, peer_node(context)
            )
        return bootstrap_answer(index)

    async def decommission(
        self, request: pb.DecommissionOMRequest, context: CallContext
    ) -> pb.DecommissionOMResponse:
        async with refusals_as_status(context):
            self.access.admin(self.access.caller(context), "decommission an OM")
            if self.membership is None:
                await context.abort(StatusCode.FAILED_PRECONDITION, LONE_OM)
            index = await self.membership.decommission(request)  # type: ignore[union-attr]
        return decommission_answer(index)


def add_om_admin_service(server: Server, service: OzoneManagerAdminService) -> None:
    server.add_service(ServiceSpec.of(ADMIN_SERVICE), service)
