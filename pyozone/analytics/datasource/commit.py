"""The job commit protocol, run by Spark's driver once every task has succeeded (or one failed).

Tasks write under `<table>/_temporary/<job-id>/attempt-<id>/`, which no reader reads. The job commit
renames each successful attempt's objects into the table (OM's renameKey is atomic per key), then writes
`<table>/_SUCCESS` and deletes the job's temporary keys (attempts Spark did not keep). Abort deletes the
job's temporary keys. A driver that dies before its commit leaves only hidden keys, as does a task Spark
kills only after the job's abort has listed them (Hadoop's committers have the same zombie-task window).

Overwrite moves the new objects in first and deletes the old ones after: a commit that fails part way
moves the new ones back and the old table stands whole. Only a driver dying between the moves and the
deletes leaves both visible. The commit is not atomic across keys: a reader listing the table during the
moves may see part of the new objects.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass

from pyozone.analytics.datasource.location import TableLocation
from pyozone.analytics.datasource.options import SaveMode
from pyozone.analytics.datasource.task_output import TaskAttempt, TaskOutput
from pyozone.client import OMException, OzoneClient


class TableExistsError(Exception):
    """errorifexists: the table already has data objects."""


@dataclass(frozen=True)
class CommitResult:
    objects: tuple[str, ...]  # the table's new data keys
    rows: int
    skipped: bool  # ignore mode found data and wrote nothing


def data_keys(client: OzoneClient, location: TableLocation) -> list[str]:
    """The table's data objects (hidden keys left out), in key order."""
    keys = client.list_keys(location.volume, location.bucket, prefix=location.prefix)
    return [k.name for k in keys if location.is_data(k.name)]


def delete_job_output(client: OzoneClient, location: TableLocation, job_id: str) -> None:
    """Deletes every key under the job's temporary prefix (a key already gone is no failure)."""
    for key in client.list_keys(location.volume, location.bucket, prefix=location.job_prefix(job_id)):
        try:
            client.delete_key(location.volume, location.bucket, key.name)
        except OMException as e:
            if e.result != "KEY_NOT_FOUND":
                raise


def commit_job(
    client: OzoneClient, location: TableLocation, job_id: str, mode: SaveMode,
    tasks: Sequence[tuple[TaskAttempt, TaskOutput]], schema_json: str,
) -> CommitResult:  # fmt: skip
    old = data_keys(client, location)
    if old and mode is SaveMode.ERROR_IF_EXISTS:
        raise TableExistsError(f"{location} already has {len(old)} data object(s) (save mode errorifexists)")
    if old and mode is SaveMode.IGNORE:
        delete_job_output(client, location, job_id)
        return CommitResult((), 0, skipped=True)
    moves = [
        (attempt.directory(location) + name, location.prefix + name)
        for attempt, output in tasks
        for name in output.names
    ]
    moved: list[tuple[str, str]] = []
    try:
        for temporary, final in moves:
            client.rename_key(location.volume, location.bucket, temporary, final)
            moved.append((temporary, final))
    except BaseException:
        for temporary, final in reversed(moved):
            client.rename_key(location.volume, location.bucket, final, temporary)
        raise
    if mode is SaveMode.OVERWRITE:
        for key in old:
            client.delete_key(location.volume, location.bucket, key)
    rows = sum(output.rows for _, output in tasks)
    finals = tuple(final for _, final in moves)
    marker = {
        "job": job_id,
        "mode": mode.value,
        "committed_ms": int(time.time() * 1000),
        "rows": rows,
        "objects": [final.removeprefix(location.prefix) for final in finals],
        "schema": json.loads(schema_json),
    }
    client.put_key(location.volume, location.bucket, location.success_key, json.dumps(marker).encode())
    delete_job_output(client, location, job_id)
    return CommitResult(finals, rows, skipped=False)
