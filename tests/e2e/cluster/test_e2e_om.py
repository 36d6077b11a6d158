"""The Ozone Manager in a live `pyozone cluster up`: volumes and buckets over raw gRPC, openKey allocating
real blocks that are written to the datanodes and committed, lookupKey sending readers to the pipeline
(OPEN container) or to the replicas nearest first (CLOSED container), a kill -9 and restart of OM that
keeps everything, and a deleted key's blocks reaching SCM's deleted block log."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import pytest

from pyozone import rpc
from pyozone.cluster.status import om_ready
from pyozone.config.site import read_site_xml
from pyozone.hdds.ids import BlockID
from pyozone.proto import OmClientProtocol_pb2 as pb
from pyozone.proto import hdds_pb2
from pyozone.protocol.admin_records import pipeline_from_proto, pipeline_members
from pyozone.protocol.block import BlockLocation
from tests.e2e.cluster.cluster_helpers import (
    LiveCluster,
    all_running,
    live_cluster,
    member_client,
    om_stub,
)
from tests.e2e.cluster.xceiver_client import XceiverError
from tests.polling import wait_for

DATA = os.urandom(200_000)
VOL, BUCKET, KEY = "vol1", "bkt1", "dir/key1"
KEY_ARGS = {"volume": VOL, "bucket": BUCKET, "key": KEY}


@pytest.fixture(scope="module")
def cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveCluster]:
    overrides = {
        "ozone.block.deleting.service.interval": "1s",
        "ozone.scm.close.container.wait.duration": "2s",
        # SCM keeps deleted blocks in its log until its own service hands them to the datanodes: the
        # test reads them there, so that service must not run meanwhile
        "hdds.scm.block.deleting.service.interval": "1h",
    }
    with live_cluster(request, tmp_path_factory, "om", 3, overrides=overrides) as c:
        yield c


def location_of(proto: pb.KeyLocation) -> BlockLocation:
    block = proto.blockID.containerBlockID
    return BlockLocation(
        BlockID(block.containerID, block.localID),
        pipeline_from_proto(proto.pipeline),
        pipeline_members(proto.pipeline),
    )


def write_block(location: BlockLocation, data: bytes) -> None:
    """The block to its pipeline's leader, and to each follower that takes direct writes: a datanode
    running the pipeline log refuses them (NOT_LEADER) and gets the block from the leader instead."""
    leader = location.pipeline.leader or location.pipeline.nodes[0]
    with member_client(location, leader) as client:
        client.write_block(location.block_id, data)
    for dn in location.pipeline.nodes:
        if dn != leader:
            with member_client(location, dn) as client:
                try:
                    client.write_block(location.block_id, data)
                except XceiverError as e:
                    if "NOT_LEADER" not in str(e) and "leader" not in str(e):
                        raise


def read_block(location: BlockLocation, dn: str) -> bytes | None:
    try:
        with member_client(location, dn) as client:
            return client.read_block(location.block_id)
    except XceiverError:
        return None


def standalone_ports(cluster: LiveCluster) -> dict[str, int]:
    """Datanode host name -> its data port, as `cluster up` planned them."""
    return {d.name: d.ports["ipc"] for d in cluster.state.datanodes()}


S3V = "s3v"  # the S3 gateway's volume, made by the gateway `cluster up` starts


def test_cluster_up_starts_om_with_its_ports(cluster: LiveCluster) -> None:
    om = cluster.state.daemon("om")
    site = read_site_xml(cluster.conf_dir / "ozone-site.xml")
    assert site["ozone.om.address"] == f"127.0.0.1:{om.ports['rpc']}"
    assert site["ozone.om.http-address"] == f"127.0.0.1:{om.ports['http']}"
    assert om_ready(om.ports["http"])
    ratis = [d.ports["ratis"] for d in cluster.state.datanodes()]
    assert len(set(ratis)) == 3 and all(f"hdds.container.ratis.ipc.port={p}" in " ".join(
        d.command) for p, d in zip(ratis, cluster.state.datanodes(), strict=True))  # fmt: skip
    all_running(cluster)
    status = cluster.cluster("status")
    assert any(line.split()[:2] == ["om", "running"] for line in status.out.splitlines()), status.out


def test_volumes_and_buckets(cluster: LiveCluster) -> None:
    with om_stub(cluster) as om:
        for volume in (VOL, "vol2"):
            om.createVolume(pb.CreateVolumeRequest(volume=volume))
        om.createBucket(pb.CreateBucketRequest(volume=VOL, bucket=BUCKET))
        om.createBucket(
            pb.CreateBucketRequest(volume=VOL, bucket="bkt2", type=hdds_pb2.RATIS, factor=hdds_pb2.ONE)
        )
        assert [v.volume for v in om.listVolumes(pb.ListVolumesRequest()).volumes] == sorted(
            [VOL, "vol2", S3V]
        )
        buckets = om.listBuckets(pb.ListBucketsRequest(volume=VOL)).buckets
        assert [(b.bucket, b.factor) for b in buckets] == [(BUCKET, hdds_pb2.THREE), ("bkt2", hdds_pb2.ONE)]
        with pytest.raises(rpc.RpcError) as error:
            om.createVolume(pb.CreateVolumeRequest(volume=VOL))
        assert error.value.code() is rpc.StatusCode.ALREADY_EXISTS
        assert (error.value.details() or "").startswith("VOLUME_ALREADY_EXISTS: ")


def test_a_key_is_written_committed_and_looked_up(cluster: LiveCluster) -> None:
    with om_stub(cluster) as om:
        opened = om.openKey(pb.OpenKeyRequest(**KEY_ARGS, dataSize=len(DATA)))
        assert len(opened.keyInfo.locations) == 1
        allocated = opened.keyInfo.locations[0]
        assert len(allocated.pipeline.members) == 3 and allocated.pipeline.leaderID
        location = location_of(allocated)
        write_block(location, DATA)  # real chunks and putBlock on the datanodes
        committed = om.commitKey(
            pb.CommitKeyRequest(
                **KEY_ARGS,
                clientID=opened.clientID,
                dataSize=len(DATA),
                locations=[pb.KeyLocation(blockID=allocated.blockID, offset=0, length=len(DATA))],
            )
        )
        assert committed.keyInfo.dataSize == len(DATA)
        found = om.lookupKey(pb.LookupKeyRequest(**KEY_ARGS, clientHost="dn2")).keyInfo
    (read,) = found.locations
    assert read.containerState == "OPEN" and read.length == len(DATA)
    assert read.pipeline.leaderID == allocated.pipeline.leaderID
    ports = standalone_ports(cluster)
    for member in read.pipeline.members:
        assert {p.name: p.value for p in member.ports}["STANDALONE"] == ports[member.hostName]
    reader = location_of(read)
    with member_client(reader, reader.pipeline.leader) as client:
        assert client.read_block(reader.block_id) == DATA


def test_a_closed_container_is_read_from_its_replicas_nearest_first(cluster: LiveCluster) -> None:
    with om_stub(cluster) as om:
        container = (
            om.lookupKey(pb.LookupKeyRequest(**KEY_ARGS)).keyInfo.locations[0].blockID.containerBlockID
        )
        closed = cluster.admin("container", "close", str(container.containerID))
        assert closed.code == 0, closed

        seen: list[tuple[str, list[str]]] = []

        def closed_lookup() -> pb.KeyLocation | None:
            where = om.lookupKey(pb.LookupKeyRequest(**KEY_ARGS, clientHost="dn3")).keyInfo.locations[0]
            seen.append((where.containerState, [m.hostName for m in where.pipeline.members]))
            return where if where.containerState == "CLOSED" and len(where.pipeline.members) == 3 else None

        try:
            read = wait_for(closed_lookup, 40, "lookupKey answering CLOSED with 3 replicas", interval_s=0.5)
        except AssertionError as e:
            info = cluster.admin("container", "info", str(container.containerID)).out
            raise AssertionError(f"{e}\nlookups: {seen[-3:]}\n{info}\n{cluster.logs(10)}") from None
    assert read.pipeline.type == hdds_pb2.STAND_ALONE
    assert read.pipeline.members[0].hostName == "dn3"
    reader = location_of(read)
    nearest = reader.pipeline.nodes[0]
    wait_for(lambda: read_block(reader, nearest) == DATA, 20, "the block read from the nearest replica")


def test_om_restart_keeps_everything(cluster: LiveCluster) -> None:
    with om_stub(cluster) as om:
        before = om.lookupKey(pb.LookupKeyRequest(**KEY_ARGS)).keyInfo
        bucket = om.infoBucket(pb.InfoBucketRequest(volume=VOL, bucket=BUCKET)).bucket
    assert (bucket.usedBytes, bucket.usedNamespace) == (3 * len(DATA), 1)
    cluster.kill("om")
    cluster.start("om")
    wait_for(lambda: om_ready(cluster.port("om", "http")), 30, "OM ready again")
    with om_stub(cluster) as om:
        after = om.lookupKey(pb.LookupKeyRequest(**KEY_ARGS)).keyInfo
        assert [v.volume for v in om.listVolumes(pb.ListVolumesRequest()).volumes] == sorted(
            [VOL, "vol2", S3V]
        )
        assert [k.key for k in om.listKeys(pb.ListKeysRequest(volume=VOL, bucket=BUCKET)).keys] == [KEY]
        info = om.getServiceInfo(pb.ServiceInfoRequest())
    assert (after.objectID, after.dataSize, after.locations[0].blockID) == (
        before.objectID,
        before.dataSize,
        before.locations[0].blockID,
    )
    assert info.clusterID.startswith("CID-") and not info.scmInSafeMode


def test_deleted_key_blocks_reach_scm(cluster: LiveCluster) -> None:
    with om_stub(cluster) as om:
        block = om.lookupKey(pb.LookupKeyRequest(**KEY_ARGS)).keyInfo.locations[0].blockID.containerBlockID
        om.deleteKey(pb.DeleteKeyRequest(**KEY_ARGS))
        with pytest.raises(rpc.RpcError) as error:
            om.lookupKey(pb.LookupKeyRequest(**KEY_ARGS))
        assert (error.value.details() or "").startswith("KEY_NOT_FOUND: ")

    def in_scm_deleted_blocks() -> bool:
        scan = cluster.pyozone(
            "debug",
            "ldb",
            "--db",
            str(cluster.data_dir / "scm" / "scm.db"),
            "scan",
            "--column-family",
            "deletedBlocks",
        )
        records = [json.loads(line) for line in scan.out.splitlines() if line.startswith("{")]
        return any(block.containerID == r.get("value", r).get("containerID") and block.localID in
                   r.get("value", r).get("localIDs", []) for r in records)  # fmt: skip

    wait_for(in_scm_deleted_blocks, 30, "the key's block in SCM's deleted block log", interval_s=1)
    wait_for(lambda: "1 of 1 entries taken by SCM" in cluster.log("om"), 10, "OM's key deleting service run")
