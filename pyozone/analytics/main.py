"""spark-submit entry point: `spark-submit [--master URL] .../pyozone/analytics/main.py JOB ...`.

Runs `pyozone analytics JOB ...` (any job, or `generate`) on the master spark-submit was given, unless
the command line names one with --master. Run as a plain script it is the same as `pyozone analytics`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def _source_checkout_root() -> str | None:
    """The script's directory is on sys.path, not the package root: from a source checkout (pyozone not
    installed) the root is returned and put on this driver's path."""
    try:
        import pyozone  # noqa: F401
    except ImportError:
        root = str(Path(__file__).resolve().parents[2])
        sys.path.insert(0, root)
        return root
    return None


def _submitted(args: list[str], root: str | None) -> list[str]:
    """Under spark-submit the JVM is already up, its settings are system properties, and its Python
    workers get their environment from there (spark.executorEnv.*), not from this process."""
    from pyspark import SparkContext

    SparkContext._ensure_initialized()
    system = SparkContext._jvm.java.lang.System
    if root is not None:
        system.setProperty("spark.executorEnv.PYTHONPATH", root)
    master = system.getProperty("spark.master")
    if master and not any(a == "--master" or a.startswith("--master=") for a in args):
        return [*args, "--master", master]
    return args


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    root = _source_checkout_root()
    if "PYSPARK_GATEWAY_PORT" in os.environ:  # set by spark-submit for its Python driver
        args = _submitted(args, root)
    elif root is not None:  # the JVM this process starts passes PYTHONPATH on to its Python workers
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
    from pyozone.analytics.cli import main as analytics_main

    return analytics_main(args)


if __name__ == "__main__":
    raise SystemExit(main())
