"""The admin service of a live in-process SCM, driven by fake datanodes until SCM leaves safe mode."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyozone import protocol as p
from pyozone import rpc
from pyozone.hdds.ids import RATIS_THREE
from pyozone.hdds.states import LifeCycleState, NodeOperationalState, NodeState, PipelineState, SCMCommandType
from pyozone.proto import ScmAdminProtocol_pb2 as pb
from pyozone.proto import hdds_pb2
from tests.unit.scm.server.scm_server_helpers import (
    FakeDatanode,
    admin_stub,
    async_test,
    channel,
    heartbeat_until,
    running_scm,
    scm_conf,
)


async def pipeline_states(admin) -> dict[str, PipelineState]:
    listed = await admin.listPipelines(pb.ListPipelineRequestProto())
    return {pipeline.id: pipeline.state for pipeline in map(p.pipeline_from_proto, listed.pipelines)}


async def rejected(call, request) -> rpc.RpcError:
    with pytest.raises(rpc.RpcError) as error:
        await call(request)
    return error.value


@async_test
async def test_three_datanodes_take_scm_out_of_safe_mode_then_admin_manages_it(tmp_path: Path) -> None:
    conf = scm_conf(tmp_path, {"hdds.scm.safemode.min.datanode": "3"})
    async with (
        running_scm(conf) as scm,
        channel(scm.datanode_port) as dn_channel,
        channel(scm.client_port, p.MAX_ADMIN_MESSAGE_BYTES) as admin_channel,
    ):
        admin = admin_stub(admin_channel)
        datanodes = [FakeDatanode(i, dn_channel) for i in (1, 2, 3)]
        info = await admin.getScmInfo(pb.GetScmInfoRequestProto())
        assert (info.clusterId, info.scmId, info.inSafeMode) == (
            scm.core.cluster_id,
            scm.storage.scm_uuid,
            True,
        )
        for dn in datanodes:
            assert (await dn.register()).success

        async def out_of_safe_mode() -> bool:
            return not (await admin.inSafeMode(pb.InSafeModeRequestProto())).inSafeMode

        await heartbeat_until(datanodes, out_of_safe_mode)
        info = await admin.getScmInfo(pb.GetScmInfoRequestProto())
        assert not info.inSafeMode and info.preCheckComplete
        rules = await admin.getSafeModeRuleStatuses(pb.GetSafeModeRuleStatusesRequestProto())
        statuses = [p.rule_status_from_proto(r) for r in rules.safeModeRuleStatusesProto]
        assert statuses and all(s.validated for s in statuses)
        assert any(s.name == "DataNodeSafeModeRule" and s.pre_check for s in statuses)

        # datanodes
        listed = [p.node_from_proto(n) for n in (await admin.queryNode(pb.NodeQueryRequestProto())).datanodes]
        assert [n.details.hostname for n in listed] == ["dn1.test", "dn2.test", "dn3.test"]
        for node in listed:
            assert (node.health, node.operational_state) == (
                NodeState.HEALTHY,
                NodeOperationalState.IN_SERVICE,
            )
            assert node.pipeline_count >= 2 and node.capacity > node.remaining > 0 and node.used > 0
            assert node.last_heartbeat_wall_ms > 0
        stale = await admin.queryNode(pb.NodeQueryRequestProto(state=hdds_pb2.STALE))
        assert list(stale.datanodes) == []

        # pipelines: one healthy RATIS/THREE is OPEN
        three = scm.core.pipelines.pipelines(RATIS_THREE, PipelineState.OPEN)[0]
        assert (await pipeline_states(admin))[three.id] is PipelineState.OPEN
        listed_three = [
            x
            for x in (await admin.listPipelines(pb.ListPipelineRequestProto())).pipelines
            if x.id.id == three.id
        ]
        assert {m.hostName for m in listed_three[0].members} == {"dn1.test", "dn2.test", "dn3.test"}
        pid = hdds_pb2.PipelineID(id=three.id)
        await admin.deactivatePipeline(pb.DeactivatePipelineRequestProto(pipelineID=pid))
        assert (await pipeline_states(admin))[three.id] is PipelineState.DORMANT
        await admin.activatePipeline(pb.ActivatePipelineRequestProto(pipelineID=pid))
        assert (await pipeline_states(admin))[three.id] is PipelineState.OPEN

        # containers: one allocated on the pipeline, listed, shown, closed
        container = scm.core.containers.allocate_container(scm.core.pipelines.get(three.id), "test")
        page = await admin.listContainer(pb.SCMListContainerRequestProto(count=10))
        assert [c.containerID for c in page.containers] == [container.container_id]
        assert page.containerCount == 1
        closed_only = await admin.listContainer(
            pb.SCMListContainerRequestProto(count=10, state=hdds_pb2.CLOSED)
        )
        assert (list(closed_only.containers), closed_only.containerCount) == ([], 0)
        shown = await admin.getContainer(pb.GetContainerRequestProto(containerID=container.container_id))
        assert p.container_info_from_proto(shown.containerInfo) == container
        assert shown.pipeline.id.id == three.id
        await admin.closeContainer(pb.SCMCloseContainerRequestProto(containerID=container.container_id))
        assert scm.core.containers.get(container.container_id).state is LifeCycleState.CLOSING
        await heartbeat_until(
            datanodes, lambda: all(dn.commands(SCMCommandType.closeContainerCommand) for dn in datanodes)
        )
        again = await rejected(
            admin.closeContainer, pb.SCMCloseContainerRequestProto(containerID=container.container_id)
        )
        assert again.code() is rpc.StatusCode.FAILED_PRECONDITION
        assert (again.details() or "").startswith("INVALID_CONTAINER_STATE: ")

        # closing the pipeline; a closed pipeline cannot be activated
        await admin.closePipeline(pb.ClosePipelineRequestProto(pipelineID=pid))
        assert (await pipeline_states(admin))[three.id] is PipelineState.CLOSED
        refused = await rejected(admin.activatePipeline, pb.ActivatePipelineRequestProto(pipelineID=pid))
        assert refused.code() is rpc.StatusCode.FAILED_PRECONDITION
        assert (refused.details() or "").startswith("PIPELINE_STATE_CHANGE_NOT_ALLOWED: ")


@async_test
async def test_admin_errors_name_the_code_or_the_field(tmp_path: Path) -> None:
    async with running_scm(scm_conf(tmp_path)) as scm, channel(scm.client_port) as ch:
        admin = admin_stub(ch)
        unknown = hdds_pb2.PipelineID(id="00000000-0000-4000-8000-00000000dead")
        missing = await rejected(admin.closePipeline, pb.ClosePipelineRequestProto(pipelineID=unknown))
        assert missing.code() is rpc.StatusCode.NOT_FOUND
        assert (missing.details() or "").startswith("PIPELINE_NOT_FOUND: ")
        no_container = await rejected(admin.getContainer, pb.GetContainerRequestProto(containerID=99))
        assert no_container.code() is rpc.StatusCode.NOT_FOUND
        no_id = await rejected(admin.closeContainer, pb.SCMCloseContainerRequestProto())
        assert no_id.code() is rpc.StatusCode.INVALID_ARGUMENT
        assert "containerID: is missing" in (no_id.details() or "")
        no_pid = await rejected(admin.activatePipeline, pb.ActivatePipelineRequestProto())
        assert "pipelineID: is missing" in (no_pid.details() or "")
        no_count = await rejected(admin.listContainer, pb.SCMListContainerRequestProto())
        assert no_count.code() is rpc.StatusCode.INVALID_ARGUMENT and "count" in (no_count.details() or "")
        ec = await rejected(admin.createPipeline, pb.PipelineRequestProto(replicationType=hdds_pb2.EC))
        assert ec.code() is rpc.StatusCode.INVALID_ARGUMENT
        no_nodes = await rejected(
            admin.createPipeline,
            pb.PipelineRequestProto(replicationType=hdds_pb2.RATIS, replicationFactor=hdds_pb2.THREE),
        )
        assert (no_nodes.details() or "").startswith("SAFE_MODE_EXCEPTION: ")
        forced = await admin.forceExitSafeMode(pb.ForceExitSafeModeRequestProto())
        assert forced.exitedSafeMode and not scm.core.safe_mode.in_safe_mode()
