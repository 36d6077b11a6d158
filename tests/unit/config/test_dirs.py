"""A daemon's metadata directories are private: set at each start to ozone.metadata.dirs.permissions (750,
octal or symbolic as Ozone takes it), so no other local user reads om.db's S3 secrets or scm.db."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from pyozone.config import ConfigError, OzoneConfiguration
from pyozone.config.dirs import daemon_umask, dir_permissions, metadata_dir, private_dir, single_dir


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize(
    ("value", "mode"), [("750", 0o750), ("0700", 0o700), ("rwxr-x---", 0o750), ("rwx------", 0o700)]
)
def test_permissions_are_octal_or_symbolic(value: str, mode: int) -> None:
    conf = OzoneConfiguration({"ozone.metadata.dirs.permissions": value})
    assert dir_permissions(conf, "ozone.metadata.dirs.permissions") == mode


@pytest.mark.parametrize("value", ["75", "800", "rwxr-x--", "u=rwx", ""])
def test_bad_permissions_are_refused(value: str) -> None:
    conf = OzoneConfiguration({"ozone.metadata.dirs.permissions": value})
    with pytest.raises(ConfigError, match=r"ozone\.metadata\.dirs\.permissions=.*octal \(750\) or symbolic"):
        dir_permissions(conf, "ozone.metadata.dirs.permissions")


def test_defaults_are_ozones() -> None:
    conf = OzoneConfiguration()
    assert dir_permissions(conf, "ozone.metadata.dirs.permissions") == 0o750
    assert dir_permissions(conf, "hdds.datanode.data.dir.permissions") == 0o700


def test_an_existing_metadata_dir_is_made_private_at_start(tmp_path: Path) -> None:
    old = tmp_path / "scm"
    old.mkdir()
    old.chmod(0o755)  # as `scm --init` or an earlier pyozone left it
    assert metadata_dir(OzoneConfiguration({"ozone.metadata.dirs": str(old)}), "SCM", "scm.db") == old
    assert _mode(old) == 0o750
    conf = OzoneConfiguration({"ozone.metadata.dirs": str(old), "ozone.metadata.dirs.permissions": "700"})
    metadata_dir(conf, "SCM", "scm.db")
    assert _mode(old) == 0o700


def test_a_missing_metadata_dir_is_left_to_its_daemon(tmp_path: Path) -> None:
    """A daemon refusing to start (SCM not initialised) leaves no trace; one making its directory at first
    start makes it private with private_dir, whatever the umask."""
    missing = tmp_path / "a" / "om"
    assert metadata_dir(OzoneConfiguration({"ozone.metadata.dirs": str(missing)}), "OM", "om.db") == missing
    assert not (tmp_path / "a").exists()
    private_dir(missing, 0o750)
    assert _mode(missing) == 0o750


def test_a_db_dir_of_its_own_is_private_too(tmp_path: Path) -> None:
    db = tmp_path / "omdb"
    db.mkdir(mode=0o777)
    assert single_dir(OzoneConfiguration({"ozone.om.db.dirs": str(db)}), "ozone.om.db.dirs", "OM") == db
    assert _mode(db) == 0o750


@pytest.mark.parametrize(("value", "dir_mode", "file_mode"), [("750", 0o750, 0o640), ("700", 0o700, 0o600)])
def test_a_daemons_umask_gives_what_it_makes_later_the_mode(
    tmp_path: Path, value: str, dir_mode: int, file_mode: int
) -> None:
    """Issue 28 defect 9: RocksDB's directories, pipeline logs and containers were 0755, below a 0750 one."""
    before = os.umask(0o022)
    try:
        with daemon_umask(OzoneConfiguration({"ozone.metadata.dirs.permissions": value})):
            (tmp_path / "om.db" / "sub").mkdir(parents=True)
            (tmp_path / "om.db" / "LOG").write_bytes(b"")
        assert os.umask(0o022) == 0o022  # given back
    finally:
        os.umask(before)
    assert _mode(tmp_path / "om.db") == _mode(tmp_path / "om.db" / "sub") == dir_mode
    assert _mode(tmp_path / "om.db" / "LOG") == file_mode
