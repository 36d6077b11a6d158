"""The planning jobs: pipelines (= the real planner), decommission (hand-checked numbers), namespace."""

from __future__ import annotations

import argparse
import json
import math

import pyarrow.parquet as pq
import pytest

from pyozone.analytics.generate import Failures, GenerateSpec, generate
from pyozone.analytics.jobs import JobError, decommission, namespace, pipelines
from pyozone.analytics.reader import Snapshot
from pyozone.analytics.schema import TABLES
from pyozone.config import OzoneConfiguration
from pyozone.scm.pipeline.planner import InventoryNode, plan_pipelines
from pyozone.scm.settings import ScmSettings
from tests.analytics.handmade import MB, container, key, node, replica, write_snapshot


@pytest.fixture(scope="module")
def generated(spark, tmp_path_factory):
    out = tmp_path_factory.mktemp("jobs") / "snapshot"
    spec = GenerateSpec(2000, 30, 2000, racks=3, seed=3, failures=Failures(dead=2, decommissioning=1))
    generate(spark, spec, out)
    return Snapshot(spark, out)


def job_args(parser_setup, *argv: str, conf: OzoneConfiguration | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser_setup(parser)
    args = parser.parse_args(list(argv))
    args.conf = conf or OzoneConfiguration()
    return args


def test_pipelines_job_equals_the_planner(spark, generated, tmp_path, capsys):
    nodes = pq.read_table(generated.path / "nodes", schema=TABLES["nodes"]).to_pylist()
    inventory = [
        InventoryNode(n["uuid"], n["rack"], n["data_disks"] - n["failed_disks"], n["metadata_disks"])
        for n in nodes
        if n["health"] == "HEALTHY" and n["operational_state"] == "IN_SERVICE"
    ]
    assert len(inventory) == 27
    args = job_args(
        pipelines.add_arguments, "--datanode-limit", "0,2,3", "--per-disk", "1,2", "--global", "0,25"
    )
    assert pipelines.run(spark, generated, args, tmp_path) == 0

    summary = json.loads((tmp_path / "pipelines.json").read_text())
    assert summary["datanodes"] == 27 and len(summary["plans"]) == 12
    for plan in summary["plans"]:
        conf = OzoneConfiguration(
            {
                "ozone.scm.datanode.pipeline.limit": str(plan["datanode_pipeline_limit"]),
                "ozone.scm.pipeline.per.metadata.disk": str(plan["per_metadata_disk"]),
                "ozone.scm.ratis.pipeline.limit": str(plan["ratis_pipeline_limit"]),
            }
        )
        expected = plan_pipelines(ScmSettings.from_conf(conf), inventory)
        assert (plan["ratis_three"], plan["ratis_one"], plan["node_target"]) == (
            expected.ratis_three,
            expected.ratis_one,
            expected.node_target,
        )
    table = pq.read_table(tmp_path / "pipelines" / "plans").to_pylist()
    assert sorted(r["ratis_three"] for r in table) == sorted(p["ratis_three"] for p in summary["plans"])
    out = capsys.readouterr().out
    assert "Datanodes: 27 healthy in service on 3 rack(s) of 30" in out
    assert "RATIS/THREE" in out.splitlines()[2]


def test_pipelines_job_defaults_to_the_configured_limits(spark, generated, capsys):
    conf = OzoneConfiguration({"ozone.scm.datanode.pipeline.limit": "3"})
    assert pipelines.run(spark, generated, job_args(pipelines.add_arguments, conf=conf), None) == 0
    rows = capsys.readouterr().out.splitlines()[3:]
    assert len(rows) == 1 and rows[0].split()[:3] == ["3", "2", "0"]
    assert rows[0].split()[-1] == str(3 * 27 // 3)


@pytest.fixture(scope="module")
def tiny(spark, tmp_path_factory):
    """dn1..dn6 healthy in service, dn7 dead. Decommissioning dn1:
    c1 3 CLOSED copies: 1 new copy from dn1, dn2 or dn3;  c2 4 copies: none needed;
    c3 dn2's copy UNHEALTHY: 1 (dn1's), from dn1 or dn3;  c4 not on dn1;
    c5 EC 3-2, index 1 on dn1: copied from dn1;  c6 dn2 at a lower BCSID: from dn1 or dn3 only;
    c7 OPEN: 1 copy, no source until it closes."""
    nodes = [node(i) for i in range(1, 7)] + [node(7, health="DEAD")]
    containers = [
        container(1, 100),
        container(2, 200),
        container(3, 300),
        container(4, 400),
        container(5, 150, config="EC/RS-3-2-1024k"),
        container(6, 500),
        container(7, 10, state="OPEN"),
    ]
    replicas = (
        [replica(1, dn) for dn in (1, 2, 3)]
        + [replica(2, dn) for dn in (1, 2, 3, 4)]
        + [replica(3, 1), replica(3, 2, state="UNHEALTHY"), replica(3, 3)]
        + [replica(4, dn) for dn in (2, 3, 4)]
        + [replica(5, dn, used_mb=50, index=dn) for dn in range(1, 6)]
        + [replica(6, 1), replica(6, 2, seq=9), replica(6, 3)]
        + [replica(7, dn, state="OPEN") for dn in (1, 5, 6)]
    )
    keys = [
        key("v1", "b1", "empty", 0),
        key("v1", "b1", "one", 1),
        key("v1", "b2", "k1023", 1023),
        key("v1", "b2", "k1024", 1024),
        key("v2", "b1", "big-1", (1 << 40) - 1),
        key("v2", "b1", "big", 1 << 40),
    ]
    path = tmp_path_factory.mktemp("tiny") / "snapshot"
    write_snapshot(path, {"nodes": nodes, "containers": containers, "replicas": replicas, "keys": keys})
    return Snapshot(spark, path)


def test_decommission_numbers(spark, tiny, tmp_path):
    args = job_args(decommission.add_arguments, "--nodes", "dn1", "--copy-mb-s", "1")
    assert decommission.run(spark, tiny, args, tmp_path) == 0
    summary = json.loads((tmp_path / "decommission.json").read_text())
    assert summary["containersWithReplicaOnNodes"] == 6  # c1, c2, c3, c5, c6, c7
    assert summary["containersNeedingCopies"] == 5
    assert summary["newCopies"] == 5
    assert summary["copyBytes"] == (100 + 300 + 50 + 500 + 10) * MB
    assert summary["containersWithoutSource"] == 1
    sources = {s["hostname"]: s for s in summary["sources"]}
    assert set(sources) == {"dn1", "dn2", "dn3"}
    assert sources["dn1"]["containers"] == 4 and sources["dn1"]["copies"] == pytest.approx(
        1 / 3 + 1 / 2 + 1 + 1 / 2
    )
    assert sources["dn1"]["bytes"] == pytest.approx((100 / 3 + 150 + 50 + 250) * MB)
    assert sources["dn2"]["bytes"] == pytest.approx(100 / 3 * MB)
    assert sources["dn3"]["bytes"] == pytest.approx((100 / 3 + 150 + 250) * MB)
    # dn1 is leaving service: min(ceil(20 x 2), ceil(10 x 2)) = 20; the others min(20, 10) = 10
    assert (sources["dn1"]["state"], sources["dn1"]["concurrency"]) == ("DECOMMISSIONING", 20)
    assert sources["dn3"]["concurrency"] == 10
    assert summary["criticalPathSeconds"] == pytest.approx((100 / 3 + 150 + 250) / 10)
    # 6 HEALTHY nodes x limit 20 x inflight factor 0.75 = 90 copies at once
    assert summary["inflightLimit"] == 90
    assert summary["inflightBoundSeconds"] == pytest.approx(960 / 90)
    assert summary["estimateSeconds"] == summary["criticalPathSeconds"]
    rows = {r["container_id"]: r for r in pq.read_table(tmp_path / "decommission" / "containers").to_pylist()}
    assert {c: r["new_copies"] for c, r in rows.items()} == {1: 1, 2: 0, 3: 1, 5: 1, 6: 1, 7: 1}
    assert rows[5]["indexes"] == [1]
    assert {load["datanode"] for load in rows[6]["loads"]} == {"uuid-1", "uuid-3"}


def test_decommission_throttling_follows_the_settings(spark, tiny, tmp_path):
    conf = OzoneConfiguration(
        {
            "hdds.datanode.replication.streams.limit": "1",
            "hdds.datanode.replication.outofservice.limit.factor": "3",
        }
    )
    args = job_args(decommission.add_arguments, "--nodes", "uuid-1", "--copy-mb-s", "1", conf=conf)
    assert decommission.run(spark, tiny, args, tmp_path) == 0
    summary = json.loads((tmp_path / "decommission.json").read_text())
    sources = {s["hostname"]: s for s in summary["sources"]}
    assert sources["dn1"]["concurrency"] == min(math.ceil(20 * 3), math.ceil(1 * 3)) == 3
    assert sources["dn3"]["concurrency"] == 1
    assert summary["estimateSeconds"] == pytest.approx((100 / 3 + 150 + 250) / 1)


def test_decommission_unknown_node(spark, tiny):
    with pytest.raises(JobError, match=r"unknown datanode.*nosuch"):
        decommission.run(spark, tiny, job_args(decommission.add_arguments, "--nodes", "dn1,nosuch"), None)


def test_decommission_of_a_generated_cluster_is_consistent(spark, generated, tmp_path):
    nodes = pq.read_table(generated.path / "nodes", columns=["hostname", "health"]).to_pylist()
    healthy = [n["hostname"] for n in nodes if n["health"] == "HEALTHY"][:2]
    args = job_args(decommission.add_arguments, "--nodes", ",".join(healthy))
    assert decommission.run(spark, generated, args, tmp_path) == 0
    summary = json.loads((tmp_path / "decommission.json").read_text())
    assert 0 < summary["containersNeedingCopies"] <= summary["containersWithReplicaOnNodes"]
    assert sum(s["copies"] for s in summary["sources"]) == pytest.approx(
        summary["newCopies"] - _copies_without_source(tmp_path)
    )


def _copies_without_source(out) -> int:
    rows = pq.read_table(out / "decommission" / "containers", columns=["new_copies", "loads"]).to_pylist()
    return sum(r["new_copies"] for r in rows if not r["loads"])


def test_namespace_classes_and_chart(spark, tiny, tmp_path, capsys):
    args = job_args(namespace.add_arguments, "--top", "2")
    assert namespace.run(spark, tiny, args, tmp_path) == 0
    summary = json.loads((tmp_path / "namespace.json").read_text())
    assert {c["log2"]: c["keys"] for c in summary["sizeClasses"]} == {-1: 1, 0: 1, 9: 1, 10: 1, 39: 1, 40: 1}
    assert [(b["volume"], b["bucket"]) for b in summary["topBuckets"]] == [("v2", "b1"), ("v1", "b2")]
    assert (summary["keys"], summary["buckets"], summary["volumes"]) == (6, 3, 2)
    assert (tmp_path / "namespace.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    usage = pq.read_table(tmp_path / "namespace" / "buckets").to_pylist()
    assert sorted((u["volume"], u["bucket"], u["keys"]) for u in usage) == [
        ("v1", "b1", 2),
        ("v1", "b2", 2),
        ("v2", "b1", 2),
    ]
    out = capsys.readouterr().out
    assert "Keys: 6" in out and "1.0 KB - 2.0 KB" in out


def test_namespace_of_a_generated_cluster(spark, generated, tmp_path):
    assert namespace.run(spark, generated, job_args(namespace.add_arguments), tmp_path) == 0
    summary = json.loads((tmp_path / "namespace.json").read_text())
    sizes = pq.read_table(generated.path / "keys", columns=["size"]).column("size").to_pylist()
    assert summary["keys"] == len(sizes) == 2000 and summary["bytes"] == sum(sizes)
    assert sum(c["keys"] for c in summary["sizeClasses"]) == 2000
    assert summary["buckets"] == 32
    assert (tmp_path / "namespace.png").stat().st_size > 10_000
