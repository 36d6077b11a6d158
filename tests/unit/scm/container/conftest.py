"""Fixtures for the container tests: an SCM harness with a fake PipelineManager (see scm_fakes.py)."""

from __future__ import annotations

import pytest

from tests.unit.scm.container.scm_fakes import Harness, make_harness


@pytest.fixture
def h() -> Harness:
    return make_harness()
