"""The SCM leader killed under write load (issue 31: writes resume within 2x the election timeout).

`cluster up --scm-ha` (three SCMs of scmservice, one OM, three datanodes); writers (`-w`, one OzoneClient
each) put small keys (`--size`, one block each) one after another; the SCM leader gets SIGKILL `--kills`
times, started again and caught up between kills. It prints each writer's gap (its longest wait between two
acknowledged writes, from its last before the kill to its fifth after), the max, beside
`ozone.scm.ha.ratis.leader.election.timeout` and twice it, when the successor was elected, had its log
applied and took calls (ready), the errors any client saw, and whether every acknowledged key is listed
afterwards.

What the gap measures: every key needs SCM. OM keeps no pre-allocated blocks: each openKey with data asks
SCM's block service for its blocks (allocateScmBlock; om/block_batcher.py only merges concurrent requests),
so a write waits for OM's SCM client to fail over (hdds.scmclient.failover.retry.interval after each round
of SCMs) to a leader that is ready, out of safe mode, and has an open pipeline and container to hand out
(a container allocation is itself a Raft write). The data then goes to the datanodes and commitKey to OM,
neither of which involves SCM.

    python -m benchmarks.scm_ha [-w 4] [--kills 3] [--size 4096] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.common import SHARED_DISK_DEFINES, print_table
from benchmarks.key_io import _pyozone
from benchmarks.om_ha import Writer, restart
from pyozone.client import OzoneClient
from pyozone.cluster import supervisor
from pyozone.cluster.layout import HOST, ClusterState
from pyozone.cluster.status import raft_leader, raft_view
from pyozone.config import OzoneConfiguration
from pyozone.config.site import load_configuration
from pyozone.scm.server.ha import scm_raft_settings

VOLUME, BUCKET = "scmfailover", "keys"
ELECTION_KEY = "ozone.scm.ha.ratis.leader.election.timeout"
RETRY_KEY = "hdds.scmclient.failover.retry.interval"


class KeyWriter(Writer):
    """One client putting `size`-byte keys one after another (OM's openKey asks SCM for the block)."""

    def put(self, conf: OzoneConfiguration, stop: threading.Event, pause_s: float, size: int) -> None:
        data = os.urandom(size)
        with OzoneClient(conf) as client:
            i = 0
            while not stop.is_set():
                name = f"failover/w{self.index}/{i}"
                i += 1
                try:
                    client.put_key(VOLUME, BUCKET, name, data)
                except Exception as e:  # what the benchmark counts: none may reach a client
                    self.errors.append(f"{name}: {type(e).__name__}: {str(e)[:300]}")
                else:
                    self.acks.append(time.monotonic())
                    self.keys.append(name)
                stop.wait(pause_s)


@dataclass(frozen=True)
class Kill:
    """One SCM leader SIGKILLed: who, who took over, seconds after the kill (each SCM's /api/v1/ratis and
    /ready polled every 20 ms) until it was elected, its log applied, it took calls (ready), and its /ready
    said it was out of safe mode; each writer's gap."""

    killed: str
    successor: str
    elected_s: float
    applied_s: float
    ready_s: float
    out_of_safe_mode_s: float
    gaps: list[float]


def _wait(what: str, timeout_s: float, probe: Any, interval_s: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout_s
    while (found := probe()) in (None, False):
        if time.monotonic() > deadline:
            raise SystemExit(f"scm failover: {what} not reached in {timeout_s:g} s")
        time.sleep(interval_s)
    return found


def _out_of_safe_mode(http_port: int) -> bool:
    """The SCM's /ready says it serves and is out of safe mode (scm/server/readiness.py)."""
    try:
        with urllib.request.urlopen(f"http://{HOST}:{http_port}/ready", timeout=2) as answer:
            view = json.loads(answer.read())
    except (OSError, ValueError):
        return False
    return view.get("ready") is True and view.get("safeMode") is False


def _scms(state: ClusterState) -> dict[str, int]:
    return {d.name: d.ports["http"] for d in state.scms()}


def kill_leader(state: ClusterState, writers: list[KeyWriter], settle_s: float) -> Kill:
    """SIGKILLs the SCM leader once every writer is under way; times the successor's steps."""
    leader = _wait("an SCM leader", 60, lambda: raft_leader(_scms(state)))
    started = [len(w.acks) for w in writers]
    _wait(
        "writes under way",
        60,
        lambda: all(len(w.acks) > n + 10 for w, n in zip(writers, started, strict=True)),
    )
    time.sleep(settle_s)
    killed_at = time.monotonic()
    supervisor.kill(state, leader)
    others = {node: port for node, port in _scms(state).items() if node != leader}
    elected_s: float | None = None
    applied_s: float | None = None

    def leads() -> str | None:
        nonlocal elected_s, applied_s
        for node, port in others.items():
            view = raft_view(port) or {}
            if view.get("role") == "LEADER":
                elected_s = elected_s or time.monotonic() - killed_at
                if view["appliedIndex"] >= view["lastIndex"]:
                    applied_s = applied_s or time.monotonic() - killed_at
                if view.get("ready"):
                    return node
        return None

    successor = _wait("a new SCM leader", 60, leads, interval_s=0.02)
    ready_s = time.monotonic() - killed_at
    port = others[successor]
    _wait("the new leader out of safe mode", 60, lambda: _out_of_safe_mode(port), interval_s=0.02)
    out_s = time.monotonic() - killed_at

    def resumed() -> list[float] | None:
        gaps = [w.gap(killed_at) for w in writers]
        return None if None in gaps else [g for g in gaps if g is not None]

    gaps = _wait("every client's writes after the kill", 180, resumed)
    return Kill(leader, successor, elected_s or ready_s, applied_s or ready_s, ready_s, out_s, gaps)


def failover(args: argparse.Namespace) -> int:
    """The SCM leader SIGKILLed under write load, `args.kills` times; 1 if a client saw an error, a key is
    missing or the gap missed its target."""
    data_dir = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="pyozone-scmfailover-"))
    up = _pyozone(
        "cluster", "up", "--scm-ha", "--background", "--datanodes", "3", "--data-dir", str(data_dir),
        *SHARED_DISK_DEFINES,
    )  # fmt: skip
    if up.returncode != 0:
        raise SystemExit(f"cluster up --scm-ha failed:\n{up.stdout}\n{up.stderr}")
    state = ClusterState.load(data_dir)
    conf = load_configuration(Path(state.conf_dir), {})
    settings = scm_raft_settings(conf)
    election_s = settings.rpc_timeout_min_ms / 1000
    retry_s = int(conf.get(RETRY_KEY)) / 1000
    stop = threading.Event()
    writers = [KeyWriter(i) for i in range(args.writers)]
    threads = [
        threading.Thread(target=w.put, args=(conf, stop, args.pause_ms / 1000, args.size)) for w in writers
    ]
    rows: list[tuple[str, str]] = [
        (
            "election timeout",
            f"{ELECTION_KEY} {election_s:.2f} s (each timer drawn in {election_s:.2f}-"
            f"{settings.rpc_timeout_max_ms / 1000:.2f} s); target: 2x = {2 * election_s:.2f} s",
        ),
        ("clients", f"{args.writers} writers of {args.size}-byte keys; OM's {RETRY_KEY} {retry_s:.2f} s"),
    ]
    worst = 0.0
    try:
        with OzoneClient(conf) as client:
            client.create_volume(VOLUME)
            client.create_bucket(VOLUME, BUCKET)
        for thread in threads:
            thread.start()
        for kill in range(1, args.kills + 1):
            done = kill_leader(state, writers, args.settle)
            view = raft_view(_scms(state)[done.successor]) or {}
            largest = max(done.gaps)
            worst = max(worst, largest)
            rows.append(
                (
                    f"kill {kill}: {done.killed} SIGKILLed, {done.successor} leads, term {view.get('term')}",
                    f"gap per client {' '.join(f'{g:.2f}' for g in done.gaps)} s; max {largest:.2f} s "
                    f"({'within' if largest <= 2 * election_s else 'MISSES'} 2x); after the kill: "
                    f"elected {done.elected_s:.2f} s, its log applied {done.applied_s:.2f} s, ready "
                    f"{done.ready_s:.2f} s, out of safe mode {done.out_of_safe_mode_s:.2f} s",
                )
            )
            restart(state, done.killed, int(view.get("commitIndex", 0)), _scms)
        stop.set()
        for thread in threads:
            thread.join(60)
        with OzoneClient(conf) as client:
            listed = {k.name for k in client.list_keys(VOLUME, BUCKET, prefix="failover/")}
        acknowledged = [key for w in writers for key in w.keys]
        missing = [key for key in acknowledged if key not in listed]
        errors = [e for w in writers for e in w.errors]
        rows += [
            ("max gap over every kill", f"{worst:.2f} s (2x the election timeout: {2 * election_s:.2f} s)"),
            ("errors any client saw", f"{len(errors)}" + (f" (the first: {errors[0]})" if errors else "")),
            (
                "acknowledged keys listed after",
                f"{len(acknowledged) - len(missing)} of {len(acknowledged)}"
                + (f" (missing, e.g. {missing[0]})" if missing else ""),
            ),
        ]
        load = os.getloadavg()[0]
        print_table(f"SCM leader SIGKILLed under write load: cluster up --scm-ha (load {load:.1f})", rows)
        return 1 if errors or missing or worst > 2 * election_s else 0
    finally:
        stop.set()
        for thread in threads:
            if thread.is_alive():
                thread.join(60)
        _pyozone("cluster", "down", "--data-dir", str(data_dir))
        if not args.keep:
            shutil.rmtree(data_dir, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("-w", "--writers", type=int, default=4, help="writing clients (default 4)")
    parser.add_argument("--kills", type=int, default=3, help="SCM leaders killed (default 3)")
    parser.add_argument("--size", type=int, default=4096, help="bytes per key (default 4096)")
    parser.add_argument(
        "--pause-ms", type=float, default=5, help="each writer's pause between keys (default 5)"
    )
    parser.add_argument(
        "--settle", type=float, default=2, help="seconds of writing before each kill (default 2)"
    )
    parser.add_argument("--keep", metavar="DIR", help="use and keep this data dir instead of a temp one")
    args = parser.parse_args()
    if min(args.writers, args.kills, args.size) < 1:
        parser.error("--writers, --kills and --size must be >= 1")
    return failover(args)


if __name__ == "__main__":
    raise SystemExit(main())
