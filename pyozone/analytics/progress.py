"""Stage progress for long jobs, one line per change: "stage N: done/total tasks" on stderr.

Spark's console progress bar is turned off (it redraws over the job's summary), so a daemon thread polls
SparkContext.statusTracker instead; stdout stays the job's own output.
"""

from __future__ import annotations

import sys
import threading
from types import TracebackType
from typing import TextIO

from pyspark.sql import SparkSession


class StageProgress:
    """`with StageProgress(spark): ...` reports every active stage whose completed-task count moved."""

    def __init__(self, spark: SparkSession, interval_s: float = 2.0, stream: TextIO | None = None) -> None:
        self._tracker = spark.sparkContext.statusTracker()
        self._interval = interval_s
        self._stream = stream or sys.stderr
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="pyozone-stage-progress", daemon=True)
        self._shown: dict[int, tuple[int, int]] = {}

    def __enter__(self) -> StageProgress:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            self.poll()

    def poll(self) -> list[str]:
        """Prints (and returns) a line for each active stage whose progress changed since the last poll."""
        lines = []
        for stage in sorted(self._tracker.getActiveStageIds()):
            info = self._tracker.getStageInfo(stage)
            if info is None:
                continue
            state = (info.numCompletedTasks, info.numTasks)
            if self._shown.get(stage) != state:
                self._shown[stage] = state
                lines.append(f"stage {stage}: {state[0]}/{state[1]} tasks")
        for line in lines:
            print(line, file=self._stream, flush=True)
        return lines
