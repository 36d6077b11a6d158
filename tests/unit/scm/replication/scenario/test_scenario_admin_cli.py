"""The Replication Manager's admin surface against a live in-process SCM daemon: `admin container report`
(table and JSON), `admin replicationmanager start|stop|status`, and the decommission progress columns of
`admin datanode list`. The CLI runs in a worker thread, as a separate process would, while the daemon
serves on the event loop."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from pyozone.cli.main import main
from pyozone.hdds.container import ContainerReplica
from pyozone.hdds.container_health import ContainerHealthState
from pyozone.hdds.ids import RATIS_THREE
from pyozone.hdds.replication_report import ReplicationManagerReport, report_lines
from pyozone.hdds.states import LifeCycleEvent, PipelineState, ReplicaState
from pyozone.scm.server import ScmDaemon
from tests.unit.scm.server.scm_server_helpers import (
    FakeDatanode,
    async_test,
    channel,
    heartbeat_until,
    running_scm,
    scm_conf,
)


@pytest.fixture(autouse=True)
def _no_conf_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OZONE_CONF_DIR", raising=False)


async def admin(scm: ScmDaemon, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = await asyncio.to_thread(main, ["admin", *args, "--scm", f"127.0.0.1:{scm.client_port}"])
    out, err = capsys.readouterr()
    return code, out, err


async def cluster_with_an_under_replicated_container(scm: ScmDaemon) -> tuple[list[FakeDatanode], int]:
    """Three datanodes out of safe mode; a CLOSED container with replicas on dn1 and dn2 only."""
    async with channel(scm.datanode_port) as ch:
        datanodes = [FakeDatanode(i, ch) for i in (1, 2, 3)]
        for dn in datanodes:
            await dn.register()
        core = scm.core
        await heartbeat_until(datanodes, lambda: core.pipelines.pipelines(RATIS_THREE, PipelineState.OPEN))
    pipeline = core.pipelines.pipelines(RATIS_THREE, PipelineState.OPEN)[0]
    cid = core.containers.allocate_container(pipeline, "test").container_id
    core.containers.update_state(cid, LifeCycleEvent.FINALIZE)
    core.containers.update_state(cid, LifeCycleEvent.CLOSE)
    for dn in datanodes[:2]:
        core.containers.update_replica(
            ContainerReplica(cid, dn.uuid, ReplicaState.CLOSED, dn.uuid, 0, 1, 100, 0, False)
        )
        core.nodes.add_container(dn.uuid, cid)
    return datanodes, cid


@async_test
async def test_container_report_shows_the_last_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with running_scm(scm_conf(tmp_path, {"hdds.scm.safemode.min.datanode": "3"})) as scm:
        code, out, err = await admin(scm, capsys, "container", "report")
        assert code == 0
        assert "not available until Replication Manager completes its first run" in err
        assert "SCM is still in safe mode" in err  # issue 11 defect 9: say why the report is all zeros
        assert "UNDER_REPLICATED: 0" in out

        scm.core.safe_mode.force_exit()
        _, _, err = await admin(scm, capsys, "container", "report")
        assert "starts hdds.scm.wait.time.after.safemode.exit later" in err

        _, cid = await cluster_with_an_under_replicated_container(scm)
        scm.core.replication.process_all()

        code, out, err = await admin(scm, capsys, "container", "report")
        assert code == 0 and err == ""
        lines = out.splitlines()
        assert lines[0].startswith("Container Summary Report generated at 20")
        assert lines[1] == "=" * len(lines[0])
        assert lines[3:6] == ["Container State Summary", "=======================", "OPEN: 0"]
        assert "CLOSED: 1" in lines and "RECOVERING: 0" in lines
        assert "Container Health Summary" in lines
        for state in ContainerHealthState:
            if state is not ContainerHealthState.HEALTHY:
                expected = 1 if state is ContainerHealthState.UNDER_REPLICATED else 0
                assert f"{state.name}: {expected}" in lines
        sample = lines.index("First 100 UNDER_REPLICATED containers:")
        assert lines[sample + 1] == f"#{cid}"

        code, out, _ = await admin(scm, capsys, "container", "report", "--json")
        data = json.loads(out)
        assert data["stats"]["UNDER_REPLICATED"] == 1 and data["stats"]["CLOSED"] == 1
        assert data["samples"] == {"UNDER_REPLICATED": [cid]}
        assert ReplicationManagerReport.from_dict(data) == scm.core.replication.report


@async_test
async def test_replicationmanager_start_stop_status(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with running_scm(scm_conf(tmp_path)) as scm:
        assert (await admin(scm, capsys, "replicationmanager", "status"))[
            1
        ] == "ReplicationManager is Running.\n"
        assert (await admin(scm, capsys, "replicationmanager", "stop"))[
            1
        ] == "Stopping ReplicationManager...\n"
        assert not scm.core.replication.is_running()
        code, out, _ = await admin(scm, capsys, "replicationmanager", "status")
        assert (code, out) == (0, "ReplicationManager is Not Running.\n")
        assert json.loads((await admin(scm, capsys, "replicationmanager", "status", "--json"))[1]) == {
            "running": False
        }
        assert (await admin(scm, capsys, "replicationmanager", "start"))[
            1
        ] == "Starting ReplicationManager...\n"
        assert scm.core.replication.is_running()


@async_test
async def test_datanode_list_shows_decommission_progress(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with running_scm(scm_conf(tmp_path, {"hdds.scm.safemode.min.datanode": "3"})) as scm:
        datanodes, _ = await cluster_with_an_under_replicated_container(scm)
        code, out, _ = await admin(scm, capsys, "datanode", "decommission", "dn1.test")
        assert code == 0, out
        scm.core.admin_monitor.run()

        code, out, _ = await admin(scm, capsys, "datanode", "list")
        assert code == 0
        header, *rows = out.splitlines()
        assert header.split("FREE")[-1].split() == ["CONTAINERS", "LEFT", "UNDER-REPLICATED", "UNCLOSED"]
        by_host = {row.split()[1]: row.split() for row in rows if row.strip() and "datanode(s)" not in row}
        assert by_host["dn1.test"][-3:] == ["1", "1", "0"]
        assert by_host["dn2.test"][-3:] == ["-", "-", "-"]

        _, out, _ = await admin(scm, capsys, "datanode", "list", "--json")
        listed = {n["hostname"]: n for n in json.loads(out)}
        assert listed["dn1.test"]["operationalState"] == "DECOMMISSIONING"
        progress = listed["dn1.test"]["adminProgress"]
        assert progress.pop("pipelinesWaitingToClose") >= 0
        assert progress == {
            "containersLeft": 1,
            "underReplicated": 1,
            "unclosed": 0,
            "sufficientlyReplicated": 0,
        }
        assert listed["dn3.test"]["adminProgress"] is None
        assert datanodes[0].uuid == listed["dn1.test"]["uuid"]


def test_report_lines_list_samples_in_health_state_order() -> None:
    report = ReplicationManagerReport(sample_limit=2, timestamp_ms=1_767_225_600_000)
    for cid in (7, 8, 9):
        report.increment_and_sample(ContainerHealthState.QUASI_CLOSED_STUCK_MISSING, cid)
    report.increment_and_sample(ContainerHealthState.MISSING, 3)
    lines = report_lines(report)
    assert lines[0] == "Container Summary Report generated at 2026-01-01T00:00:00Z"
    assert "QUASI_CLOSED_STUCK_MISSING: 3" in lines
    tail = lines[lines.index("First 2 MISSING containers:") :]
    assert tail == [
        "First 2 MISSING containers:",
        "#3",
        "",
        "First 2 QUASI_CLOSED_STUCK_MISSING containers:",
        "#7, #8",
        "",
    ]
