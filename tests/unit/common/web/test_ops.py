"""The operator endpoints over a real server: /prom, /jmx, /conf, /stacks, /logLevel, APIs and the UI."""

from __future__ import annotations

import logging
from pathlib import Path

from prometheus_client import Counter
from prometheus_client.parser import text_string_to_metric_families

from pyozone.common.http_json import JsonResponse
from pyozone.common.web.api import BadQuery, NotFound, Query, paginate
from pyozone.common.web.app import STATIC, daemon_app
from pyozone.common.web.metrics import MetricsSystem
from pyozone.config import OzoneConfiguration
from tests.unit.common.http_helpers import async_test, get, serving


def _item(q: Query) -> dict:
    n = q.path_int("id", 1, 10)
    if n == 7:
        raise NotFound(f"item {n}: no such item")
    return {"id": n}


def _app(tmp_path: Path | None = None, may_change=None):
    metrics = MetricsSystem("Test", process=False)
    Counter("test_metrics_num_things", "things", registry=metrics.source("TestMetrics")).inc(3)
    conf = OzoneConfiguration({"ozone.scm.names": "scm1", "ozone.s3g.secret.key": "hunter2"})
    api = {
        "/api/v1/things": lambda q: paginate(list(range(25)), q.page(10), lambda i: {"n": i}),
        "/api/v1/things/{id}": _item,
        "/api/v1/bad": lambda q: q.str("state", choices=("OPEN", "CLOSED")),
    }
    ui = None
    if tmp_path is not None:
        (tmp_path / "index.html").write_text("<html>the page</html>")
        (tmp_path / "x.js").write_text("// x")
        ui = tmp_path
    return daemon_app(
        metrics, conf, {"/ready": lambda: JsonResponse(200, {"ready": True})}, api, ui, may_change
    )


@async_test
async def test_prom_is_prometheus_text() -> None:
    async with serving(_app()) as port:
        answer = await get(port, "/prom")
        assert answer.status == 200 and answer.headers["content-type"].startswith("text/plain")
        names = {f.name for f in text_string_to_metric_families(answer.body.decode())}
        assert "test_metrics_num_things" in names


@async_test
async def test_jmx_beans() -> None:
    async with serving(_app()) as port:
        beans = (await get(port, "/jmx?qry=Hadoop:service=Test,name=TestMetrics")).json()["beans"]
        assert beans == [
            {
                "name": "Hadoop:service=Test,name=TestMetrics",
                "modelerType": "TestMetrics",
                "test_metrics_num_things_total": 3,
            }
        ]


@async_test
async def test_conf_has_sources_and_redacts_secrets() -> None:
    async with serving(_app()) as port:
        props = {p["key"]: p for p in (await get(port, "/conf?format=json")).json()["properties"]}
        assert props["ozone.scm.names"] == {
            "key": "ozone.scm.names",
            "value": "scm1",
            "isFinal": False,
            "resource": "override",
        }
        assert props["ozone.s3g.secret.key"]["value"] == "<redacted>"
        assert props["ozone.scm.block.size"]["resource"] == "default"
        assert props["hdds.secret.key.expiry.duration"]["value"] != "<redacted>"  # about a secret, not one
        xml = (await get(port, "/conf")).body.decode()
        assert "<name>ozone.scm.names</name><value>scm1</value>" in xml and "hunter2" not in xml


@async_test
async def test_stacks_show_threads_and_tasks() -> None:
    async with serving(_app()) as port:
        text = (await get(port, "/stacks")).body.decode()
        assert 'Thread "MainThread"' in text and "Asyncio Task Dump" in text


@async_test
async def test_log_level_reads_and_sets_at_run_time() -> None:
    logger = logging.getLogger("pyozone.test_ops_level")
    logger.setLevel(logging.INFO)
    async with serving(_app()) as port:
        read = await get(port, "/logLevel?log=pyozone.test_ops_level&format=json")
        assert read.json()["effectiveLevel"] == "INFO"
        changed = await get(port, "/logLevel?log=pyozone.test_ops_level&level=debug")
        assert changed.status == 200 and "Effective Level: DEBUG" in changed.body.decode()
        assert logger.getEffectiveLevel() == logging.DEBUG
        warn = await get(port, "/logLevel?log=pyozone.test_ops_level&level=WARN&format=json")
        assert warn.json()["effectiveLevel"] == "WARNING"  # log4j's names work too
        assert (await get(port, "/logLevel?log=pyozone.test_ops_level&level=LOUD")).status == 400
        assert (await get(port, "/logLevel")).status == 400
        assert (await get(port, "/logLevel?log=a%20b")).status == 400
        unknown = await get(port, "/logLevel?log=pyozone.test_ops_level.never.made&format=json")
        assert unknown.json()["effectiveLevel"] == "WARNING"  # its nearest ancestor's
        assert "pyozone.test_ops_level.never.made" not in logging.Logger.manager.loggerDict


@async_test
async def test_log_level_change_needs_permission() -> None:
    logger = logging.getLogger("pyozone.test_ops_denied")
    logger.setLevel(logging.INFO)
    async with serving(_app(may_change=lambda _request: False)) as port:
        denied = await get(port, "/logLevel?log=pyozone.test_ops_denied&level=DEBUG&format=json")
        assert denied.status == 403 and logger.level == logging.INFO
        assert (await get(port, "/logLevel?log=pyozone.test_ops_denied")).status == 200  # reading is open


@async_test
async def test_api_pagination_and_errors() -> None:
    async with serving(_app()) as port:
        first = (await get(port, "/api/v1/things")).json()
        assert first == {"total": 25, "offset": 0, "limit": 10, "items": [{"n": i} for i in range(10)]}
        last = (await get(port, "/api/v1/things?offset=20&limit=10")).json()
        assert [i["n"] for i in last["items"]] == list(range(20, 25))
        for bad in (
            "limit=0",
            "limit=1001",
            "offset=-1",
            "offset=x",
            "offset=%2B1",
            "offset=1_0",
            "offset=%D9%A3",
        ):
            answer = await get(port, f"/api/v1/things?{bad}")
            assert answer.status == 400 and bad.split("=")[0] in answer.json()["error"]
        assert (await get(port, "/api/v1/things/3")).json() == {"id": 3}
        assert (await get(port, "/api/v1/things/7")).status == 404
        assert (await get(port, "/api/v1/things/70")).status == 400
        assert (await get(port, "/api/v1/bad?state=GONE")).status == 400
        assert (await get(port, "/api/v1/nothing")).status == 404


@async_test
async def test_ui_and_shared_static_files(tmp_path: Path) -> None:
    async with serving(_app(tmp_path)) as port:
        assert (await get(port, "/")).body == b"<html>the page</html>"
        assert (await get(port, "/ui/x.js")).status == 200
        shared = await get(port, "/static/ozone.js")
        assert shared.status == 200 and shared.body == (STATIC / "ozone.js").read_bytes()
        assert (await get(port, "/static/../metrics.py")).status in (403, 404)
        assert (await get(port, "/favicon.ico")).status == 204


def test_bad_query_names_the_parameter() -> None:
    assert "limit" in str(BadQuery("limit=0: must be from 1 to 1000"))
