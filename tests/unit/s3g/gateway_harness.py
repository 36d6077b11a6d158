"""A gateway over a real OM (its SCM faked, no datanodes) for boto3: bucket operations, listings and empty
objects."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pyozone.om.core import OzoneManager
from pyozone.om.server import OmDaemon
from pyozone.s3g.daemon import S3GatewayDaemon
from tests.unit.om.om_fakes import FakeScm
from tests.unit.om.test_om_server import conf, run
from tests.unit.s3g.test_daemon_volume import gateway_conf


def boto3_client(url: str, access_key: str, secret: str) -> Any:
    import boto3
    from botocore.config import Config

    config = Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1})
    return boto3.client(
        "s3", endpoint_url=url, aws_access_key_id=access_key, aws_secret_access_key=secret,
        region_name="us-east-1", config=config,
    )  # fmt: skip


def with_gateway(
    tmp_path: Path,
    calls: Callable[[Any], None],
    setup: Callable[[OzoneManager], None] | None = None,
    bucket: str | None = "bkt",
) -> None:
    """Runs `calls` with a boto3 client of user "tester" (after `setup` on OM's core, and making
    `bucket`)."""

    def as_tester(clients: dict[str, Any]) -> None:
        if bucket:
            clients["tester"].create_bucket(Bucket=bucket)
        calls(clients["tester"])

    with_users(tmp_path, ("tester",), as_tester, setup)


def with_users(
    tmp_path: Path,
    users: tuple[str, ...],
    calls: Callable[[dict[str, Any]], None],
    setup: Callable[[OzoneManager], None] | None = None,
    om_settings: dict[str, str] | None = None,
) -> None:
    """Runs `calls` with a boto3 client per user (`om_settings`: OM's configuration on top of the test
    one)."""

    async def body() -> None:
        configuration = conf(tmp_path)
        for key, value in (om_settings or {}).items():
            configuration.set(key, value)
        om = OmDaemon(configuration, FakeScm())
        await om.start()
        gateway = S3GatewayDaemon(gateway_conf(tmp_path, om.rpc_port))
        try:
            await gateway.start()
            assert gateway.client is not None
            if setup is not None:
                await asyncio.to_thread(setup, om.core)
            url = f"http://127.0.0.1:{gateway.port}"
            clients = {}
            for user in users:
                clients[user] = boto3_client(url, *await gateway.client.get_s3_secret(user))
            await asyncio.to_thread(calls, clients)
        finally:
            await gateway.stop()
            await om.stop(0.5)

    run(body())
