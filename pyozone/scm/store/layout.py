"""Where the SCM keeps its files, as in Ozone: `<db dir>/scm.db` and `<metadata dir>/scm/current/VERSION`."""

from __future__ import annotations

from pathlib import Path

from pyozone.config import OzoneConfiguration
from pyozone.config.dirs import metadata_dir, single_dir

SCM_DB_DIRS_KEY = "ozone.scm.db.dirs"
SCM_DB_NAME = "scm.db"


def scm_metadata_dir(conf: OzoneConfiguration) -> Path:
    return metadata_dir(conf, "SCM", SCM_DB_NAME)


def scm_db_dir(conf: OzoneConfiguration) -> Path:
    """The directory holding scm.db: ozone.scm.db.dirs, falling back to ozone.metadata.dirs as Ozone does."""
    return single_dir(conf, SCM_DB_DIRS_KEY, "SCM") or scm_metadata_dir(conf)


def version_file(metadata_dir: Path) -> Path:
    return metadata_dir / "scm" / "current" / "VERSION"
