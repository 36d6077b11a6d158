"""Starting, stopping and killing the daemons of a local cluster, as plain OS processes."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import BinaryIO

from pyozone.cluster.layout import ClusterState
from pyozone.config.dirs import LOG_FILE_MODE


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("PYOZONE_LOG_LEVEL", "INFO")
    env["PYTHONUNBUFFERED"] = "1"
    return env


def is_running(pid: int | None) -> bool:
    """Alive and ours. A child of this process runs until it ends, whatever /proc says of it: its pid is not
    recycled before it is reaped, and /proc/PID/cmdline reads empty until the kernel has set up the program's
    arguments, which may be after Popen returned (on a loaded host, long after). Another process's pid
    (from cluster.json) is ours while alive and still a pyozone process (a recycled pid is not ours)."""
    if not pid or not 0 < pid < 1 << 22:  # none, or not a pid Linux hands out (a damaged cluster.json)
        return False
    try:
        ended = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)  # WNOWAIT: exit_status reaps
    except ChildProcessError:
        pass  # not our child: /proc tells
    else:
        return ended is None
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return b"pyozone" in cmdline and "\nState:\tZ" not in status


def start(state: ClusterState, name: str) -> int:
    daemon = state.daemon(name)
    if is_running(state.pids.get(name)):
        return state.pids[name]
    log = _open_log(Path(daemon.log))
    try:
        process = subprocess.Popen(
            daemon.command,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=_env(),
            start_new_session=True,
        )
    finally:
        log.close()
    state.pids[name] = process.pid
    state.save()
    return process.pid


def _open_log(path: Path) -> BinaryIO:
    """A daemon's log for appending, mode LOG_FILE_MODE (0640), an older one's mode set too."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, LOG_FILE_MODE)
    try:
        os.fchmod(fd, LOG_FILE_MODE)  # the umask may have taken bits away; an old log may have more
    except OSError:
        os.close(fd)
        raise
    return os.fdopen(fd, "ab")


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def exit_status(pid: int | None) -> str:
    """How a daemon this process started ended ("exited with code 1", "killed by SIGKILL"); "exited" when
    another process started it, or it was already reaped."""
    if not pid:
        return "not started"
    try:
        done, status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return "exited"
    if done == 0:
        return "running"
    code = os.waitstatus_to_exitcode(status)
    if code >= 0:
        return f"exited with code {code}"
    try:
        return f"killed by {signal.Signals(-code).name}"
    except ValueError:  # a real-time signal has no name
        return f"killed by signal {-code}"


def dump_threads(state: ClusterState, wait_s: float = 1.0) -> list[str]:
    """Asks every running daemon for a dump of its threads' stacks into its log (SIGQUIT, see
    pyozone/__main__.py); returns the names asked. Used before stopping a cluster that failed to start. A
    daemon still in its interpreter's start-up has no handler yet, and SIGQUIT's default action would end it
    with nothing in its log: it is not asked."""
    asked = [
        d.name
        for d in state.daemons
        if _catches(state.pids.get(d.name), signal.SIGQUIT) and signal_daemon(state, d.name, signal.SIGQUIT)
    ]
    if asked:
        time.sleep(wait_s)
    return asked


def _catches(pid: int | None, sig: signal.Signals) -> bool:
    """Whether the process has a handler for the signal (/proc/PID/status SigCgt, a hex mask of bit sig-1)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = next((line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:")), "0")
    return bool(int(caught, 16) >> (sig - 1) & 1)


def signal_daemon(state: ClusterState, name: str, sig: int) -> bool:
    pid = state.pids.get(name)
    if not is_running(pid):
        return False
    os.kill(pid, sig)
    return True


def wait_stopped(state: ClusterState, names: list[str], timeout_s: float) -> list[str]:
    """Waits for the daemons to exit; returns those still running at the deadline."""
    deadline = time.monotonic() + timeout_s
    while True:
        for name in names:
            if state.pids.get(name):
                _reap(state.pids[name])
        alive = [n for n in names if is_running(state.pids.get(n))]
        if not alive or time.monotonic() >= deadline:
            return alive
        time.sleep(0.1)


def kill(state: ClusterState, name: str) -> bool:
    """kill -9, as a crash would."""
    killed = signal_daemon(state, name, signal.SIGKILL)
    wait_stopped(state, [name], 5)
    return killed


def stop_all(state: ClusterState, grace_s: float = 15) -> list[str]:
    """SIGTERM OM and the datanodes, then SCM or the SCMs of its service (their server); SIGKILL what is
    left after the grace period."""
    scms = [d.name for d in state.scms()]
    clients = [d.name for d in state.daemons if d.name not in scms]
    for group in (clients, scms):
        for name in group:
            signal_daemon(state, name, signal.SIGTERM)
        for name in wait_stopped(state, group, grace_s):
            signal_daemon(state, name, signal.SIGKILL)
        wait_stopped(state, group, 5)
    return [name for name, pid in state.pids.items() if is_running(pid)]
