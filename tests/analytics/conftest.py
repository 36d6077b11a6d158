"""One local[2] SparkSession for the whole test run: starting Spark costs several seconds.

Its JVM compiles with C1 only (-XX:TieredStopAtLevel=1): the tests' jobs are many and short, so C2's
compilations cost more than they win (measured: the session's start, two generated snapshots and their
counts took 44 s of JVM CPU, 23-26 s with C1 only). Spark and the results are the same.
"""

from __future__ import annotations

import pytest

from pyozone.analytics.spark import build_session


@pytest.fixture(scope="session")
def spark():
    with pytest.MonkeyPatch.context() as patch:  # read by pyspark when it launches the JVM, only then
        patch.setenv("PYSPARK_SUBMIT_ARGS", "--driver-java-options -XX:TieredStopAtLevel=1 pyspark-shell")
        session = build_session("local[2]", app="pyozone-tests", shuffle_partitions=4)
    yield session
    session.stop()
