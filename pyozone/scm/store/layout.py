"""Where the SCM keeps its files, as in Ozone: `<db dir>/scm.db` and `<metadata dir>/scm/current/VERSION`."""

from __future__ import annotations

from pathlib import Path

from pyozone.config import ConfigError, OzoneConfiguration

METADATA_DIRS_KEY = "ozone.metadata.dirs"
SCM_DB_DIRS_KEY = "ozone.scm.db.dirs"
SCM_DB_NAME = "scm.db"


def _single_dir(conf: OzoneConfiguration, key: str) -> Path | None:
    """Ozone's SCM takes one directory for these keys and rejects a comma-separated list."""
    value = conf.get(key)
    if not value:
        return None
    dirs = [d.strip() for d in value.split(",") if d.strip()]
    if len(dirs) != 1:
        raise ConfigError(f"{key}: the SCM uses exactly one directory, got {value!r}")
    return Path(dirs[0])


def scm_metadata_dir(conf: OzoneConfiguration) -> Path:
    path = _single_dir(conf, METADATA_DIRS_KEY)
    if path is None:
        raise ConfigError(f"{METADATA_DIRS_KEY} is not set: the SCM needs it for its VERSION file and scm.db")
    return path


def scm_db_dir(conf: OzoneConfiguration) -> Path:
    """The directory holding scm.db: ozone.scm.db.dirs, falling back to ozone.metadata.dirs as Ozone does."""
    return _single_dir(conf, SCM_DB_DIRS_KEY) or scm_metadata_dir(conf)


def version_file(metadata_dir: Path) -> Path:
    return metadata_dir / "scm" / "current" / "VERSION"
