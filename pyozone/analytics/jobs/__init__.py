"""The analytics jobs: `pyozone analytics JOB --snapshot DIR ...` and spark-submit run the modules in JOBS.

A job module exposes NAME (the command name), HELP, `add_arguments(parser)` and
`run(spark, snapshot, args, out_dir) -> exit code`, and may expose `check(args)`, which refuses bad options
(raising ConfigError or CLIError: one line, exit 1) before the snapshot is opened. The runner has read
`args.conf` (the OzoneConfiguration with -D and --conf applied) and opened the snapshot before Spark does any
work; a job writes Parquet and JSON under `out_dir` when it is given and prints a summary on stdout.
"""

from __future__ import annotations

import importlib
from types import ModuleType

JOBS: tuple[str, ...] = ("rm_report", "affected_keys", "pipelines", "decommission", "balance", "namespace")


class JobError(Exception):
    """Bad job input only visible in the snapshot (e.g. an unknown datanode); one line, exit 1."""


def load(module: str) -> ModuleType:
    return importlib.import_module(f"{__name__}.{module}")
