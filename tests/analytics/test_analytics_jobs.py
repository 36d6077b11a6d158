"""The `rm-report` and `affected-keys` jobs end to end (run() as the CLI calls it) on a snapshot of a failing
SCM core with keys added: their files, their terminal output, and affected-keys' answer against the
keys whose blocks sit in containers the SCM's own Replication Manager found in the chosen states."""

from __future__ import annotations

import argparse
import json
import random
from collections import defaultdict
from pathlib import Path

import pyarrow.dataset as ds
import pytest

from pyozone.analytics.jobs import JobError, affected_keys, rm_report
from pyozone.analytics.reader import Snapshot
from pyozone.analytics.scm_snapshot import batches, take_view
from pyozone.analytics.snapshot_writer import SnapshotWriter
from pyozone.config import OzoneConfiguration
from pyozone.hdds.container_health import ContainerHealthState
from tests.analytics.rm_cores import SAMPLE_LIMIT, failing_core

CONTAINERS = 1500
S = ContainerHealthState


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A failing core's snapshot with 3000 keys of 1-3 blocks in random containers; the health the
    core's Replication Manager gives every container (its scan runs after the snapshot)."""
    h = failing_core(seed=11, dead=[2, 5, 8, 11, 14], containers=CONTAINERS)
    rng = random.Random(11)
    keys = [
        {
            "volume": f"vol{rng.randrange(3)}",
            "bucket": f"bucket{rng.randrange(2)}",
            "key": f"dir/key-{i}",
            "size": 1000 + i,
            "replication_config": "RATIS/THREE",
            "created_ms": i,
            "blocks": [
                {"container_id": rng.randint(1, CONTAINERS), "local_id": i * 10 + b, "length": 100 + b}
                for b in range(rng.randint(1, 3))
            ],
        }
        for i in range(3000)
    ]
    path = tmp_path_factory.mktemp("snapshot")
    view = take_view(h.scm)
    with SnapshotWriter(path, view.cluster_id, "scm", view.created_ms) as writer:
        for table, batch in batches(view):
            writer.add_batch(table, batch)
        writer.add_rows("keys", keys)
        writer.finish()
    h.rm.process_all()
    health = {c.container_id: h.rm.container_health(c.container_id) for c in h.scm.containers.containers()}
    return path, keys, health


def job_args(**options) -> argparse.Namespace:
    conf = OzoneConfiguration({"hdds.scm.replication.container.sample.limit": str(SAMPLE_LIMIT)})
    return argparse.Namespace(conf=conf, **options)


def expected_keys(keys: list[dict], health: dict, states: tuple[S, ...]) -> dict[tuple, tuple]:
    found = {}
    for k in keys:
        hits = [b for b in k["blocks"] if health[b["container_id"]] in states]
        if hits:
            found[(k["volume"], k["bucket"], k["key"])] = (
                len(hits),
                sum(b["length"] for b in hits),
                sorted({b["container_id"] for b in hits}),
                sorted({health[b["container_id"]].name for b in hits}),
            )
    return found


def read(path: Path) -> list[dict]:
    return ds.dataset(path, format="parquet").to_table().to_pylist()


@pytest.mark.parametrize(
    "states",
    [affected_keys.DEFAULT_STATES, (S.UNDER_REPLICATED, S.QUASI_CLOSED_STUCK)],
    ids=["default", "under-replicated-and-stuck"],
)
def test_affected_keys_finds_the_keys_in_containers_of_the_chosen_states(
    spark, cluster, tmp_path: Path, capsys, states
) -> None:
    path, keys, health = cluster
    want = expected_keys(keys, health, states)
    assert len(want) > 20  # a meaningful answer, not a vacuous one

    assert (
        affected_keys.run(spark, Snapshot(spark, path), job_args(states=states, csv=True, top=3), tmp_path)
        == 0
    )

    got = {
        (r["volume"], r["bucket"], r["key"]): (
            r["affected_blocks"],
            r["affected_bytes"],
            r["containers"],
            r["states"],
        )
        for r in read(tmp_path / "affected-keys" / "keys")
    }
    assert got == want
    buckets = {
        (r["volume"], r["bucket"]): (r["keys"], r["affected_blocks"])
        for r in read(tmp_path / "affected-keys" / "buckets")
    }
    rollup: dict[tuple, list[int]] = defaultdict(lambda: [0, 0])
    for (volume, bucket, _), (blocks, *_) in want.items():
        rollup[(volume, bucket)][0] += 1
        rollup[(volume, bucket)][1] += blocks
    assert buckets == {b: tuple(v) for b, v in rollup.items()}
    summary = json.loads((tmp_path / "affected-keys.json").read_text())
    assert summary["affectedKeys"] == len(want)
    assert summary["affectedContainers"] == {
        s.name: sum(1 for v in health.values() if v is s) for s in states
    }
    parts = sorted((tmp_path / "affected-keys" / "keys-csv").glob("*.csv"))
    lines = [line for p in parts for line in p.read_text().splitlines()]
    header = ",".join(affected_keys.KEY_COLUMNS) + ",affected_blocks,affected_bytes,containers,states"
    assert lines.count(header) == len(parts) and len(lines) == len(want) + len(parts)
    out = capsys.readouterr().out
    assert f"{len(want):,} keys" in out and "VOLUME" in out


def test_affected_keys_csv_needs_an_output_directory(spark, cluster) -> None:
    with pytest.raises(JobError, match="--out"):
        affected_keys.run(
            spark,
            Snapshot(spark, cluster[0]),
            job_args(states=affected_keys.DEFAULT_STATES, csv=True, top=3),
            None,
        )


def test_states_must_be_health_states_other_than_healthy() -> None:
    parser = argparse.ArgumentParser()
    affected_keys.add_arguments(parser)
    assert parser.parse_args(["--states", "missing, open_unhealthy"]).states == (S.MISSING, S.OPEN_UNHEALTHY)
    for bad in ("HEALTHY", "MISSING,LOST", ""):
        with pytest.raises(SystemExit):
            parser.parse_args(["--states", bad])


def test_rm_report_writes_the_admin_json_and_prints_the_admin_report(
    spark, cluster, tmp_path: Path, capsys
) -> None:
    path = cluster[0]
    assert rm_report.run(spark, Snapshot(spark, path), job_args(json=False), tmp_path) == 0
    table = capsys.readouterr().out
    data = json.loads((tmp_path / "rm-report.json").read_text())
    assert set(data) == {"reportTimeStamp", "sampleLimit", "stats", "samples"}
    assert (
        data["sampleLimit"] == SAMPLE_LIMIT
        and data["reportTimeStamp"] == Snapshot(spark, path).manifest.created_ms
    )
    assert (
        "Container Summary Report" in table
        and f"UNDER_REPLICATED: {data['stats']['UNDER_REPLICATED']}" in table
    )
    assert rm_report.run(spark, Snapshot(spark, path), job_args(json=True), None) == 0
    assert json.loads(capsys.readouterr().out) == data
