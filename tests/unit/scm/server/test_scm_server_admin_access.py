"""SCM's admin calls with security or ozone.acl.enabled: changes for administrators only, in Ozone's words;
reads of datanodes, pipelines and containers for administrators, read-only administrators, OM and the
datanodes; SCM's identity and safe mode open to all; and without security or ACLs nothing is checked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import pytest
from google.protobuf.message import Message

from pyozone import protocol as p
from pyozone import rpc
from pyozone.common.tls import TlsStore
from pyozone.hdds.security.x509 import CertRole, Identity
from pyozone.proto import ScmAdminProtocol_pb2 as pb
from tests.builders import dn_id
from tests.unit.scm.server.scm_server_helpers import admin_stub, async_test, channel, running_scm, scm_conf
from tests.unit.scm.server.secure_scm_helpers import certificate, refused, secure_scm

ROOT = Identity(CertRole.USER, "root")
BOB = Identity(CertRole.USER, "bob")
RITA = Identity(CertRole.USER, "rita")
S3G = Identity(CertRole.S3G, "s3g", "127.0.0.1")
OM = Identity(CertRole.OM, "om", "127.0.0.1")
DN = Identity(CertRole.DATANODE, "dn", "127.0.0.1")
SUPERUSER = "SCM superuser privilege is required."


def reads(admin: Any) -> list[tuple[Any, Message]]:
    """Every call that reads where SCM's containers, pipelines and datanodes are."""
    return [
        (admin.queryNode, pb.NodeQueryRequestProto()),
        (admin.listPipelines, pb.ListPipelineRequestProto()),
        (admin.listContainer, pb.SCMListContainerRequestProto(count=10)),
        (admin.getContainer, pb.GetContainerRequestProto(containerID=1)),
        (admin.getReplicationManagerReport, pb.GetReplicationManagerReportRequestProto()),
    ]


async def read(call: Any, request: Message, **kwargs: Any) -> None:
    """The call is allowed (container 1 does not exist: getContainer answers NOT_FOUND)."""
    try:
        await call(request, **kwargs)
    except rpc.RpcError as e:
        assert e.code() is rpc.StatusCode.NOT_FOUND, e


async def snapshot(admin: Any, **kwargs: Any) -> None:
    async for _ in admin.streamSnapshot(pb.SnapshotRequestProto(), **kwargs):
        pass


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
            with pytest.raises(rpc.RpcError) as error:
                await call(request, metadata=as_user("bob"))
            assert error.value.code() is rpc.StatusCode.PERMISSION_DENIED
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


@async_test
async def test_the_gateway_certificate_acts_for_nobody_on_scm(tmp_path: Path) -> None:
    """Issue 28 defect 3: the S3 gateway's certificate with `x-ozone-user: root` was SCM superuser. Only OM
    takes a proxied user; to SCM the gateway is the unprivileged caller its certificate names."""
    async with secure_scm(tmp_path, {"ozone.administrators": "root"}) as scm:
        target, options = f"127.0.0.1:{scm.client_port}", rpc.ChannelSettings(p.MAX_ADMIN_MESSAGE_BYTES)
        start = pb.StartReplicationManagerRequestProto()
        async with rpc.Channel(target, options, certificate(scm, tmp_path, S3G)) as ch:
            why = await refused(admin_stub(ch).startReplicationManager, start, metadata=as_user("root"))
            assert why == "Access denied for user s3g. SCM superuser privilege is required."
        async with rpc.Channel(target, options, certificate(scm, tmp_path, ROOT)) as ch:
            await admin_stub(ch).startReplicationManager(start)


@async_test
async def test_a_service_certificate_is_an_administrator_only_when_named(tmp_path: Path) -> None:
    """Issue 28 defect 8 review: SCM matched ozone.administrators against any certificate's principal, so
    "*" made every gateway and datanode certificate SCM superuser, while the CA admitted users only. One
    rule (the kernel's Administrators.admits): "*" and groups admit users; a service only when named."""
    async with secure_scm(tmp_path, {"ozone.administrators": "*"}) as scm:
        target, options = f"127.0.0.1:{scm.client_port}", rpc.ChannelSettings(p.MAX_ADMIN_MESSAGE_BYTES)
        stop = pb.StopReplicationManagerRequestProto()
        for identity, datanode in ((S3G, None), (DN, dn_id(1))):
            async with rpc.Channel(target, options, certificate(scm, tmp_path, identity, datanode)) as ch:
                why = await refused(admin_stub(ch).stopReplicationManager, stop)
                assert why == f"Access denied for user {identity.principal}. {SUPERUSER}"
        async with rpc.Channel(target, options, certificate(scm, tmp_path, BOB)) as ch:
            await admin_stub(ch).stopReplicationManager(stop)
    async with secure_scm(tmp_path / "named", {"ozone.administrators": "root,s3g"}) as scm:
        target = f"127.0.0.1:{scm.client_port}"
        async with rpc.Channel(target, options, certificate(scm, tmp_path / "named", S3G)) as ch:
            await admin_stub(ch).stopReplicationManager(stop)


@async_test
async def test_containers_pipelines_and_datanodes_are_read_by_administrators_and_readers_only(
    tmp_path: Path,
) -> None:
    """Issue 28 defect 8: any certificate listed SCM's containers, pipelines and datanodes with replica
    locations. A user's certificate (and the gateway's) is refused; a read-only administrator reads and
    changes nothing; OM and the datanodes read; SCM's identity and safe mode stay open."""
    overrides = {"ozone.administrators": "root", "ozone.readonly.administrators": "rita"}
    async with secure_scm(tmp_path, overrides) as scm:
        target, options = f"127.0.0.1:{scm.client_port}", rpc.ChannelSettings(p.MAX_ADMIN_MESSAGE_BYTES)
        for identity in (BOB, S3G):
            async with rpc.Channel(target, options, certificate(scm, tmp_path, identity)) as ch:
                admin = admin_stub(ch)
                for call, request in reads(admin):
                    why = await refused(call, request, metadata=as_user("root"))
                    assert why == f"Access denied for user {identity.principal}. {SUPERUSER}"
                with pytest.raises(rpc.RpcError) as error:
                    await snapshot(admin)
                assert error.value.code() is rpc.StatusCode.PERMISSION_DENIED
                assert (await admin.getScmInfo(pb.GetScmInfoRequestProto())).clusterId == scm.core.cluster_id
                assert (await admin.inSafeMode(pb.InSafeModeRequestProto())).inSafeMode
        for identity, datanode in ((ROOT, None), (RITA, None), (OM, None), (DN, dn_id(1))):
            async with rpc.Channel(target, options, certificate(scm, tmp_path, identity, datanode)) as ch:
                admin = admin_stub(ch)
                for call, request in reads(admin):
                    await read(call, request)
        async with rpc.Channel(target, options, certificate(scm, tmp_path, RITA)) as ch:
            admin = admin_stub(ch)
            await snapshot(admin)
            why = await refused(admin.startReplicationManager, pb.StartReplicationManagerRequestProto())
            assert why == "Access denied for user rita. SCM superuser privilege is required."
            await refused(admin.closeContainer, pb.SCMCloseContainerRequestProto(containerID=1))
            await refused(admin.forceExitSafeMode, pb.ForceExitSafeModeRequestProto())


@async_test
async def test_without_tls_a_claimed_user_reads_only_as_an_administrator(tmp_path: Path) -> None:
    readers = {"ozone.administrators": "root", "ozone.readonly.administrators": "rita"}
    conf = scm_conf(tmp_path, {"ozone.acl.enabled": "true", **readers})
    async with running_scm(conf) as scm, channel(scm.client_port, p.MAX_ADMIN_MESSAGE_BYTES) as ch:
        admin = admin_stub(ch)
        for call, request in reads(admin):
            why = await refused(call, request, metadata=as_user("bob"))
            assert why == "Access denied for user bob. SCM superuser privilege is required."
            await read(call, request, metadata=as_user("rita"))
            await read(call, request, metadata=as_user("root"))


async def https_get(port: int, path: str, tls: TlsStore) -> int:
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"https://127.0.0.1:{port}{path}", ssl=tls.client_context()) as response,
    ):
        return response.status


@async_test
async def test_the_web_api_shows_where_data_lives_to_readers_only(tmp_path: Path) -> None:
    """Issue 28 defect 8 on SCM's web API: a user's certificate read every container with its replicas."""
    overrides = {"ozone.administrators": "root", "ozone.readonly.administrators": "rita"}
    async with secure_scm(tmp_path, overrides) as scm:
        paths = ("/api/v1/datanodes", "/api/v1/pipelines", "/api/v1/containers", "/api/v1/containers/report")
        for identity, status in ((BOB, 403), (S3G, 403), (RITA, 200), (ROOT, 200)):
            tls = certificate(scm, tmp_path, identity)
            for path in paths:
                assert await https_get(scm.http_port, path, tls) == status, (identity, path)
            assert await https_get(scm.http_port, "/api/v1/overview", tls) == 200
