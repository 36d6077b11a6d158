"""A local cluster's daemon logs are private (issue 28 defect 9): at DEBUG they name other users' keys. The
SCMs of a service stop after the daemons that call them."""

from __future__ import annotations

import signal
import stat
from pathlib import Path

import pytest

from pyozone.cluster import supervisor
from pyozone.cluster.layout import SCM_HA_NODES, plan_cluster
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


def test_stop_all_stops_the_scms_of_a_service_after_every_other_daemon(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = plan_cluster(tmp_path / "cluster", 3, 1, {}, scm_ha=True)
    signalled: list[tuple[str, int]] = []
    monkeypatch.setattr(
        supervisor, "signal_daemon", lambda _, name, sig: signalled.append((name, sig)) or True
    )
    monkeypatch.setattr(supervisor, "wait_stopped", lambda *_: [])  # each stops when asked
    assert supervisor.stop_all(state) == []
    others = [d.name for d in state.daemons if d.name not in SCM_HA_NODES]
    assert signalled == [(name, signal.SIGTERM) for name in (*others, *SCM_HA_NODES)]
