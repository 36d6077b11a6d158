"""OM's administration service (proto/pyozone/OmAdminProtocol.proto, Ozone's OMAdminProtocol): the
messages `pyozone admin om transfer`, `decommission` and `pyozone om --bootstrap` send and OM's admin
service answers."""

from __future__ import annotations

from google.protobuf.descriptor import ServiceDescriptor

from pyozone.proto import OmAdminProtocol_pb2 as pb

ADMIN_SERVICE: ServiceDescriptor = pb.DESCRIPTOR.services_by_name["OzoneManagerAdminService"]


def transfer_request(node_id: str | None) -> pb.TransferLeadershipRequest:
    """To `node_id`, or (None) to an OM the leader picks (Ozone's -r)."""
    return pb.TransferLeadershipRequest(nodeId=node_id or "", random=node_id is None)


def transfer_answer(new_leader: str) -> pb.TransferLeadershipResponse:
    return pb.TransferLeadershipResponse(newLeaderId=new_leader)


def node_info(node_id: str, host: str, rpc_port: int, ratis_port: int, decommissioned: bool) -> pb.OMNodeInfo:
    return pb.OMNodeInfo(
        nodeID=node_id,
        hostAddress=host,
        rpcPort=rpc_port,
        ratisPort=ratis_port,
        decommissioned=decommissioned,
    )


def configuration_request() -> pb.OMConfigurationRequest:
    return pb.OMConfigurationRequest()


def configuration_answer(
    node_id: str, in_memory: list[pb.OMNodeInfo], in_conf: list[pb.OMNodeInfo], log_known: bool
) -> pb.OMConfigurationResponse:
    """Ozone's OMConfiguration: the Raft group's members in force (`in_memory`) and the OMs the answering
    OM's configuration names (`in_conf`); `log_known`: its Raft log holds its members."""
    return pb.OMConfigurationResponse(
        nodeId=node_id, nodesInMemory=in_memory, nodesInNewConf=in_conf, logKnown=log_known
    )


def bootstrap_request(node_id: str, ratis_host: str, ratis_port: int) -> pb.BootstrapOMRequest:
    return pb.BootstrapOMRequest(nodeId=node_id, hostAddress=ratis_host, ratisPort=ratis_port)


def bootstrap_answer(index: int) -> pb.BootstrapOMResponse:
    return pb.BootstrapOMResponse(configurationIndex=index)


def decommission_request(node_id: str, host: str) -> pb.DecommissionOMRequest:
    return pb.DecommissionOMRequest(nodeId=node_id, nodeAddress=host)


def decommission_answer(index: int) -> pb.DecommissionOMResponse:
    return pb.DecommissionOMResponse(configurationIndex=index)
