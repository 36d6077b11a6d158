"""Who the client's OM calls say they are: over TLS its certificate alone (no claim, so a user name no
certificate could carry does not matter and the S3 gateway's own calls are the gateway's); without TLS the
login user; `acting_for` names its user either way."""

from __future__ import annotations

import asyncio

import pytest

from pyozone import rpc
from pyozone.client.config import ClientConfig
from pyozone.common.tls import TlsStore
from pyozone.config import OzoneConfiguration
from pyozone.framework.om import OM_SERVICE, OmClient, acting_for
from pyozone.hdds.security import x509 as X
from pyozone.proto import OmClientProtocol_pb2 as pb
from pyozone.rpc.metadata import USER_METADATA, peer_identity
from tests.tls_certs import CertAuthority


class WhoAsks:
    """infoVolume answers a volume owned by "<certificate's principal or None>/<claimed user or None>"."""

    async def infoVolume(self, request: pb.InfoVolumeRequest, context: rpc.CallContext):  # type: ignore[no-untyped-def]
        claimed = dict(context.invocation_metadata() or ()).get(USER_METADATA)
        peer = peer_identity(context)
        return pb.InfoVolumeResponse(
            volume=pb.VolumeInfo(volume=request.volume, owner=f"{peer and peer.principal}/{claimed}")
        )


async def asked(server_tls: TlsStore | None, client_tls: TlsStore | None, acting: str | None) -> str:
    server = rpc.Server(rpc.ServerSettings(max_message_bytes=1 << 20))
    server.add_service(OM_SERVICE, WhoAsks())
    port = await server.start("127.0.0.1", 0, server_tls)
    try:
        config = ClientConfig.from_conf(OzoneConfiguration(), f"127.0.0.1:{port}", tls=client_tls)
        client = OmClient(config)
        try:
            if acting is None:
                return (await client.volume_info("vol")).owner
            with acting_for(acting):
                return (await client.volume_info("vol")).owner
        finally:
            await client.close()
    finally:
        await server.stop(0)


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> CertAuthority:
    return CertAuthority(tmp_path_factory.mktemp("ca"))


def test_over_tls_the_certificate_speaks_and_acting_for_claims(
    ca: CertAuthority, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HADOOP_USER_NAME", "hdfs/nn1@EXAMPLE.COM")
    om = ca.store("om", X.Identity(X.CertRole.OM, "om", "127.0.0.1"))
    s3g = ca.store("s3g", X.Identity(X.CertRole.S3G, "s3g", "127.0.0.1"))
    bob = ca.store("bob", X.Identity(X.CertRole.USER, "bob"))
    assert asyncio.run(asked(om, bob, None)) == "bob/None"
    assert asyncio.run(asked(om, s3g, None)) == "s3g/None"
    assert asyncio.run(asked(om, s3g, "alice")) == "s3g/alice"


def test_without_tls_the_login_user_is_claimed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HADOOP_USER_NAME", "carol")
    assert asyncio.run(asked(None, None, None)) == "None/carol"
    assert asyncio.run(asked(None, None, "alice")) == "None/alice"
