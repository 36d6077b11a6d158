"""The datanode's life with SCM: version -> register -> heartbeat, identity across restarts, reregister,
SCM outages, fatal errors and the ports it advertises."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import urllib.request
from pathlib import Path

import pytest

from pyozone.cli.main import main
from pyozone.datanode.errors import DatanodeError
from pyozone.hdds.datanode import LayoutVersion
from pyozone.hdds.states import NodeOperationalState, ReplicaState, SCMCommandType
from tests.polling import wait_for_async
from tests.unit.datanode.dnd_helpers import (
    CLUSTER,
    FakeScm,
    async_test,
    cli_overrides,
    dn_conf,
    new_datanode,
    running,
    wait_for_beat,
)


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


@async_test
async def test_version_register_heartbeat(tmp_path: Path, scm: FakeScm) -> None:
    async with running(dn_conf(tmp_path, scm.address)) as dn:
        await wait_for_async(lambda: len(scm.beats()) >= 3, what="three heartbeats")
        assert scm.versions >= 1
        [reg] = scm.registrations
        assert reg.datanode.uuid == dn.uuid
        assert reg.datanode.ip_address == "127.0.0.1"
        assert reg.layout == LayoutVersion(1, 1)
        assert reg.node_report is not None and len(reg.node_report.storage) == 2
        assert len(reg.node_report.metadata_storage) == 1
        assert reg.container_report == () and reg.pipeline_reports == ()
        ports = dict(reg.datanode.ports)
        assert set(ports) == {"STANDALONE", "RATIS", "RATIS_DATASTREAM", "REPLICATION", "HTTP"}
        assert all(port > 0 and _listening(port) for port in ports.values())
        for hb in scm.beats():
            assert hb.datanode.uuid == dn.uuid
            assert hb.persisted_op_state is NodeOperationalState.IN_SERVICE
            assert hb.layout == LayoutVersion(1, 1)
            assert hb.command_queue_report is not None
            assert hb.command_queue_report[SCMCommandType.deleteBlocksCommand] == 0


@async_test
async def test_readiness_endpoint(tmp_path: Path, scm: FakeScm) -> None:
    scm.down = True
    async with running(dn_conf(tmp_path, scm.address), until_started=False) as dn:
        url = f"http://127.0.0.1:{dn.http_port}"
        with pytest.raises(urllib.error.HTTPError) as not_ready:
            await _get(f"{url}/ready")
        assert not_ready.value.code == 503
        health = json.loads(await _get(f"{url}/health"))
        assert health == {"uuid": dn.uuid, "phase": "waiting for SCM", "registered": False}
        scm.down = False
        await wait_for_async(lambda: dn.registered, what="registration")
        ready = json.loads(await _get(f"{url}/ready"))
        assert ready["ready"] is True and ready["uuid"] == dn.uuid
        health = json.loads(await _get(f"{url}/health"))
        assert health["healthyVolumes"] == 2 and health["phase"] == "running"


async def _get(url: str) -> bytes:
    def fetch() -> bytes:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.read()

    return await asyncio.to_thread(fetch)


@async_test
async def test_identity_persisted_and_reused(tmp_path: Path, scm: FakeScm) -> None:
    conf = dn_conf(tmp_path, scm.address)
    async with running(conf) as dn:
        await wait_for_async(lambda: scm.registrations, what="registration")
        first = dn.uuid
        await asyncio.to_thread(dn.containers.create, 5, dn.uuid, "p1")
    doc = json.loads((tmp_path / "meta" / "datanode.id").read_text())
    assert doc["uuid"] == first and doc["clusterId"] == CLUSTER
    assert doc["ipAddress"] == "127.0.0.1" and doc["persistedOpState"] == "IN_SERVICE"
    assert set(doc["ports"]) == {"STANDALONE", "RATIS", "RATIS_DATASTREAM", "REPLICATION", "HTTP"}
    async with running(conf) as dn:
        await wait_for_async(lambda: len(scm.registrations) == 2, what="second registration")
        assert dn.uuid == first
        second = scm.registrations[1]
        assert second.datanode.uuid == first
        assert [r.container_id for r in second.container_report] == [5]


@async_test
async def test_lost_identity_file_reuses_the_volumes_uuid(tmp_path: Path, scm: FakeScm) -> None:
    conf = dn_conf(tmp_path, scm.address)
    async with running(conf) as dn:
        first = dn.uuid
    (tmp_path / "meta" / "datanode.id").unlink()
    async with running(conf) as dn:
        assert dn.uuid == first
        assert len(dn.volumes.healthy_volumes()) == 2


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_other_cluster_exits_1_and_touches_nothing(
    tmp_path: Path, scm: FakeScm, capsys: pytest.CaptureFixture[str]
) -> None:
    conf = dn_conf(tmp_path, scm.address)

    async def first_start() -> str:
        async with running(conf) as dn:
            await wait_for_async(lambda: scm.registrations, what="registration")
            return dn.uuid

    uuid = asyncio.run(first_start())
    before = _tree(tmp_path)
    with FakeScm(cluster_id="CID-other") as other:
        code = main(["datanode", *cli_overrides(dn_conf(tmp_path, other.address))])
    err = capsys.readouterr().err
    assert code == 1
    assert f"datanode {uuid} belongs to cluster {CLUSTER}, SCM at {other.address} is cluster CID-other" in err
    assert err.count("\n") == 1, err
    assert _tree(tmp_path) == before


@async_test
async def test_register_refused_is_fatal(tmp_path: Path, scm: FakeScm) -> None:
    scm.register_error = "node is excluded"
    with pytest.raises(DatanodeError, match=r"refused datanode .*: node is excluded"):
        await asyncio.wait_for(new_datanode(dn_conf(tmp_path, scm.address)).run(asyncio.Event()), 5)


@async_test
async def test_no_healthy_volume_is_fatal(tmp_path: Path, scm: FakeScm) -> None:
    (tmp_path / "file").write_text("not a directory")
    conf = dn_conf(tmp_path, scm.address, **{"hdds.datanode.dir": str(tmp_path / "file")})
    with pytest.raises(DatanodeError, match=r"has no healthy data volume .*is not a directory"):
        await asyncio.wait_for(new_datanode(conf).run(asyncio.Event()), 5)


@pytest.mark.parametrize("port_key", ["hdds.container.ratis.ipc.port", "hdds.datanode.replication.port"])
@async_test
async def test_a_port_in_use_is_fatal(tmp_path: Path, scm: FakeScm, port_key: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        conf = dn_conf(tmp_path, scm.address, **{port_key: str(port)})
        with pytest.raises(DatanodeError, match=rf"cannot listen on 127\.0\.0\.1:{port} \({port_key}\)"):
            await asyncio.wait_for(new_datanode(conf).run(asyncio.Event()), 10)


@async_test
async def test_reregister_sends_full_reports_again(tmp_path: Path, scm: FakeScm) -> None:
    async with running(dn_conf(tmp_path, scm.address)) as dn:
        await wait_for_async(lambda: scm.beats(), what="first heartbeat")
        await asyncio.to_thread(dn.containers.create, 5, dn.uuid, "p1")
        scm.forget(dn.uuid)
        await wait_for_async(lambda: len(scm.registrations) == 2, what="re-registration")
        assert [r.container_id for r in scm.registrations[1].container_report] == [5]
        count = len(scm.beats())
        await wait_for_async(lambda: len(scm.beats()) > count + 2, what="heartbeats after re-registration")
        assert len(scm.registrations) == 2
        assert dn.scm_connections.loops[0].registrations == 2


@async_test
async def test_scm_outage_is_retried_logged_once_and_loses_nothing(
    tmp_path: Path, scm: FakeScm, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="pyozone.datanode.scm_endpoint")
    async with running(dn_conf(tmp_path, scm.address)) as dn:
        await wait_for_async(lambda: scm.beats(), what="first heartbeat")
        scm.down = True
        await asyncio.to_thread(dn.containers.create, 9, dn.uuid, "p1")
        await wait_for_async(lambda: scm.refused >= 3, what="several failed attempts")
        scm.down = False
        hb = await wait_for_beat(scm, lambda hb: hb.incremental_container_reports)
        assert [(r.container_id, r.state) for r in hb.incremental_container_reports] == [
            (9, ReplicaState.OPEN)
        ]
        # SCM has the heartbeat before the datanode has read the answer and logged the recovery
        await wait_for_async(
            lambda: any("answers again" in r.getMessage() for r in caplog.records), what="log"
        )
    failures = [r for r in caplog.records if "sendHeartbeat failed" in r.getMessage()]
    assert len(failures) == 1
    assert sum("answers again" in r.getMessage() for r in caplog.records) == 1


@async_test
async def test_waits_for_scm_at_startup(tmp_path: Path, scm: FakeScm) -> None:
    scm.down = True
    async with running(dn_conf(tmp_path, scm.address), until_started=False) as dn:
        await asyncio.sleep(0.3)  # attempts go by: none may register while SCM is down
        assert not scm.registrations
        assert not (tmp_path / "meta" / "datanode.id").exists()
        scm.down = False
        await wait_for_async(lambda: scm.registrations, what="registration once SCM is up")
        assert (tmp_path / "meta" / "datanode.id").exists()
        del dn
