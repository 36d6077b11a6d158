"""The block protocol (ScmBlockLocationProtocolService) of a live in-process SCM, its converters, its sync
client and the block port a local cluster gives SCM."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from pyozone import rpc
from pyozone.cluster.layout import plan_cluster
from pyozone.common.net import HostPort, scm_block_address
from pyozone.config import OzoneConfiguration
from pyozone.config.site import read_site_xml
from pyozone.framework.scm_block import BLOCK_SERVICE, ScmBlockClient
from pyozone.framework.scm_errors import ScmClientError
from pyozone.hdds.block import ExcludeList
from pyozone.hdds.ids import RATIS_ONE, RATIS_THREE, BlockID, ReplicationConfig
from pyozone.hdds.states import PipelineState, ReplicationType
from pyozone.proto import ScmAdminProtocol_pb2 as admin_pb
from pyozone.proto import ScmBlockLocationProtocol_pb2 as pb
from pyozone.proto import hdds_pb2
from pyozone.protocol import ProtocolError
from pyozone.protocol.block import (
    MAX_BLOCK_MESSAGE_BYTES,
    AllocateRequest,
    DeleteResult,
    KeyBlocks,
    KeyBlocksResult,
    allocate_request_from_proto,
    allocate_request_to_proto,
    key_blocks_from_proto,
    key_blocks_result_from_proto,
    key_blocks_result_to_proto,
    key_blocks_to_proto,
)
from tests.unit.scm.server.scm_server_helpers import (
    FakeDatanode,
    async_test,
    channel,
    heartbeat_until,
    running_scm,
    scm_conf,
)


def block_stub(ch: rpc.Channel) -> Any:
    return rpc.Stub(ch, BLOCK_SERVICE)


def allocate(
    size: int = 1 << 20, count: int = 1, factor: int = hdds_pb2.THREE, **extra
) -> pb.AllocateScmBlockRequestProto:
    return pb.AllocateScmBlockRequestProto(
        size=size, numBlocks=count, type=hdds_pb2.RATIS, factor=factor, owner="om1", **extra
    )


async def rejected(call, request) -> rpc.RpcError:
    with pytest.raises(rpc.RpcError) as error:
        await call(request)
    return error.value


async def out_of_safe_mode(scm, datanodes: list[FakeDatanode]) -> None:
    for dn in datanodes:
        assert (await dn.register()).success
    await heartbeat_until(
        datanodes,
        lambda: (
            not scm.core.safe_mode.in_safe_mode()
            and scm.core.pipelines.pipelines(RATIS_THREE, PipelineState.OPEN)
        ),
    )


# ------------------------------------------------------------------ converters
def test_requests_and_results_round_trip() -> None:
    request = AllocateRequest(
        4096,
        3,
        RATIS_THREE,
        "om1",
        ExcludeList(frozenset({"dn-a"}), frozenset({"p-1"}), frozenset({7, 9})),
        "client-1",
    )
    assert allocate_request_from_proto(allocate_request_to_proto(request)) == request
    keys = KeyBlocks("/vol/bucket/key", (BlockID(1, 10), BlockID(2, 11)))
    assert key_blocks_from_proto(key_blocks_to_proto(keys)) == keys
    result = KeyBlocksResult(
        keys.key, ((BlockID(1, 10), DeleteResult.success), (BlockID(2, 11), DeleteResult.safeMode))
    )
    back = key_blocks_result_from_proto(key_blocks_result_to_proto(result))
    assert back == result and not back.ok


@pytest.mark.parametrize(
    ("proto", "field"),
    [
        (pb.AllocateScmBlockRequestProto(numBlocks=1, type=hdds_pb2.RATIS, factor=hdds_pb2.ONE), "size"),
        (pb.AllocateScmBlockRequestProto(size=1, type=hdds_pb2.RATIS, factor=hdds_pb2.ONE), "numBlocks"),
        (pb.AllocateScmBlockRequestProto(size=1, numBlocks=1001, type=hdds_pb2.RATIS, factor=1), "numBlocks"),
        (pb.AllocateScmBlockRequestProto(size=1, numBlocks=1, factor=hdds_pb2.ONE), "type"),
        (pb.AllocateScmBlockRequestProto(size=1, numBlocks=1, type=hdds_pb2.RATIS), "factor"),
        (
            pb.AllocateScmBlockRequestProto(
                size=1,
                numBlocks=1,
                type=hdds_pb2.RATIS,
                factor=1,
                excludeList=pb.ExcludeListProto(containerIds=[0]),
            ),
            "excludeList.containerIds[0]",
        ),
    ],
)
def test_malformed_allocate_requests_name_the_field(
    proto: pb.AllocateScmBlockRequestProto, field: str
) -> None:
    with pytest.raises(ProtocolError) as error:
        allocate_request_from_proto(proto)
    assert error.value.field == field


def test_block_address_from_configuration() -> None:
    conf = OzoneConfiguration({"ozone.scm.block.client.address": "10.1.1.1:1234"})
    assert scm_block_address(conf) == HostPort("10.1.1.1", 1234)
    assert scm_block_address(OzoneConfiguration({"ozone.scm.names": "scm1,scm2"})) == HostPort("scm1", 9863)


def test_a_local_cluster_gives_scm_a_block_port(tmp_path: Path) -> None:
    state = plan_cluster(tmp_path, 3, 1, {})
    scm = state.daemon("scm")
    port = scm.ports["block"]
    assert port not in {v for k, v in scm.ports.items() if k != "block"}
    site = read_site_xml(Path(state.conf_dir) / "ozone-site.xml")
    assert site["ozone.scm.block.client.address"] == f"127.0.0.1:{port}"


# ------------------------------------------------------------------ the live service
@async_test
async def test_safe_mode_refuses_allocation_and_answers_deletes_per_block(tmp_path: Path) -> None:
    async with running_scm(scm_conf(tmp_path)) as scm, channel(scm.block_port, MAX_BLOCK_MESSAGE_BYTES) as ch:
        stub = block_stub(ch)
        info = await stub.getScmInfo(admin_pb.GetScmInfoRequestProto())
        assert (info.clusterId, info.scmId, info.inSafeMode) == (
            scm.core.cluster_id,
            scm.storage.scm_uuid,
            True,
        )
        error = await rejected(stub.allocateScmBlock, allocate())
        assert error.code() is rpc.StatusCode.FAILED_PRECONDITION
        assert (error.details() or "").startswith("SAFE_MODE_EXCEPTION: ")
        keys = [KeyBlocks("k1", (BlockID(1, 5), BlockID(1, 6))), KeyBlocks("k2", (BlockID(2, 7),))]
        answer = await stub.deleteScmKeyBlocks(
            pb.DeleteScmKeyBlocksRequestProto(keyBlocks=[key_blocks_to_proto(k) for k in keys])
        )
        results = [key_blocks_result_from_proto(r) for r in answer.results]
        assert [r.key for r in results] == ["k1", "k2"]
        assert [[b for b, _ in r.results] for r in results] == [
            [BlockID(1, 5), BlockID(1, 6)],
            [BlockID(2, 7)],
        ]
        assert {outcome for r in results for _, outcome in r.results} == {DeleteResult.safeMode}


@async_test
async def test_malformed_requests_are_invalid_argument(tmp_path: Path) -> None:
    async with running_scm(scm_conf(tmp_path)) as scm, channel(scm.block_port) as ch:
        stub = block_stub(ch)
        no_size = await rejected(stub.allocateScmBlock, allocate(size=0))
        assert no_size.code() is rpc.StatusCode.INVALID_ARGUMENT and "size: is missing" in (
            no_size.details() or ""
        )
        no_factor = await rejected(stub.allocateScmBlock, allocate(factor=0))
        assert no_factor.code() is rpc.StatusCode.INVALID_ARGUMENT
        bad_block = pb.DeleteScmKeyBlocksRequestProto(
            keyBlocks=[pb.KeyBlocks(key="k", blocks=[pb.BlockID()])]
        )
        error = await rejected(stub.deleteScmKeyBlocks, bad_block)
        assert error.code() is rpc.StatusCode.INVALID_ARGUMENT
        assert "keyBlocks[0].blocks[0].containerBlockID: is missing" in (error.details() or "")
        no_key = pb.DeleteScmKeyBlocksRequestProto(keyBlocks=[pb.KeyBlocks()])
        assert (await rejected(stub.deleteScmKeyBlocks, no_key)).code() is rpc.StatusCode.INVALID_ARGUMENT
        # the service goes on
        assert (await stub.getScmInfo(admin_pb.GetScmInfoRequestProto())).clusterId == scm.core.cluster_id


@async_test
async def test_allocation_names_the_pipeline_members_in_full(tmp_path: Path) -> None:
    conf = scm_conf(tmp_path, {"hdds.scm.safemode.min.datanode": "3"})
    async with running_scm(conf) as scm, channel(scm.datanode_port) as dn_ch, channel(scm.block_port) as ch:
        datanodes = [FakeDatanode(i, dn_ch) for i in (1, 2, 3)]
        await out_of_safe_mode(scm, datanodes)
        answer = await block_stub(ch).allocateScmBlock(allocate(size=4096, count=3))
        assert len(answer.blocks) == 3
        local_ids = {b.containerBlockID.localID for b in answer.blocks}
        assert len(local_ids) == 3
        for block in answer.blocks:
            container = scm.core.containers.get(block.containerBlockID.containerID)
            assert block.pipeline.id.id == container.pipeline_id
            assert block.pipeline.state == hdds_pb2.PIPELINE_OPEN and block.pipeline.factor == hdds_pb2.THREE
            assert {m.hostName for m in block.pipeline.members} == {"dn1.test", "dn2.test", "dn3.test"}
            for member in block.pipeline.members:
                ports = {p.name: p.value for p in member.ports}
                assert ports["STANDALONE"] == 9860 + int(member.hostName[2]) and member.ipAddress
            assert block.pipeline.leaderID in {m.uuid for m in block.pipeline.members}
        # the datanodes' next report keeps the container; deleting a key's blocks after safe mode
        keys = [
            KeyBlocks(
                "k",
                tuple(
                    BlockID(b.containerBlockID.containerID, b.containerBlockID.localID) for b in answer.blocks
                ),
            )
        ]
        deleted = await block_stub(ch).deleteScmKeyBlocks(
            pb.DeleteScmKeyBlocksRequestProto(keyBlocks=[key_blocks_to_proto(k) for k in keys])
        )
        (result,) = [key_blocks_result_from_proto(r) for r in deleted.results]
        assert result.ok and len(result.results) == 3
        assert scm.core.deleted_blocks.get(1) is not None


@async_test
async def test_excluded_datanodes_are_avoided(tmp_path: Path) -> None:
    conf = scm_conf(tmp_path, {"hdds.scm.safemode.min.datanode": "3"})
    async with running_scm(conf) as scm, channel(scm.datanode_port) as dn_ch, channel(scm.block_port) as ch:
        datanodes = [FakeDatanode(i, dn_ch) for i in (1, 2, 3)]
        await out_of_safe_mode(scm, datanodes)
        await heartbeat_until(
            datanodes, lambda: len(scm.core.pipelines.pipelines(RATIS_ONE, PipelineState.OPEN)) == 3
        )
        excluded = pb.ExcludeListProto(datanodes=[datanodes[0].uuid, datanodes[1].uuid])
        for _ in range(5):
            answer = await block_stub(ch).allocateScmBlock(
                allocate(factor=hdds_pb2.ONE, excludeList=excluded)
            )
            assert [m.uuid for m in answer.blocks[0].pipeline.members] == [datanodes[2].uuid]


@async_test
async def test_no_open_pipeline_is_unavailable_until_the_datanodes_report_one(tmp_path: Path) -> None:
    conf = scm_conf(tmp_path, {"hdds.scm.safemode.min.datanode": "3"})
    async with running_scm(conf) as scm, channel(scm.datanode_port) as dn_ch, channel(scm.block_port) as ch:
        datanodes = [FakeDatanode(i, dn_ch) for i in (1, 2, 3)]
        await out_of_safe_mode(scm, datanodes)
        for pipeline in scm.core.pipelines.pipelines(RATIS_THREE):
            scm.core.pipelines.close_pipeline(pipeline.id)
        error = await rejected(block_stub(ch).allocateScmBlock, allocate())
        assert error.code() is rpc.StatusCode.UNAVAILABLE
        assert (error.details() or "").startswith("FAILED_TO_FIND_ACTIVE_PIPELINE: ")

        async def allocated() -> bool:
            try:
                await block_stub(ch).allocateScmBlock(allocate())
            except rpc.RpcError as e:
                assert e.code() is rpc.StatusCode.UNAVAILABLE
                return False
            return True

        await heartbeat_until(datanodes, allocated, timeout_s=10)


@async_test
async def test_the_sync_client(tmp_path: Path) -> None:
    conf = scm_conf(tmp_path, {"hdds.scm.safemode.min.datanode": "3"})
    async with running_scm(conf) as scm, channel(scm.datanode_port) as dn_ch:
        client = ScmBlockClient(HostPort("127.0.0.1", scm.block_port), timeout_s=5)
        with pytest.raises(ScmClientError) as error:
            await asyncio.to_thread(client.allocate_block, 4096, RATIS_THREE, "om1")
        assert str(error.value).startswith("SAFE_MODE_EXCEPTION") and not error.value.retryable
        datanodes = [FakeDatanode(i, dn_ch) for i in (1, 2, 3)]
        await out_of_safe_mode(scm, datanodes)
        info = await asyncio.to_thread(client.scm_info)
        assert info.cluster_id == scm.core.cluster_id and not info.in_safe_mode
        location = await asyncio.to_thread(client.allocate_block, 4096, RATIS_THREE, "om1")
        assert location.pipeline.replication_config == RATIS_THREE
        assert set(location.members) == set(location.pipeline.nodes)
        assert {d.hostname for d in location.members.values()} == {"dn1.test", "dn2.test", "dn3.test"}
        assert scm.core.containers.get(location.block_id.container_id).pipeline_id == location.pipeline.id
        results = await asyncio.to_thread(client.delete_key_blocks, [KeyBlocks("k", (location.block_id,))])
        assert [r.ok for r in results] == [True]
        with pytest.raises(ScmClientError) as bad:
            await asyncio.to_thread(client.allocate_block, 4096, ReplicationConfig(ReplicationType.RATIS, 2))
        assert "invalid request" in str(bad.value)
        await asyncio.to_thread(client.close)
    gone = ScmBlockClient(HostPort("127.0.0.1", scm.block_port), timeout_s=1)
    with pytest.raises(ScmClientError) as unreachable:
        await asyncio.to_thread(gone.scm_info)
    assert unreachable.value.retryable
    gone.close()
