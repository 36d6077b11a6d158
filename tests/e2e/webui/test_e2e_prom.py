"""Acceptance (issue 16): on one live cluster (`cluster up`: SCM, OM, the S3 gateway and 4 datanodes), every
daemon's /prom parses with prometheus_client's parser, and its counters move when keys are written
(`pyozone sh key put`, a boto3 put), when a datanode dies, and when the Replication Manager repairs what it
held; /logLevel changes a live daemon's logging without a restart; /jmx, /conf and /stacks answer.

Four datanodes: a RATIS/THREE container that loses a replica needs a fourth node to find a new home. The
datanode is killed last, so the earlier checks see the whole cluster.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from pyozone.cluster.layout import HOST
from tests.e2e.cluster.cluster_helpers import DEAD_S, LiveCluster, live_cluster, sh, wait_container_closed
from tests.e2e.cluster.s3_cluster import S3Endpoint, getsecret
from tests.polling import wait_for

DATANODES = 4
THREAD_INTERVAL = "2s"
OVERRIDES = {
    "hdds.scm.replication.thread.interval": THREAD_INTERVAL,  # /conf must show this one, from the site file
    "hdds.scm.replication.under.replicated.interval": "1s",
    "ozone.scm.close.container.wait.duration": "1s",
}
DAEMONS = ("scm", "om", "s3g", *(f"dn{i}" for i in range(1, DATANODES + 1)))
HEARTBEAT_LOGGER = "pyozone.scm.server.datanode_service"  # logs each heartbeat at DEBUG
VOL, BUCKET = "prom", "bucket1"
KEY_BYTES = 3 << 20

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


@pytest.fixture(scope="module")
def cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveCluster]:
    with live_cluster(request, tmp_path_factory, "prom", DATANODES, overrides=OVERRIDES) as c:
        yield c


def url(cluster: LiveCluster, daemon: str, path: str) -> str:
    kind = "admin" if daemon == "s3g" else "http"
    return f"http://{HOST}:{cluster.port(daemon, kind)}{path}"


def get(cluster: LiveCluster, daemon: str, path: str) -> tuple[int, str, str]:
    """(status, Content-Type, body) of a GET on the daemon's web server."""
    try:
        with urllib.request.urlopen(url(cluster, daemon, path), timeout=10) as answer:
            return answer.status, answer.headers["Content-Type"], answer.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers["Content-Type"], e.read().decode()


def prom(cluster: LiveCluster, daemon: str) -> Samples:
    status, content_type, text = get(cluster, daemon, "/prom")
    assert status == 200 and content_type.startswith("text/plain"), (daemon, status, content_type)
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def total(samples: Samples, name: str, **labels: str) -> float:
    """The sum of `name`'s samples carrying `labels` (whatever other labels they have)."""
    wanted = set(labels.items())
    return sum(v for (n, have), v in samples.items() if n == name and wanted <= have)


def test_every_daemons_prom_parses(cluster: LiveCluster) -> None:
    for daemon in DAEMONS:
        samples = prom(cluster, daemon)
        assert total(samples, "process_cpu_seconds_total") > 0, daemon  # the JvmMetrics source
    scm = wait_for(
        lambda: (
            (s := prom(cluster, "scm"))
            and total(s, "scm_node_metrics_nodes", health="HEALTHY", operational_state="IN_SERVICE")
            == DATANODES
            and s
        ),
        30,
        f"SCM's gauge: {DATANODES} HEALTHY datanodes",
    )
    assert total(scm, "scm_node_metrics_num_hb_processed_total") > 0
    assert total(scm, "scm_heartbeat_seconds_count") > 0
    assert total(scm, "scm_commands_sent_total", type="createPipelineCommand") >= DATANODES
    assert total(scm, "scm_pipelines", state="OPEN", replication="RATIS/THREE") >= 1
    assert total(scm, "safe_mode_metrics_scm_in_safe_mode") == 0


def log_level(cluster: LiveCluster, query: str) -> tuple[int, Any]:
    status, _, body = get(cluster, "scm", f"/logLevel?{query}&format=json")
    return status, json.loads(body)


def test_log_level_takes_effect_without_a_restart(cluster: LiveCluster) -> None:
    pid = cluster.state.pids["scm"]
    marker = "Heartbeat from datanode"
    assert log_level(cluster, f"log={HEARTBEAT_LOGGER}")[1]["effectiveLevel"] == "INFO"
    assert marker not in cluster.log("scm")
    status, answer = log_level(cluster, f"log={HEARTBEAT_LOGGER}&level=DEBUG")
    assert status == 200 and answer["setLevel"] == "DEBUG", answer
    wait_for(lambda: marker in cluster.log("scm"), 10, "a DEBUG heartbeat line in scm.log")
    assert log_level(cluster, f"log={HEARTBEAT_LOGGER}")[1]["effectiveLevel"] == "DEBUG"
    status, answer = log_level(cluster, f"log={HEARTBEAT_LOGGER}&level=LOUD")
    assert status == 400 and "LOUD" in answer["error"], answer
    assert log_level(cluster, f"log={HEARTBEAT_LOGGER}&level=INFO")[1]["effectiveLevel"] == "INFO"
    assert cluster.state.pids["scm"] == pid and cluster.running()["scm"]


def test_jmx_conf_and_stacks(cluster: LiveCluster) -> None:
    bean = "Hadoop:service=StorageContainerManager,name=ReplicationManagerMetrics"
    status, _, body = get(cluster, "scm", f"/jmx?qry={bean}")
    beans = json.loads(body)["beans"]
    assert status == 200 and [b["name"] for b in beans] == [bean], beans
    assert "replication_manager_metrics_replication_cmds_sent_total" in beans[0]
    assert "replication_manager_metrics_under_replicated_containers" in beans[0]

    status, _, body = get(cluster, "scm", "/conf?format=json")
    properties = {p["key"]: p for p in json.loads(body)["properties"]}
    override = properties["hdds.scm.replication.thread.interval"]
    assert status == 200 and override["value"] == THREAD_INTERVAL, override
    assert override["resource"] == f"file:{cluster.conf_dir.resolve() / 'ozone-site.xml'}", override

    status, _, stacks = get(cluster, "scm", "/stacks")
    assert status == 200 and "Process Thread Dump" in stacks and 'Thread "MainThread"' in stacks, stacks
    assert "Asyncio Task Dump" in stacks and 'Task "scm-tick"' in stacks, stacks


def test_counters_move_when_keys_are_written(cluster: LiveCluster, tmp_path: Path) -> None:
    before = {daemon: prom(cluster, daemon) for daemon in DAEMONS}
    created = [
        sh(cluster, "volume", "create", f"/{VOL}"),
        sh(cluster, "bucket", "create", f"/{VOL}/{BUCKET}"),
    ]
    assert all(r.code == 0 for r in created), created
    data = tmp_path / "data"
    data.write_bytes(bytes(range(256)) * (KEY_BYTES // 256))
    put = sh(cluster, "key", "put", f"/{VOL}/{BUCKET}/key1", str(data))
    assert put.code == 0, put
    after = {daemon: prom(cluster, daemon) for daemon in DAEMONS}

    def moved(daemon: str, name: str, **labels: str) -> float:
        return total(after[daemon], name, **labels) - total(before[daemon], name, **labels)

    assert moved("scm", "scm_pipeline_metrics_num_blocks_allocated_total", replication="RATIS/THREE") >= 1
    assert moved("om", "om_request_seconds_count", type="CommitKey") == 1
    written = sorted(moved(f"dn{i}", "volume_io_stats_write_bytes_total") for i in range(1, DATANODES + 1))
    assert all(n >= KEY_BYTES for n in written[-3:]), written  # each of the pipeline's three replicas


def test_a_small_key_is_one_datanode_request_each_way(cluster: LiveCluster, tmp_path: Path) -> None:
    """Issue 29: a 1 KB key is written by ONE putSmallFile (one pipeline log entry, applied on each of the
    three replicas: no writeChunk, no putBlock) and read back by one GetSmallFile, as the datanodes'
    StorageContainerMetrics count them (after test_counters_move_when_keys_are_written made the bucket)."""
    data = tmp_path / "small"
    data.write_bytes(bytes(range(256)) * 4)
    datanodes = [f"dn{i}" for i in range(1, DATANODES + 1)]

    def ops() -> dict[str, float]:
        samples = [prom(cluster, dn) for dn in datanodes]
        kinds = ("PutSmallFile", "WriteChunk", "PutBlock", "GetSmallFile", "GetBlock", "ReadChunk")
        name = "storage_container_metrics_num_ops_total"
        return {k: sum(total(s, name, type=k) for s in samples) for k in kinds}

    before = ops()
    put = sh(cluster, "key", "put", f"/{VOL}/{BUCKET}/small", str(data))
    assert put.code == 0, put
    written = ops()
    got = sh(cluster, "key", "get", f"/{VOL}/{BUCKET}/small", str(tmp_path / "back"))
    assert got.code == 0, got
    assert (tmp_path / "back").read_bytes() == data.read_bytes()
    read = ops()
    assert {k: written[k] - before[k] for k in ("PutSmallFile", "WriteChunk", "PutBlock")} == {
        "PutSmallFile": 3, "WriteChunk": 0, "PutBlock": 0,
    }  # fmt: skip
    assert {k: read[k] - written[k] for k in ("GetSmallFile", "GetBlock", "ReadChunk")} == {
        "GetSmallFile": 1, "GetBlock": 0, "ReadChunk": 0,
    }  # fmt: skip


def test_the_s3_gateway_counts_a_put(cluster: LiveCluster) -> None:
    access_key, secret_key = getsecret(cluster, "prom")
    s3 = S3Endpoint(cluster, f"http://{HOST}:{cluster.port('s3g', 'http')}", access_key, secret_key).boto3()
    s3_before = prom(cluster, "s3g")
    s3.create_bucket(Bucket="prom-s3")
    s3.put_object(Bucket="prom-s3", Key="object", Body=b"x" * 1000)
    s3_after = prom(cluster, "s3g")
    name, put_object = "s3g_request_seconds_count", {"operation": "PutObject"}
    assert total(s3_after, name, **put_object) - total(s3_before, name, **put_object) == 1


def replicas(cluster: LiveCluster, container_id: int) -> set[str]:
    return {r["datanode"] for r in (cluster.container(container_id) or {}).get("replicas", [])}


def test_a_dead_datanode_and_the_repair_move_scms_counters(cluster: LiveCluster) -> None:
    listed = [c["containerID"] for c in cluster.admin_json("container", "list")]
    written = [cid for cid in listed if len(replicas(cluster, cid)) == 3]
    assert written, "the key's container"
    for cid in written:
        closed = cluster.admin("container", "close", str(cid))
        assert closed.code == 0 or "INVALID_CONTAINER_STATE" in closed.err, closed
    for cid in written:
        wait_container_closed(cluster, cid)
    nodes = cluster.datanodes()
    victim = next(name for name in sorted(nodes) if nodes[name]["uuid"] in replicas(cluster, written[0]))
    affected = [cid for cid in written if nodes[victim]["uuid"] in replicas(cluster, cid)]
    before = prom(cluster, "scm")
    assert total(before, "scm_node_metrics_nodes", health="DEAD") == 0

    cluster.kill(victim)
    seen: set[str] = set()

    def dead() -> Samples | None:
        s = prom(cluster, "scm")
        seen.update(h for h in ("STALE", "DEAD") if total(s, "scm_node_metrics_nodes", health=h) == 1)
        return s if "DEAD" in seen else None

    wait_for(dead, DEAD_S + 20, f"SCM's gauge: {victim} DEAD", interval_s=0.5)
    assert seen == {"STALE", "DEAD"}

    created = "replication_manager_metrics_replicas_created_total"

    def repaired() -> Samples | None:
        s = prom(cluster, "scm")
        return s if total(s, created) - total(before, created) >= len(affected) else None

    after = wait_for(repaired, 60, f"{len(affected)} replica(s) re-created", interval_s=0.5)
    sent = "replication_manager_metrics_replication_cmds_sent_total"
    assert total(after, sent) - total(before, sent) >= len(affected)
    commands = "scm_commands_sent_total"
    replicate = {"type": "replicateContainerCommand"}
    assert total(after, commands, **replicate) - total(before, commands, **replicate) >= len(affected)
    assert all(len(replicas(cluster, cid)) == 3 for cid in affected)
