"""Acceptance (issue 13 item 3): Spark local[2] stores tables in pyozone through format("pyozone").

A live cluster (one datanode, RATIS/ONE: the data source's work is the same on any) and the session's
SparkSession: 1M rows written and read back equal, objects
rolled by size and read one input partition each, every save mode, an empty table, and a job whose task
fails leaving nothing visible and no temporary keys. Slow: a driver killed with SIGKILL mid-write.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.functions import count, udf
from pyspark.sql.functions import sum as sum_

from pyozone.analytics.datasource import SaveMode, TableExistsError, TableLocation, parse_table_url, save
from pyozone.analytics.datasource.commit import commit_job, delete_job_output
from pyozone.analytics.datasource.options import WriteSettings
from pyozone.analytics.datasource.task_output import TaskAttempt, write_task
from pyozone.client import OMException, OzoneClient
from tests.e2e.cluster.cluster_helpers import LiveCluster, environment, live_cluster, ozone_client, sh
from tests.polling import wait_for

VOL, BUCKET = "spark", "tables"
ROWS = 1_000_000


@pytest.fixture(scope="module")
def cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveCluster]:
    with live_cluster(request, tmp_path_factory, "datasource", 1) as c:
        created = [
            sh(c, "volume", "create", f"/{VOL}"),
            sh(c, "bucket", "create", f"/{VOL}/{BUCKET}", "-r", "ONE"),
        ]
        assert all(r.code == 0 for r in created), created
        yield c


@pytest.fixture(scope="module")
def client(cluster: LiveCluster) -> Iterator[OzoneClient]:
    with ozone_client(cluster) as c:
        yield c


@pytest.fixture(scope="module")
def base(cluster: LiveCluster) -> str:
    return f"ofs://127.0.0.1:{cluster.port('om', 'rpc')}/{VOL}/{BUCKET}"


def keys(client: OzoneClient, table: str) -> list[str]:
    return [k.name.removeprefix(f"{table}/") for k in client.list_keys(VOL, BUCKET, prefix=f"{table}/")]


def data(client: OzoneClient, table: str) -> list[str]:
    return [k for k in keys(client, table) if not k.startswith("_")]


def rows(spark: SparkSession, n: int, partitions: int = 2) -> DataFrame:
    return spark.range(n, numPartitions=partitions).selectExpr(
        "id", "id * 0.5 AS value", "concat('row-', id) AS name", "CAST(id % 7 AS INT) AS bucket",
        "timestamp_seconds(id) AS at",
    )  # fmt: skip


def load(spark: SparkSession, url: str) -> DataFrame:
    return spark.read.format("pyozone").load(url)


def fingerprint(df: DataFrame) -> tuple[int, int]:
    """Row count and the sum of every row's 64-bit hash: equal for equal multisets of rows, in one pass
    (two exceptAll would read each side twice more)."""
    row = df.selectExpr(f"CAST(xxhash64({', '.join(df.columns)}) AS DECIMAL(38, 0)) AS h").agg(
        count("*"), sum_("h")
    )
    return tuple(row.first())  # type: ignore[return-value]


def same(a: DataFrame, b: DataFrame) -> bool:
    return fingerprint(a) == fingerprint(b)


def test_a_million_rows_round_trip(spark: SparkSession, client: OzoneClient, base: str) -> None:
    df = rows(spark, ROWS)
    df.write.format("pyozone").mode("append").save(f"{base}/million")
    back = load(spark, f"{base}/million")
    assert back.schema == df.schema
    assert fingerprint(back) == fingerprint(df) and fingerprint(df)[0] == ROWS
    objects = data(client, "million")
    assert len(objects) == 2 and all(o.startswith("part-") and o.endswith(".parquet") for o in objects)
    assert keys(client, "million") == sorted([*objects, "_SUCCESS"])  # no _temporary left


@pytest.mark.slow  # a Spark job more: the default suite keeps the round trip and the failed job
def test_objects_roll_by_size_and_read_one_partition_each(
    spark: SparkSession, client: OzoneClient, base: str
) -> None:
    df = rows(spark, 100_000)
    options = {"objectBytes": "128KB", "rowGroupBytes": "128KB"}
    df.write.format("pyozone").mode("append").options(**options).save(f"{base}/rolled")
    objects = data(client, "rolled")
    assert len(objects) >= 6
    back = load(spark, f"{base}/rolled")
    assert back.rdd.getNumPartitions() == len(objects)
    assert same(df, back)


@pytest.mark.slow  # a Spark job more: the default suite keeps the round trip and the failed job
def test_save_modes(spark: SparkSession, client: OzoneClient, base: str) -> None:
    url = f"{base}/modes"
    first, second = rows(spark, 1000), rows(spark, 10, partitions=1)
    save(first, url)  # errorifexists on a new table
    with pytest.raises(TableExistsError):
        save(second, url)
    with pytest.raises(Exception, match="already has data objects"):  # the writer checks it too
        second.write.format("pyozone").mode("append").option("saveMode", "error").save(url)
    with pytest.raises(Exception, match="UNSUPPORTED_DATA_SOURCE_SAVE_MODE"):  # Spark's refusal
        second.write.format("pyozone").save(url)
    save(second, url, mode="ignore")
    assert same(load(spark, url), first)
    old = set(data(client, "modes"))
    second.write.format("pyozone").mode("append").save(url)
    assert same(load(spark, url), first.unionAll(second))
    second.write.format("pyozone").mode("overwrite").save(url)
    assert same(load(spark, url), second)
    assert not old & set(data(client, "modes"))
    with pytest.raises(Exception, match="contradicts"):
        second.write.format("pyozone").mode("overwrite").option("saveMode", "append").save(url)


@pytest.mark.slow  # a Spark job more: the default suite keeps the round trip and the failed job
def test_an_empty_table_keeps_its_schema(spark: SparkSession, client: OzoneClient, base: str) -> None:
    empty = rows(spark, 0)
    with pytest.raises(Exception, match="no data objects"):
        load(spark, f"{base}/empty").schema  # noqa: B018
    empty.write.format("pyozone").mode("append").save(f"{base}/empty")
    assert keys(client, "empty") == ["_SUCCESS"]
    back = load(spark, f"{base}/empty")
    assert back.schema == empty.schema and back.count() == 0


def test_a_failed_task_leaves_nothing_visible(spark: SparkSession, client: OzoneClient, base: str) -> None:
    """A small partition succeeds; the big one writes objects, then its UDF raises: the job aborts."""
    last = 100_000

    @udf("long")
    def fails_at_the_end(x):  # type: ignore[no-untyped-def]  # no hints: PySpark reads them as a UDF kind
        if x == last - 1:
            raise ValueError("a task fails on purpose")
        return x

    small = spark.range(0, 1000, numPartitions=1)
    big = spark.range(1000, last, numPartitions=1).select(fails_at_the_end("id").alias("id"))
    with pytest.raises(Exception, match="a task fails on purpose"):
        small.union(big).write.format("pyozone").mode("append").option("objectBytes", "64KB").option(
            "rowGroupBytes", "64KB"
        ).save(f"{base}/failed")

    # The abort runs as soon as the job fails; the other task may still be finishing its object, and a task
    # killed after the abort may leave it under _temporary (never read), as Hadoop's committers' zombies do.
    def visible() -> list[str]:
        return [k for k in keys(client, "failed") if not k.startswith("_temporary/")]

    wait_for(lambda: visible() == [], 30, "the failed job's visible keys deleted")
    with pytest.raises(Exception, match="no data objects"):
        load(spark, f"{base}/failed").schema  # noqa: B018


def batches(n: int, fail_after: int | None = None) -> Iterator[pa.RecordBatch]:
    for start in range(0, n, 10_000):
        if fail_after is not None and start >= fail_after:
            raise RuntimeError("the input broke")
        yield pa.record_batch({"id": pa.array(range(start, min(n, start + 10_000)), pa.int64())})


def location(base: str, table: str) -> TableLocation:
    return parse_table_url(f"{base}/{table}")


SMALL = WriteSettings(object_bytes=64 << 10, row_group_bytes=64 << 10)


def test_a_failed_task_deletes_its_objects(client: OzoneClient, base: str) -> None:
    table = location(base, "task-fails")
    with pytest.raises(RuntimeError, match="the input broke"):
        write_task(client, table, TaskAttempt("job1", 0, 7), SMALL, batches(100_000, fail_after=60_000))
    assert keys(client, "task-fails") == []


def test_a_failing_commit_puts_the_old_table_back(client: OzoneClient, base: str) -> None:
    """Overwrite: the second object's rename fails (it is gone); the first is moved back and the old
    objects stay the table."""
    table = location(base, "commit-fails")
    old = write_task(client, table, TaskAttempt("old", 0, 1), SMALL, batches(20_000))
    commit_job(client, table, "old", SaveMode.APPEND, [(TaskAttempt("old", 0, 1), old)], "{}")
    before = keys(client, "commit-fails")
    attempt = TaskAttempt("new", 0, 2)
    new = write_task(client, table, attempt, SMALL, batches(100_000))
    assert len(new.names) >= 2
    client.delete_key(VOL, BUCKET, attempt.directory(table) + new.names[1])
    with pytest.raises(OMException, match="KEY_NOT_FOUND"):
        commit_job(client, table, "new", SaveMode.OVERWRITE, [(attempt, new)], "{}")
    assert data(client, "commit-fails") == [k for k in before if not k.startswith("_")]
    delete_job_output(client, table, "new")  # Spark's abort
    assert keys(client, "commit-fails") == before


def test_errorifexists_is_checked_again_at_the_commit(client: OzoneClient, base: str) -> None:
    """Another job committed between this job's planning and its commit."""
    table = location(base, "raced")
    first = write_task(client, table, TaskAttempt("first", 0, 1), SMALL, batches(10))
    commit_job(client, table, "first", SaveMode.APPEND, [(TaskAttempt("first", 0, 1), first)], "{}")
    late = write_task(client, table, TaskAttempt("late", 0, 2), SMALL, batches(10))
    with pytest.raises(TableExistsError):
        commit_job(client, table, "late", SaveMode.ERROR_IF_EXISTS, [(TaskAttempt("late", 0, 2), late)], "{}")
    ignored = commit_job(client, table, "late", SaveMode.IGNORE, [(TaskAttempt("late", 0, 2), late)], "{}")
    assert ignored.skipped and data(client, "raced") == ["part-00000-first-c000.parquet"]
    assert not [k for k in keys(client, "raced") if k.startswith("_temporary")]


DRIVER = textwrap.dedent(
    """
    import sys
    from pyozone.analytics.spark import build_session
    spark = build_session("local[2]", app="killed-driver")
    df = spark.range(50_000_000, numPartitions=2).selectExpr("id", "concat('row-', id) AS name")
    options = {"objectBytes": "1MB", "rowGroupBytes": "1MB"}
    df.write.format("pyozone").mode("append").options(**options).save(sys.argv[1])
    """
)


@pytest.mark.slow
def test_a_driver_killed_mid_write_leaves_nothing_visible(
    client: OzoneClient, base: str, tmp_path: Path
) -> None:
    script = tmp_path / "driver.py"
    script.write_text(DRIVER)
    with open(tmp_path / "driver.log", "wb") as log:
        driver = subprocess.Popen(
            [sys.executable, str(script), f"{base}/killed"], env=environment(), stdout=log,
            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
    try:
        # Killed once tasks have committed objects under _temporary (the job commit is far off).
        wait_for(
            lambda: driver.poll() is None and len(keys(client, "killed")) >= 4,
            180,
            lambda: f"temporary objects written ({(tmp_path / 'driver.log').read_text()[-2000:]})",
        )
    finally:
        os.killpg(driver.pid, signal.SIGKILL)  # the driver, its JVM and its Python workers
        driver.wait(30)
    left: list[Any] = keys(client, "killed")
    assert left and all(k.startswith("_temporary/") for k in left), left
    assert data(client, "killed") == []
