"""`pyozone analytics JOB --snapshot DIR|URL [--master URL] [--out DIR]` and `pyozone analytics generate ...`.

Everything that can be wrong with the input is found before Spark does any work: options (one line,
exit 1), the configuration, the snapshot (manifest, schema version, each Parquet footer and the row
counts), the output directory, the master's reachability. Then one SparkSession runs the job, with
stage progress on stderr.
"""

from __future__ import annotations

import argparse
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import NoReturn

from pyspark.sql import SparkSession

from pyozone.analytics.generate import GenerateSpec, generate, parse_failures
from pyozone.analytics.jobs import JOBS, JobError, load
from pyozone.analytics.progress import StageProgress
from pyozone.analytics.reader import Snapshot, schema_markdown
from pyozone.analytics.schema import SnapshotError
from pyozone.analytics.snapshot_location import local_snapshot
from pyozone.analytics.snapshot_reader import open_snapshot_tables
from pyozone.analytics.spark import SparkSetupError, build_session
from pyozone.common.cli_options import (
    CLIError,
    common_options,
    load_configuration,
    parse_overrides,
    run_command,
)
from pyozone.config import ConfigError


class OneLineParser(argparse.ArgumentParser):
    """Bad options are bad input like any other: one line on stderr and exit 1, no usage dump."""

    def error(self, message: str) -> NoReturn:
        self.exit(1, f"{self.prog}: error: {message}\n")


def main(argv: list[str]) -> int:
    """`pyozone analytics` without the rest of the CLI: spark-submit's entry (pyozone/analytics/main.py)."""
    logging.basicConfig(
        level=os.environ.get("PYOZONE_LOG_LEVEL", "WARNING").upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    args = build_parser(common_options()).parse_args(argv)
    return run_command(args.func, args, "pyozone analytics", (CLIError, ConfigError))


def build_parser(parent: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The full `pyozone analytics` parser; built only when an analytics command runs (it loads Spark)."""
    analytics = OneLineParser(
        prog="pyozone analytics",
        parents=[parent],
        description="cluster analytics on Spark over a metadata snapshot",
    )
    jobs = analytics.add_subparsers(dest="job", metavar="JOB", parser_class=OneLineParser)
    jobs.required = True
    _register_generate(jobs, parent)
    for module in (load(name) for name in JOBS):
        job = jobs.add_parser(module.NAME, parents=[parent], help=module.HELP)
        job.add_argument(
            "--snapshot",
            required=True,
            metavar="DIR|URL",
            help="snapshot directory, or one in pyozone (ofs://...)",
        )
        job.add_argument("--out", type=Path, metavar="DIR", help="write Parquet and JSON results here")
        _spark_options(job)
        module.add_arguments(job)
        job.set_defaults(func=partial(run_job, module))
    schema = jobs.add_parser("schema", parents=[parent], help="print the snapshot schema as Markdown")
    schema.set_defaults(func=lambda args: print(schema_markdown()))
    return analytics


def _spark_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--master", metavar="URL", help="Spark master (default: local[*])")
    parser.add_argument(
        "--shuffle-partitions", type=int, metavar="N", help="spark.sql.shuffle.partitions (default: Spark's)"
    )


def _failures(text: str):
    try:
        return parse_failures(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _register_generate(jobs, parent: argparse.ArgumentParser) -> None:
    gen = jobs.add_parser("generate", parents=[parent], help="write a synthetic snapshot (a Spark job)")
    gen.add_argument("--out", required=True, type=Path, metavar="DIR", help="new snapshot directory")
    gen.add_argument("--containers", required=True, type=int, metavar="N")
    gen.add_argument("--datanodes", required=True, type=int, metavar="M")
    gen.add_argument("--keys", required=True, type=int, metavar="K")
    gen.add_argument("--racks", type=int, metavar="R", help="racks (default: min(3, M))")
    gen.add_argument(
        "--failures",
        type=_failures,
        default=parse_failures(""),
        metavar="SPEC",
        help="comma-separated dead=K, decommissioning=K, maintenance=K (datanodes), unhealthy=F "
        "(share of replicas), missing=F (share of closed containers with no replica), skew=X (the first "
        "rack holds X times the datanodes of each other rack)",
    )
    gen.add_argument("--seed", type=int, default=0)
    gen.add_argument(
        "--ec-fraction", type=float, default=0.0, metavar="F", help="share of EC/RS-3-2 containers"
    )
    gen.add_argument(
        "--open-fraction", type=float, default=0.01, metavar="F", help="share of OPEN containers"
    )
    gen.add_argument("--volumes", type=int, default=4)
    gen.add_argument("--buckets", type=int, default=8, help="buckets per volume")
    _spark_options(gen)
    gen.set_defaults(func=run_generate)


@contextmanager
def _spark(args: argparse.Namespace, app: str) -> Iterator[SparkSession]:
    """A session for one command, with stage progress; an unreachable master fails here, before work."""
    try:
        session = build_session(args.master, app=app, shuffle_partitions=args.shuffle_partitions)
    except SparkSetupError as e:
        raise CLIError(str(e)) from None
    try:
        with StageProgress(session):
            yield session
    finally:
        session.stop()


def run_job(module: ModuleType, args: argparse.Namespace) -> int:
    args.conf = load_configuration(args)
    check = getattr(module, "check", None)
    if check is not None:
        check(args)
    conf_dir = getattr(args, "conf_dir", None) or os.environ.get("OZONE_CONF_DIR")
    try:
        with local_snapshot(args.snapshot, conf_dir, parse_overrides(getattr(args, "overrides", []))) as path:
            open_snapshot_tables(path)  # manifest, version, every file's footer and row counts
            with _spark(args, f"pyozone-{module.NAME}") as spark:
                return module.run(spark, Snapshot(spark, path), args, args.out)
    except (SnapshotError, JobError) as e:
        raise CLIError(str(e)) from None


def run_generate(args: argparse.Namespace) -> int:
    spec = GenerateSpec(
        containers=args.containers,
        datanodes=args.datanodes,
        keys=args.keys,
        racks=args.racks,
        seed=args.seed,
        failures=args.failures,
        ec_fraction=args.ec_fraction,
        open_fraction=args.open_fraction,
        volumes=args.volumes,
        buckets=args.buckets,
    )
    problems = spec.problems()
    if problems:
        raise CLIError("; ".join(problems))
    if args.out.exists() and (not args.out.is_dir() or any(args.out.iterdir())):
        raise CLIError(f"{args.out}: exists and is not an empty directory; choose a new --out")
    with _spark(args, "pyozone-generate") as spark:
        manifest = generate(spark, spec, args.out)
    print(f"Snapshot: {args.out.absolute()} (synthetic, seed {args.seed})")
    for table, rows in manifest.rows.items():
        print(f"  {table:<15} {rows:>12}")
    return 0
