"""The chaos suite (issue 11), after Ozone's MiniOzoneChaosCluster: write while daemons are killed, then
check that every acknowledged key reads back intact and that SCM re-replicates everything.

    python -m benchmarks.chaos --minutes N [--datanodes 5] [--racks 2] [--max-down 2] [--seed S]
                               [--kill-every 60] [--leader-every 3] [--data-dir DIR] [--keep]
                               [--workload keys]
                               [--om-ha [--om-kills 3]] [--scm-ha [--scm-kills N] [--scm-partitions N]]

1. `pyozone cluster up` with short intervals (benchmarks/chaos_cluster.py) in a fresh directory;
2. for N minutes, a writer puts keys of 1 KB-20 MB (log-uniform) through a Workload and records the sha256
   of each one acknowledged, while a killer carries out a seeded plan (benchmarks/chaos_plan.py): kill -9
   of datanodes, at most --max-down at once, every third of them the leader of pipelines being written
   through (--leader-every), and of OM and SCM once each (with --om-ha, three OMs of one service in the
   lone OM's place, and the leader of the moment killed --om-kills times; with --scm-ha, `cluster up
   --scm-ha` (three SCMs; --om-ha then takes the cluster's own OM service), the SCM leader of the moment
   killed --scm-kills times and paused --scm-partitions times, benchmarks/chaos_cluster.py says why a pause);
3. everything is started again; every acknowledged key is read back and compared (lost: unreadable,
   corrupt: other bytes), while the Replication Manager's report (`admin container report`) is polled
   until nothing is under-replicated (bounded);
4. the ids (issue 31): the block of every acknowledged key from OM's key locations, (container, local id)
   each used by one block only; the containers on the SCM leader at the end, none listed twice and every
   container a key uses among them;
5. a summary: keys and bytes acknowledged, lost, corrupt, write errors by class and by what was down
   while the write ran, kills by daemon, ids reused, time to no under-replication. Exit status 1 if
   anything acknowledged was lost or is corrupt, or an id was reused.

The cluster is always torn down, and the directory removed unless --keep. `pytest -m chaos` runs a short
version (tests/chaos/test_chaos.py).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.chaos_cluster import ChaosCluster, under_replicated
from benchmarks.chaos_plan import (
    KILL_EVERY_S,
    LEADER_EVERY,
    SCM_PARTITION,
    Action,
    Conditions,
    Event,
    KillTiming,
    is_leader_kill,
    plan_kills,
)
from benchmarks.chaos_workload import WORKLOADS, Workload, error_class, key_size
from benchmarks.common import print_table
from pyozone.cluster.layout import HOST
from pyozone.common.net import HostPort
from pyozone.framework.scm_admin import ScmAdminClient

REPLICATION = 3  # datanodes a RATIS/THREE write needs: fewer up, and a write may fail by design
READ_ATTEMPTS = 3
# After a failed write, as an application would pause: an error that comes back at once (SCM in safe
# mode) is then counted once a second, not hundreds of times.
ERROR_PAUSE_S = 1.0
LIST_PAGE = 1000  # containers per listContainer call (SCM takes at most 10000)


@dataclass(frozen=True, slots=True)
class ChaosOptions:
    minutes: float
    datanodes: int = 5
    racks: int = 2
    max_down: int = 2
    seed: int = 1
    kill_every: float = KILL_EVERY_S  # mean seconds between datanode kills
    leader_every: int = LEADER_EVERY  # every n-th datanode kill hits a pipeline's leader (0: none)
    data_dir: Path | None = None  # None: a new temporary directory
    keep: bool = False
    workload: str = "keys"
    om_ha: bool = False  # three OMs of one service (issue 30); a kill of "om" kills its leader
    om_kills: int = 1
    scm_ha: bool = False  # three SCMs of one service (issue 31); a kill of "scm" kills its leader
    scm_kills: int = 1
    scm_partitions: int = 0  # the SCM leader paused (SIGSTOP) for a while, with --scm-ha
    op_timeout_s: float = 300.0  # one write or read; past it the op counts as failed
    ready_timeout_s: float = 180.0
    rm_timeout_s: float = 600.0  # how long to wait for no under-replication


@dataclass
class ChaosResult:
    options: ChaosOptions
    workload: str = ""
    writing_s: float = 0.0
    acknowledged: dict[str, tuple[int, str]] = field(default_factory=dict)  # key -> (size, sha256)
    write_errors: Counter[tuple[str, str]] = field(default_factory=Counter)  # (class, conditions)
    error_samples: dict[str, str] = field(default_factory=dict)  # class -> first message
    killed: list[Event] = field(default_factory=list)
    most_datanodes_down: int = 0
    start_failures: list[str] = field(default_factory=list)
    ready_s: float | None = None  # after the writing phase, until every daemon was up and the cluster ready
    lost: dict[str, str] = field(default_factory=dict)  # key -> why it could not be read
    read_retried: dict[str, str] = field(default_factory=dict)  # key -> why its first read failed
    corrupt: list[str] = field(default_factory=list)
    read_s: float = 0.0
    no_under_replication_s: float | None = None  # from every daemon back up to a report with none
    last_under_replicated: int | None = None
    blocks_reused: list[tuple[int, int]] = field(default_factory=list)  # (container, local id) of >1 block
    containers_listed: int | None = None  # on the SCM leader at the end; None: not listed
    containers_listed_twice: list[int] = field(default_factory=list)
    containers_unknown: list[int] = field(default_factory=list)  # a key's container the leader does not list
    locations_unread: dict[str, str] = field(default_factory=dict)  # key -> why OM gave no locations
    total_s: float = 0.0

    @property
    def ok(self) -> bool:
        return not (self.lost or self.corrupt or self.blocks_reused or self.containers_listed_twice)

    def errors_while_writable(self) -> int:
        """Write errors while OM, SCM and a replication factor's worth of datanodes were all up."""
        return sum(n for (_, cond), n in self.write_errors.items() if cond == _conditions_label(_WRITABLE))


_WRITABLE = Conditions(REPLICATION, om_down=False, scm_down=False)


def _conditions_label(c: Conditions) -> str:
    """Such as "OM down, 2 dn up"; every count of REPLICATION or more datanodes is one label."""
    parts = ["OM down"] * c.om_down + ["SCM down"] * c.scm_down
    parts.append(
        f"{c.min_datanodes_up} dn up" if c.min_datanodes_up < REPLICATION else f">={REPLICATION} dn up"
    )
    return ", ".join(parts)


def _log(t0: float, message: str) -> None:
    print(f"[{time.monotonic() - t0:7.1f} s] {message}", flush=True)


# ------------------------------------------------------------------ the killer
class Killer(threading.Thread):
    """Carries out the plan on time. Never has more than max_down datanodes stopped, even if a restart
    failed (that daemon is tried again at each later event instead)."""

    def __init__(
        self, cluster: ChaosCluster, plan: list[Event], max_down: int, t0: float, result: ChaosResult
    ):
        super().__init__(name="chaos-killer", daemon=True)
        self._cluster, self._plan, self._max_down, self._t0 = cluster, plan, max_down, t0
        self._result = result
        self._pending: set[str] = set()  # planned back up, but its start failed
        self._skipped: set[str] = set()  # kills not made (max_down reached): their starts are skipped too
        self.stop = threading.Event()

    def run(self) -> None:
        for event in self._plan:
            if self.stop.wait(max(0.0, self._t0 + event.at_s - time.monotonic())):
                return
            for name in sorted(self._pending):
                self._start(name)
            if event.action is Action.START:
                if event.daemon in self._skipped:
                    self._skipped.discard(event.daemon)
                else:
                    self._start(event.daemon)
            elif not (self._may_kill(event.daemon) and self._cluster.kill(event.daemon)):
                self._skipped.add(event.daemon)
            else:
                self._result.killed.append(event)
                name = self._cluster.resolved(event.daemon)
                _log(
                    self._t0,
                    f"killed {_what(event.daemon, name)}; stopped: {', '.join(self._cluster.stopped())}",
                )

    def _may_kill(self, name: str) -> bool:
        down = [n for n in self._cluster.stopped() if n.startswith("dn")]
        return not name.startswith("dn") or len(down) < self._max_down

    def _start(self, name: str) -> None:
        status = self._cluster.start(name)
        daemon = self._cluster.resolved(name)
        if status == "running":
            self._pending.discard(name)
            _log(self._t0, f"started {daemon}")
        else:
            self._pending.add(name)
            self._result.start_failures.append(f"{daemon}: {status}")
            _log(self._t0, f"{daemon} did not start: {status}")


def _what(planned: str, name: str) -> str:
    """A kill as the log tells it: `name` is the daemon a plan's `planned` name resolved to."""
    if planned == SCM_PARTITION:
        return f"{name}, the SCM leader, paused (SIGSTOP)"
    if is_leader_kill(planned):
        return f"{name}, the leader of the most pipelines (kill -9)"
    if name != planned:
        return f"{name}, the {planned.upper()} leader (kill -9)"
    return f"{name} (kill -9)"


# ------------------------------------------------------------------ the phases
def _write_phase(
    workload: Workload, cluster: ChaosCluster, rng: random.Random, end: float, t0: float, result: ChaosResult,
    ledger: Path,
) -> None:  # fmt: skip
    """Writes keys until `end`; each acknowledged one goes into the result and the ledger file."""
    next_report = time.monotonic() + 60
    with ledger.open("a") as log:
        while (started := time.monotonic()) < end:
            attempts = len(result.acknowledged) + sum(result.write_errors.values())
            key = f"k{attempts:07d}-{rng.getrandbits(32):08x}"
            data = rng.randbytes(key_size(rng))
            try:
                workload.write(key, data)
            except Exception as e:
                name = error_class(e)
                label = _conditions_label(cluster.conditions(started, time.monotonic()))
                result.write_errors[(name, label)] += 1
                result.error_samples.setdefault(name, f"{e}"[:300])
                _log(t0, f"write of {key} ({len(data)} B) failed [{label}]: {name}: {str(e)[:160]}")
                time.sleep(ERROR_PAUSE_S)
                continue
            digest = hashlib.sha256(data).hexdigest()
            result.acknowledged[key] = (len(data), digest)
            log.write(json.dumps({"key": key, "size": len(data), "sha256": digest}) + "\n")
            if time.monotonic() >= next_report:
                next_report += 60
                log.flush()
                _log(t0, f"{len(result.acknowledged)} keys acknowledged, {_gib(result):.2f} GiB, "
                         f"{sum(result.write_errors.values())} write errors")  # fmt: skip


def _restart_all(cluster: ChaosCluster, result: ChaosResult, t0: float) -> None:
    for _ in range(3):
        for name in cluster.stopped():
            status = cluster.start(name)
            if status != "running":
                result.start_failures.append(f"{name}: {status}")
        if not cluster.stopped():
            return
        time.sleep(2)
    _log(t0, f"still stopped after 3 attempts: {', '.join(cluster.stopped())}")


def _watch_replication(
    cluster: ChaosCluster, since: float, since_ms: int, timeout_s: float, result: ChaosResult
):
    """Polls the RM report until a report made after `since_ms` counts no under-replicated container."""
    deadline = since + timeout_s
    with cluster.admin() as admin:
        while time.monotonic() < deadline:
            count = under_replicated(admin, since_ms)
            if count is not None:
                result.last_under_replicated = count
                if count == 0:
                    result.no_under_replication_s = time.monotonic() - since
                    return
            time.sleep(2)


def _read_back(workload: Workload, result: ChaosResult) -> None:
    for key, (size, digest) in result.acknowledged.items():
        for attempt in range(1, READ_ATTEMPTS + 1):
            try:
                data = workload.read(key)
            except Exception as e:
                why = f"{error_class(e)}: {str(e)[:200]}"
                if attempt == READ_ATTEMPTS:
                    result.lost[key] = why
                else:
                    result.read_retried.setdefault(key, why)
                    time.sleep(5)
                continue
            if len(data) != size or hashlib.sha256(data).hexdigest() != digest:
                result.corrupt.append(key)
            break


def run(options: ChaosOptions, on_cluster_up: Callable[[Path], None] | None = None) -> ChaosResult:
    """The whole run; the cluster is down again when it returns (or raises)."""
    result = ChaosResult(options)
    data_dir = options.data_dir or Path(tempfile.mkdtemp(prefix="pyozone-chaos-"))
    cluster = ChaosCluster(data_dir, options.datanodes, options.racks, options.om_ha, options.scm_ha)
    began = time.monotonic()
    try:
        cluster.up(options.ready_timeout_s)
        if on_cluster_up:
            on_cluster_up(data_dir)
        workload = WORKLOADS[options.workload](cluster.conf(), options.op_timeout_s)
        result.workload = workload.name
        try:
            workload.prepare()
            _chaos(options, cluster, workload, result)
        finally:
            workload.close()
    finally:
        cluster.down()
        if not options.keep:
            shutil.rmtree(data_dir, ignore_errors=True)
        result.total_s = time.monotonic() - began
    return result


def _chaos(options: ChaosOptions, cluster: ChaosCluster, workload: Workload, result: ChaosResult) -> None:
    rng = random.Random(options.seed)
    duration_s = options.minutes * 60
    timing = KillTiming(kill_every_s=options.kill_every, leader_every=options.leader_every)
    plan = plan_kills(
        duration_s,
        cluster.datanode_names(),
        options.max_down,
        random.Random(rng.getrandbits(64)),
        timing,
        options.om_kills,
        options.scm_kills,
        options.scm_partitions if options.scm_ha else 0,
    )
    t0 = time.monotonic()
    _log(t0, f"writing for {duration_s:.0f} s; {sum(e.action is Action.KILL for e in plan)} kills planned")
    killer = Killer(cluster, plan, options.max_down, t0, result)
    killer.start()
    try:
        _write_phase(
            workload, cluster, rng, t0 + duration_s, t0, result, cluster.data_dir / "chaos-ledger.jsonl"
        )
    finally:
        killer.stop.set()
        killer.join()
    result.writing_s = time.monotonic() - t0
    result.most_datanodes_down = cluster.most_datanodes_down()
    _log(t0, f"writing done: {len(result.acknowledged)} keys acknowledged; starting every daemon")
    _restart_all(cluster, result, t0)
    back, back_ms = time.monotonic(), int(time.time() * 1000)
    try:
        cluster.wait_ready(options.ready_timeout_s)
        result.ready_s = time.monotonic() - back
    except TimeoutError as e:
        _log(t0, f"cluster not ready: {e}; reading back anyway")
    watcher = threading.Thread(
        target=_watch_replication, args=(cluster, back, back_ms, options.rm_timeout_s, result), daemon=True
    )
    watcher.start()
    read_start = time.monotonic()
    _read_back(workload, result)
    result.read_s = time.monotonic() - read_start
    _log(t0, f"read back {len(result.acknowledged)} keys in {result.read_s:.1f} s")
    _check_ids(cluster, workload, result)
    _log(t0, f"ids: {len(result.blocks_reused)} blocks reused, "
             f"{len(result.containers_listed_twice)} containers listed twice")  # fmt: skip
    watcher.join()


def _check_ids(cluster: ChaosCluster, workload: Workload, result: ChaosResult) -> None:
    """No block id handed out twice: the (container, local id) of every acknowledged key's blocks, as OM
    records them, unique; no container listed twice by the SCM leader, and every container a key uses
    listed there (one it lost the record of, or never had, is not)."""
    blocks: Counter[tuple[int, int]] = Counter()
    for key in result.acknowledged:
        try:
            blocks.update(workload.block_ids(key))
        except Exception as e:
            result.locations_unread[key] = f"{error_class(e)}: {str(e)[:200]}"
    result.blocks_reused = sorted(block for block, n in blocks.items() if n > 1)
    leader = cluster.leader("scm") if cluster.scm_ha else None
    admin = (
        ScmAdminClient(HostPort(HOST, cluster.state.daemon(leader).ports["client"]), timeout_s=30)
        if leader is not None
        else cluster.admin()
    )
    ids: Counter[int] = Counter()
    with admin:
        start = 0
        while page := admin.containers(start, LIST_PAGE)[0]:
            ids.update(c.container_id for c in page)
            start = page[-1].container_id + 1
    result.containers_listed = len(ids)
    result.containers_listed_twice = sorted(c for c, n in ids.items() if n > 1)
    result.containers_unknown = sorted({c for c, _ in blocks} - set(ids))


# ------------------------------------------------------------------ the summary
def _gib(result: ChaosResult) -> float:
    return sum(size for size, _ in result.acknowledged.values()) / 2**30


def summary_rows(result: ChaosResult) -> list[tuple[str, str]]:
    o = result.options
    kills = Counter(_kind(e.daemon) for e in result.killed)
    errors = sum(result.write_errors.values())
    rows = [
        ("workload", result.workload),
        (
            "cluster",
            f"{o.datanodes} datanodes on {o.racks} racks, at most {o.max_down} down, seed {o.seed}"
            + (", OM HA (3 OMs; the leader killed)" if o.om_ha else "")
            + (", SCM HA (3 SCMs; the leader killed or paused)" if o.scm_ha else ""),
        ),
        ("writing phase", f"{result.writing_s:.1f} s"),
        ("keys acknowledged", str(len(result.acknowledged))),
        ("bytes acknowledged", f"{_gib(result):.2f} GiB"),
        ("lost", str(len(result.lost))),
        ("corrupt", str(len(result.corrupt))),
        ("write errors", str(errors)),
        (f"  with OM, SCM, >={REPLICATION} dn up", str(result.errors_while_writable())),
    ]
    rows += [(f"  {name} [{cond}]", str(n)) for (name, cond), n in sorted(result.write_errors.items())]
    rows += [
        (
            "kills",
            ", ".join(f"{name} {kills[name]}" for name in KILL_KINDS if o.scm_ha or name != SCM_PARTITION),
        ),
        ("most datanodes down at once", str(result.most_datanodes_down)),
        ("failed restarts", str(len(result.start_failures))),
        ("ready after restart", "not reached" if result.ready_s is None else f"{result.ready_s:.1f} s"),
        ("read back", f"{len(result.acknowledged)} keys in {result.read_s:.1f} s"),
        ("  keys read on a later attempt", str(len(result.read_retried) - len(result.lost))),
        ("time to no under-replication", _replication_figure(result)),
        ("block ids used twice", str(len(result.blocks_reused))),
        ("keys without locations from OM", str(len(result.locations_unread))),
        (
            "containers on the SCM leader",
            "not listed" if result.containers_listed is None else str(result.containers_listed),
        ),
        ("  listed twice", str(len(result.containers_listed_twice))),
        ("  a key's container not listed", str(len(result.containers_unknown))),
        ("total", f"{result.total_s:.1f} s"),
    ]
    return rows


KILL_KINDS = ("datanode", "pipeline leader", "om", "scm", SCM_PARTITION)


def _kind(daemon: str) -> str:
    if daemon in ("om", "scm", SCM_PARTITION):
        return daemon
    return "pipeline leader" if is_leader_kill(daemon) else "datanode"


def _replication_figure(result: ChaosResult) -> str:
    if result.no_under_replication_s is not None:
        return f"{result.no_under_replication_s:.1f} s after every daemon was started again"
    last = "no report yet" if result.last_under_replicated is None else f"{result.last_under_replicated} left"
    return f"not reached in {result.options.rm_timeout_s:.0f} s ({last})"


def print_summary(result: ChaosResult) -> None:
    print()
    print_table("Chaos run", summary_rows(result))
    for name, message in sorted(result.error_samples.items()):
        print(f"  first {name}: {message}")
    for key, why in list(result.lost.items())[:20]:
        print(f"  lost {key}: {why}")
    for key, why in [(k, w) for k, w in result.read_retried.items() if k not in result.lost][:20]:
        print(f"  read on a later attempt {key}, the first failed: {why}")
    for key in result.corrupt[:20]:
        print(f"  corrupt {key}")
    for block in result.blocks_reused[:20]:
        print(f"  block reused: container {block[0]}, local id {block[1]}")
    for container in result.containers_listed_twice[:20]:
        print(f"  container listed twice: {container}")
    for container in result.containers_unknown[:20]:
        print(f"  a key's container the SCM leader does not list: {container}")
    for key, why in list(result.locations_unread.items())[:20]:
        print(f"  no locations for {key}: {why}")
    for failure in result.start_failures[:20]:
        print(f"  failed restart {failure}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.chaos", description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, required=True, help="length of the writing phase")
    parser.add_argument("--datanodes", type=int, default=5)
    parser.add_argument("--racks", type=int, default=2)
    parser.add_argument("--max-down", type=int, default=2, help="datanodes down at once, at most")
    parser.add_argument("--seed", type=int, default=1, help="the same seed, the same kills and keys")
    parser.add_argument(
        "--kill-every",
        type=float,
        default=KILL_EVERY_S,
        help="mean seconds between datanode kills",
    )
    parser.add_argument(
        "--leader-every",
        type=int,
        default=LEADER_EVERY,
        help="every n-th datanode kill hits the leader of the most pipelines (0: none; default 3)",
    )
    parser.add_argument("--data-dir", type=Path, default=None, help="default: a new temporary directory")
    parser.add_argument("--keep", action="store_true", help="keep the data dir (logs, ledger) afterwards")
    parser.add_argument("--workload", choices=sorted(WORKLOADS), default="keys")
    parser.add_argument("--om-ha", action="store_true", help="three OMs of one service; kills hit the leader")
    parser.add_argument("--om-kills", type=int, default=1, help="OM kills over the run (default 1)")
    parser.add_argument(
        "--scm-ha", action="store_true", help="three SCMs of one service; kills and pauses hit the leader"
    )
    parser.add_argument("--scm-kills", type=int, default=1, help="SCM kills over the run (default 1)")
    parser.add_argument(
        "--scm-partitions", type=int, default=0, help="pauses of the SCM leader over the run (--scm-ha)"
    )
    args = parser.parse_args(argv)
    if min(args.om_kills, args.scm_kills, args.scm_partitions) < 0:
        parser.error("--om-kills, --scm-kills and --scm-partitions must be >= 0")
    if args.scm_partitions and not args.scm_ha:
        parser.error("--scm-partitions needs --scm-ha: a lone SCM has no followers to be cut off from")
    if min(args.minutes, args.kill_every) <= 0 or args.datanodes - args.max_down < 1 or args.leader_every < 0:
        parser.error(
            "need --minutes > 0, --kill-every > 0, --leader-every >= 0 and more datanodes than --max-down"
        )
    if args.data_dir is not None and args.data_dir.exists() and any(args.data_dir.iterdir()):
        parser.error(f"--data-dir {args.data_dir} is not empty")
    options = ChaosOptions(**vars(args))
    result = run(options, lambda d: print(f"cluster in {d} (logs in {d / 'logs'})", flush=True))
    print_summary(result)
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
