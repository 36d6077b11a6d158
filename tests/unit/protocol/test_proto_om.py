"""OM's codec (protocol/om.py): the client's EC configs, what it sends OM (replication_fields) and how it
reads OM's answers into its views (hdds/om_views.py): the ReplicationConfig of each; S3 conditions, S3
secrets as s3SecretTable stores them, the service's requests and answers."""

from __future__ import annotations

import pytest

from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.ids import RATIS_ONE, RATIS_THREE, ReplicationConfig
from pyozone.hdds.om_views import KeyCondition
from pyozone.proto import OmClientProtocol_pb2 as om_pb
from pyozone.proto import hdds_pb2
from pyozone.protocol.common import ec_config_to_proto
from pyozone.protocol.locations import pipeline_ref_from_proto
from pyozone.protocol.om import (
    SERVICE,
    bucket_info_from_proto,
    empty_answer,
    key_condition_from_proto,
    key_condition_to_proto,
    key_info_from_proto,
    part_list_from_proto,
    request_fields,
    upload_info_from_proto,
)
from pyozone.protocol.om_records import decode_s3_secret, encode_s3_secret, replication_fields

RS_3_2 = ReplicationConfig.parse("rs-3-2-1024k")
XOR_2_1 = ReplicationConfig.parse("xor-2-1-1024k")


@pytest.mark.parametrize(
    ("config", "fields"),
    [
        (None, {}),
        (RATIS_ONE, {"type": hdds_pb2.RATIS, "factor": hdds_pb2.ONE}),
        (RS_3_2, {"type": hdds_pb2.EC, "factor": 0, "ecReplicationConfig": ec_config_to_proto(RS_3_2, "ec")}),
        (
            XOR_2_1,
            {"type": hdds_pb2.EC, "factor": 0, "ecReplicationConfig": ec_config_to_proto(XOR_2_1, "ec")},
        ),
    ],
)
def test_the_fields_the_client_sends(config: ReplicationConfig | None, fields: dict) -> None:
    assert replication_fields(config) == fields


def test_an_ec_request_carries_no_factor() -> None:
    rs_6_3 = ReplicationConfig.parse("rs-6-3-1024k")
    request = om_pb.CreateBucketRequest(volume="v", bucket="b", **replication_fields(rs_6_3))
    assert request.factor == 0 and request.ecReplicationConfig.ecChunkSize == 1 << 20
    unset = om_pb.CreateBucketRequest(volume="v", bucket="b", **ec_fields(rs_6_3))
    assert request.SerializeToString() == unset.SerializeToString()  # proto3 sends no zero factor


def ec_fields(config: ReplicationConfig) -> dict:
    return {"type": hdds_pb2.EC, "ecReplicationConfig": ec_config_to_proto(config, "ec")}


def test_bucket_and_key_infos_carry_their_config() -> None:
    bucket = bucket_info_from_proto(om_pb.BucketInfo(volume="v", bucket="b", **ec_fields(RS_3_2)))
    assert (bucket.replication, str(bucket.replication)) == (RS_3_2, "EC/RS-3-2-1024k")
    key = key_info_from_proto(om_pb.KeyInfo(volume="v", bucket="b", key="k", **ec_fields(XOR_2_1)))
    assert (key.replication, key.is_ec) == (XOR_2_1, True)
    ratis = key_info_from_proto(om_pb.KeyInfo(key="k", type=hdds_pb2.RATIS, factor=hdds_pb2.ONE))
    assert (ratis.replication, ratis.is_ec) == (RATIS_ONE, False)


def test_unset_type_and_factor_read_as_ratis_three() -> None:
    assert bucket_info_from_proto(om_pb.BucketInfo(bucket="b")).replication == RATIS_THREE
    assert key_info_from_proto(om_pb.KeyInfo(key="k", type=hdds_pb2.RATIS)).replication == RATIS_THREE


def test_an_ec_answer_without_its_config_is_refused() -> None:
    with pytest.raises(ProtocolError, match="ecReplicationConfig"):
        key_info_from_proto(om_pb.KeyInfo(key="k", type=hdds_pb2.EC))


def test_multipart_answers_carry_their_config() -> None:
    parts = part_list_from_proto(om_pb.ListPartsResponse(**ec_fields(RS_3_2)))
    assert parts.replication == RS_3_2
    upload = upload_info_from_proto(om_pb.MultipartUploadSummary(key="k", **ec_fields(RS_3_2)))
    assert upload.replication == RS_3_2


def pipeline(indexes: list[int], members: int = 5, **fields: object) -> hdds_pb2.Pipeline:
    proto = hdds_pb2.Pipeline(id=hdds_pb2.PipelineID(id="p"), memberReplicaIndexes=indexes, **fields)
    for i in range(members):
        proto.members.add(uuid=f"dn{i}", hostName=f"h{i}", ipAddress="127.0.0.1")
    return proto


def test_an_ec_pipeline_pairs_each_member_with_its_index() -> None:
    ref = pipeline_ref_from_proto(pipeline([5, 1, 2, 3, 3], **ec_fields(RS_3_2)))  # two copies of index 3
    assert ref.ec == RS_3_2 and ref.replica_indexes == (5, 1, 2, 3, 3)
    assert [m.uuid for m in ref.by_index()[3]] == ["dn3", "dn4"]


@pytest.mark.parametrize(
    ("indexes", "field", "problem"),
    [
        ([1, 2, 3, 4], "pipeline.memberReplicaIndexes", "has 4 indexes for 5 members"),  # a member dropped
        ([], "pipeline.memberReplicaIndexes", "has 0 indexes for 5 members"),
        ([1, 2, 3, 4, 5, 1], "pipeline.memberReplicaIndexes", "has 6 indexes for 5 members"),
        ([1, 2, 0, 4, 5], "pipeline.memberReplicaIndexes[2]", "must be at least 1"),
        ([1, 2, 3, 4, 6], "pipeline.memberReplicaIndexes[4]", "must be at most 5"),
    ],
)
def test_an_ec_pipeline_with_bad_replica_indexes_is_refused(
    indexes: list[int], field: str, problem: str
) -> None:
    with pytest.raises(ProtocolError, match=problem) as e:
        pipeline_ref_from_proto(pipeline(indexes, **ec_fields(RS_3_2)))
    assert e.value.field == field


def test_a_key_location_with_a_bad_ec_pipeline_fails_the_key() -> None:
    location = om_pb.KeyLocation(pipeline=pipeline([1, 2, 3], **ec_fields(RS_3_2)))
    with pytest.raises(ProtocolError, match="memberReplicaIndexes: has 3 indexes for 5 members"):
        key_info_from_proto(om_pb.KeyInfo(key="k", locations=[location], **ec_fields(RS_3_2)))


def test_a_replicated_pipeline_takes_its_indexes_as_sent() -> None:
    """Ozone may send zeros there for a replicated pipeline; they mean nothing."""
    ref = pipeline_ref_from_proto(pipeline([0, 0, 0], 3, type=hdds_pb2.RATIS, factor=hdds_pb2.THREE))
    assert ref.ec is None and ref.replica_indexes == (0, 0, 0)


@pytest.mark.parametrize(
    "condition",
    [KeyCondition(must_not_exist=True), KeyCondition(expected_etag="abc"), KeyCondition(expected_etag="*")],
)
def test_a_key_condition_reads_as_the_client_sent_it(condition: KeyCondition) -> None:
    assert key_condition_from_proto(key_condition_to_proto(condition)) == condition


def test_no_condition_is_none_and_an_etag_loses_its_quotes() -> None:
    assert key_condition_to_proto(None) is None
    assert key_condition_from_proto(om_pb.KeyCondition()) is None
    assert key_condition_from_proto(om_pb.KeyCondition(expectedETag=' "abc" ')) == KeyCondition(
        expected_etag="abc"
    )


def test_an_s3_secret_is_stored_as_ozones_message() -> None:
    data = encode_s3_secret("alice", "f" * 64)
    assert om_pb.S3Secret.FromString(data) == om_pb.S3Secret(kerberosID="alice", awsSecret="f" * 64)
    assert decode_s3_secret(data) == ("alice", "f" * 64)


def test_every_rpc_has_its_request_fields_and_an_answer() -> None:
    fields = request_fields()
    assert set(fields) == {m.name for m in SERVICE.methods}
    assert ("volume", 1) in fields["createVolume"] and ("clientID", 4) in fields["commitKey"]
    assert type(empty_answer("deleteKey")) is om_pb.DeleteKeyResponse
