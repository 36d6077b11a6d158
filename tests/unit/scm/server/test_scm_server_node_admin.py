"""Decommission, maintenance and recommission through the admin service: per-host results and errors."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import pytest

from pyozone import rpc
from pyozone.hdds.states import NodeOperationalState as Op
from pyozone.proto import ScmAdminProtocol_pb2 as pb
from pyozone.scm.server import ScmDaemon
from tests.unit.scm.server.scm_server_helpers import (
    RATIS_PORT,
    FakeDatanode,
    admin_stub,
    async_test,
    channel,
    running_scm,
    scm_conf,
)


def op_state(scm: ScmDaemon, dn: FakeDatanode) -> tuple[Op, int]:
    status = scm.core.nodes.node(dn.uuid).status
    return status.operational_state, status.op_state_expiry_epoch_sec


def failures(response) -> dict[str, str]:
    return {f.host: f.error for f in response.failedHosts}


@async_test
async def test_state_changes_by_host_ip_uuid_and_port(tmp_path: Path) -> None:
    async with (
        running_scm(scm_conf(tmp_path)) as scm,
        channel(scm.datanode_port) as dn_channel,
        channel(scm.client_port) as admin_channel,
    ):
        admin = admin_stub(admin_channel)
        dn1, dn2 = FakeDatanode(1, dn_channel), FakeDatanode(2, dn_channel)
        for dn in (dn1, dn2):
            assert (await dn.register()).success

        answer = await admin.decommissionNodes(pb.DecommissionNodesRequestProto(hosts=["dn1.test", "nohost"]))
        assert list(failures(answer)) == ["nohost"] and "no registered datanode" in failures(answer)["nohost"]
        assert op_state(scm, dn1) == (Op.DECOMMISSIONING, 0)
        listed = await admin.queryNode(pb.NodeQueryRequestProto(opState=Op.DECOMMISSIONING))
        assert [n.nodeID.uuid for n in listed.datanodes] == [dn1.uuid]

        refused = await admin.startMaintenanceNodes(
            pb.StartMaintenanceNodesRequestProto(hosts=["dn1.test", "10.0.0.2"], endInHours=2)
        )
        assert list(failures(refused)) == ["dn1.test"]
        assert "cannot go from DECOMMISSIONING to ENTERING_MAINTENANCE" in failures(refused)["dn1.test"]
        state, expiry = op_state(scm, dn2)
        assert state is Op.ENTERING_MAINTENANCE
        assert abs(expiry - (time.time() + 2 * 3600)) < 60

        ambiguous = await admin.recommissionNodes(pb.RecommissionNodesRequestProto(hosts=[f":{RATIS_PORT}"]))
        assert failures(ambiguous) == {f":{RATIS_PORT}": "no host name given"}
        back = await admin.recommissionNodes(
            pb.RecommissionNodesRequestProto(hosts=[dn1.uuid, f"dn2.test:{RATIS_PORT}"])
        )
        assert failures(back) == {}
        assert op_state(scm, dn1) == op_state(scm, dn2) == (Op.IN_SERVICE, 0)
        wrong_port = await admin.decommissionNodes(pb.DecommissionNodesRequestProto(hosts=["dn1.test:1"]))
        assert list(failures(wrong_port)) == ["dn1.test:1"]

        forever = await admin.startMaintenanceNodes(pb.StartMaintenanceNodesRequestProto(hosts=["dn1.test"]))
        assert failures(forever) == {} and op_state(scm, dn1) == (Op.ENTERING_MAINTENANCE, 0)


@async_test
async def test_datanodes_sharing_a_host_need_a_port(tmp_path: Path) -> None:
    async with (
        running_scm(scm_conf(tmp_path)) as scm,
        channel(scm.datanode_port) as dn_channel,
        channel(scm.client_port) as admin_channel,
    ):
        admin = admin_stub(admin_channel)
        twins = [FakeDatanode(i, dn_channel) for i in (1, 2)]
        for dn in twins:
            dn.details = replace(dn.details, hostname="shared.test", ip_address="10.0.0.9")
            assert (await dn.register()).success
        answer = await admin.decommissionNodes(pb.DecommissionNodesRequestProto(hosts=["shared.test"]))
        assert "2 datanodes match shared.test" in failures(answer)["shared.test"]
        standalone = dict(twins[1].details.ports)["STANDALONE"]
        answer = await admin.decommissionNodes(
            pb.DecommissionNodesRequestProto(hosts=[f"shared.test:{standalone}"])
        )
        assert failures(answer) == {}
        assert [op_state(scm, dn)[0] for dn in twins] == [Op.IN_SERVICE, Op.DECOMMISSIONING]


@async_test
async def test_bad_admin_node_requests_are_invalid_arguments(tmp_path: Path) -> None:
    async with running_scm(scm_conf(tmp_path)) as scm, channel(scm.client_port) as ch:
        admin = admin_stub(ch)
        for call, request, field in [
            (admin.decommissionNodes, pb.DecommissionNodesRequestProto(), "hosts: is empty"),
            (
                admin.startMaintenanceNodes,
                pb.StartMaintenanceNodesRequestProto(hosts=["x"], endInHours=-1),
                "endInHours",
            ),
        ]:
            with pytest.raises(rpc.RpcError) as error:
                await call(request)
            assert error.value.code() is rpc.StatusCode.INVALID_ARGUMENT
            assert field in (error.value.details() or "")
