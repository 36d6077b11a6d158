"""The datanode's JSON APIs (datanode/web/api.py) on an in-process datanode with a fake SCM: 503 until it has
storage, then what it holds (volumes, containers, pipelines, commands, scanner, latency), pages and
filters, and a clear 400 or 404 for bad input."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import aiohttp

from pyozone.common.http_server import HttpServer
from pyozone.common.tls import TlsStore
from pyozone.common.web.app import daemon_app
from pyozone.common.web.ops import readers_only
from pyozone.datanode.daemon import Datanode
from pyozone.datanode.web import datanode_api
from pyozone.hdds.commands import CreatePipelineCommand
from pyozone.hdds.security.x509 import CertRole, Identity
from pyozone.hdds.states import ReplicaState
from tests.polling import wait_for_async
from tests.tls_certs import CertAuthority
from tests.unit.datanode.dnd_helpers import FakeScm, async_test, dn_conf, put_block, running

PIPELINE = "11111111-0000-4000-8000-0000000000aa"
STORAGE_APIS = (
    "/api/v1/volumes",
    "/api/v1/containers",
    "/api/v1/containers/1",
    "/api/v1/pipelines",
    "/api/v1/commands",
    "/api/v1/commands/recent",
    "/api/v1/scanner",
    "/api/v1/latency",
)


async def get(dn: Datanode, path: str) -> tuple[int, Any]:
    def fetch() -> tuple[int, Any]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{dn.http_port}{path}", timeout=5) as answer:
                return answer.status, json.load(answer)
        except urllib.error.HTTPError as e:
            return e.code, json.load(e)

    return await asyncio.to_thread(fetch)


def _text(dn: Datanode, path: str) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{dn.http_port}{path}", timeout=5) as answer:
        return answer.read().decode()


async def ok(dn: Datanode, path: str) -> Any:
    status, body = await get(dn, path)
    assert status == 200, (path, status, body)
    return body


async def populate(dn: Datanode, scm: FakeScm) -> None:
    """A pipeline of this datanode alone (it leads it once elected), created by SCM's command, and
    containers 1 (OPEN, one block), 2 (CLOSED) and 3 (OPEN) of it."""
    await wait_for_async(lambda: dn.registered, what="registration")

    def build() -> None:
        first = dn.containers.create(1, dn.uuid, PIPELINE)
        put_block(first, 1, b"a" * 4096, 1)
        second = dn.containers.create(2, dn.uuid, PIPELINE)
        second.mark_closing()
        second.close()
        dn.containers.create(3, dn.uuid, PIPELINE)

    scm.send(
        CreatePipelineCommand(pipeline_id=PIPELINE, factor=1, nodes=(dn.uuid,), suggested_leader=dn.uuid)
    )
    dn.scm_connections.trigger_heartbeat()
    await wait_for_async(lambda: sum(dn.queue.outcomes.values()) == 1, what="createPipeline run")
    await wait_for_async(lambda: dn.groups.leading(PIPELINE), what="the pipeline led")
    await asyncio.to_thread(build)  # after the member started: at its start a BCSID above its log fails it
    await wait_for_async(lambda: dn.scm_connections.last_heartbeat_ms, what="an answered heartbeat")


@async_test
async def test_only_the_overview_answers_before_the_datanode_has_storage(
    tmp_path: Path, scm: FakeScm
) -> None:
    scm.down = True
    async with running(dn_conf(tmp_path, scm.address), until_started=False) as dn:
        overview = await ok(dn, "/api/v1/overview")
        assert overview["phase"] == "waiting for SCM" and overview["storage"] is False
        assert overview["registered"] is False and overview["lastHeartbeat"] is None
        for path in STORAGE_APIS:
            status, body = await get(dn, path)
            assert status == 503 and "no storage yet (waiting for SCM)" in body["error"], (path, body)


@async_test
async def test_the_apis_show_what_the_datanode_holds(tmp_path: Path, scm: FakeScm) -> None:
    async with running(dn_conf(tmp_path, scm.address)) as dn:
        await populate(dn, scm)
        overview = await ok(dn, "/api/v1/overview")
        assert overview["uuid"] == dn.uuid and overview["phase"] == "running" and overview["registered"]
        assert overview["lastHeartbeat"] > 0 and overview["heartbeats"] > 0
        assert overview["containers"] == {"total": 3, "byState": {"CLOSED": 1, "OPEN": 2}}
        assert overview["pipelines"] == {"leader": 1, "follower": 0}
        assert overview["volumes"] == {"total": 2, "failed": 0, "full": 0}

        volumes = await ok(dn, "/api/v1/volumes")
        assert volumes["total"] == 2 and sum(v["containers"] for v in volumes["items"]) == 3
        first = volumes["items"][0]
        assert first["state"] == "NORMAL" and first["capacity"] >= first["available"] > 0
        assert [v["directory"] for v in volumes["items"]] == [
            str(tmp_path / "disk0"),
            str(tmp_path / "disk1"),
        ]

        page = await ok(dn, "/api/v1/containers?limit=2")
        assert (page["total"], [c["containerId"] for c in page["items"]]) == (3, [1, 2])
        rest = await ok(dn, "/api/v1/containers?limit=2&offset=2")
        assert [c["containerId"] for c in rest["items"]] == [3]
        closed = await ok(dn, "/api/v1/containers?state=CLOSED")
        assert [(c["containerId"], c["state"]) for c in closed["items"]] == [(2, "CLOSED")]
        one = await ok(dn, "/api/v1/containers/1")
        assert one["state"] == ReplicaState.OPEN.name and one["blockCount"] == 1 and one["usedBytes"] == 4096
        assert one["originPipelineId"] == PIPELINE and one["bcsid"] == 1

        pipelines = await ok(dn, "/api/v1/pipelines")
        (pipeline,) = pipelines["items"]
        assert pipeline["pipelineId"] == PIPELINE and pipeline["role"] == "LEADER" and pipeline["term"] == 1
        assert [(m["uuid"], m["leader"]) for m in pipeline["members"]] == [(dn.uuid, True)]
        assert pipeline["commitIndex"] == pipeline["appliedIndex"] == pipeline["lastIndex"] >= 1
        prom = await asyncio.to_thread(_text, dn, "/prom")
        group = f'group="group-0000000000AA",instance="{dn.uuid}"'
        index = pipeline["commitIndex"]
        for line in (
            f'ratis_server_peerCommitIndex{{follower="{dn.uuid}",{group}}} {index}.0',
            f"ratis_state_machine_appliedIndex{{{group}}} {index}.0",
            f"ratis_server_term{{{group}}} 1.0",
            f"ratis_server_last_index{{{group}}} {index}.0",
            f'ratis_server_role{{{group},role="LEADER"}} 1.0',
            f'ratis_server_role{{{group},role="FOLLOWER"}} 0.0',
            'datanode_pipelines{role="LEADER"} 1.0',
        ):
            assert line in prom.splitlines(), (line, prom)

        commands = await ok(dn, "/api/v1/commands")
        assert commands["received"] == {"createPipelineCommand": 1}
        assert commands["outcomes"] == {"createPipelineCommand": {"succeeded": 1}}
        assert commands["pending"]["createPipelineCommand"] == 0
        recent = await ok(dn, "/api/v1/commands/recent?type=createPipelineCommand")
        assert [(r["type"], r["result"]) for r in recent["items"]] == [("createPipelineCommand", "succeeded")]
        assert (await ok(dn, "/api/v1/commands/recent?result=failed"))["total"] == 0

        scanner = await ok(dn, "/api/v1/scanner")
        assert scanner["enabled"] is False and scanner["passes"] == 0 and scanner["nextPass"] is None

        latency = await ok(dn, "/api/v1/latency")
        assert latency["total"] == 2 and latency["all"]["write"]["count"] == 1
        assert latency["all"]["write"]["p50"] > 0 and latency["all"]["read"]["p50"] is None


@async_test
async def test_bad_input_is_a_clear_400_and_unknown_ids_404(tmp_path: Path, scm: FakeScm) -> None:
    async with running(dn_conf(tmp_path, scm.address)) as dn:
        for path, words in (
            ("/api/v1/containers?state=SHINY", "state='SHINY': must be one of OPEN"),
            ("/api/v1/containers?limit=0", "limit=0: must be from 1 to 1000"),
            ("/api/v1/containers?offset=-1", "offset=-1"),
            ("/api/v1/volumes?limit=x", "limit='x': not an integer"),
            ("/api/v1/containers/abc", "id='abc': not an integer"),
            ("/api/v1/commands/recent?type=nap", "type='nap'"),
            ("/api/v1/commands/recent?result=meh", "result='meh': must be one of succeeded, failed, dropped"),
        ):
            status, body = await get(dn, path)
            assert status == 400 and words in body["error"], (path, status, body)
        status, body = await get(dn, "/api/v1/containers/99")
        assert status == 404 and body["error"] == f"no container 99 on datanode {dn.uuid}"


async def https_get(port: int, path: str, tls: TlsStore) -> tuple[int, Any]:
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"https://127.0.0.1:{port}{path}", ssl=tls.client_context()) as response,
    ):
        return response.status, await response.json()


@async_test
async def test_over_tls_only_readers_see_where_data_lives(tmp_path: Path, scm: FakeScm) -> None:
    """Issue 28 defect 8 on the datanode: any CA-signed user certificate read every replica (volume, BCSID,
    origin), the pipelines' members and addresses, SCM's commands and the ports. Over mutual TLS the web API
    answers SCM's read rule: a user (and the gateway) 403, an administrator, a read-only administrator, OM
    and a datanode served."""
    readers = {"ozone.administrators": "ada", "ozone.readonly.administrators": "rita"}
    conf = dn_conf(tmp_path, scm.address, **readers)
    ca = CertAuthority(tmp_path / "ca")
    served = ca.store("server", Identity(CertRole.DATANODE, "dn", "127.0.0.1"))
    callers = {
        Identity(CertRole.USER, "bob"): 403,
        Identity(CertRole.S3G, "s3g", "127.0.0.1"): 403,
        Identity(CertRole.USER, "ada"): 200,
        Identity(CertRole.USER, "rita"): 200,
        Identity(CertRole.OM, "om", "127.0.0.1"): 200,
    }
    async with running(conf) as dn:
        await populate(dn, scm)
        server = HttpServer(daemon_app(dn.metrics, dn.conf, {}, datanode_api(dn, readers_only(dn.conf))))
        port = await server.start("127.0.0.1", 0, ssl_context=served.server_context())
        try:
            for identity, want in callers.items():
                tls = ca.store(identity.principal, identity)
                for path in ("/api/v1/overview", *STORAGE_APIS):
                    status, body = await https_get(port, path, tls)
                    assert status == want, (identity, path, body)
                    if want == 403:
                        assert body["error"].startswith("only administrators and read-only administrators")
        finally:
            await server.stop()
