"""SCM's web APIs on the daemon's HTTP port answer the very dicts `pyozone admin ... --json` prints over the
admin protocol, and the daemon serves the pages."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from pyozone.cli.main import main
from pyozone.scm.server import ScmDaemon
from tests.unit.common.http_helpers import get
from tests.unit.scm.replication.scenario.test_scenario_admin_cli import (
    cluster_with_an_under_replicated_container,
)
from tests.unit.scm.server.scm_server_helpers import (
    async_test,
    http_get,
    running_scm,
    scm_conf,
)


@pytest.fixture(autouse=True)
def _no_conf_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OZONE_CONF_DIR", raising=False)


async def cli_json(scm: ScmDaemon, capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    """`pyozone admin ARGS --json` against the daemon, in a worker thread as a separate process would."""
    capsys.readouterr()
    argv = ["admin", *args, "--scm", f"127.0.0.1:{scm.client_port}", "--json"]
    code = await asyncio.to_thread(main, argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


async def api(scm: ScmDaemon, path: str) -> Any:
    status, body = await http_get(scm.http_port, path)
    assert status == 200, (path, status, body)
    return body


async def three_datanodes_and_a_closed_container(scm: ScmDaemon) -> int:
    _, cid = await cluster_with_an_under_replicated_container(scm)
    scm.core.replication.process_all()
    return cid


@async_test
async def test_api_items_are_what_the_cli_prints(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    async with running_scm(scm_conf(tmp_path, {"hdds.scm.safemode.min.datanode": "3"})) as scm:
        cid = await three_datanodes_and_a_closed_container(scm)

        nodes = await cli_json(scm, capsys, "datanode", "list")
        listed = (await api(scm, "/api/v1/datanodes"))["items"]
        assert len(nodes) == len(listed) == 3
        assert [{k: item[k] for k in node} for node, item in zip(nodes, listed, strict=True)] == nodes

        pipelines = await cli_json(scm, capsys, "pipeline", "list")
        assert (await api(scm, "/api/v1/pipelines"))["items"] == pipelines
        open_three = await cli_json(scm, capsys, "pipeline", "list", "-s", "OPEN", "-r", "RATIS/THREE")
        assert (await api(scm, "/api/v1/pipelines?state=OPEN&replication=RATIS/THREE"))["items"] == open_three

        containers = await cli_json(scm, capsys, "container", "list")
        assert (await api(scm, "/api/v1/containers"))["items"] == containers
        info = await cli_json(scm, capsys, "container", "info", str(cid))
        detail = await api(scm, f"/api/v1/containers/{cid}")
        assert {k: detail[k] for k in info} == info
        assert detail["health"] == "UNDER_REPLICATED"

        report = await cli_json(scm, capsys, "container", "report")
        assert await api(scm, "/api/v1/containers/report") == report
        assert report["stats"]["UNDER_REPLICATED"] == 1 and report["samples"]["UNDER_REPLICATED"] == [cid]

        safemode = await cli_json(scm, capsys, "safemode", "status", "--verbose")
        answer = await api(scm, "/api/v1/safemode")
        assert {k: answer[k] for k in safemode} == safemode and safemode["rules"]


@async_test
async def test_the_daemon_serves_the_pages(tmp_path: Path) -> None:
    async with running_scm(scm_conf(tmp_path)) as scm:
        index = await get(scm.http_port, "/")
        assert index.status == 200 and b'src="/ui/scm.js"' in index.body
        script = await get(scm.http_port, "/ui/scm.js")
        assert script.status == 200 and b'oz.start("Storage Container Manager"' in script.body
        overview = await api(scm, "/api/v1/overview")
        assert overview["scmId"] == scm.storage.scm_uuid and overview["clusterId"] == scm.core.cluster_id
