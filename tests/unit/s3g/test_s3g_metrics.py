"""The S3 gateway's metrics: one middleware observes every request by S3 operation and HTTP status, with
the body bytes read and sent; the gateway serves them on its admin port's /prom."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp
from aiohttp import web

from pyozone.common.web.metrics import MetricsSystem
from pyozone.om.server import OmDaemon
from pyozone.s3g.daemon import S3GatewayDaemon
from pyozone.s3g.metrics import OPERATION, S3GatewayMetrics
from pyozone.s3g.routing import Operation
from tests.prometheus import samples
from tests.unit.om.om_fakes import FakeScm
from tests.unit.om.test_om_server import conf, run
from tests.unit.s3g.test_daemon_volume import gateway_conf


@asynccontextmanager
async def serving(app: web.Application) -> AsyncIterator[str]:
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


def test_the_middleware_observes_operation_status_and_bytes() -> None:
    async def put(request: web.Request) -> web.Response:
        request[OPERATION] = Operation.PUT_OBJECT
        await request.read()
        return web.Response(status=200)

    async def get(request: web.Request) -> web.StreamResponse:
        request[OPERATION] = Operation.GET_OBJECT if request.method == "GET" else Operation.HEAD_OBJECT
        response = web.StreamResponse()
        response.content_length = 5000
        await response.prepare(request)
        if request.method == "GET":
            await response.write(b"x" * 5000)
        await response.write_eof()
        return response

    async def missing(request: web.Request) -> web.Response:
        request[OPERATION] = Operation.GET_OBJECT
        return web.Response(status=404, body=b"<Error>NoSuchKey</Error>")

    async def unrouted(_: web.Request) -> web.Response:
        raise web.HTTPMethodNotAllowed("PATCH", ["GET"])

    async def body() -> None:
        system = MetricsSystem("S3Gateway", process=False)
        metrics = S3GatewayMetrics(system)
        app = web.Application(middlewares=[metrics.middleware])
        app.router.add_put("/bkt/put", put)
        app.router.add_get("/bkt/get", get)  # HEAD too
        app.router.add_get("/bkt/missing", missing)
        app.router.add_route("PATCH", "/bkt/x", unrouted)
        async with serving(app) as url, aiohttp.ClientSession() as http:
            async with http.put(f"{url}/bkt/put", data=b"y" * 1234) as r:
                assert r.status == 200
            async with http.get(f"{url}/bkt/get") as r:
                assert len(await r.read()) == 5000
            async with http.head(f"{url}/bkt/get") as r:
                assert r.status == 200
            async with http.get(f"{url}/bkt/missing") as r:
                assert r.status == 404
            async with http.patch(f"{url}/bkt/x") as r:
                assert r.status == 405
        found = samples(system.prometheus_text().decode())
        assert found['s3g_request_seconds_count{code="200",operation="PutObject"}'] == 1
        assert found['s3g_received_bytes_total{operation="PutObject"}'] == 1234
        assert found['s3g_request_seconds_count{code="200",operation="GetObject"}'] == 1
        assert found['s3g_sent_bytes_total{operation="GetObject"}'] == 5000 + len(b"<Error>NoSuchKey</Error>")
        assert found['s3g_request_seconds_count{code="404",operation="GetObject"}'] == 1
        assert found['s3g_request_seconds_count{code="200",operation="HeadObject"}'] == 1
        assert 's3g_sent_bytes_total{operation="HeadObject"}' not in found
        assert found['s3g_request_seconds_count{code="405",operation="Unknown"}'] == 1

    run(body())


def test_the_gateway_serves_its_metrics_on_the_admin_port(tmp_path: Path) -> None:
    """S3 requests through boto3 (bucket operations: no datanodes here), then /prom on the admin port."""

    def s3_calls(url: str, access_key: str, secret: str) -> None:
        import boto3
        from botocore.config import Config
        from botocore.exceptions import ClientError

        config = Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1})
        s3 = boto3.client(
            "s3", endpoint_url=url, aws_access_key_id=access_key, aws_secret_access_key=secret,
            region_name="us-east-1", config=config,
        )  # fmt: skip
        s3.create_bucket(Bucket="metrics-bkt")
        s3.head_bucket(Bucket="metrics-bkt")
        assert [b["Name"] for b in s3.list_buckets()["Buckets"]] == ["metrics-bkt"]
        assert s3.list_objects_v2(Bucket="metrics-bkt")["KeyCount"] == 0
        try:
            s3.get_object(Bucket="metrics-bkt", Key="nothing")
            raise AssertionError("a missing key was found")
        except ClientError as e:
            assert e.response["Error"]["Code"] == "NoSuchKey"

    async def body() -> None:
        om = OmDaemon(conf(tmp_path), FakeScm())
        await om.start()
        gateway = S3GatewayDaemon(gateway_conf(tmp_path, om.rpc_port))
        try:
            await gateway.start()
            assert gateway.client is not None
            access_key, secret = await gateway.client.get_s3_secret("tester")
            await asyncio.to_thread(s3_calls, f"http://127.0.0.1:{gateway.port}", access_key, secret)
            async with (
                aiohttp.ClientSession() as http,
                http.get(f"http://127.0.0.1:{gateway.admin_port}/prom") as r,
            ):
                found = samples(await r.text())
            assert found['s3g_request_seconds_count{code="200",operation="CreateBucket"}'] == 1
            assert found['s3g_request_seconds_count{code="200",operation="HeadBucket"}'] == 1
            assert found['s3g_request_seconds_count{code="200",operation="ListBuckets"}'] == 1
            assert found['s3g_request_seconds_count{code="200",operation="ListObjectsV2"}'] == 1
            assert found['s3g_request_seconds_count{code="404",operation="GetObject"}'] == 1
            assert found['s3g_sent_bytes_total{operation="ListObjectsV2"}'] > 0
        finally:
            await gateway.stop()
            await om.stop(0.5)

    run(body())
