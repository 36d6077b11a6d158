"""A chaos run's cluster: `pyozone cluster up --background` with short intervals, kill -9 and restart of
one daemon at a time through the supervisor, a record of what was down when, and a teardown that leaves
nothing running whatever happened before it. With `om_ha`, three OMs of one service (benchmarks/om_ha.py's
HaOms) take the lone OM's place, and "om" names the service's leader at the time of a kill. A plan's
`dn-leader<n>` names the datanode that leads the most RATIS/THREE pipelines at the time of the kill (each
running datanode's /prom), and that same datanode at the placeholder's start. With `scm_ha` (issue 31),
`cluster up --scm-ha` (and `--om-ha` with `om_ha`: the cluster's own OM service then, not HaOms): "scm"
("om") names the service's leader of the moment (the one whose /api/v1/ratis says it leads, ready), and
`scm-partition` that SCM leader paused with SIGSTOP until its start sends SIGCONT. A pause, not a network
partition: every SCM listens on 127.0.0.1, and cutting one off alone would take a network namespace per
daemon (tests/e2e/netns_hosts.py needs root and places whole hosts); paused, the leader stops answering its
followers (who elect another) and everyone else, and once resumed it still believes it leads until it
hears the next term, which is the deposed-leader case a partition makes."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from benchmarks.chaos_plan import (
    SCM_PARTITION,
    Action,
    Conditions,
    Event,
    conditions,
    groups_led,
    is_leader_kill,
    max_datanodes_down,
)
from benchmarks.om_ha import HaOms
from pyozone.cluster import supervisor
from pyozone.cluster.layout import HOST, STATE_FILE, ClusterState, Daemon
from pyozone.cluster.status import cluster_ready, om_ready, raft_leader, scm_ready, wait_until
from pyozone.common.scm_ha import ScmProtocol
from pyozone.config import OzoneConfiguration
from pyozone.config.site import load_configuration
from pyozone.framework.scm_admin import ScmAdminClient
from pyozone.framework.scm_errors import ScmClientError
from pyozone.framework.scm_failover import ScmNodes
from pyozone.hdds.container_health import ContainerHealthState

# Short intervals, as the end-to-end tests use: a killed datanode is stale after 6 s and dead (its
# containers re-replicated) after 12 s; small blocks and containers so keys span several of each and
# containers close and replicate during the run.
FAST = {
    "hdds.heartbeat.interval": "1s",
    "ozone.scm.heartbeat.thread.interval": "1s",
    "ozone.scm.stale.node.interval": "6s",
    "ozone.scm.dead.node.interval": "12s",
    "hdds.scm.wait.time.after.safemode.exit": "5s",
    "ozone.scm.pipeline.creation.interval": "5s",
    "hdds.scm.safemode.rule.refresh.interval": "1s",
    "hdds.scm.replication.thread.interval": "2s",
    "hdds.container.report.interval": "5s",
    "ozone.scm.block.size": "4MB",
    "ozone.scm.container.size": "32MB",
    "ozone.scm.close.container.wait.duration": "15s",
    # A copy sent to a datanode killed a moment later (still HEALTHY, not yet stale) stays pending until
    # its deadline, and its container under-replicated meanwhile: Ozone's 12 minutes, scrubbed every
    # 5 minutes, outlast the bounded wait for no under-replication.
    "hdds.scm.replication.event.timeout": "60s",
    "hdds.scm.replication.event.timeout.datanode.offset": "20s",
    "ozone.scm.expired.container.replica.op.scrub.interval": "5s",
}
START_CHECK_S = 3.0  # a restarted daemon that cannot start exits within moments


class ChaosCluster:
    def __init__(
        self, data_dir: Path, datanodes: int, racks: int, om_ha: bool = False, scm_ha: bool = False
    ) -> None:
        self.data_dir = data_dir
        self.datanodes = datanodes
        self.racks = racks
        self.om_ha = om_ha
        self.scm_ha = scm_ha
        self.ha: HaOms | None = None  # the OM service of HaOms (OM HA without SCM HA), once up
        self._paused: set[str] = set()  # SCMs a partition paused (SIGSTOP), until their start
        self._om_killed: str | None = None  # the service's OM a kill of "om" stopped
        self._state: ClusterState | None = None
        self._lock = threading.Lock()
        self._changes: list[Event] = []  # the kills and starts made, at monotonic times, in order
        self._leaders: dict[str, str] = {}  # a plan's dn-leader<n> -> the datanode it killed

    @property
    def state(self) -> ClusterState:
        assert self._state is not None, "the cluster is not up"
        return self._state

    def conf(self) -> OzoneConfiguration:
        """The client's: with OM or SCM HA, the services' keys (calls fail over among the three)."""
        return self.ha.conf() if self.ha is not None else load_configuration(Path(self.state.conf_dir), {})

    def datanode_names(self) -> list[str]:
        return [d.name for d in self.state.datanodes()]

    # ------------------------------------------------------------------ life cycle
    def up(self, timeout_s: float = 180) -> None:
        """`cluster up`; planned again once if it fails (a port picked free may be taken before it binds)."""
        defines = [arg for k, v in FAST.items() for arg in ("-D", f"{k}={v}")]
        command = [
            sys.executable, "-m", "pyozone", "cluster", "up", "--background", "--timeout", str(timeout_s),
            "--datanodes", str(self.datanodes), "--racks", str(self.racks), "--data-dir", str(self.data_dir),
            *defines,
        ]  # fmt: skip
        if self.scm_ha:
            command += ["--scm-ha", *(["--om-ha"] if self.om_ha else [])]
        env = {k: v for k, v in os.environ.items() if k != "OZONE_CONF_DIR"}
        for attempt in (1, 2):
            done = subprocess.run(
                command, env=env, capture_output=True, text=True, timeout=timeout_s + 60, check=False
            )
            if done.returncode == 0:
                self._state = ClusterState.load(self.data_dir)
                if self.om_ha and not self.scm_ha:
                    self._start_om_service(timeout_s)
                return
            if attempt == 1:
                self.down()
                shutil.rmtree(self.data_dir, ignore_errors=True)
        raise RuntimeError(f"cluster up failed:\n{done.stdout}\n{done.stderr}")

    def _start_om_service(self, timeout_s: float) -> None:
        """The cluster's lone OM stopped for good, three OMs of one service started on its SCM."""
        supervisor.kill(self.state, "om")
        self.ha = HaOms.plan(self.data_dir / "om-ha", Path(self.state.conf_dir))
        self.ha.start_all(timeout_s)

    def om_leader(self) -> str | None:
        """The service's OM that leads (the highest term's, should an old leader still think it leads)."""
        if self.ha is None:
            return self.leader("om")
        views = {node: self.ha.raft_view(node) for node in self.ha.processes}
        leaders = [(v["term"], node) for node, v in views.items() if v and v.get("role") == "LEADER"]
        return max(leaders)[1] if leaders else None

    def leader(self, kind: str) -> str | None:
        """The daemon ("scm2") of the cluster's own HA service of `kind` ("om", "scm") that leads, ready;
        None while none does."""
        return raft_leader({d.name: d.ports["http"] for d in self._members(kind)})

    def _members(self, kind: str) -> list[Daemon]:
        members = self.state.oms() if kind == "om" else self.state.scms()
        return members if len(members) > 1 else []

    def down(self) -> None:
        """Every daemon stopped: SIGTERM, then SIGKILL of the process group (each daemon leads its own
        session) of anything left."""
        for name in sorted(self._paused):
            self._resume(name)
        if self.ha is not None:
            self.ha.stop_all()
        if not (self.data_dir / STATE_FILE).exists():
            return
        state = self._state or ClusterState.load(self.data_dir)
        for name in supervisor.stop_all(state, grace_s=10):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(state.pids[name], signal.SIGKILL)
        supervisor.wait_stopped(state, list(state.pids), 5)

    def wait_ready(self, timeout_s: float) -> None:
        """SCM out of safe mode with every datanode healthy and an open pipeline, and OM answering."""
        state = self.state
        if self.scm_ha:
            wait_until(lambda: self.leader("scm") is not None, timeout_s, "an SCM of the service leading")
        else:
            wait_until(lambda: scm_ready(state.daemon("scm").ports["http"]), timeout_s, "SCM readiness")
        with self.admin() as admin:
            wait_until(lambda: cluster_ready(admin, self.datanodes), timeout_s, "all datanodes healthy")
        if self.om_ha:
            wait_until(lambda: self.om_leader() is not None, timeout_s, "an OM of the service leading")
        else:
            wait_until(lambda: om_ready(state.daemon("om").ports["http"]), timeout_s, "OM readiness")

    def admin(self) -> ScmAdminClient:
        """SCM's admin client as the site file names SCM (the SCMs of the service fail over)."""
        nodes = ScmNodes.configured(self.conf(), ScmProtocol.CLIENT)
        return ScmAdminClient(nodes, timeout_s=5)

    # ------------------------------------------------------------------ chaos
    def pipeline_leader(self) -> tuple[str, list[str]] | None:
        """The running datanode that leads the most RATIS/THREE pipelines (by its /prom; the first by name
        on a tie) and their groups; None if none answers as a leader."""
        best: tuple[str, list[str]] | None = None
        for name in sorted(self.datanode_names()):
            if not supervisor.is_running(self.state.pids.get(name)):
                continue
            url = f"http://{HOST}:{self.state.daemon(name).ports['http']}/prom"
            try:
                with urllib.request.urlopen(url, timeout=2) as answer:
                    led = groups_led(answer.read().decode())
            except (urllib.error.URLError, OSError):
                continue
            if led and (best is None or len(led) > len(best[1])):
                best = (name, led)
        return best

    def resolved(self, name: str) -> str:
        """The datanode a plan's `dn-leader<n>` killed, the SCM or OM a kill of "scm" or "om" (or a
        `scm-partition`) of an HA service of the cluster stopped last; any other name as it is."""
        return self._leaders.get(name, name)

    def kill(self, name: str) -> bool:
        """kill -9; False if it was not running (with OM HA, "om": the leader; False without one; a plan's
        `dn-leader<n>`: the datanode leading the most pipelines, False without one; with the cluster's own
        HA services, "om" and "scm" kill the leader, `scm-partition` pauses it, False without one)."""
        if is_leader_kill(name):
            found = self.pipeline_leader()
            if found is None or not supervisor.kill(self.state, found[0]):
                return False
            self._leaders[name] = found[0]
            self._record(found[0], up=False)
            return True
        kind = "scm" if name == SCM_PARTITION else name
        if kind in ("om", "scm") and self._members(kind):
            leader = self.leader(kind)
            if leader is None:
                return False
            if name == SCM_PARTITION:
                supervisor.signal_daemon(self.state, leader, signal.SIGSTOP)
                self._paused.add(leader)
            elif not supervisor.kill(self.state, leader):
                return False
            self._leaders[name] = leader
            self._record(leader, up=False)
            return True
        if name == "om" and self.ha is not None:
            leader = self.om_leader() if self._om_killed is None else None
            if leader is not None:
                self.ha.kill(leader)
                self._om_killed = leader
                self._record(name, up=False)
            return leader is not None
        killed = supervisor.kill(self.state, name)
        if killed:
            self._record(name, up=False)
        return killed

    def start(self, name: str) -> str:
        """Starts a daemon again and watches it briefly; "running", or how it ended."""
        if name == "om" and self.ha is not None:
            if self._om_killed is None:
                return "running"
            node, self._om_killed = self._om_killed, None
            self.ha.start(node)
            process = self.ha.processes[node]
            deadline = time.monotonic() + START_CHECK_S
            while process.poll() is None and time.monotonic() < deadline:
                time.sleep(0.1)
            status = "running" if process.poll() is None else f"exited with {process.returncode}"
            if status != "running":
                self._om_killed = node
            else:
                self._record(name, up=True)
            return status
        name = self.resolved(name)
        if name in self._paused:
            self._resume(name)
            return "running"
        if supervisor.is_running(self.state.pids.get(name)):
            return "running"
        pid = supervisor.start(self.state, name)
        deadline = time.monotonic() + START_CHECK_S
        while (status := supervisor.exit_status(pid)) == "running" and time.monotonic() < deadline:
            time.sleep(0.1)
        if status == "running":
            self._record(name, up=True)
        return status

    def _resume(self, name: str) -> None:
        supervisor.signal_daemon(self.state, name, signal.SIGCONT)
        self._paused.discard(name)
        self._record(name, up=True)

    def stopped(self) -> list[str]:
        """The daemons down or paused; with HaOms, "om" while a kill of the leader has not been started
        again."""
        down = [d.name for d in self.state.daemons if not supervisor.is_running(self.state.pids.get(d.name))]
        down += sorted(self._paused)
        if self.ha is not None:
            down = [name for name in down if name != "om"] + ["om"] * (self._om_killed is not None)
        return down

    def _record(self, name: str, up: bool) -> None:
        with self._lock:
            self._changes.append(Event(time.monotonic(), Action.START if up else Action.KILL, name))

    def conditions(self, start: float, end: float) -> Conditions:
        """The cluster over [start, end] (monotonic times), from the kills and starts this object made."""
        with self._lock:
            return conditions(self._changes, self.datanodes, start, end)

    def most_datanodes_down(self) -> int:
        with self._lock:
            return max_datanodes_down(self._changes)


def under_replicated(admin: ScmAdminClient, since_ms: int) -> int | None:
    """Containers the Replication Manager reports under-replicated (alone or with another health state),
    from a report it completed after `since_ms` (epoch ms); None while there is no such report."""
    try:
        report = admin.replication_manager_report()
    except ScmClientError:
        return None
    if report.timestamp_ms <= since_ms:
        return None
    return sum(report.stat(s) for s in ContainerHealthState if "UNDER_REPLICATED" in s.name)
