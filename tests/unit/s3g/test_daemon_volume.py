"""The S3 gateway's start makes its volume as itself; with ozone.acl.enabled a gateway that may not (its
login user is no administrator, without TLS) fails the start with OM's reason instead of serving."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyozone.client.errors import OMException
from pyozone.config import OzoneConfiguration
from pyozone.om.server import OmDaemon
from pyozone.s3g.daemon import S3GatewayDaemon
from tests.unit.om.om_fakes import FakeScm
from tests.unit.om.test_om_server import conf, run


def gateway_conf(tmp_path: Path, om_port: int) -> OzoneConfiguration:
    return OzoneConfiguration(
        {
            "ozone.metadata.dirs": str(tmp_path / "s3g"),
            "ozone.om.address": f"127.0.0.1:{om_port}",
            "ozone.s3g.http-address": "127.0.0.1:0",
            "ozone.s3g.webadmin.http-address": "127.0.0.1:0",
        }
    )


def test_a_gateway_that_may_not_make_its_volume_does_not_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def body() -> None:
        om_conf = conf(tmp_path)
        om_conf.set("ozone.acl.enabled", "true")
        om_conf.set("ozone.administrators", "root")
        om = OmDaemon(om_conf, FakeScm())
        await om.start()
        try:
            monkeypatch.setenv("HADOOP_USER_NAME", "bob")
            refused = S3GatewayDaemon(gateway_conf(tmp_path, om.rpc_port))
            with pytest.raises(OMException) as error:
                await refused.start()
            await refused.stop()
            assert error.value.result == "PERMISSION_DENIED"
            assert error.value.message.startswith(
                "the S3 gateway cannot create its volume s3v: Only admin users are authorized to create "
                "Ozone volumes. User: bob (an administrator may create it: pyozone sh volume create /s3v"
            )
            assert not refused.serving

            monkeypatch.setenv("HADOOP_USER_NAME", "root")
            gateway = S3GatewayDaemon(gateway_conf(tmp_path, om.rpc_port))
            await gateway.start()
            try:
                assert gateway.serving and om.core is not None
                assert om.core.volume_info("s3v").owner == "root"
            finally:
                await gateway.stop()
        finally:
            await om.stop(0.5)

    run(body())
