"""`pyozone analytics`: one-line errors before any work, the job runner, progress, spark-submit, docs."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

import pyozone.analytics.cli as cli
import pyozone.analytics.spark as spark_setup
from pyozone.analytics.jobs import JOBS, load
from pyozone.analytics.progress import StageProgress
from pyozone.analytics.reader import schema_markdown
from pyozone.analytics.schema import SCHEMA_VERSION
from pyozone.cli.main import main
from tests.analytics.handmade import container, node, replica, write_snapshot

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def pyozone(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pyozone", *argv],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    nodes = [node(i, rack=f"/r{i % 2}") for i in range(1, 5)]
    rows = {
        "nodes": nodes,
        "containers": [container(1, 10)],
        "replicas": [replica(1, dn) for dn in (1, 2, 3)],
    }
    return write_snapshot(tmp_path_factory.mktemp("cli") / "snapshot", rows)


def bad_inputs(tmp: Path, tiny: Path) -> list[tuple[list[str], str]]:
    corrupt = tmp / "corrupt"
    corrupt.mkdir()
    (corrupt / "_SNAPSHOT.json").write_text("{not json")
    newer = write_snapshot(tmp / "newer", {}, version=SCHEMA_VERSION + 1)
    damaged = write_snapshot(tmp / "damaged", {})
    (damaged / "replicas" / "part-1.parquet").write_bytes(b"not parquet")
    full = tmp / "full"
    full.mkdir()
    (full / "something").write_text("x")
    gen = ["analytics", "generate", "--containers", "10", "--datanodes", "5", "--keys", "10"]
    return [
        (["analytics", "pipelines", "--snapshot", str(tmp / "none")], "no such snapshot directory"),
        (["analytics", "namespace", "--snapshot", str(corrupt)], "unreadable manifest"),
        (
            ["analytics", "decommission", "--snapshot", str(newer), "--nodes", "x"],
            f"schema version {SCHEMA_VERSION + 1}; this pyozone",
        ),
        (
            ["analytics", "pipelines", "--snapshot", str(tiny), "--master", "spark://127.0.0.1:1"],
            "cannot reach",
        ),
        ([*gen, "--out", str(tmp / "g"), "--failures", "dead=1,oops=2"], "failure item 'oops=2'"),
        ([*gen, "--out", str(tmp / "g"), "--failures", "dead=9"], "exceeds the 5 datanodes"),
        ([*gen, "--out", str(full)], "is not an empty directory"),
        (
            ["analytics", "pipelines", "--snapshot", str(tiny), "--per-disk", "0"],
            "'0' is not a whole number >= 1",
        ),
        (
            ["analytics", "decommission", "--snapshot", str(tiny)],
            "the following arguments are required: --nodes",
        ),
        (
            ["analytics", "balance", "--snapshot", str(tiny), "-t", "100", "-i", "0"],
            "threshold 100 must be a percentage from 0 to below 100; iterations 0 must be > 0",
        ),
        (["analytics", "balance", "--snapshot", str(tiny), "-s", "lots"], "invalid int value: 'lots'"),
        (["analytics", "balance", "--snapshot", str(tiny), "--copy-mb-s", "nan"], "is not a positive"),
        (
            ["analytics", "decommission", "--snapshot", str(tiny), "--nodes", "x", "--copy-mb-s", "inf"],
            "is not a positive",
        ),
    ]


def in_process(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """`pyozone ARGV` in this interpreter (a new one costs seconds of imports): exit code, stdout, stderr."""
    try:
        code = main(argv)
    except SystemExit as e:  # argparse's errors exit, as they do in the real process
        code = e.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_bad_input_is_one_line_and_exit_1_before_any_work(tmp_path, tiny, monkeypatch, capsys):
    """The first case as a real process (`python -m pyozone`, its imports and its stderr), every case in this
    one, where building a SparkSession fails the test: no Spark starts on bad input."""
    (argv, message), *_ = cases = bad_inputs(tmp_path, tiny)
    started = time.monotonic()
    result = pyozone(*argv)
    assert (result.returncode, result.stdout) == (1, ""), (argv, result.stderr)
    assert len(result.stderr.strip().splitlines()) == 1 and message in result.stderr, (argv, result.stderr)
    assert time.monotonic() - started < 30  # no Spark started

    def no_spark() -> None:
        raise AssertionError("a SparkSession was built for bad input")

    monkeypatch.setattr(
        spark_setup, "_environment", no_spark
    )  # build_session's first step after check_master
    for argv, message in cases:
        code, out, err = in_process(argv, capsys)
        assert code == 1, (argv, err)
        assert len(err.strip().splitlines()) == 1, (argv, err)
        assert message in err, (argv, err)
        assert out == ""
    assert not (tmp_path / "g").exists()


def test_unknown_datanode_is_one_line(spark, tiny, monkeypatch, capsys):
    monkeypatch.setattr(cli, "_spark", _fixture_session(spark))
    assert main(["analytics", "decommission", "--snapshot", str(tiny), "--nodes", "dn9"]) == 1
    assert capsys.readouterr().err == "pyozone analytics: error: unknown datanode(s) in the snapshot: dn9\n"


def _fixture_session(spark):
    """The runner with the test session instead of a new one (which it would stop afterwards)."""

    @contextlib.contextmanager
    def session(args, app) -> Iterator:
        yield spark

    return session


def test_generate_then_jobs_through_the_cli(spark, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(cli, "_spark", _fixture_session(spark))
    snapshot, out = tmp_path / "snap", tmp_path / "out"
    argv = ["--containers", "300", "--datanodes", "9", "--keys", "200", "--failures", "dead=1", "--seed", "5"]
    assert main(["analytics", "generate", "--out", str(snapshot), *argv]) == 0
    printed = capsys.readouterr().out
    assert "replicas" in printed and "synthetic, seed 5" in printed
    assert json.loads((snapshot / "_SNAPSHOT.json").read_text())["rows"]["containers"] == 300

    assert (
        main(["analytics", "pipelines", "--snapshot", str(snapshot), "--out", str(out), "--global", "0,4"])
        == 0
    )
    printed = capsys.readouterr().out
    assert "Datanodes: 8 healthy in service" in printed
    assert len(json.loads((out / "pipelines.json").read_text())["plans"]) == 2

    assert main(["analytics", "namespace", "--snapshot", str(snapshot), "--out", str(out)]) == 0
    assert "Keys: 200" in capsys.readouterr().out
    assert (out / "namespace.png").is_file() and (out / "namespace" / "buckets").is_dir()


def test_every_registered_job_has_the_interface_and_a_command():
    help_text = pyozone("analytics", "--help").stdout
    for name in JOBS:
        module = load(name)
        assert all(callable(getattr(module, f)) for f in ("add_arguments", "run"))
        assert isinstance(module.HELP, str) and module.NAME in help_text
    assert "generate" in help_text


def test_stage_progress_lines(spark):
    def slow(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            time.sleep(0.5)  # slow tasks: the stage runs long enough for progress lines
            yield batch

    stream = io.StringIO()
    with StageProgress(spark, interval_s=0.1, stream=stream):
        spark.range(0, 8, 1, numPartitions=8).mapInArrow(slow, "id long").count()
    lines = stream.getvalue().splitlines()
    assert lines and all(line.startswith("stage ") and line.endswith(" tasks") for line in lines)
    assert any("/8 tasks" in line for line in lines)


def test_main_py_passes_arguments_to_the_jobs(tmp_path):
    """The spark-submit entry point, run as a plain script: same one-line error as the CLI."""
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "pyozone/analytics/main.py"),
            "namespace",
            "--snapshot",
            str(tmp_path / "x"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1].endswith("no such snapshot directory")


@pytest.mark.slow
def test_spark_submit_runs_a_job(tiny, tmp_path):
    submit = [str(Path(sys.executable).parent / "spark-submit"), "--master", "local[1]"]
    job = ["decommission", "--snapshot", str(tiny), "--nodes", "dn1", "--out", str(tmp_path)]
    result = subprocess.run(
        [*submit, str(ROOT / "pyozone/analytics/main.py"), *job],
        cwd=tmp_path,
        env={**os.environ, "PYSPARK_PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads((tmp_path / "decommission.json").read_text())["newCopies"] == 1


def test_docs_carry_the_current_schema():
    assert schema_markdown() in (ROOT / "docs" / "analytics.md").read_text()
