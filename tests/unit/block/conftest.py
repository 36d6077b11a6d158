"""Fixtures for the block tests; the SCM harness and fake PipelineManager come from the container tests."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

if "scm_fakes" not in sys.modules:  # one module object, whichever test directory loads it first
    _path = Path(__file__).parents[1] / "container" / "scm_fakes.py"
    _spec = importlib.util.spec_from_file_location("scm_fakes", _path)
    assert _spec is not None and _spec.loader is not None
    sys.modules["scm_fakes"] = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(sys.modules["scm_fakes"])

from scm_fakes import Harness, make_harness


@pytest.fixture
def h() -> Harness:
    return make_harness()
