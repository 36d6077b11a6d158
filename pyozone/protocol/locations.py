"""Reads where a key's blocks live (pyozone.hdds.locations) from OM's KeyLocation and its pipeline, and
writes what commitKey sends back.
"""

from __future__ import annotations

from pyozone.hdds.locations import DatanodeRef, KeyLocation, PipelineRef
from pyozone.proto import OmClientProtocol_pb2 as om_pb
from pyozone.proto import ScmBlockLocationProtocol_pb2 as block_pb
from pyozone.proto import hdds_pb2
from pyozone.protocol.admin_records import pipeline_replica_indexes
from pyozone.protocol.common import ec_config_from_proto
from pyozone.protocol.tokens import encode_token_proto

DATA_PORT = "STANDALONE"
DATASTREAM_PORT = "RATIS_DATASTREAM"


def datanode_ref_from_proto(proto: hdds_pb2.DatanodeDetailsProto) -> DatanodeRef:
    ports = {p.name: p.value for p in proto.ports}
    return DatanodeRef(
        proto.uuid, proto.hostName, proto.ipAddress, ports.get(DATA_PORT), ports.get(DATASTREAM_PORT),
        proto.networkLocation,
    )  # fmt: skip


def pipeline_ref_from_proto(proto: hdds_pb2.Pipeline) -> PipelineRef:
    """An EC pipeline's memberReplicaIndexes must pair every member with an index of its config (a member
    left without one would go unread, a wrong one read as another index): else ProtocolError."""
    members = tuple(datanode_ref_from_proto(m) for m in proto.members)
    ec = None
    indexes = tuple(proto.memberReplicaIndexes)
    if proto.type == hdds_pb2.EC and proto.HasField("ecReplicationConfig"):
        ec = ec_config_from_proto(proto.ecReplicationConfig, "pipeline.ecReplicationConfig")
        indexes = pipeline_replica_indexes(proto, "pipeline", ec)
    return PipelineRef(proto.id.id, members, proto.leaderID or proto.suggestedLeaderID, indexes, ec)


def key_location_from_proto(proto: om_pb.KeyLocation) -> KeyLocation:
    bid = proto.blockID
    return KeyLocation(
        container_id=bid.containerBlockID.containerID,
        local_id=bid.containerBlockID.localID,
        bcsid=bid.blockCommitSequenceId,
        offset=proto.offset,
        length=proto.length,
        pipeline=pipeline_ref_from_proto(proto.pipeline),
        container_state=proto.containerState,
        token=encode_token_proto(proto.token),
    )


def key_location_to_proto(location: KeyLocation) -> om_pb.KeyLocation:
    """What commitKey needs: the block id with its BCSID, offset and length (not the token)."""
    return om_pb.KeyLocation(
        blockID=block_pb.BlockID(
            containerBlockID=block_pb.ContainerBlockID(
                containerID=location.container_id, localID=location.local_id
            ),
            blockCommitSequenceId=location.bcsid,
        ),
        offset=location.offset,
        length=location.length,
    )
