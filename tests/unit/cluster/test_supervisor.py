"""A local cluster's daemon logs are private (issue 28 defect 9): at DEBUG they name other users' keys."""

from __future__ import annotations

import stat
from pathlib import Path

from pyozone.cluster.layout import plan_cluster
from pyozone.cluster.supervisor import _open_log


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_logs_are_0640_in_a_0750_directory(tmp_path: Path) -> None:
    state = plan_cluster(tmp_path / "cluster", 1, 1, {})
    logs = Path(state.data_dir) / "logs"
    assert _mode(logs) == 0o750
    new, old = logs / "om.log", logs / "scm.log"
    old.write_bytes(b"an older run\n")
    old.chmod(0o644)
    for path in (new, old):
        with _open_log(path) as log:
            log.write(b"line\n")
        assert _mode(path) == 0o640
    assert old.read_bytes() == b"an older run\nline\n"
