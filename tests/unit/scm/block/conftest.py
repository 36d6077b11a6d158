"""Fixtures for the block tests; the SCM harness and fake PipelineManager come from the container tests."""

from __future__ import annotations

import pytest

from tests.unit.scm.container.scm_fakes import Harness, make_harness


@pytest.fixture
def h() -> Harness:
    return make_harness()
