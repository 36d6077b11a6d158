"""`admin snapshot --keys`'s keys table (admin/om_keys.py) read from an in-process OM: every key of every
bucket with its replication config and blocks, paged."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from pyozone.admin.om_keys import snapshot_keys
from pyozone.config import ConfigError, OzoneConfiguration
from pyozone.hdds.ids import ReplicationConfig
from pyozone.proto import OmClientProtocol_pb2 as pb
from pyozone.proto import hdds_pb2
from pyozone.protocol.common import ec_config_to_proto
from tests.unit.om.server.web.om_web import running_om


def test_every_key_with_its_blocks_page_by_page(tmp_path: Path) -> None:
    async def body() -> None:
        async with running_om(tmp_path) as om:
            for volume in ("vol1", "vol2"):
                await om.stub.createVolume(pb.CreateVolumeRequest(volume=volume, owner="hadoop"))
            await om.stub.createBucket(pb.CreateBucketRequest(volume="vol1", bucket="bkta"))
            ec = ec_config_to_proto(ReplicationConfig.parse("rs-3-2-1024k"), "ec")
            await om.stub.createBucket(
                pb.CreateBucketRequest(volume="vol2", bucket="bktb", type=hdds_pb2.EC, ecReplicationConfig=ec)
            )
            for key in ("k1", "k2", "k3"):
                await om.put_key("vol1", "bkta", key, 100)
            await om.put_key("vol2", "bktb", "x", 10)
            conf = OzoneConfiguration({"ozone.om.address": f"127.0.0.1:{om.daemon.rpc_port}"})
            rows = await asyncio.to_thread(lambda: list(snapshot_keys(conf, page=2)))
            assert [(r["volume"], r["bucket"], r["key"]) for r in rows] == [
                ("vol1", "bkta", "k1"), ("vol1", "bkta", "k2"), ("vol1", "bkta", "k3"), ("vol2", "bktb", "x"),
            ]  # fmt: skip
            assert [r["replication_config"] for r in rows] == ["RATIS/THREE"] * 3 + ["EC/RS-3-2-1024k"]
            assert [r["size"] for r in rows] == [100, 100, 100, 10]
            assert all(len(r["blocks"]) == 1 and r["blocks"][0]["container_id"] > 0 for r in rows)
            assert [r["blocks"][0]["length"] for r in rows] == [100, 100, 100, 10]

    asyncio.run(body())


def test_a_bad_client_configuration_is_refused_before_any_row_is_asked_for(tmp_path: Path) -> None:
    """`admin snapshot --keys` streams SCM's tables first: the client's configuration (here a rack mapping
    file that is not there) must fail the call, not the keys table after SCM's part was written."""
    conf = OzoneConfiguration(
        {
            "ozone.om.address": "127.0.0.1:1",
            "net.topology.node.switch.mapping.file": str(tmp_path / "missing.map"),
        }
    )
    with pytest.raises(ConfigError, match=r"net\.topology\.node\.switch\.mapping\.file"):
        snapshot_keys(conf)
