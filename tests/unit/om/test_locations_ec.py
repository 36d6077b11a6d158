"""Where lookupKey sends readers of an EC block group: the open container's EC pipeline with its members'
replica indexes, else the replicas SCM knows with theirs (readable first, nearest first per index, UNHEALTHY
last), and the EC config either way."""

from __future__ import annotations

from pyozone.framework.scm_admin import ReplicaLocation
from pyozone.hdds.container import ContainerInfo
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.pipeline import Pipeline
from pyozone.hdds.states import LifeCycleState, PipelineState, ReplicaState
from pyozone.om.locations import read_pipeline
from pyozone.om.scm import ContainerLocation, container_location
from pyozone.proto import ScmAdminProtocol_pb2 as admin_pb
from pyozone.proto import hdds_pb2
from pyozone.protocol.admin import container_with_pipeline_from_proto
from pyozone.protocol.admin_records import container_info_to_proto
from pyozone.protocol.common import datanode_details_to_proto
from tests.builders import dn_id
from tests.unit.om.om_fakes import details

RS_3_2 = ReplicationConfig.parse("rs-3-2-1024k")
EC_PIPELINE = Pipeline(
    "22222222-2222-4222-8222-222222222222",
    RS_3_2,
    PipelineState.OPEN,
    tuple(dn_id(i) for i in (1, 2, 3, 4, 5)),
    0,
    0,
)


def hosts(pipeline: hdds_pb2.Pipeline) -> list[str]:
    return [m.hostName for m in pipeline.members]


def test_an_open_ec_container_is_read_through_its_pipeline_with_indexes() -> None:
    members = {dn_id(i): details(i) for i in (1, 2, 3, 4, 5)}
    location = ContainerLocation(3, LifeCycleState.OPEN, RS_3_2, EC_PIPELINE, members, ())
    pipeline = read_pipeline(location, "dn4")
    assert pipeline is not None
    assert hosts(pipeline) == ["dn1", "dn2", "dn3", "dn4", "dn5"]
    assert list(pipeline.memberReplicaIndexes) == [1, 2, 3, 4, 5]
    assert pipeline.type == hdds_pb2.EC
    assert (pipeline.ecReplicationConfig.data, pipeline.ecReplicationConfig.parity) == (3, 2)
    assert pipeline.ecReplicationConfig.codec.lower() == "rs"


def test_a_closed_ec_container_lists_replicas_with_their_indexes_nearest_first_per_index() -> None:
    replicas = (
        ReplicaLocation(details(1), ReplicaState.CLOSED, 1),
        ReplicaLocation(details(2), ReplicaState.UNHEALTHY, 2),
        ReplicaLocation(details(3), ReplicaState.CLOSED, 3),
        ReplicaLocation(details(4), ReplicaState.CLOSED, 2),  # index 2 copied here (decommission)
        ReplicaLocation(details(5), ReplicaState.CLOSED, 5),
        ReplicaLocation(details(6), ReplicaState.CLOSED, 1),
        ReplicaLocation(details(7), ReplicaState.DELETED, 4),
        ReplicaLocation(details(8), ReplicaState.CLOSED, 0),  # no index: cannot be placed in the group
    )
    location = ContainerLocation(3, LifeCycleState.CLOSED, RS_3_2, None, {}, replicas)
    pipeline = read_pipeline(location, "dn6")
    assert pipeline is not None
    pairs = list(zip(hosts(pipeline), pipeline.memberReplicaIndexes, strict=True))
    assert pairs == [("dn6", 1), ("dn1", 1), ("dn3", 3), ("dn4", 2), ("dn5", 5), ("dn2", 2)]
    assert pipeline.type == hdds_pb2.EC and pipeline.state == hdds_pb2.PIPELINE_CLOSED
    assert pipeline.ecReplicationConfig.data == 3 and pipeline.ecReplicationConfig.ecChunkSize == 1 << 20


def test_scm_answers_carry_replica_indexes_and_the_ec_config() -> None:
    info = ContainerInfo(3, LifeCycleState.CLOSED, 0, None, RS_3_2, "om")
    answer = admin_pb.GetContainerResponseProto(containerInfo=container_info_to_proto(info))
    for i, index in ((1, 1), (2, 4)):
        answer.replicas.append(
            admin_pb.SCMContainerReplicaProto(
                containerID=3,
                state="CLOSED",
                datanodeDetails=datanode_details_to_proto(details(i), "details"),
                replicaIndex=index,
            )
        )
    location = container_location(container_with_pipeline_from_proto(answer))
    assert location.replication == RS_3_2
    assert [(r.datanode.hostname, r.replica_index) for r in location.replicas] == [("dn1", 1), ("dn2", 4)]
