"""SCM's admin calls with ozone.acl.enabled: administrators only, in Ozone's words; reads stay open; and
without security or ACLs nothing is checked."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest

from pyozone import protocol as p
from pyozone.proto import ScmAdminProtocol_pb2 as pb
from tests.unit.scm.server.scm_server_helpers import admin_stub, async_test, channel, running_scm, scm_conf


def as_user(user: str) -> tuple[tuple[str, str], ...]:
    return (("x-ozone-user", user),)


@async_test
async def test_only_administrators_change_the_cluster(tmp_path: Path) -> None:
    conf = scm_conf(tmp_path, {"ozone.acl.enabled": "true", "ozone.administrators": "root"})
    async with running_scm(conf) as scm, channel(scm.client_port, p.MAX_ADMIN_MESSAGE_BYTES) as ch:
        admin = admin_stub(ch)
        calls = [
            (admin.decommissionNodes, pb.DecommissionNodesRequestProto(hosts=["dn1"])),
            (admin.recommissionNodes, pb.RecommissionNodesRequestProto(hosts=["dn1"])),
            (admin.startMaintenanceNodes, pb.StartMaintenanceNodesRequestProto(hosts=["dn1"])),
            (admin.forceExitSafeMode, pb.ForceExitSafeModeRequestProto()),
            (admin.stopReplicationManager, pb.StopReplicationManagerRequestProto()),
            (admin.startReplicationManager, pb.StartReplicationManagerRequestProto()),
            (admin.closeContainer, pb.SCMCloseContainerRequestProto(containerID=1)),
        ]
        for call, request in calls:
            with pytest.raises(grpc.aio.AioRpcError) as error:
                await call(request, metadata=as_user("bob"))
            assert error.value.code() is grpc.StatusCode.PERMISSION_DENIED
            assert error.value.details() == "Access denied for user bob. SCM superuser privilege is required."
        assert (await admin.getScmInfo(pb.GetScmInfoRequestProto(), metadata=as_user("bob"))).inSafeMode
        answer = await admin.decommissionNodes(
            pb.DecommissionNodesRequestProto(hosts=["dn1"]), metadata=as_user("root")
        )
        assert [f.host for f in answer.failedHosts] == ["dn1"]  # allowed; no such datanode
        await admin.forceExitSafeMode(pb.ForceExitSafeModeRequestProto(), metadata=as_user("root"))


@async_test
async def test_without_security_or_acls_nothing_is_checked(tmp_path: Path) -> None:
    async with running_scm(scm_conf(tmp_path)) as scm, channel(scm.client_port) as ch:
        await admin_stub(ch).forceExitSafeMode(pb.ForceExitSafeModeRequestProto(), metadata=as_user("bob"))
