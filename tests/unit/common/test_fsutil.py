"""Atomic writes: the old file or the new one, never half of one; a private file never readable by others."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from pyozone.common.fsutil import atomic_write, write_file


def test_private_files_are_created_owner_only_and_others_world_readable(tmp_path: Path) -> None:
    write_file(tmp_path / "keys" / "private.pem", b"key", private=True)
    write_file(tmp_path / "certs" / "certificate.crt", b"cert")
    assert stat.S_IMODE((tmp_path / "keys" / "private.pem").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "certs" / "certificate.crt").stat().st_mode) == 0o644
    assert [p.name for p in (tmp_path / "keys").iterdir()] == ["private.pem"]  # no temporary left behind


def test_the_mode_holds_under_a_restrictive_umask_and_replaces_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "VERSION"
    atomic_write(target, b"old")
    previous = os.umask(0o077)
    try:
        atomic_write(target, b"new")
    finally:
        os.umask(previous)
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
