"""SCM's JSON APIs over a simulated cluster: what each path answers, its pagination and filters, and its
refusals of bad input."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from pyozone.hdds.datanode import NodeReport, StorageReport
from pyozone.hdds.ids import RATIS_THREE
from pyozone.hdds.states import LifeCycleState, NodeOperationalState, PipelineState
from pyozone.scm.pipeline.planner import InventoryNode, plan_pipelines
from pyozone.scm.server.web import scm_api
from pyozone.scm.server.web.history import HISTORY_INTERVAL_MS, ContainerHistory
from tests.unit.scm.server.web.web_helpers import MINUTE, SECOND, bad, ok, settled_cluster


@pytest.fixture(scope="module")
def cluster():
    """Six datanodes on two racks with containers written, one datanode killed (STALE) and one
    decommissioning; the Replication Manager has run."""
    c = settled_cluster()
    api = scm_api(c.scm, "scm-1")
    for _ in range(12):
        c.write_block(64 << 20)
    nodes = list(c.datanodes)
    c.kill(nodes[0])
    c.advance(6 * MINUTE)
    c.scm.nodes.set_operational_state(nodes[1], NodeOperationalState.DECOMMISSIONING)
    c.scm.admin_monitor.run()  # tracks it; the node has not yet said it persisted the state, so it stays
    c.scm.replication.process_all()
    return c, api


def test_overview_counts_nodes_capacity_and_containers(cluster) -> None:
    c, api = cluster
    o = ok(api, "/api/v1/overview")
    assert o["clusterId"] == c.scm.cluster_id and o["scmId"] == "scm-1"
    assert o["inSafeMode"] is False
    assert o["datanodes"]["total"] == 6
    assert o["datanodes"]["health"] == {"HEALTHY": 5, "STALE": 1, "DEAD": 0, "HEALTHY_READONLY": 0}
    assert o["datanodes"]["operationalState"]["DECOMMISSIONING"] == 1
    assert o["datanodes"]["operationalState"]["IN_SERVICE"] == 5
    nodes = c.scm.nodes.nodes()
    # usage counts the live in-service datanodes, as /prom's DiskCapacity: not the decommissioning one
    online = [
        i for i in nodes if i.status.operational_state.name == "IN_SERVICE" and i.status.health.name != "DEAD"
    ]
    assert len(online) == 5 and o["capacity"] == sum(i.capacity() for i in online) < sum(
        i.capacity() for i in nodes
    )
    assert o["remaining"] == sum(i.remaining() for i in online)
    assert o["containers"]["total"] == c.scm.containers.count() > 0
    assert sum(o["containers"][s.name] for s in LifeCycleState) == o["containers"]["total"]
    assert o["pipelines"]["openRatisThree"] == c.scm.pipelines.count(RATIS_THREE, (PipelineState.OPEN,))
    assert o["replicationManager"]["reportTimeStamp"] == c.scm.replication.report.timestamp_ms > 0


def test_usage_statistics_over_healthy_in_service_datanodes() -> None:
    c = settled_cluster(datanodes=4, racks=1)
    api = scm_api(c.scm, "scm-1")
    for i, (dn, used) in enumerate(zip(c.datanodes, (10, 20, 30, 100), strict=True)):
        volume = StorageReport(f"v{i}", "/data", 1000, used, 1000 - used)
        c.scm.nodes.process_node_report(dn, NodeReport((volume,)))
    usage = ok(api, "/api/v1/overview")["usage"]
    # used shares 1, 2, 3 and 10 %: median 2.5, population stdev sqrt(12.5)
    assert usage == {"datanodes": 4, "min": 1.0, "median": 2.5, "max": 10.0, "stdev": 3.54}


def test_safemode_lists_every_rule(cluster) -> None:
    c, api = cluster
    s = ok(api, "/api/v1/safemode")
    assert s["inSafeMode"] is False and s["preCheckComplete"] is True
    assert [r["name"] for r in s["rules"]] == [r.name for r in c.scm.safe_mode.rule_statuses()]
    assert all(r["validated"] for r in s["rules"])


def test_pipelines_paginate_in_the_cli_order_with_filters(cluster) -> None:
    c, api = cluster
    everything = c.scm.pipelines.pipelines()
    first = ok(api, "/api/v1/pipelines?limit=3")
    assert (first["total"], first["offset"], first["limit"]) == (len(everything), 0, 3)
    rest = ok(api, "/api/v1/pipelines?offset=3&limit=1000")
    ids = [p["id"] for p in first["items"] + rest["items"]]
    order = sorted(everything, key=lambda p: (str(p.replication_config), p.state.value, p.id))
    assert ids == [p.id for p in order]
    open_three = ok(api, "/api/v1/pipelines?state=OPEN&replication=RATIS/THREE")
    assert open_three["total"] == c.scm.pipelines.count(RATIS_THREE, (PipelineState.OPEN,))
    assert {(p["state"], p["replicationConfig"]) for p in open_three["items"]} == {("OPEN", "RATIS/THREE")}
    member = open_three["items"][0]["nodes"][0]
    assert member["hostname"] == c.scm.nodes.node(member["uuid"]).details.hostname


def test_pipeline_statistics_match_the_planner_on_the_live_datanodes(cluster) -> None:
    c, api = cluster
    s = ok(api, "/api/v1/pipelines/statistics")
    healthy = sorted(c.scm.nodes.healthy_in_service(), key=lambda i: i.uuid)
    inventory = [
        InventoryNode(i.uuid, i.details.network_location, i.healthy_volume_count(), i.metadata_volume_count())
        for i in healthy
    ]
    plan = plan_pipelines(c.scm.settings, inventory)
    assert s["planner"]["plan"] == json.loads(json.dumps(plan.to_dict())) and s["planner"]["current"] is True
    assert s["target"] == plan.ratis_three
    assert s["healthyInServiceDatanodes"] == len(healthy) == 4
    assert s["limits"] == {
        "ozone.scm.datanode.pipeline.limit": 2,
        "ozone.scm.pipeline.per.metadata.disk": 2,
        "ozone.scm.ratis.pipeline.limit": 0,
        "ozone.scm.pipeline.creation.auto.factor.one": True,
    }
    assert s["clusterLimit"] == {"branch": "datanode", "allowed": 2 * 4 // 3}
    counted = Counter((str(p.replication_config), p.state.name) for p in c.scm.pipelines.pipelines())
    for row in s["pipelines"]:
        assert row["states"] == {
            st.name: counted[(row["replicationConfig"], st.name)] for st in PipelineState
        }
        assert row["total"] == sum(row["states"].values())
    assert s["openRatisThree"] == counted[("RATIS/THREE", "OPEN")]
    limits = s["datanodeLimits"]
    assert limits["datanodes"] == 6
    judged = limits["belowLimit"] + limits["atLimit"] + limits["overLimit"] + limits["noLimit"]
    assert judged + limits["notPlaceable"] == 6


def test_each_datanode_against_its_own_limit() -> None:
    """With the fixed limit off, a node's limit is per.metadata.disk x its metadata volumes (Ozone's
    "Calculating Ratis Pipeline Limits" doc)."""
    c = settled_cluster(6, overrides={"ozone.scm.datanode.pipeline.limit": "0"}, metadata_disks=2)
    api = scm_api(c.scm, "scm-1")
    rows = ok(api, "/api/v1/pipelines/datanodes?limit=1000")["items"]
    assert len(rows) == 6
    for row in rows:
        assert row["limit"] == 2 * 2 == row["metadataVolumes"] * 2
        assert row["ratisThree"] == c.scm.pipelines.ratis_three_count(row["uuid"])
    s = ok(api, "/api/v1/pipelines/statistics")
    assert s["clusterLimit"] == {"branch": "none", "allowed": None}
    assert (
        s["planner"]["plan"]["steps"][0]
        == "Group 1: 6 datanodes * (2 pipelines/disk * 2 disks/datanode) = 24 pipeline slots"
    )


def test_datanodes_are_the_cli_listing_plus_heartbeat_volumes_queue_and_progress(cluster) -> None:
    c, api = cluster
    page = ok(api, "/api/v1/datanodes?limit=1000")
    assert page["total"] == 6
    names = [(n["networkLocation"], n["hostname"]) for n in page["items"]]
    assert names == sorted(names)
    stale = ok(api, "/api/v1/datanodes?health=STALE")["items"]
    victim = next(iter(c.datanodes))
    assert [n["uuid"] for n in stale] == [victim]
    info = c.scm.nodes.node(victim)
    assert stale[0]["lastHeartbeatAgoMs"] == c.clock.now_ms() - info.last_heartbeat_ms > 5 * MINUTE
    assert stale[0]["lastHeartbeat"] == info.last_heartbeat_wall_ms
    assert stale[0]["volumes"] == [
        {
            "location": v.location,
            "capacity": v.capacity,
            "used": v.used,
            "remaining": v.remaining,
            "failed": False,
        }
        for v in info.report.storage
    ]
    queued = Counter(cmd.type.name for cmd in c.scm.nodes.commands.peek(victim))
    assert stale[0]["commandQueue"]["queuedInScm"] == dict(queued)
    leaving = ok(api, "/api/v1/datanodes?opState=DECOMMISSIONING")["items"]
    assert len(leaving) == 1 and leaving[0]["adminProgress"] is not None
    assert set(leaving[0]["adminProgress"]) == {
        "containersLeft",
        "underReplicated",
        "unclosed",
        "sufficientlyReplicated",
        "pipelinesWaitingToClose",
    }


def test_charts_have_one_entry_per_datanode(cluster) -> None:
    c, api = cluster
    d = ok(api, "/api/v1/charts/datanodes")
    listed = ok(api, "/api/v1/datanodes?limit=1000")["items"]
    assert d["datanodes"] == 6 and d["hostnames"] == [n["hostname"] for n in listed]
    assert d["ratisThree"] == [c.scm.pipelines.ratis_three_count(n["uuid"]) for n in listed]
    assert d["pipelineLimit"] == [2] * 6 and len(d["usedPercent"]) == 6


def test_containers_report_list_and_detail(cluster) -> None:
    c, api = cluster
    assert ok(api, "/api/v1/containers/report") == c.scm.replication.report.to_dict()
    everything = c.scm.containers.containers()
    page = ok(api, "/api/v1/containers?offset=1&limit=2")
    assert page["total"] == len(everything)
    assert [x["containerID"] for x in page["items"]] == [i.container_id for i in everything[1:3]]
    open_ones = ok(api, "/api/v1/containers?state=OPEN&limit=1000")
    assert [x["containerID"] for x in open_ones["items"]] == [
        i.container_id for i in c.scm.containers.containers(LifeCycleState.OPEN)
    ]
    cid = everything[0].container_id
    detail = ok(api, f"/api/v1/containers/{cid}")
    assert detail["containerID"] == cid
    assert {r["datanode"] for r in detail["replicas"]} == {r.datanode for r in c.scm.containers.replicas(cid)}
    assert detail["health"] == c.scm.replication.container_health(cid).name
    assert detail["hostnames"] == {
        r["datanode"]: c.scm.nodes.node(r["datanode"]).details.hostname for r in detail["replicas"]
    }
    assert "no such container" in bad(api, "/api/v1/containers/999999", 404)


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("/api/v1/pipelines?state=SHUT", "state='SHUT': must be one of"),
        ("/api/v1/pipelines?replication=RATIS/NINE", "replication='RATIS/NINE'"),
        ("/api/v1/pipelines?limit=0", "limit=0"),
        ("/api/v1/pipelines?offset=-1", "offset=-1"),
        ("/api/v1/pipelines/datanodes?limit=1001", "limit=1001"),
        ("/api/v1/datanodes?health=ALIVE", "health='ALIVE'"),
        ("/api/v1/datanodes?opState=GONE", "opState='GONE'"),
        ("/api/v1/containers?state=OPENED", "state='OPENED'"),
        ("/api/v1/containers?offset=x", "offset='x': not an integer"),
        ("/api/v1/containers/0", "id=0: must be from 1"),
        ("/api/v1/containers/abc", "id='abc': not an integer"),
        (f"/api/v1/containers/{1 << 63}", "must be from 1 to"),
    ],
)
def test_bad_input_is_refused_naming_the_parameter(cluster, path: str, says: str) -> None:
    _, api = cluster
    assert says in bad(api, path)


def test_history_samples_containers_by_state_on_the_core_clock() -> None:
    c = settled_cluster(datanodes=3, racks=1)
    api = scm_api(c.scm, "scm-1")
    c.advance(SECOND)  # the sampler's first run is the core's next tick
    first = ok(api, "/api/v1/history/containers")
    assert first["intervalMs"] == HISTORY_INTERVAL_MS
    assert set(first["series"]) == {s.name for s in LifeCycleState}
    assert first["series"]["OPEN"] == [[c.clock.wall_ms(), 0]]
    c.write_block(1 << 20)
    c.advance(HISTORY_INTERVAL_MS)
    series = ok(api, "/api/v1/history/containers")["series"]["OPEN"]
    assert series[1] == [c.clock.wall_ms(), c.scm.containers.count(LifeCycleState.OPEN)]
    assert series[1][1] > 0 and series[1][0] - series[0][0] == HISTORY_INTERVAL_MS


def test_history_keeps_the_latest_samples_only() -> None:
    c = settled_cluster(datanodes=3, racks=1)
    history = ContainerHistory(c.scm, samples=3)
    for _ in range(5):
        c.advance(SECOND)
        history.sample()
    series = history.to_dict()["series"]["OPEN"]
    assert [t for t, _ in series] == [
        c.clock.wall_ms() - 2 * SECOND,
        c.clock.wall_ms() - SECOND,
        c.clock.wall_ms(),
    ]
