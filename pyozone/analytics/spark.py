"""SparkSession for the analytics jobs: `local[*]` by default, any master URL otherwise.

Set up the way this machine needs (measured): Python workers run this interpreter (the system python lacks
pyarrow), Spark binds to the loopback address unless told otherwise, and Spark's own logging stays at ERROR so
a job's output is its summary. Every session can read and write format("pyozone") tables (ofs:// URLs).
"""

from __future__ import annotations

import os
import socket
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlparse

from pyspark.sql import SparkSession

from pyozone.analytics.datasource import register as register_pyozone_source

LOG4J = (
    "rootLogger.level = error\nrootLogger.appenderRef.stdout.ref = console\n"
    "appender.console.type = Console\nappender.console.name = console\n"
    "appender.console.target = SYSTEM_ERR\nappender.console.layout.type = PatternLayout\n"
    "appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n\n"
)


class SparkSetupError(Exception):
    """Spark cannot start or the master cannot be reached; raised before any work starts."""


def check_master(master: str) -> None:
    """A spark:// master must accept a TCP connection, so a typo fails in a second, not after a timeout."""
    if not master.startswith("spark://"):
        return
    parsed = urlparse(master)
    host, port = parsed.hostname, parsed.port or 7077
    try:
        with socket.create_connection((host, port), timeout=3):
            pass
    except OSError as e:
        raise SparkSetupError(f"cannot reach Spark master {master}: {e.strerror or e}") from None


def _environment() -> None:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    if "SPARK_CONF_DIR" not in os.environ:
        conf_dir = Path(tempfile.gettempdir()) / f"pyozone-spark-conf-{os.getuid()}"
        conf_dir.mkdir(exist_ok=True)
        (conf_dir / "log4j2.properties").write_text(LOG4J)
        os.environ["SPARK_CONF_DIR"] = str(conf_dir)


def build_session(
    master: str | None = None, app: str = "pyozone", shuffle_partitions: int | None = None, ui: bool = False
) -> SparkSession:
    master = master or "local[*]"
    check_master(master)
    _environment()
    builder = (
        SparkSession.builder.master(master)
        .appName(app)
        .config("spark.ui.enabled", str(ui).lower())
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
    )
    if shuffle_partitions:
        builder = builder.config("spark.sql.shuffle.partitions", str(shuffle_partitions))
    try:
        session = builder.getOrCreate()
    except Exception as e:  # the JVM side reports every failure as a generic exception
        raise SparkSetupError(f"Spark could not start with master {master}: {e}") from None
    register_pyozone_source(session)
    return session


@contextmanager
def spark_session(master: str | None = None, app: str = "pyozone", **options) -> Iterator[SparkSession]:
    session = build_session(master, app, **options)
    try:
        yield session
    finally:
        session.stop()
