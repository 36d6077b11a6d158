"""OM's administration service (proto/pyozone/OmAdminProtocol.proto, Ozone's OMAdminProtocol): the
messages `pyozone admin om transfer` sends and OM's admin service answers."""

from __future__ import annotations

from google.protobuf.descriptor import ServiceDescriptor

from pyozone.proto import OmAdminProtocol_pb2 as pb

ADMIN_SERVICE: ServiceDescriptor = pb.DESCRIPTOR.services_by_name["OzoneManagerAdminService"]


def transfer_request(node_id: str | None) -> pb.TransferLeadershipRequest:
    """To `node_id`, or (None) to an OM the leader picks (Ozone's -r)."""
    return pb.TransferLeadershipRequest(nodeId=node_id or "", random=node_id is None)


def transfer_answer(new_leader: str) -> pb.TransferLeadershipResponse:
    return pb.TransferLeadershipResponse(newLeaderId=new_leader)
