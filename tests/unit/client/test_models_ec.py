"""The client's EC configs: what it sends OM (client/om.py replication_fields) and how it reads OM's answers
(client/models.py): readable names ("EC/RS-3-2-1024k") and the ReplicationConfig behind them."""

from __future__ import annotations

import pytest

from pyozone.client.models import (
    BucketInfo,
    KeyInfo,
    MultipartPartList,
    MultipartUploadInfo,
    replication_name,
)
from pyozone.client.om import replication_fields
from pyozone.hdds.ids import RATIS_ONE, RATIS_THREE, ReplicationConfig
from pyozone.proto import OmClientProtocol_pb2 as om_pb
from pyozone.proto import hdds_pb2
from pyozone.protocol.common import ec_config_to_proto

RS_3_2 = ReplicationConfig.parse("rs-3-2-1024k")
XOR_2_1 = ReplicationConfig.parse("xor-2-1-1024k")


@pytest.mark.parametrize(
    ("text", "fields"),
    [
        (None, {}),
        ("RATIS/ONE", {"type": hdds_pb2.RATIS, "factor": hdds_pb2.ONE}),
        ("rs-3-2-1024k", {"type": hdds_pb2.EC, "ecReplicationConfig": ec_config_to_proto(RS_3_2, "ec")}),
        ("EC/XOR-2-1-1024k", {"type": hdds_pb2.EC, "ecReplicationConfig": ec_config_to_proto(XOR_2_1, "ec")}),
    ],
)
def test_the_fields_the_client_sends(text: str | None, fields: dict) -> None:
    assert replication_fields(text) == fields


def test_an_ec_request_carries_no_factor() -> None:
    request = om_pb.CreateBucketRequest(volume="v", bucket="b", **replication_fields("rs-6-3-1024k"))
    assert request.factor == 0 and request.ecReplicationConfig.ecChunkSize == 1 << 20


def test_a_bad_name_fails_before_any_call() -> None:
    with pytest.raises(ValueError, match="XOR has exactly one parity"):
        replication_fields("xor-3-2-1024k")


def ec_fields(config: ReplicationConfig) -> dict:
    return {"type": hdds_pb2.EC, "ecReplicationConfig": ec_config_to_proto(config, "ec")}


def test_replication_names() -> None:
    assert replication_name(hdds_pb2.RATIS, hdds_pb2.ONE) == "RATIS/ONE"
    assert replication_name(0, 0) == "RATIS/THREE"
    assert replication_name(hdds_pb2.EC, 0, ec_config_to_proto(RS_3_2, "ec")) == "EC/RS-3-2-1024k"


def test_bucket_and_key_infos_expose_their_config() -> None:
    bucket = BucketInfo.from_proto(om_pb.BucketInfo(volume="v", bucket="b", **ec_fields(RS_3_2)))
    assert (bucket.replication, bucket.replication_config) == ("EC/RS-3-2-1024k", RS_3_2)
    key = KeyInfo.from_proto(om_pb.KeyInfo(volume="v", bucket="b", key="k", **ec_fields(XOR_2_1)))
    assert (key.replication, key.replication_config) == ("EC/XOR-2-1-1024k", XOR_2_1)
    ratis = KeyInfo.from_proto(om_pb.KeyInfo(key="k", type=hdds_pb2.RATIS, factor=hdds_pb2.ONE))
    assert (ratis.replication, ratis.replication_config) == ("RATIS/ONE", RATIS_ONE)
    assert BucketInfo.from_proto(om_pb.BucketInfo(bucket="b")).replication_config == RATIS_THREE


def test_multipart_answers_name_their_config() -> None:
    parts = MultipartPartList.from_proto(om_pb.ListPartsResponse(**ec_fields(RS_3_2)))
    assert parts.replication == "EC/RS-3-2-1024k"
    upload = MultipartUploadInfo.from_proto(om_pb.MultipartUploadSummary(key="k", **ec_fields(RS_3_2)))
    assert upload.replication == "EC/RS-3-2-1024k"
