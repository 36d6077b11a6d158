"""What `pyozone cluster` can say about a daemon that failed to start: how it ended, and where a live one is
stuck (its thread stacks, dumped into its log on SIGQUIT)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import pyozone
from pyozone.cluster import supervisor
from tests.polling import wait_for


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(Path(pyozone.__file__).parents[1])}


def test_exit_status_names_the_signal_or_the_code() -> None:
    suicide = "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"
    killed = subprocess.Popen([sys.executable, "-c", suicide])
    failed = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    statuses: dict[str, str] = {}

    def both_ended() -> dict[str, str]:
        for name, process in (("killed", killed), ("failed", failed)):
            if name not in statuses and (status := supervisor.exit_status(process.pid)) != "running":
                statuses[name] = status  # asked once only: the status is told once, then it is reaped
        return statuses if len(statuses) == 2 else {}

    wait_for(both_ended, 30, "both children's exit statuses", interval_s=0.05)
    assert statuses == {"killed": "killed by SIGKILL", "failed": "exited with code 3"}
    assert supervisor.exit_status(killed.pid) == "exited"  # already reaped: nothing more to tell
    assert supervisor.exit_status(None) == "not started"
    realtime = subprocess.Popen([sys.executable, "-c", "import os; os.kill(os.getpid(), 36)"])

    def ended() -> str | None:
        status = supervisor.exit_status(realtime.pid)
        return None if status == "running" else status

    status = wait_for(ended, 30, "the exit status of a real-time signal", interval_s=0.05)
    assert status == "killed by signal 36"  # a real-time signal has no name


def test_sigquit_dumps_a_daemons_stacks_into_its_log_and_it_goes_on(tmp_path: Path) -> None:
    log = tmp_path / "dn.log"
    # A datanode whose SCM never answers: it waits for SCM with backoff, as a stuck start-up would.
    command = [
        sys.executable, "-m", "pyozone", "datanode",
        "-D", "ozone.scm.names=127.0.0.1:9",
        "-D", f"hdds.datanode.dir={tmp_path / 'data'}",
        "-D", f"ozone.metadata.dirs={tmp_path / 'meta'}",
    ]  # fmt: skip
    with log.open("wb") as out:
        process = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=_env()
        )

    def wait_for_log(text: str) -> None:
        def logged() -> bool:
            assert process.poll() is None, log.read_text()
            return text in log.read_text()

        wait_for(logged, 60, lambda: f"{text!r} in the log:\n{log.read_text()}", interval_s=0.1)

    try:
        wait_for_log("getVersion failed")
        os.kill(process.pid, signal.SIGQUIT)
        wait_for_log("hread 0x")  # "Current thread 0x..." (the one the signal runs on), then "Thread 0x..."
        text = log.read_text()
        assert "hread 0x" in text and 'File "' in text, text
        assert process.poll() is None, "SIGQUIT must not stop the daemon"
    finally:
        process.terminate()
        process.wait(30)


def _one_daemon_cluster(root: Path, command: list[str]) -> Path:
    """A cluster.json (as `cluster up` writes it) for one daemon dn1 running `command`; its conf dir."""
    from pyozone.cluster.layout import ClusterState, Daemon

    data = root / "data"
    for sub in ("conf", "logs"):
        (data / sub).mkdir(parents=True)
    ClusterState(
        str(data), str(data / "conf"), [Daemon("dn1", command, str(data / "logs" / "dn1.log"))]
    ).save()
    return data / "conf"


def test_start_reports_a_daemon_that_exits_at_once(cli, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`cluster start` watches the daemon briefly: one that dies at once is exit 1 naming its log. The data
    dir is found through $OZONE_CONF_DIR (DATA_DIR/conf), as `cluster up` tells the user to export it."""
    conf = _one_daemon_cluster(tmp_path, [sys.executable, "-c", "raise SystemExit(3)"])
    monkeypatch.setenv("OZONE_CONF_DIR", str(conf))
    monkeypatch.chdir(tmp_path)
    result = cli("cluster", "start", "dn1")
    assert result.code == 1 and result.out == "", result
    assert result.err.count("\n") == 1 and result.err.startswith("pyozone cluster: error: dn1 "), result.err
    assert "exited with code 3" in result.err and str(conf.parent / "logs" / "dn1.log") in result.err


def test_start_waits_for_a_daemon_to_listen_and_reports_one_that_dies_first(  # type: ignore[no-untyped-def]
    cli, tmp_path: Path, monkeypatch
) -> None:
    """Issue 28 review: `cluster start dn3` printed success while dn3 died a few seconds later (its JOIN
    credential used up). A daemon with ports is watched until one listens or it exits."""
    from pyozone.cli import cluster
    from pyozone.cluster.layout import ClusterState

    monkeypatch.setattr(cluster, "START_CHECK_S", 0.5)
    slow_death = "import time; time.sleep(2); raise SystemExit(1)  # pyozone"
    conf = _one_daemon_cluster(tmp_path, [sys.executable, "-c", slow_death])
    state = ClusterState.load(conf.parent)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        state.daemons[0].ports["http"] = probe.getsockname()[1]
    state.save()
    monkeypatch.setenv("OZONE_CONF_DIR", str(conf))
    monkeypatch.chdir(tmp_path)
    result = cli("cluster", "start", "dn1")
    assert result.code == 1 and "dn1 " in result.err and "exited with code 1" in result.err, result


def test_start_kill_find_the_cluster_from_ozone_conf_dir(cli, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from pyozone.cli import cluster

    monkeypatch.setattr(cluster, "START_CHECK_S", 0.5)
    # "pyozone" in the command line: supervisor.is_running only counts pyozone processes as ours
    conf = _one_daemon_cluster(tmp_path, [sys.executable, "-c", "import time; time.sleep(60)  # pyozone"])
    monkeypatch.setenv("OZONE_CONF_DIR", str(conf))
    monkeypatch.chdir(tmp_path)
    started = cli("cluster", "start", "dn1")
    assert started.code == 0 and started.out.startswith("Started dn1 (pid "), started
    killed = cli("cluster", "kill", "dn1")
    assert killed.code == 0 and "Killed dn1" in killed.out, killed
    wait_for(
        lambda: supervisor.exit_status(int(started.out.split("pid ")[1].rstrip(")\n"))) != "running",
        10,
        "dn1 gone",
    )


def test_a_daemon_just_started_is_running_before_its_command_line_is_readable(tmp_path: Path) -> None:
    """slow-run-1: `cluster up` failed with "dn1 (running) exited during start-up" and empty logs. Popen
    returns once the child's exec has closed its close-on-exec pipe, before the kernel sets up the new
    program's arguments: /proc/PID/cmdline read then is empty (most reads right after Popen on a loaded
    host), and it is empty again while an exiting process releases its memory, before it is a zombie. A
    /proc check called the last daemon started dead while waitpid said it ran. A child of ours runs until
    it ends, whatever its command line (here one without "pyozone", as an empty one reads)."""
    from pyozone.cli.cluster import _check_alive
    from pyozone.cluster.layout import ClusterState

    conf = _one_daemon_cluster(tmp_path, [sys.executable, "-c", "import time; time.sleep(60)"])
    state = ClusterState.load(conf.parent)
    pid = supervisor.start(state, "dn1")
    try:
        _check_alive(state)()  # `cluster up`'s check between its readiness polls
        assert supervisor.is_running(pid)
    finally:
        os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not supervisor.is_running(pid), 10, "dn1 gone", interval_s=0.01)
    assert supervisor.exit_status(pid) == "killed by SIGKILL"  # ended, not reaped by is_running
    assert not supervisor.is_running(pid)


def test_a_daemon_without_its_sigquit_handler_yet_is_not_asked_for_its_stacks(tmp_path: Path) -> None:
    """slow-run-1: after the false "exited during start-up", `cluster up` sent SIGQUIT to daemons still in
    their interpreter's start-up, before pyozone/__main__.py registers the handler: SIGQUIT's default action
    ended them with nothing in their logs. Only a daemon that catches SIGQUIT is asked."""
    from pyozone.cluster.layout import ClusterState, Daemon

    logs = tmp_path / "logs"
    logs.mkdir()
    ready = "import faulthandler, signal; faulthandler.register(signal.SIGQUIT, all_threads=True); "
    sleep = "print('up', flush=True); import time; time.sleep(60)  # pyozone"
    state = ClusterState(
        str(tmp_path),
        str(tmp_path / "conf"),
        [
            Daemon("scm", [sys.executable, "-c", ready + sleep], str(logs / "scm.log")),
            Daemon("dn1", [sys.executable, "-c", sleep], str(logs / "dn1.log")),
        ],
    )
    for name in ("scm", "dn1"):
        supervisor.start(state, name)
    try:
        for name in ("scm", "dn1"):
            wait_for(lambda: "up" in Path(state.daemon(name).log).read_text(), 30, f"{name} up")  # noqa: B023
        assert supervisor.dump_threads(state, wait_s=0) == ["scm"]
        wait_for(lambda: "hread 0x" in Path(state.daemon("scm").log).read_text(), 30, "scm's stacks")
        assert supervisor.exit_status(state.pids["dn1"]) == "running"
        assert supervisor.exit_status(state.pids["scm"]) == "running"
    finally:
        supervisor.stop_all(state, grace_s=5)


@pytest.mark.parametrize("pid", [-1, 0, 1 << 40])
def test_a_pid_no_process_can_have_is_not_running(pid: int) -> None:
    """A damaged cluster.json's pid reads as stopped, as /proc said before waitid asked first."""
    assert not supervisor.is_running(pid)
