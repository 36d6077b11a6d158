"""The synthetic snapshot generator: row counts, determinism, placement and injected failures."""

from __future__ import annotations

import dataclasses

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pyozone.analytics import generate as gen
from pyozone.analytics import synthetic
from pyozone.analytics.generate import Failures, GenerateSpec, parse_failures
from pyozone.analytics.reader import Snapshot
from pyozone.analytics.schema import TABLES, read_manifest

BASE = GenerateSpec(containers=2000, datanodes=30, keys=3000, racks=3, seed=7)
FAILED = GenerateSpec(
    containers=2000,
    datanodes=30,
    keys=500,
    racks=3,
    seed=7,
    ec_fraction=0.1,
    failures=Failures(dead=3, decommissioning=2, maintenance=1, unhealthy=0.1, missing=0.05),
)


@pytest.fixture(scope="module")
def base(spark, tmp_path_factory):
    """Small chunks and batches, so the Spark job splits the work into several tasks and batches."""
    out = tmp_path_factory.mktemp("gen") / "base"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(gen, "CHUNK_ROWS", 700)
        patch.setattr(gen, "BATCH_ROWS", 300)
        gen.generate(spark, BASE, out)
    return out


@pytest.fixture(scope="module")
def failed(spark, tmp_path_factory):
    out = tmp_path_factory.mktemp("gen") / "failed"
    gen.generate(spark, FAILED, out)
    return out


def table(path, name) -> pa.Table:
    return pq.read_table(path / name, schema=TABLES[name])


def test_row_counts_per_table(base, spark):
    manifest = read_manifest(base)
    assert manifest.source == "synthetic"
    assert manifest.rows == {
        "nodes": 30,
        "pipelines": 20 + 30,  # floor(2 x 30 / 3) RATIS/THREE + one RATIS/ONE per node
        "containers": 2000,
        "replicas": 6000,
        "pending_ops": 0,
        "keys": 3000,
        "deleted_blocks": 0,
    }
    snapshot = Snapshot(spark, base)
    assert {name: snapshot.table(name).count() for name in TABLES} == manifest.rows


def test_written_rows_are_the_pure_rows_whatever_the_chunking(base):
    """Spark wrote (in 700-row tasks and 300-row batches) exactly what one call produces: the output
    depends on the seed only."""
    layout = BASE.layout()
    for name, rows in (
        ("containers", synthetic.container_rows),
        ("replicas", synthetic.replica_rows),
        ("keys", synthetic.key_rows),
    ):
        total = BASE.keys if name == "keys" else BASE.containers
        expected = pa.Table.from_batches([rows(layout, 0, total)])
        keys = (
            [(c, "ascending") for c in ("container_id", "datanode")]
            if name != "keys"
            else [("key", "ascending")]
        )
        keys = [k for k in keys if k[0] in expected.column_names]
        assert table(base, name).sort_by(keys).equals(expected.sort_by(keys)), name


def test_another_seed_gives_other_rows():
    layout = BASE.layout()
    other = dataclasses.replace(BASE, seed=8).layout()
    assert synthetic.replica_rows(layout, 0, 100).equals(synthetic.replica_rows(BASE.layout(), 0, 100))
    assert not synthetic.replica_rows(layout, 0, 100).equals(synthetic.replica_rows(other, 0, 100))


def test_ratis_replicas_are_rack_aware(base):
    nodes = table(base, "nodes").to_pandas().set_index("uuid")
    replicas = table(base, "replicas").to_pandas()
    replicas["rack"] = nodes.loc[replicas.datanode, "rack"].to_numpy()
    per_container = replicas.groupby("container_id").agg(
        nodes=("datanode", "nunique"), racks=("rack", "nunique")
    )
    closed = table(base, "containers").to_pandas().query("state == 'CLOSED'").container_id
    assert (per_container.nodes == 3).all()
    assert (per_container.loc[closed].racks == 2).all()
    assert nodes.rack.value_counts().to_dict() == {"/rack1": 10, "/rack2": 10, "/rack3": 10}


def test_open_containers_sit_on_their_pipelines(base):
    pipelines = table(base, "pipelines").to_pandas().set_index("pipeline_id")
    containers = table(base, "containers").to_pandas()
    replicas = table(base, "replicas").to_pandas()
    opened = containers[containers.state == "OPEN"]
    assert len(opened) > 0
    for c in opened.itertuples():
        on = set(replicas[replicas.container_id == c.container_id].datanode)
        assert on == set(pipelines.loc[c.pipeline_id, "nodes"])
        assert pipelines.loc[c.pipeline_id, "state"] == "OPEN"


def test_keys_reference_containers_with_unique_block_ids(base):
    blocks = table(base, "keys").column("blocks").combine_chunks().flatten()
    container_ids = blocks.field("container_id").to_numpy()
    assert container_ids.min() >= 1 and container_ids.max() <= BASE.containers
    assert len(set(blocks.field("local_id").to_pylist())) == len(blocks)
    keys = table(base, "keys").to_pandas()
    assert keys.blocks.map(lambda b: sum(x["length"] for x in b)).equals(keys["size"])
    assert keys.volume.nunique() == 4 and keys.groupby("volume").bucket.nunique().max() == 8


def test_dead_nodes_lose_their_replicas(failed):
    nodes = table(failed, "nodes").to_pandas()
    replicas = table(failed, "replicas").to_pandas()
    dead = set(nodes[nodes.health == "DEAD"].uuid)
    assert len(dead) == 3
    assert not dead & set(replicas.datanode)
    assert nodes.operational_state.value_counts().to_dict() == {
        "IN_SERVICE": 27,
        "DECOMMISSIONING": 2,
        "IN_MAINTENANCE": 1,
    }
    pipelines = table(failed, "pipelines").to_pandas()
    leaving = set(nodes[(nodes.health == "DEAD") | (nodes.operational_state != "IN_SERVICE")].uuid)
    touches = pipelines.nodes.map(lambda members: bool(leaving & set(members)))
    assert (pipelines.state == touches.map({True: "CLOSED", False: "OPEN"})).all()


def test_unhealthy_and_missing_fractions(failed):
    replicas = table(failed, "replicas").to_pandas()
    containers = table(failed, "containers").to_pandas()
    assert (replicas.state == "UNHEALTHY").mean() == pytest.approx(0.1, abs=0.02)
    closed = containers[containers.state == "CLOSED"].container_id
    without = set(closed) - set(replicas.container_id)
    assert len(without) / len(closed) == pytest.approx(0.05, abs=0.015)


def test_ec_containers_have_one_replica_per_index(failed):
    containers = table(failed, "containers").to_pandas()
    replicas = table(failed, "replicas").to_pandas()
    ec = containers[containers.replication_config == synthetic.EC_CONFIG].container_id
    assert len(ec) / len(containers) == pytest.approx(0.1, abs=0.03)
    ec_replicas = replicas[replicas.container_id.isin(ec)]
    assert set(ec_replicas.replica_index) == {1, 2, 3, 4, 5}
    assert not ec_replicas.duplicated(["container_id", "replica_index"]).any()
    assert not ec_replicas.duplicated(["container_id", "datanode"]).any()


def test_rack_skew():
    assert synthetic.rack_sizes(30, 3, 4.0) == [20, 5, 5]
    assert synthetic.rack_sizes(10, 4, 1.0) == [3, 3, 2, 2]
    assert min(synthetic.rack_sizes(5, 5, 100.0)) == 1


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("dead=x", "failure item 'dead=x': 'x' is not a whole number"),
        ("bogus=1", "failure item 'bogus=1': expected NAME=VALUE"),
        ("dead", "failure item 'dead': expected NAME=VALUE"),
        ("unhealthy=1.5", "failure item 'unhealthy=1.5': a fraction must be between 0 and 1"),
        ("dead=1,dead=2", "failure item 'dead=2': dead is given twice"),
        ("skew=0.5", "failure item 'skew=0.5': the skew must be between 1 and 1000"),
    ],
)
def test_bad_failure_specs_name_the_item(spec, message):
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        parse_failures(spec)


def test_failure_spec_and_problems():
    assert parse_failures(" dead=2, unhealthy=0.01 ,skew=2") == Failures(dead=2, unhealthy=0.01, skew=2.0)
    spec = GenerateSpec(containers=10, datanodes=4, keys=0, failures=Failures(dead=3, maintenance=2))
    assert spec.problems() == ["--failures: dead + decommissioning + maintenance = 5 exceeds the 4 datanodes"]
    assert (
        "--ec-fraction needs at least 5 datanodes (EC/RS-3-2)"
        in GenerateSpec(10, 4, 0, ec_fraction=0.1).problems()
    )
