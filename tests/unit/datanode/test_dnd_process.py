"""`python -m pyozone datanode` as a real process against the fake SCM: it registers, SIGTERM stops it
cleanly (exit 0), and a configuration error exits 1 with one line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pyozone
from tests.polling import wait_for
from tests.unit.datanode.dnd_helpers import FakeScm, cli_overrides, dn_conf


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "OZONE_CONF_DIR"}
    env["PYTHONPATH"] = str(Path(pyozone.__file__).parents[1])
    env["PYOZONE_LOG_LEVEL"] = "INFO"
    return env


def _command(*args: str) -> list[str]:
    return [sys.executable, "-m", "pyozone", "datanode", *args]


def test_sigterm_stops_the_datanode_cleanly(tmp_path: Path, scm: FakeScm) -> None:
    log = tmp_path / "dn.log"
    with open(log, "w") as err:
        proc = subprocess.Popen(
            _command(*cli_overrides(dn_conf(tmp_path, scm.address))), env=_environment(), stderr=err
        )

    def beating() -> object:
        assert proc.poll() is None, log.read_text()
        return scm.beats()

    try:
        wait_for(beating, 15, lambda: f"a first heartbeat; log:\n{log.read_text()}", interval_s=0.05)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = log.read_text()
    assert "Traceback" not in text, text
    assert f"registered with SCM at {scm.address}" in text
    before_banner = text[: text.index("SHUTDOWN_MSG: Shutting down HddsDatanodeService")].splitlines()
    assert "stopped" in before_banner[-2]  # the last line before the banner is the rule opening it


def test_missing_scm_address_exits_1_with_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        _command("-D", f"ozone.metadata.dirs={tmp_path}", "-D", f"hdds.datanode.dir={tmp_path / 'd'}"),
        env={**_environment(), "PYOZONE_LOG_LEVEL": "WARNING"},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 1
    assert done.stderr.startswith("pyozone datanode: error: ozone.scm.names: not set"), done.stderr
    assert done.stderr.count("\n") == 1
