"""An OM (fake SCM, no datanodes) and the S3 gateway on a thread of their own, for boto3 driven from the test:
every S3 rule decided before a byte reaches a datanode (headers, listings, buckets, empty objects)."""

from __future__ import annotations

import asyncio
import http.client
import threading
from collections.abc import Callable, Coroutine, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest
from botocore.exceptions import ClientError

from pyozone.om.server import OmDaemon
from pyozone.s3g.daemon import S3GatewayDaemon
from tests.unit.om.om_fakes import FakeScm
from tests.unit.om.test_om_server import conf
from tests.unit.s3g.test_daemon_volume import gateway_conf

T = TypeVar("T")


def refused(call: Callable[..., Any], **kwargs: Any) -> tuple[int, str]:
    """The HTTP status and S3 error code a boto3 call was refused with (it must be refused)."""
    with pytest.raises(ClientError) as e:
        call(**kwargs)
    return e.value.response["ResponseMetadata"]["HTTPStatusCode"], e.value.response["Error"]["Code"]


@dataclass(frozen=True, slots=True)
class GatewayOnThread:
    loop: asyncio.AbstractEventLoop
    om: OmDaemon
    gateway: S3GatewayDaemon

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.gateway.port}"

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(20)

    def secret(self, user: str) -> tuple[str, str]:
        """`user`'s access key and S3 secret (made in OM on first use)."""
        assert self.gateway.client is not None
        return self.call(self.gateway.client.get_s3_secret(user))

    def boto3(self, user: str = "tester", **config: Any):  # type: ignore[no-untyped-def]
        """A boto3 client signed with `user`'s S3 secret."""
        import boto3
        from botocore.config import Config

        access_key, secret = self.secret(user)
        return boto3.client(
            "s3", endpoint_url=self.url, aws_access_key_id=access_key, aws_secret_access_key=secret,
            region_name="us-east-1",
            config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}, **config),
        )  # fmt: skip

    def signed_headers(
        self, method: str, target: str, body: bytes = b"", headers: dict[str, str] | None = None,
        user: str | None = "tester",
    ) -> dict[str, str]:  # fmt: skip
        """The headers of a request signed by botocore's SigV4 for `user` (None: unsigned)."""
        from botocore.auth import S3SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials

        request = AWSRequest(method, self.url + target, data=body, headers=headers or {})
        if user is not None:
            S3SigV4Auth(Credentials(*self.secret(user)), "s3", "us-east-1").add_auth(request)
        return dict(request.headers.items())

    def signed_request(
        self, method: str, target: str, body: bytes = b"", headers: dict[str, str] | None = None,
        user: str | None = "tester",
    ) -> tuple[int, str]:  # fmt: skip
        """A request as no SDK would send it, signed by botocore's SigV4 for `user` (None: unsigned)."""
        signed = self.signed_headers(method, target, body, headers, user)
        connection = http.client.HTTPConnection("127.0.0.1", self.gateway.port, timeout=20)
        try:
            connection.request(method, target, body, signed)
            response = connection.getresponse()
            return response.status, response.read().decode()
        finally:
            connection.close()


@contextmanager
def gateway_on_thread(
    tmp_path: Path, om_keys: Mapping[str, str] | None = None, **gateway_keys: str
) -> Iterator[GatewayOnThread]:
    """`gateway_keys`: configuration the gateway reads besides the test defaults; `om_keys`: OM's."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    om_conf = conf(tmp_path)
    for key, value in (om_keys or {}).items():
        om_conf.set(key, value)
    om = OmDaemon(om_conf, FakeScm())
    asyncio.run_coroutine_threadsafe(om.start(), loop).result(20)
    configuration = gateway_conf(tmp_path, om.rpc_port)
    for key, value in gateway_keys.items():
        configuration.set(key, value)
    running = GatewayOnThread(loop, om, S3GatewayDaemon(configuration))
    try:
        running.call(running.gateway.start())
        yield running
    finally:
        running.call(running.gateway.stop())
        running.call(om.stop(0.5))
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()
