"""The chaos suite's key sizes and the names it counts write errors under."""

from __future__ import annotations

import random

from benchmarks.chaos_workload import KiB, MiB, error_class, key_size
from pyozone.client import BlockWriteError, OMException, SafeModeException


def test_key_sizes_span_1_kb_to_20_mb_evenly_by_decade() -> None:
    rng = random.Random(3)
    sizes = [key_size(rng) for _ in range(3000)]
    assert all(KiB <= s <= 20 * MiB for s in sizes)
    small = sum(1 for s in sizes if s < 10 * KiB)
    large = sum(1 for s in sizes if 1 * MiB <= s < 10 * MiB)
    assert 0.15 < small / len(sizes) < 0.35 and 0.15 < large / len(sizes) < 0.35


def test_errors_are_named_by_class_and_om_result() -> None:
    assert error_class(BlockWriteError("no pipeline")) == "BlockWriteError"
    assert error_class(OMException("KEY_ALREADY_EXISTS", "k1")) == "OMException:KEY_ALREADY_EXISTS"
    assert error_class(SafeModeException("SCM_IN_SAFE_MODE", "")) == "SafeModeException:SCM_IN_SAFE_MODE"
    assert error_class(TimeoutError()) == "Timeout (chaos op deadline)"
