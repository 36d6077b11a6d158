"""The data source's options: the save mode and how task output is cut into Parquet objects and row groups."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

from pyozone.config.units import parse_size_bytes


class SaveMode(Enum):
    """Spark's save modes. Spark hands a Python data source only append or overwrite; the other two travel
    as the `saveMode` option (`save()` sets it) and are decided at the job commit."""

    APPEND = "append"
    OVERWRITE = "overwrite"
    ERROR_IF_EXISTS = "errorifexists"
    IGNORE = "ignore"

    @classmethod
    def parse(cls, text: str) -> SaveMode:
        name = text.strip().lower()
        name = {"error": "errorifexists", "default": "errorifexists"}.get(name, name)
        try:
            return cls(name)
        except ValueError:
            choices = ", ".join(m.value for m in cls)
            raise ValueError(f"unknown save mode {text!r} (use {choices} or error)") from None


def save_mode(options: Mapping[str, str], overwrite: bool) -> SaveMode:
    """The job's mode from Spark's (append/overwrite) and the `saveMode` option, which must agree."""
    spark_mode = SaveMode.OVERWRITE if overwrite else SaveMode.APPEND
    if "saveMode" not in options:
        return spark_mode
    asked = SaveMode.parse(options["saveMode"])
    if asked is spark_mode or (asked in (SaveMode.ERROR_IF_EXISTS, SaveMode.IGNORE) and not overwrite):
        return asked
    raise ValueError(f"saveMode={asked.value} contradicts Spark's mode {spark_mode.value}")


@dataclass(frozen=True)
class WriteSettings:
    """objectBytes: a task rolls to a new object once this many bytes are written (memory holds one row
    group, never an object). rowGroupBytes: in-memory Arrow bytes gathered into one Parquet row group
    (Spark's Arrow batches are 10,000 rows, too small for a row group)."""

    object_bytes: int = 128 << 20
    row_group_bytes: int = 32 << 20
    compression: str = "snappy"

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> WriteSettings:
        settings = cls(
            object_bytes=parse_size_bytes(options.get("objectBytes", str(cls.object_bytes))),
            row_group_bytes=parse_size_bytes(options.get("rowGroupBytes", str(cls.row_group_bytes))),
            compression=options.get("compression", cls.compression),
        )
        if settings.object_bytes <= 0 or settings.row_group_bytes <= 0:
            raise ValueError(f"objectBytes and rowGroupBytes must be positive: {settings}")
        return settings
