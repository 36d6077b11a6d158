"""Fixtures of the datanode daemon tests: a fake SCM per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from dnd_helpers import FakeScm


@pytest.fixture
def scm() -> Iterator[FakeScm]:
    with FakeScm() as fake:
        yield fake


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI reads $OZONE_CONF_DIR; a developer's own setting must not leak into tests."""
    monkeypatch.delenv("OZONE_CONF_DIR", raising=False)
