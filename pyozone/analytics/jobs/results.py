"""Where job results go: `OUT/<job>.json` summaries and `OUT/<job>/<name>/` Parquet tables.

Tables are written by Spark, so a large result goes from the executors straight to (shared) storage and
a small one built on the driver lands in the same layout.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType


def write_json(out_dir: Path, job: str, data: Any) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{job}.json"
    path.write_text(json.dumps(data, indent=2, default=str) + "\n")
    return path


def write_frame(frame: DataFrame, out_dir: Path, job: str, name: str) -> Path:
    path = out_dir.absolute() / job / name
    frame.write.mode("overwrite").parquet(str(path))
    return path


def write_rows(
    spark: SparkSession, rows: list[dict[str, Any]], schema: StructType, out_dir: Path, job: str, name: str
) -> Path:
    """A small driver-side table (one row per setting or datanode), written like the big ones."""
    return write_frame(spark.createDataFrame(rows, schema).coalesce(1), out_dir, job, name)
