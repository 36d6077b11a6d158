"""`pyozone analytics generate`: a synthetic snapshot (format v1) written by a Spark job.

The driver builds only the small Layout (datanodes, racks, pipelines, failed nodes) and a range of chunk
numbers; executors turn each chunk of row ids into Arrow batches (pyozone.analytics.synthetic) and write
them as Parquet, so 10M containers or 100M keys never pass through the driver. The manifest is written
last: a generation that fails part-way leaves a directory every reader refuses.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
from pyspark.sql import SparkSession

from pyozone.analytics import synthetic
from pyozone.analytics.reader import spark_schema
from pyozone.analytics.schema import SCHEMA_VERSION, TABLES, Manifest, write_manifest

CHUNK_ROWS = 2_000_000  # rows per Spark task (and Parquet file)
BATCH_ROWS = 131_072  # rows per Arrow batch inside a task: bounds executor memory

_FRACTIONS = ("unhealthy", "missing")
_COUNTS = ("dead", "decommissioning", "maintenance")


@dataclass(frozen=True, slots=True)
class Failures:
    """What `--failures` injects: datanode counts, replica/container fractions and the rack skew."""

    dead: int = 0
    decommissioning: int = 0
    maintenance: int = 0
    unhealthy: float = 0.0
    missing: float = 0.0
    skew: float = 1.0


def parse_failures(spec: str) -> Failures:
    """`dead=2,unhealthy=0.01,...`; a ValueError names the offending item."""
    values: dict[str, float | int] = {}
    for item in (part.strip() for part in spec.split(",")):
        if not item:
            continue
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or name not in (*_COUNTS, *_FRACTIONS, "skew"):
            raise ValueError(
                f"failure item {item!r}: expected NAME=VALUE with NAME one of "
                f"{', '.join((*_COUNTS, *_FRACTIONS, 'skew'))}"
            )
        if name in values:
            raise ValueError(f"failure item {item!r}: {name} is given twice")
        values[name] = _failure_value(item, name, text.strip())
    return Failures(**values)


def _failure_value(item: str, name: str, text: str) -> float | int:
    try:
        value = int(text) if name in _COUNTS else float(text)
    except ValueError:
        kind = "a whole number" if name in _COUNTS else "a number"
        raise ValueError(f"failure item {item!r}: {text!r} is not {kind}") from None
    if name in _COUNTS and value < 0:
        raise ValueError(f"failure item {item!r}: must not be negative")
    if name in _FRACTIONS and not 0.0 <= value <= 1.0:
        raise ValueError(f"failure item {item!r}: a fraction must be between 0 and 1")
    if name == "skew" and not 1.0 <= value <= 1000.0:
        raise ValueError(f"failure item {item!r}: the skew must be between 1 and 1000")
    return value


@dataclass(frozen=True, slots=True)
class GenerateSpec:
    containers: int
    datanodes: int
    keys: int
    racks: int | None = None  # default: min(3, datanodes)
    seed: int = 0
    failures: Failures = field(default_factory=Failures)
    ec_fraction: float = 0.0
    open_fraction: float = 0.01
    volumes: int = 4
    buckets: int = 8  # per volume

    def problems(self) -> list[str]:
        """Everything wrong with the spec, checked before Spark starts."""
        out = []
        f = self.failures
        if self.containers < 0 or self.keys < 0:
            out.append("--containers and --keys must not be negative")
        if self.datanodes < 3:
            out.append("--datanodes must be at least 3 (RATIS/THREE needs three nodes)")
        if not 1 <= self.rack_count <= max(self.datanodes, 1):
            out.append(f"--racks must be between 1 and the number of datanodes ({self.datanodes})")
        if self.keys and not self.containers:
            out.append("keys need containers for their blocks: --containers must be > 0")
        if not 0.0 <= self.ec_fraction <= 1.0 or not 0.0 <= self.open_fraction <= 1.0:
            out.append("--ec-fraction and --open-fraction must be between 0 and 1")
        if self.ec_fraction and self.datanodes < synthetic.EC_WIDTH:
            out.append(f"--ec-fraction needs at least {synthetic.EC_WIDTH} datanodes (EC/RS-3-2)")
        if f.dead + f.decommissioning + f.maintenance > self.datanodes:
            out.append(
                f"--failures: dead + decommissioning + maintenance = "
                f"{f.dead + f.decommissioning + f.maintenance} exceeds the {self.datanodes} datanodes"
            )
        if self.volumes < 1 or self.buckets < 1:
            out.append("--volumes and --buckets must be at least 1")
        return out

    @property
    def rack_count(self) -> int:
        return self.racks if self.racks is not None else min(3, self.datanodes)

    def layout(self) -> synthetic.Layout:
        f = self.failures
        return synthetic.build_layout(
            seed=self.seed,
            containers=self.containers,
            datanodes=self.datanodes,
            racks=self.rack_count,
            skew=f.skew,
            roles=(f.dead, f.decommissioning, f.maintenance),
            ec_fraction=self.ec_fraction,
            open_fraction=self.open_fraction,
            unhealthy=f.unhealthy,
            missing=f.missing,
            volumes=self.volumes,
            buckets=self.buckets,
        )


RowsFn = Callable[[synthetic.Layout, int, int], pa.RecordBatch]


def generate(spark: SparkSession, spec: GenerateSpec, out: Path) -> Manifest:
    """Writes every table under `out`, then the manifest with row counts read back from the files."""
    layout = spec.layout()
    out = out.absolute()
    out.mkdir(parents=True, exist_ok=True)
    sources: dict[str, tuple[int, RowsFn]] = {
        "nodes": (spec.datanodes, synthetic.node_rows),
        "pipelines": (len(layout.pipeline_uuids), synthetic.pipeline_rows),
        "containers": (spec.containers, synthetic.container_rows),
        "replicas": (spec.containers, synthetic.replica_rows),
        "keys": (spec.keys, synthetic.key_rows),
    }
    for table in TABLES:
        total, rows_fn = sources.get(table, (0, None))
        if rows_fn is None:  # pending ops and deleted blocks: none in a fresh synthetic cluster
            spark.createDataFrame([], spark_schema(table)).write.parquet(str(out / table))
        else:
            _write(spark, table, total, rows_fn, layout, out)
    counts = {
        table: spark.read.schema(spark_schema(table)).parquet(str(out / table)).count() for table in TABLES
    }
    manifest = Manifest(
        SCHEMA_VERSION, int(time.time() * 1000), f"synthetic-seed-{spec.seed}", "synthetic", counts
    )
    write_manifest(out, manifest)
    return manifest


def _write(
    spark: SparkSession, table: str, total: int, rows_fn: RowsFn, layout: synthetic.Layout, out: Path
) -> None:
    """One Spark task per chunk of CHUNK_ROWS ids; the task yields Arrow batches of BATCH_ROWS."""
    chunk_rows, batch_rows = CHUNK_ROWS, BATCH_ROWS  # bound now: the closure runs on the executors
    chunks = max(1, math.ceil(total / chunk_rows))

    def produce(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for chunk in batch.column(0).to_pylist():
                end = min(total, (chunk + 1) * chunk_rows)
                for start in range(chunk * chunk_rows, end, batch_rows):
                    yield rows_fn(layout, start, min(end, start + batch_rows))

    frame = spark.range(0, chunks, 1, numPartitions=chunks).mapInArrow(produce, spark_schema(table))
    frame.write.parquet(str(out / table))
