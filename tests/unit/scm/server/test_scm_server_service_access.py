"""Service authorization on a live in-process secure SCM (mutual TLS): only OM and SCM certificates call the
block protocol, only datanode certificates the datanode protocol, each datanode for itself alone."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from pyozone import protocol as p
from pyozone import rpc
from pyozone.common.fsutil import write_file
from pyozone.common.tls import TlsPaths, TlsStore
from pyozone.framework.scm_block import BLOCK_SERVICE
from pyozone.hdds.limits import MiB
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.x509 import CertRole, Identity
from pyozone.proto import ScmAdminProtocol_pb2 as admin_pb
from pyozone.proto import ScmBlockLocationProtocol_pb2 as pb
from pyozone.proto import ScmServerDatanodeHeartbeatProtocol_pb2 as dn_pb
from pyozone.protocol.block import MAX_BLOCK_MESSAGE_BYTES
from pyozone.scm.server import ScmDaemon
from tests.builders import dn_id
from tests.tls_certs import CertAuthority, self_signed
from tests.unit.scm.server.scm_server_helpers import FakeDatanode, async_test
from tests.unit.scm.server.secure_scm_helpers import certificate, refused, secure_scm

BOB = Identity(CertRole.USER, "bob")
OM = Identity(CertRole.OM, "om", "127.0.0.1")
DN = Identity(CertRole.DATANODE, "dn", "127.0.0.1")


@async_test
async def test_only_om_and_scm_call_the_block_protocol(tmp_path: Path) -> None:
    async with secure_scm(tmp_path) as scm:
        target, options = f"127.0.0.1:{scm.block_port}", rpc.ChannelSettings(MAX_BLOCK_MESSAGE_BYTES)
        delete = pb.DeleteScmKeyBlocksRequestProto(
            keyBlocks=[
                pb.KeyBlocks(
                    key="/v/b/k",
                    blocks=[pb.BlockID(containerBlockID=pb.ContainerBlockID(containerID=1, localID=1))],
                )
            ]
        )
        allocate = pb.AllocateScmBlockRequestProto(size=1 << 20, numBlocks=1, type=1, factor=1, owner="om")
        for identity, datanode in ((BOB, None), (DN, dn_id(1))):
            tls = certificate(scm, tmp_path, identity, datanode)
            async with rpc.Channel(target, options, tls) as ch:
                stub = rpc.Stub(ch, BLOCK_SERVICE)
                why = await refused(stub.deleteScmKeyBlocks, delete)
                assert f"{identity.common_name} may not call SCM's block protocol: OM, SCM" in why
                await refused(stub.allocateScmBlock, allocate)
                await refused(stub.getScmInfo, admin_pb.GetScmInfoRequestProto())
        async with rpc.Channel(target, options, certificate(scm, tmp_path, OM)) as ch:
            stub = rpc.Stub(ch, BLOCK_SERVICE)
            info = await stub.getScmInfo(admin_pb.GetScmInfoRequestProto())
            assert info.clusterId == scm.core.cluster_id
            answer = await stub.deleteScmKeyBlocks(delete)
            assert len(answer.results) == 1


@async_test
async def test_only_a_datanode_calls_the_datanode_protocol_and_only_for_itself(tmp_path: Path) -> None:
    async with secure_scm(tmp_path) as scm:
        target, options = f"127.0.0.1:{scm.datanode_port}", rpc.ChannelSettings(p.MAX_HEARTBEAT_MESSAGE_BYTES)
        for identity in (BOB, OM):
            async with rpc.Channel(target, options, certificate(scm, tmp_path, identity)) as ch:
                dn = FakeDatanode(1, ch)
                why = await refused(dn.stub.getVersion, dn_pb.SCMVersionRequestProto())
                assert f"{identity.common_name} may not call SCM's datanode protocol: DATANODE" in why
                with pytest.raises(rpc.RpcError) as error:
                    await dn.register()
                assert error.value.code() is rpc.StatusCode.PERMISSION_DENIED
        tls = certificate(scm, tmp_path, DN, dn_id(1))
        async with rpc.Channel(target, options, tls) as ch:
            dn1, dn2 = FakeDatanode(1, ch), FakeDatanode(2, ch)  # dn2: another datanode's UUID
            await dn1.stub.getVersion(dn_pb.SCMVersionRequestProto())
            assert (await dn1.register()).success
            await dn1.heartbeat()
            with pytest.raises(rpc.RpcError) as error:
                await dn2.register()
            assert error.value.code() is rpc.StatusCode.PERMISSION_DENIED
            assert f"names datanode {dn1.uuid}, not {dn2.uuid}" in (error.value.details() or "")
            with pytest.raises(rpc.RpcError) as error:
                await dn2.heartbeat()
            assert error.value.code() is rpc.StatusCode.PERMISSION_DENIED
        assert scm.core.nodes.is_registered(dn_id(1)) and not scm.core.nodes.is_registered(dn_id(2))


def expired(scm: ScmDaemon, root: Path, identity: Identity) -> TlsStore:
    """A certificate SCM's CA signed that expired yesterday."""
    assert scm.secure is not None
    ca = scm.secure.security.ca
    key = X.generate_private_key()
    yesterday = dt.datetime.now(dt.UTC) - dt.timedelta(days=2)
    cert = X.sign_csr(
        X.build_csr(key, identity, ("127.0.0.1",)), ca.material.key, ca.material.cert,
        ca.cluster_id, ca.scm_id, dt.timedelta(days=1), 1 << 40, yesterday,
    )  # fmt: skip
    paths = TlsPaths(
        root / "expired" / "private.pem", root / "expired" / "cert.crt", root / "expired" / "ca.crt"
    )
    write_file(paths.key, X.key_to_pem(key), private=True)
    write_file(paths.cert, X.cert_to_pem(cert))
    write_file(paths.ca, ca.material.pem)
    return TlsStore(paths)


async def probe(port: int, tls: TlsStore | None) -> rpc.StatusCode:
    """A method no server has: UNIMPLEMENTED got through the handshake, UNAVAILABLE was refused there."""
    async with rpc.Channel(f"127.0.0.1:{port}", rpc.ChannelSettings(MiB), tls) as ch:
        try:
            await ch.unary("/pyozone.Probe/none", b"", None, timeout=10)
        except rpc.RpcError as e:
            return e.code()
    raise AssertionError(f"port {port} answered a method it does not have")


@async_test
async def test_every_scm_port_refuses_in_the_handshake_what_its_ca_did_not_sign_for_now(
    tmp_path: Path,
) -> None:
    """Plaintext, a self-made certificate, another CA's, and an expired one of SCM's own CA: refused on each
    of SCM's four ports before any call is read; the CA's current certificate is served."""
    async with secure_scm(tmp_path) as scm:
        assert scm.secure is not None
        trust = scm.secure.security.ca.material.cert
        strangers = {
            "plaintext": None,
            "self-signed": self_signed(tmp_path, "self", OM, trust),
            "other CA": CertAuthority(tmp_path / "other").store("other", OM, trust=trust),
            "expired": expired(scm, tmp_path, OM),
        }
        ports = (scm.client_port, scm.datanode_port, scm.block_port, scm.security_port)
        for port in ports:
            for who, tls in strangers.items():
                assert await probe(port, tls) is rpc.StatusCode.UNAVAILABLE, (port, who)
            assert await probe(port, certificate(scm, tmp_path, OM)) is rpc.StatusCode.UNIMPLEMENTED, port
