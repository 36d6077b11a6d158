"""One local[2] SparkSession for the whole test run: starting Spark costs several seconds."""

from __future__ import annotations

import pytest

from pyozone.analytics.spark import build_session


@pytest.fixture(scope="session")
def spark():
    session = build_session("local[2]", app="pyozone-tests", shuffle_partitions=4)
    yield session
    session.stop()
