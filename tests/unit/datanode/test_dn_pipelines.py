"""The datanode's pipeline membership (pipelines.json): saved before memory changes (issue 28, defect 18).

On a full metadata disk the probe saw a pipeline recorded in memory but never joined: the save raised
OSError after the in-memory add, so the datanode reported a pipeline it had no group for.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from pyozone.datanode import pipelines as pipelines_module
from pyozone.datanode.pipelines import PipelineSet

ME, OTHER = "dn-1", "dn-2"


def _disk_full(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_space(path: Path, data: bytes, mode: int = 0o644) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(pipelines_module, "atomic_write", no_space)


def test_a_pipeline_not_saved_is_not_joined(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pipelines = PipelineSet(tmp_path, ME)
    pipelines.add("p1", (ME, OTHER), ME)
    _disk_full(monkeypatch)
    with pytest.raises(OSError, match="No space left"):
        pipelines.add("p2", (ME, OTHER), OTHER)
    assert "p2" not in pipelines and [r.pipeline_id for r in pipelines.reports()] == ["p1"]
    with pytest.raises(OSError):
        pipelines.add("p1", (ME, OTHER), OTHER)  # a changed membership is not half-applied either
    assert pipelines.get("p1").is_leader  # type: ignore[union-attr]
    monkeypatch.undo()
    assert [m.pipeline_id for m in PipelineSet(tmp_path, ME).all()] == ["p1"]  # memory matches the disk


def test_a_pipeline_left_but_not_saved_is_still_a_member(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pipelines = PipelineSet(tmp_path, ME)
    pipelines.add("p1", (ME,), ME)
    _disk_full(monkeypatch)
    with pytest.raises(OSError):
        pipelines.remove("p1")
    assert "p1" in pipelines  # the next closePipeline tries again
