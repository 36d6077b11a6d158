"""EC configs over OM's gRPC protocol and through the client: ecReplicationConfig on createBucket, openKey,
initiateMultipartUpload and in every answer carrying a config; allowed-configs refusals; EC block groups'
lengths in openKey and allocateBlock."""

from __future__ import annotations

from pathlib import Path

from pyozone import rpc
from pyozone.client import AsyncOzoneClient
from pyozone.hdds.ids import RATIS_ONE, ReplicationConfig
from pyozone.proto import OmClientProtocol_pb2 as pb
from pyozone.proto import hdds_pb2
from pyozone.protocol.common import ec_config_to_proto
from tests.unit.om.test_om_ec_keys import EcScm
from tests.unit.om.test_om_server import failure, run, running

RS_3_2 = ReplicationConfig.parse("rs-3-2-1024k")
RS_6_3 = ReplicationConfig.parse("rs-6-3-1024k")
BLOCK = 1024  # test_om_server's OM: ozone.scm.block.size 1KB


def ec(config: ReplicationConfig) -> dict:
    return {"type": hdds_pb2.EC, "ecReplicationConfig": ec_config_to_proto(config, "ec")}


def test_ec_configs_over_the_protocol(tmp_path: Path) -> None:
    async def body() -> None:
        async with running(tmp_path, EcScm()) as (_, stub):
            await stub.createVolume(pb.CreateVolumeRequest(volume="vol"))
            created = await stub.createBucket(
                pb.CreateBucketRequest(volume="vol", bucket="ecb", **ec(RS_3_2))
            )
            assert created.bucket.type == hdds_pb2.EC and created.bucket.ecReplicationConfig.data == 3
            info = await stub.infoBucket(pb.InfoBucketRequest(volume="vol", bucket="ecb"))
            assert info.bucket.ecReplicationConfig == ec_config_to_proto(RS_3_2, "ec")

            b = {"volume": "vol", "bucket": "ecb"}
            opened = await stub.openKey(pb.OpenKeyRequest(**b, key="k"))  # the bucket's config
            assert opened.keyInfo.type == hdds_pb2.EC and opened.keyInfo.ecReplicationConfig.parity == 2
            assert [x.length for x in opened.keyInfo.locations] == [3 * BLOCK]  # a group: a block per index
            more = await stub.allocateBlock(pb.AllocateBlockRequest(**b, key="k", clientID=opened.clientID))
            assert more.location.length == 3 * BLOCK
            committed = await stub.commitKey(
                pb.CommitKeyRequest(**b, key="k", clientID=opened.clientID, dataSize=0)
            )
            assert committed.keyInfo.ecReplicationConfig.data == 3
            listed = await stub.listKeys(pb.ListKeysRequest(**b))
            assert [k.ecReplicationConfig.data for k in listed.keys] == [3]

            ratis = await stub.openKey(
                pb.OpenKeyRequest(**b, key="r", type=hdds_pb2.RATIS, factor=hdds_pb2.ONE)
            )
            assert ratis.keyInfo.factor == hdds_pb2.ONE and not ratis.keyInfo.HasField("ecReplicationConfig")
            assert [x.length for x in ratis.keyInfo.locations] == [BLOCK]

            upload = await stub.initiateMultipartUpload(
                pb.InitiateMultipartUploadRequest(**b, key="m", **ec(RS_6_3))
            )
            parts = await stub.listParts(pb.ListPartsRequest(**b, key="m", uploadID=upload.uploadID))
            assert (parts.type, parts.ecReplicationConfig.data) == (hdds_pb2.EC, 6)
            uploads = await stub.listMultipartUploads(pb.ListMultipartUploadsRequest(**b))
            assert [u.ecReplicationConfig.data for u in uploads.uploads] == [6]

    run(body())


def test_refusals_over_the_protocol(tmp_path: Path) -> None:
    async def body() -> None:
        async with running(tmp_path, EcScm()) as (_, stub):
            await stub.createVolume(pb.CreateVolumeRequest(volume="vol"))
            xor = ec(ReplicationConfig.parse("rs-4-2-1024k"))
            code, details = await failure(
                stub.createBucket, pb.CreateBucketRequest(volume="vol", bucket="xor1", **xor)
            )
            assert code is rpc.StatusCode.INVALID_ARGUMENT
            assert details.startswith(
                "INVALID_REQUEST: Invalid replication config EC/4-2-1024k. Config must match"
            )
            await stub.createBucket(pb.CreateBucketRequest(volume="vol", bucket="bkt"))
            b = {"volume": "vol", "bucket": "bkt"}
            code, details = await failure(stub.openKey, pb.OpenKeyRequest(**b, key="k", **xor))
            assert code is rpc.StatusCode.INVALID_ARGUMENT and "EC/4-2-1024k" in details
            code, details = await failure(
                stub.openKey, pb.OpenKeyRequest(**b, key="k", type=hdds_pb2.RATIS, factor=hdds_pb2.ONE,
                                                ecReplicationConfig=xor["ecReplicationConfig"])
            )  # fmt: skip
            assert code is rpc.StatusCode.INVALID_ARGUMENT and "ecReplicationConfig" in details
            code, details = await failure(stub.openKey, pb.OpenKeyRequest(**b, key="k", type=hdds_pb2.EC))
            assert code is rpc.StatusCode.INVALID_ARGUMENT and "ecReplicationConfig" in details

    run(body())


def test_the_client_names_ec_configs_and_reads_them_back(tmp_path: Path) -> None:
    async def body() -> None:
        async with (
            running(tmp_path, EcScm()) as (daemon, _),
            AsyncOzoneClient(f"127.0.0.1:{daemon.rpc_port}") as client,
        ):
            await client.create_volume("vol")
            bucket = await client.create_bucket("vol", "ecb", "rs-3-2-1024k")
            assert bucket.replication == RS_3_2
            other = await client.create_bucket("vol", "ec6", "EC/RS-6-3-1024k")
            assert other.replication == RS_6_3
            ratis = await client.create_bucket("vol", "one", "RATIS/ONE")
            assert ratis.replication == RATIS_ONE
            listed = await client.list_buckets("vol")
            assert [b.replication for b in listed] == [RS_6_3, RS_3_2, RATIS_ONE]
            assert daemon.core is not None
            session = daemon.core.keys.open("vol", "one", "k", 0, RS_6_3)
            daemon.core.keys.commit("vol", "one", "k", session.client_id, 0, [])
            key = await client.key_info("vol", "one", "k")
            assert key.replication == RS_6_3

    run(body())
