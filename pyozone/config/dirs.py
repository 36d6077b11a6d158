"""Where a daemon keeps its metadata: one directory per key, as Ozone's SCM and OM take them."""

from __future__ import annotations

from pathlib import Path

from pyozone.config.configuration import ConfigError, OzoneConfiguration

METADATA_DIRS_KEY = "ozone.metadata.dirs"


def single_dir(conf: OzoneConfiguration, key: str, daemon: str) -> Path | None:
    """The one directory `key` names (None when unset); Ozone rejects a comma-separated list here."""
    value = conf.get(key)
    if not value:
        return None
    dirs = [d.strip() for d in str(value).split(",") if d.strip()]
    if len(dirs) != 1:
        raise ConfigError(f"{key}: the {daemon} uses exactly one directory, got {value!r}")
    return Path(dirs[0])


def metadata_dir(conf: OzoneConfiguration, daemon: str, db_name: str) -> Path:
    """ozone.metadata.dirs, which the daemon needs for its VERSION file (and `db_name` by default)."""
    path = single_dir(conf, METADATA_DIRS_KEY, daemon)
    if path is None:
        raise ConfigError(
            f"{METADATA_DIRS_KEY} is not set: the {daemon} needs it for its VERSION file and {db_name}"
        )
    return path
