"""`pyozone analytics rm-report`: the Replication Manager report of a snapshot, computed on Spark.

The same report `pyozone admin container report` shows for a live SCM (same states, same samples, same
JSON), from SCM's own check chain (rm_rules.py), over any number of containers. The Replication Manager
settings (e.g. -D hdds.scm.replication.container.sample.limit=...) come from -D and --conf, as SCM reads
them. Results: OUT/rm-report.json, the JSON `admin container report --json` prints.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from pyspark.sql import SparkSession

from pyozone.analytics.container_check import merged_report, snapshot_check
from pyozone.analytics.jobs.results import write_json
from pyozone.analytics.reader import Snapshot
from pyozone.common.output import print_json
from pyozone.hdds.replication_report import ReplicationManagerReport, report_lines
from pyozone.scm.replication.config import ReplicationManagerConfig
from pyozone.scm.settings import ScmSettings

NAME = "rm-report"
HELP = "the Replication Manager report (as `pyozone admin container report`), computed on Spark"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json", action="store_true", help="print the report as JSON, as `admin container report --json`"
    )


def compute(
    spark: SparkSession, snapshot: Snapshot, config: ReplicationManagerConfig
) -> ReplicationManagerReport:
    """The report as of the snapshot's time."""
    checked = snapshot_check(spark, snapshot, config, with_health=False)
    return merged_report(checked, config.container_sample_limit, snapshot.manifest.created_ms)


def run(spark: SparkSession, snapshot: Snapshot, args: argparse.Namespace, out_dir: Path | None) -> int:
    report = compute(spark, snapshot, ScmSettings.from_conf(args.conf).replication)
    if out_dir is not None:
        write_json(out_dir, NAME, report.to_dict())
    if args.json:
        print_json(report.to_dict())
    else:
        print("\n".join(report_lines(report)))
    return 0
