"""The datanode protocol service of a live in-process SCM: version, registration, heartbeats, bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyozone import protocol as p
from pyozone import rpc
from pyozone.hdds.messages import Heartbeat
from pyozone.hdds.states import SCMCommandType
from pyozone.proto import ScmServerDatanodeHeartbeatProtocol_pb2 as pb
from tests.unit.scm.server.scm_server_helpers import (
    FakeDatanode,
    async_test,
    channel,
    datanode_details,
    heartbeat_until,
    running_scm,
    scm_conf,
)

VERSION = "/pyozone.hdds.StorageContainerDatanodeProtocolService/getVersion"


@async_test
async def test_version_register_and_heartbeat_round_trip(tmp_path: Path) -> None:
    async with running_scm(scm_conf(tmp_path)) as scm, channel(scm.datanode_port) as ch:
        dn = FakeDatanode(1, ch)
        version = p.version_response_from_proto(await dn.stub.getVersion(pb.SCMVersionRequestProto()))
        assert (version.cluster_id, version.scm_uuid) == (scm.core.cluster_id, scm.storage.scm_uuid)
        assert version.layout == scm.core.nodes.layout

        registered = await dn.register()
        assert registered.success and registered.cluster_id == scm.core.cluster_id
        assert (registered.datanode_uuid, registered.network_location) == (dn.uuid, "/default-rack")
        assert scm.core.nodes.is_registered(dn.uuid)

        # the new node triggers a RATIS/ONE pipeline; its command names the member with its address
        await heartbeat_until([dn], lambda: dn.commands(SCMCommandType.createPipelineCommand), timeout_s=5)
        [create] = dn.commands(SCMCommandType.createPipelineCommand)
        assert create.nodes == (dn.uuid,)
        assert create.datanodes == (scm.core.nodes.node(dn.uuid).details,)
        assert scm.core.nodes.node(dn.uuid).last_heartbeat_wall_ms > 0


@async_test
async def test_a_heartbeat_from_an_unregistered_datanode_is_told_to_reregister(tmp_path: Path) -> None:
    async with running_scm(scm_conf(tmp_path)) as scm, channel(scm.datanode_port) as ch:
        dn = FakeDatanode(7, ch)
        [command] = await dn.heartbeat()
        assert command.type is SCMCommandType.reregisterCommand
        assert not scm.core.nodes.is_registered(dn.uuid)


@async_test
async def test_a_datanode_of_another_cluster_is_refused_with_both_cluster_ids(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with running_scm(scm_conf(tmp_path)) as scm, channel(scm.datanode_port) as ch:
        dn = FakeDatanode(2, ch)
        answer = await dn.register(cluster_id="CID-elsewhere")
        assert not answer.success
        assert "CID-elsewhere" in answer.error and scm.core.cluster_id in answer.error
        assert dn.uuid in answer.error
        assert "CID-elsewhere" in caplog.text
        assert not scm.core.nodes.is_registered(dn.uuid)
        assert (await dn.register(cluster_id=scm.core.cluster_id)).success


@async_test
async def test_malformed_requests_get_invalid_argument_and_the_server_keeps_serving(tmp_path: Path) -> None:
    async with running_scm(scm_conf(tmp_path)) as scm, channel(scm.datanode_port) as ch:
        dn = FakeDatanode(3, ch)
        with pytest.raises(rpc.RpcError) as missing:
            await dn.stub.sendHeartbeat(pb.SCMHeartbeatRequestProto())
        assert missing.value.code() is rpc.StatusCode.INVALID_ARGUMENT
        assert "datanodeDetails: is missing" in (missing.value.details() or "")

        bad_state = p.heartbeat_to_proto(Heartbeat(dn.details))
        bad_state.datanodeDetails.persistedOpState = 42
        with pytest.raises(rpc.RpcError) as unknown:
            await dn.stub.sendHeartbeat(bad_state)
        assert unknown.value.code() is rpc.StatusCode.INVALID_ARGUMENT
        assert "datanodeDetails.persistedOpState" in (unknown.value.details() or "")

        with pytest.raises(rpc.RpcError) as no_details:
            await dn.stub.register(pb.SCMRegisterRequestProto())
        assert no_details.value.code() is rpc.StatusCode.INVALID_ARGUMENT
        assert "extendedDatanodeDetails: is missing" in (no_details.value.details() or "")

        garbage = ch.unary_unary(VERSION)  # bytes in and out: not a protobuf message at all
        with pytest.raises(rpc.RpcError) as undecodable:
            await garbage(b"\xff\xff\xff\xff")
        assert undecodable.value.code() is not rpc.StatusCode.OK

        assert (await dn.register()).success  # still serving
        assert await dn.heartbeat() is not None


@async_test
async def test_an_oversized_request_is_refused_by_the_size_limit(tmp_path: Path) -> None:
    async with running_scm(scm_conf(tmp_path)) as scm:
        big = p.heartbeat_to_proto(Heartbeat(datanode_details(4)))
        big.datanodeDetails.version = "x" * (p.MAX_HEARTBEAT_MESSAGE_BYTES + 1)
        async with channel(scm.datanode_port) as unlimited:  # a client bounds only its answers
            stub = FakeDatanode(4, unlimited).stub
            with pytest.raises(rpc.RpcError) as refused:
                await stub.sendHeartbeat(big)
            assert refused.value.code() is rpc.StatusCode.RESOURCE_EXHAUSTED
            assert (await stub.getVersion(pb.SCMVersionRequestProto())).clusterID == scm.core.cluster_id


@async_test
async def test_racks_come_from_the_topology_mapping_file(tmp_path: Path) -> None:
    mapping = tmp_path / "racks.txt"
    mapping.write_text("dn1.test /rack1\n10.0.0.2 /rack2\n")
    conf = scm_conf(tmp_path / "meta", {"net.topology.node.switch.mapping.file": str(mapping)})
    async with running_scm(conf) as scm, channel(scm.datanode_port) as ch:
        racks = [(await FakeDatanode(i, ch).register()).network_location for i in (1, 2, 3)]
        assert racks == ["/rack1", "/rack2", "/default-rack"]
        assert scm.core.nodes.topology.rack_count() == 3
