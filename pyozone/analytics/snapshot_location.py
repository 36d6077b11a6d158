"""Where a job's `--snapshot` lives: a local directory, or a snapshot stored in pyozone (`ofs://`, `o3fs://`).

Spark reads Parquet through Hadoop's filesystems, and no Hadoop connector for ofs can be installed here, so
a stored snapshot is copied with the native client into a temporary directory on the driver (under
$TMPDIR) for the job's run, and every check and job then runs unchanged on that copy. Snapshots are
metadata (megabytes to a few gigabytes) and the copy streams at the client's read speed. Executors read
the copy by its path: with a local master, or workers on the same machine, that just works; workers on
other machines need $TMPDIR on storage they share, as for any local snapshot directory.

Messages about the copy name the URL the user gave, not the temporary directory.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import fsspec

from pyozone.analytics.schema import TABLES, SnapshotError

STORED = ("ofs://", "o3fs://")


def is_stored(location: str) -> bool:
    return location.startswith(STORED)


@contextmanager
def local_snapshot(
    location: str, conf_dir: str | None = None, conf: Mapping[str, str] | None = None
) -> Iterator[Path]:
    """The snapshot as a local directory: `location` itself, or a copy of the stored one for the duration
    of the block. `conf_dir` and `conf` configure the client (as `--conf` and `-D` do)."""
    if not is_stored(location):
        yield Path(location)
        return
    url = location.rstrip("/")
    with tempfile.TemporaryDirectory(prefix="pyozone-snapshot-") as tmp:
        try:
            _copy(url, Path(tmp), conf_dir, dict(conf or {}))
            yield Path(tmp)
        except SnapshotError as e:
            raise SnapshotError(str(e).replace(tmp, url)) from None


def _copy(url: str, into: Path, conf_dir: str | None, conf: dict[str, str]) -> None:
    try:
        fs, root = fsspec.core.url_to_fs(url, conf_dir=conf_dir, conf=conf)
        kind = fs.info(root)["type"]
    except FileNotFoundError:
        raise SnapshotError(f"{url}: no such snapshot directory") from None
    except (OSError, ValueError) as e:  # the client's errors come as OSError, bad URLs as ValueError
        raise SnapshotError(f"{url}: cannot read the snapshot: {e}") from None
    if kind != "directory":
        raise SnapshotError(f"{url}: is a key, not a snapshot directory")
    try:
        for name in fs.find(root):
            target = into / name[len(root) :].lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            fs.get_file(name, str(target))
    except OSError as e:
        raise SnapshotError(f"{url}: cannot copy the snapshot: {e}") from None
    for table in TABLES:  # an object store keeps no empty directory: a table written with no file
        (into / table).mkdir(exist_ok=True)
