"""Acceptance (e): every `pyozone admin` command as a real process against a live 3-datanode cluster, with
--conf DIR/conf, in its table and its --json form."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pyozone.hdds.ids import RATIS_THREE
from tests.e2e.cluster.cluster_helpers import LiveCluster, all_running, allocate, live_cluster
from tests.polling import wait_for


@pytest.fixture(scope="module")
def cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveCluster]:
    # the decommission monitor would finish (and so undo) the tests' transitions if a run fell between them
    overrides = {"ozone.scm.datanode.admin.monitor.interval": "1h"}
    with live_cluster(request, tmp_path_factory, "admin-cli", 3, overrides=overrides) as c:
        yield c


def op_state(cluster: LiveCluster, host: str) -> str:
    return {n["hostname"]: n["operationalState"] for n in cluster.admin_json("datanode", "list")}[host]


def test_datanode_list(cluster: LiveCluster) -> None:
    listed = cluster.admin_json("datanode", "list")
    assert sorted(n["hostname"] for n in listed) == ["dn1", "dn2", "dn3"]
    for node in listed:
        assert (node["healthState"], node["operationalState"]) == ("HEALTHY", "IN_SERVICE")
        assert node["ipAddress"] == "127.0.0.1" and node["networkLocation"] == "/default-rack"
        assert node["pipelines"] >= 2 and node["healthyVolumes"] == 1 and node["failedVolumes"] == 0
        assert node["capacity"] >= node["remaining"] > 0 and node["lastHeartbeat"] > 0
        assert set(node["ports"]) >= {"STANDALONE", "RATIS", "RATIS_DATASTREAM", "REPLICATION", "HTTP"}
        assert node["ports"]["STANDALONE"] == cluster.port(node["hostname"], "ipc")
    table = cluster.admin("datanode", "list")
    assert table.code == 0, table
    header, *rows = table.out.splitlines()
    assert header.split()[:4] == ["UUID", "HOSTNAME", "IP", "RACK"] and "OPERATIONAL STATE" in header
    assert "3 datanode(s)" in table.out
    for node in listed:
        (row,) = [r for r in rows if r.startswith(node["uuid"])]
        assert f" {node['hostname']} " in row and "HEALTHY" in row and "IN_SERVICE" in row


def test_decommission_maintenance_and_recommission_change_the_operational_state(cluster: LiveCluster) -> None:
    started = cluster.admin("datanode", "decommission", "dn1")
    assert started.code == 0 and started.out.splitlines() == ["Started decommissioning datanode(s):", "dn1"]
    assert op_state(cluster, "dn1") in ("DECOMMISSIONING", "DECOMMISSIONED")
    table = cluster.admin("datanode", "list")
    assert "DECOMMISSION" in next(line for line in table.out.splitlines() if " dn1 " in line)
    back = cluster.admin_json("datanode", "recommission", "dn1")
    assert back == {"succeeded": ["dn1"], "failed": {}}
    assert op_state(cluster, "dn1") == "IN_SERVICE"

    maintenance = cluster.admin_json("datanode", "maintenance", "dn2", "--end", "1")
    assert maintenance == {"succeeded": ["dn2"], "failed": {}}
    node = {n["hostname"]: n for n in cluster.admin_json("datanode", "list")}["dn2"]
    assert node["operationalState"] in ("ENTERING_MAINTENANCE", "IN_MAINTENANCE")
    assert node["opStateExpiryEpochSeconds"] > 0
    again = cluster.admin("datanode", "recommission", "dn2")
    assert again.code == 0 and "Started recommissioning datanode(s):" in again.out
    assert op_state(cluster, "dn2") == "IN_SERVICE"

    unknown = cluster.admin("datanode", "decommission", "no-such-host", "--json")
    assert unknown.code == 1
    assert unknown.json()["failed"] == {"no-such-host": "no registered datanode no-such-host"}
    assert "1 of 1 datanode(s) failed" in unknown.err
    # the datanodes learn their state back (setNodeOperationalState) and all stay in service
    wait_for(
        lambda: {n["operationalState"] for n in cluster.datanodes().values()} == {"IN_SERVICE"},
        10,
        "every datanode IN_SERVICE",
    )


def test_pipeline_deactivate_activate_close(cluster: LiveCluster) -> None:
    three = wait_for(
        lambda: [
            p for p in cluster.admin_json("pipeline", "list") if p["replicationConfig"] == "RATIS/THREE"
        ],
        20,
        "a RATIS/THREE pipeline",
    )
    pid = three[0]["id"]
    assert three[0]["state"] == "OPEN" and len(three[0]["nodes"]) == 3

    def state() -> str:
        return {p["id"]: p["state"] for p in cluster.admin_json("pipeline", "list")}.get(pid, "gone")

    assert cluster.admin_json("pipeline", "deactivate", pid) == {"pipelineId": pid, "result": "deactivated"}
    assert state() == "DORMANT"
    dormant = cluster.admin("pipeline", "list", "--state", "DORMANT")
    assert pid in dormant.out and "DORMANT" in dormant.out and "1 pipeline(s)" in dormant.out
    activated = cluster.admin("pipeline", "activate", pid)
    assert activated.code == 0 and activated.out.strip() == f"Pipeline {pid} activated"
    assert state() == "OPEN"
    closed = cluster.admin("pipeline", "close", pid)
    assert closed.code == 0 and closed.out.strip() == f"Pipeline {pid} closed"
    assert state() in ("CLOSED", "gone")
    refused = cluster.admin("pipeline", "activate", pid)
    assert refused.code == 1 and refused.err.startswith("pyozone admin: error: ")
    # the closed pipeline freed a slot on each datanode: create takes it, unless the background creator
    # (every 5 s) was first; then the limit refuses it
    created = cluster.admin("pipeline", "create", "--json")
    if created.code == 0:
        view = created.json()
        assert view["replicationConfig"] == "RATIS/THREE" and view["state"] in ("ALLOCATED", "OPEN")
        assert len(view["nodes"]) == 3 and view["id"] != pid
    else:
        assert "exceed the limit per datanode" in created.err, created
    one = cluster.admin("pipeline", "create", "-f", "ONE")
    assert one.code == 1 and "every healthy node already has one" in one.err, one
    ones = cluster.admin("pipeline", "list", "--replication", "RATIS/ONE", "--json")
    assert ones.code == 0 and {p["replicationConfig"] for p in ones.json()} == {"RATIS/ONE"}
    # SCM forms a replacement (background creation every 5 s)
    wait_for(
        lambda: any(
            p["replicationConfig"] == "RATIS/THREE" and p["state"] == "OPEN" and p["id"] != pid
            for p in cluster.pipelines()
        ),
        30,
        "a new OPEN RATIS/THREE pipeline",
    )


def test_container_list_info_close(cluster: LiveCluster) -> None:
    location = allocate(cluster, RATIS_THREE)
    cid = location.block_id.container_id
    listed = cluster.admin_json("container", "list")
    (entry,) = [c for c in listed if c["containerID"] == cid]
    assert entry["state"] == "OPEN" and entry["replicationConfig"] == "RATIS/THREE"
    assert entry["pipelineID"] == location.pipeline.id and entry["owner"] == "e2e"
    table = cluster.admin("container", "list")
    assert table.code == 0 and table.out.splitlines()[0].split()[:3] == ["CONTAINER", "ID", "STATE"]
    assert any(line.split()[:2] == [str(cid), "OPEN"] for line in table.out.splitlines())
    only_closed = cluster.admin_json("container", "list", "--state", "CLOSED")
    assert cid not in [c["containerID"] for c in only_closed]
    info = cluster.admin_json("container", "info", str(cid))
    assert info["containerID"] == cid and info["pipeline"]["id"] == location.pipeline.id
    assert sorted(info["pipeline"]["nodes"]) == sorted(location.pipeline.nodes)
    text = cluster.admin("container", "info", str(cid))
    assert f"Container id: {cid}" in text.out and "Container State: OPEN" in text.out
    closing = cluster.admin("container", "close", str(cid))
    assert closing.code == 0 and closing.out.strip() == f"Container {cid} is being closed"
    assert cluster.admin_json("container", "info", str(cid))["state"] in ("CLOSING", "CLOSED")
    missing = cluster.admin("container", "info", "424242")
    assert missing.code == 1 and "CONTAINER_NOT_FOUND" in missing.err


def test_safemode_status_exit_wait(cluster: LiveCluster) -> None:
    status = cluster.admin("safemode", "status")
    assert status.code == 0 and status.out.strip() == "SCM is out of safe mode."
    verbose = cluster.admin_json("safemode", "status", "--verbose")
    assert verbose["inSafeMode"] is False and all(rule["validated"] for rule in verbose["rules"])
    assert "DataNodeSafeModeRule" in {rule["name"] for rule in verbose["rules"]}

    # SCM restarted with one datanode down stays in safe mode (3 must register) until forced out
    cluster.kill("dn3")
    cluster.kill("scm")
    cluster.start("scm")
    wait_for(lambda: cluster.poll_json("safemode", "status"), 20, "SCM answering")
    still = cluster.admin("safemode", "wait", "-t", "2")
    assert still.code == 1 and "still in safe mode" in still.err
    inside = cluster.admin_json("safemode", "status", "--verbose")
    assert inside["inSafeMode"] is True
    rules = {rule["name"]: rule for rule in inside["rules"]}
    assert rules["DataNodeSafeModeRule"]["validated"] is False
    text = cluster.admin("safemode", "status", "--verbose")
    assert text.out.startswith("SCM is in safe mode.") and "validated:false, DataNodeSafeModeRule" in text.out
    left = cluster.admin("safemode", "exit")
    assert left.code == 0 and left.out.strip() == "SCM exit safe mode successfully."
    assert cluster.admin_json("safemode", "status")["inSafeMode"] is False
    waited = cluster.admin("safemode", "wait", "-t", "5")
    assert waited.code == 0 and waited.out.strip() == "SCM is out of safe mode."
    cluster.start("dn3")
    cluster.wait_healthy(3)
    all_running(cluster)
