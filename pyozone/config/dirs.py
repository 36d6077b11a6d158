"""Where a daemon keeps its metadata: one directory per key, as Ozone's SCM and OM take them, kept private.

A daemon's metadata (om.db with its S3 secrets, scm.db, keys, pipeline logs) is no business of other local
users: as Ozone's ServerUtils, every directory taken here is set to ozone.metadata.dirs.permissions (750)
when the daemon starts. A missing one is not made here (bad input must leave no trace, and SCM's is made by
`scm --init`): a daemon making its own at first start does it with `private_dir`. Every directory a daemon
makes below them later (RocksDB's, a pipeline's log, a container's) gets the same mode from the daemon's
umask (`daemon_umask`), and its logs are LOG_FILE_MODE.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pyozone.config.configuration import ConfigError, OzoneConfiguration

METADATA_DIRS_KEY = "ozone.metadata.dirs"
METADATA_PERMISSIONS_KEY = "ozone.metadata.dirs.permissions"

LOG_FILE_MODE = 0o640
"""A daemon's log file: its owner writes, its group reads, others nothing (at DEBUG it names users' keys)."""

_SYMBOLIC = re.compile(r"([r-][w-][x-]){3}")
_BITS = (0o400, 0o200, 0o100, 0o040, 0o020, 0o010, 0o004, 0o002, 0o001)


def dir_permissions(conf: OzoneConfiguration, key: str) -> int:
    """The mode `key` names, octal ("750") or symbolic ("rwxr-x---") as Ozone takes it."""
    value = str(conf.get(key)).strip()
    if re.fullmatch(r"0?[0-7]{3}", value):
        return int(value, 8)
    if _SYMBOLIC.fullmatch(value):
        return sum(bit for bit, flag in zip(_BITS, value, strict=True) if flag != "-")
    raise ConfigError(f"{key}={value!r}: permissions are octal (750) or symbolic (rwxr-x---)")


@contextmanager
def daemon_umask(conf: OzoneConfiguration) -> Iterator[None]:
    """While a daemon runs, the process's umask from ozone.metadata.dirs.permissions (750: umask 027), so
    that every directory the daemon or a library it runs (RocksDB) makes has that mode, and every file
    that mode without execute bits (0640). Files written with a mode of their own (`fsutil.atomic_write`:
    keys 0600, certificates 0644) keep it. The umask before is back at the end (a test may run a daemon's
    command in its own process); a client's files are its user's business."""
    before = os.umask(0o777 & ~dir_permissions(conf, METADATA_PERMISSIONS_KEY))
    try:
        yield
    finally:
        os.umask(before)


def private_dir(path: Path, mode: int) -> None:
    """Creates `path` if missing and gives it exactly `mode` (an existing directory too). OSError."""
    path.mkdir(mode=mode, parents=True, exist_ok=True)
    _set_mode(path, mode)


def _set_mode(path: Path, mode: int) -> None:
    if path.stat().st_mode & 0o7777 != mode:
        os.chmod(path, mode)


def single_dir(conf: OzoneConfiguration, key: str, daemon: str) -> Path | None:
    """The one directory `key` names (None when unset), set to ozone.metadata.dirs.permissions when it
    exists; Ozone rejects a comma-separated list here."""
    value = conf.get(key)
    if not value:
        return None
    dirs = [d.strip() for d in str(value).split(",") if d.strip()]
    if len(dirs) != 1:
        raise ConfigError(f"{key}: the {daemon} uses exactly one directory, got {value!r}")
    path, mode = Path(dirs[0]), dir_permissions(conf, METADATA_PERMISSIONS_KEY)
    if not path.is_dir():
        return path  # the daemon names what is wrong, or makes it (private_dir)
    try:
        _set_mode(path, mode)
    except OSError as e:
        reason = e.strerror or e
        raise ConfigError(f"{key}: cannot set {path} to mode {mode:o}: {reason}") from None
    return path


def metadata_dir(conf: OzoneConfiguration, daemon: str, db_name: str) -> Path:
    """ozone.metadata.dirs, which the daemon needs for its VERSION file (and `db_name` by default)."""
    path = single_dir(conf, METADATA_DIRS_KEY, daemon)
    if path is None:
        raise ConfigError(
            f"{METADATA_DIRS_KEY} is not set: the {daemon} needs it for its VERSION file and {db_name}"
        )
    return path
