"""`pyozone sim`: the real SCM core with simulated datanodes on virtual time, for what-if runs."""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pyozone.common.cli_options import CLIError, given_path, load_configuration
from pyozone.common.net import HostPort, parse_host_port
from pyozone.config import ConfigError
from pyozone.hdds.store import StoreError
from pyozone.scm.balancer.config import InvalidContainerBalancerConfigurationError
from pyozone.scm.settings import ScmSettings
from pyozone.scm.store.version import StorageError, open_scm_store
from pyozone.sim.balance import BalancerRun
from pyozone.sim.balance import row_text as balancer_row_text
from pyozone.sim.cluster import SimCluster
from pyozone.sim.datanode import SimDatanode
from pyozone.sim.failover import FailoverWatch
from pyozone.sim.populate import PlaceAtSafeModeExit
from pyozone.sim.scm_ha import SimHaCluster
from pyozone.sim.status import HEADER, cluster_status, format_row

FAULTS = ("kill", "restart", "pause", "resume", "partition", "heal")
SIM_STATE_FILE = "sim-datanodes.json"
_FAULT = re.compile(r"^(\d+)@(\d+(?:\.\d+)?)$")


@dataclass(frozen=True, slots=True)
class Fault:
    action: str
    node: int  # 1-based datanode number
    minute: float


def register(subparsers, parent: argparse.ArgumentParser) -> None:
    sim = subparsers.add_parser(
        "sim",
        parents=[parent],
        help="run the SCM core with simulated datanodes on virtual time",
        description="Runs the real SCM core with simulated datanodes; time is virtual, so an hour takes "
        "seconds. Faults are NODE@MINUTE, NODE counted from 1.",
    )
    sim.add_argument("--datanodes", type=int, default=5, help="number of datanodes (default 5)")
    sim.add_argument("--racks", type=int, default=1, help="racks the datanodes are spread over")
    sim.add_argument("--data-disks", type=int, default=1, help="data volumes per datanode")
    sim.add_argument("--metadata-disks", type=int, default=1, help="metadata volumes per datanode")
    sim.add_argument("--minutes", type=float, default=15.0, help="virtual minutes to run (default 15)")
    sim.add_argument("--every", type=float, default=1.0, help="virtual minutes between status rows")
    sim.add_argument(
        "--data-dir",
        default=None,
        metavar="DIR",
        help="an initialised SCM metadata dir (pyozone scm --init); default: in memory",
    )
    sim.add_argument("--seed", type=int, default=0, help="seed for a reproducible run")
    sim.add_argument("--json", action="store_true", help="print the samples as JSON lines")
    sim.add_argument(
        "--containers",
        type=int,
        default=0,
        metavar="N",
        help="place N closed RATIS/THREE containers on the datanodes once SCM leaves safe mode",
    )
    sim.add_argument(
        "--add-empty-datanodes",
        type=int,
        default=0,
        metavar="N",
        help="add N empty datanodes once the containers are placed (one rack after another)",
    )
    sim.add_argument(
        "--balancer",
        action="store_true",
        help="start the Container Balancer (hdds.container.balancer.* in force) once SCM is ready and the "
        "added datanodes are healthy; each row tells the datanodes' utilization spread",
    )
    sim.add_argument(
        "--serve",
        default=None,
        metavar="[HOST:]PORT",
        help="after the run, serve SCM's web UI over the simulated cluster (port 0: any free port) "
        "while virtual time goes on with the wall clock",
    )
    sim.add_argument(
        "--serve-for", type=float, default=None, metavar="SECONDS", help="stop serving after SECONDS"
    )
    sim.add_argument(
        "--speed", type=float, default=1.0, help="while serving, virtual seconds per real second (default 1)"
    )
    sim.add_argument(
        "--scm-ha",
        action="store_true",
        help="three SCM cores of one service on a simulated Raft log (election timeout 1 s)",
    )
    sim.add_argument(
        "--kill-scm-leader",
        action="append",
        type=float,
        default=[],
        metavar="MINUTE",
        help="with --scm-ha: kill the leader SCM at a virtual minute, restart it a minute later (repeatable)",
    )
    sim.add_argument(
        "--partition-scm-leader",
        action="append",
        type=float,
        default=[],
        metavar="MINUTE",
        help="with --scm-ha: cut the leader SCM off from the other SCMs (not from the datanodes) at a "
        "virtual minute, heal a minute later (repeatable)",
    )
    for action in FAULTS:
        sim.add_argument(
            f"--{action}",
            action="append",
            default=[],
            metavar="NODE@MINUTE",
            help=f"{action} a datanode at a virtual minute (repeatable)",
        )
    sim.set_defaults(func=run)


def parse_faults(args: argparse.Namespace) -> list[Fault]:
    faults = []
    for action in FAULTS:
        for text in getattr(args, action):
            m = _FAULT.match(text)
            if not m:
                raise CLIError(f"--{action} {text!r}: expected NODE@MINUTE, e.g. 2@5")
            node = int(m.group(1))
            if not 1 <= node <= args.datanodes:
                raise CLIError(f"--{action} {text!r}: datanode must be between 1 and {args.datanodes}")
            faults.append(Fault(action, node, float(m.group(2))))
    return sorted(faults, key=lambda f: f.minute)


def check_options(args: argparse.Namespace) -> HostPort | None:
    """Refuses what cannot run; the address to serve on, if any."""
    for name in ("datanodes", "racks", "data_disks", "metadata_disks"):
        if getattr(args, name) < 1:
            raise CLIError(f"--{name.replace('_', '-')} must be at least 1")
    if args.minutes <= 0 or args.every <= 0:
        raise CLIError("--minutes and --every must be positive")
    if args.containers < 0:
        raise CLIError("--containers must not be negative")
    if args.containers and args.datanodes < 3:
        raise CLIError("--containers places RATIS/THREE containers: it needs at least 3 --datanodes")
    given_path(args.data_dir, "--data-dir")
    if args.containers and args.data_dir:
        raise CLIError("--containers places containers in memory only: it cannot be used with --data-dir")
    if args.add_empty_datanodes < 0:
        raise CLIError("--add-empty-datanodes must not be negative")
    if args.scm_ha and (args.balancer or args.add_empty_datanodes):
        raise CLIError("--balancer and --add-empty-datanodes run on one SCM: not with --scm-ha")
    if args.speed <= 0:
        raise CLIError("--speed must be positive")
    if (args.kill_scm_leader or args.partition_scm_leader) and not args.scm_ha:
        raise CLIError("--kill-scm-leader and --partition-scm-leader need --scm-ha")
    if args.scm_ha and (args.data_dir or args.serve is not None or args.containers):
        raise CLIError("--scm-ha runs three in-memory SCMs: not with --data-dir, --serve or --containers")
    if args.serve is None:
        if args.serve_for is not None:
            raise CLIError("--serve-for needs --serve")
        return None
    if args.serve_for is not None and args.serve_for <= 0:
        raise CLIError("--serve-for must be positive")
    text = args.serve.strip()
    try:  # a bare port is on the loopback
        return parse_host_port(f"127.0.0.1:{text}" if text.isdigit() else text, None, "--serve")
    except ConfigError as e:
        raise CLIError(str(e)) from None


def run(args: argparse.Namespace) -> int:
    address = check_options(args)
    faults = parse_faults(args)
    conf = load_configuration(args)
    if args.balancer:
        _check_balancer(conf)
    store, state_file, restored, scm_id = None, None, [], None
    if args.data_dir:
        conf.set("ozone.metadata.dirs", args.data_dir)
        try:
            storage, store = open_scm_store(conf)
        except (StorageError, StoreError) as e:
            raise CLIError(str(e)) from None
        scm_id = storage.scm_uuid
        state_file = Path(args.data_dir) / SIM_STATE_FILE
        restored = _load_datanodes(state_file, store)
    if args.scm_ha:
        watch = FailoverWatch()
        ha = SimHaCluster(args.datanodes, conf=conf, seed=args.seed, racks=args.racks, observer=watch)
        if not args.json:
            print(HEADER)
        _run_minutes(ha, args, faults + _scm_faults(args), lambda: None, watch)
        print(json.dumps(watch.summary()) if args.json else watch.summary_text())
        return 0
    try:
        cluster = SimCluster(
            args.datanodes,
            args.racks,
            args.data_disks,
            args.metadata_disks,
            conf=conf,
            seed=args.seed,
            store=store,
            restored=restored,
            # serving at speed 1, virtual wall time is the real clock's by the end of the run
            epoch_ms=None if address is None else time.time_ns() // 1_000_000 - int(args.minutes * 60_000),
        )
        place = PlaceAtSafeModeExit(cluster, args.containers, _placed(args.json))
        balance = BalancerRun(
            cluster, args.add_empty_datanodes, args.balancer, lambda: place.pending == 0, args.racks
        )
        if not args.json:
            print(HEADER)
        try:
            _run_minutes(cluster, args, faults, place, balance=balance)
        except InvalidContainerBalancerConfigurationError as e:  # what only the run's datanodes refuse
            raise CLIError(f"--balancer: {e}") from None
        if state_file is not None:
            _save_datanodes(state_file, cluster)
        if address is not None:
            _serve(cluster, conf, scm_id, address, args, place)
    finally:
        if store is not None:
            store.close()
    return 0


def _check_balancer(conf) -> None:
    """--balancer's run must be one SCM would start: its configuration is refused now, not mid-run."""
    try:
        settings = ScmSettings.from_conf(conf)
        settings.check_balancer(settings.balancer)
    except ConfigError as e:
        raise CLIError(f"--balancer: {e}") from None


def _scm_faults(args: argparse.Namespace) -> list[Fault]:
    """The SCM leader's faults and, a minute later, their ends (node 0: whichever SCM leads then)."""
    faults = []
    for minute in args.kill_scm_leader:
        faults += [Fault("kill_scm_leader", 0, minute), Fault("restart_scms", 0, minute + 1)]
    for minute in args.partition_scm_leader:
        faults += [Fault("isolate_scm_leader", 0, minute), Fault("heal_scms", 0, minute + 1)]
    return faults


def _scm_fault(cluster: SimHaCluster, action: str, watch: FailoverWatch | None) -> str:
    leader = cluster.leader()
    if watch is not None and action in ("kill_scm_leader", "isolate_scm_leader"):
        watch.fault(cluster.clock.now_ms())
    if action == "kill_scm_leader" and leader is not None:
        cluster.kill_scm(leader.name)
    elif action == "isolate_scm_leader" and leader is not None:
        cluster.isolate_scm(leader.name)
    elif action == "restart_scms":
        for name in cluster.scms:
            cluster.restart_scm_node(name)
    elif action == "heal_scms":
        cluster.heal_scms()
    return f"-- {action.replace('_', ' ')} at minute {cluster.clock.now_ms() / 60_000:g} (leader: " + (
        f"{leader.name}, term {leader.core.context.known_term})" if leader is not None else "none)"
    )


def _run_minutes(
    cluster: SimCluster,
    args: argparse.Namespace,
    faults: list[Fault],
    place,
    watch: FailoverWatch | None = None,
    balance: BalancerRun | None = None,
) -> None:
    """The rows of the run, one every --every virtual minutes, with the faults at their minutes (and, with
    SCM HA, each new ready leader)."""
    nodes = list(cluster.datanodes)
    faults = sorted(faults, key=lambda f: f.minute)
    step_ms, end_ms = int(args.every * 60_000), int(args.minutes * 60_000)
    while cluster.clock.now_ms() < end_ms:
        target = min(cluster.clock.now_ms() + step_ms, end_ms)
        while faults and faults[0].minute * 60_000 <= target:
            fault = faults.pop(0)
            cluster.advance(max(0, int(fault.minute * 60_000) - cluster.clock.now_ms()))
            _tell(watch, args.json)
            if isinstance(cluster, SimHaCluster) and fault.node == 0:
                told = _scm_fault(cluster, fault.action, watch)
                if not args.json:
                    print(told)
                continue
            getattr(cluster, fault.action)(nodes[fault.node - 1])
            if not args.json:
                print(f"-- {fault.action} datanode {fault.node} at minute {fault.minute:g}")
        cluster.advance(target - cluster.clock.now_ms())
        _tell(watch, args.json)
        place()
        status = cluster_status(cluster.scm, cluster.clock.now_ms())
        print(json.dumps(status.to_dict()) if args.json else format_row(status))
        if balance is not None:
            balance()
            row = balance.row()
            if row is not None:
                print(json.dumps(row) if args.json else balancer_row_text(row))


def _tell(watch: FailoverWatch | None, as_json: bool) -> None:
    for takeover in watch.news() if watch is not None else ():
        print(json.dumps(takeover.to_dict()) if as_json else takeover.text())


def _placed(as_json: bool) -> Callable[[int, float, float], None]:
    def announce(count: int, minute: float, seconds: float) -> None:
        if as_json:
            event = {"event": "placed", "containers": count, "minute": round(minute, 2)}
            print(json.dumps({**event, "seconds": round(seconds, 1)}))
        else:
            print(f"-- {count} closed containers placed at minute {minute:g} in {seconds:.1f} s")

    return announce


def _serve(cluster: SimCluster, conf, scm_id: str | None, address: HostPort, args, place) -> None:
    """Serves SCM's web UI until Ctrl-C or --serve-for; the URL is printed (a JSON line with --json)."""
    from pyozone.sim.web import serve_ui  # aiohttp and the SCM daemon's UI: only when serving

    def announce(url: str) -> None:
        until = "Ctrl-C" if args.serve_for is None else f"{args.serve_for:g} s or Ctrl-C"
        text = f"-- serving SCM's web UI at {url} until {until}"
        print(json.dumps({"event": "serving", "url": url}) if args.json else text, flush=True)

    serve_ui(
        cluster, conf, scm_id or sim_scm_id(args.seed), address, args.speed, args.serve_for, announce, place
    )


def sim_scm_id(seed: int) -> str:
    """The SCM id of an in-memory run: the same for the same seed."""
    return str(uuid.UUID(int=random.Random(seed).getrandbits(128), version=4))


def _load_datanodes(path: Path, store) -> list[SimDatanode]:
    """The simulated datanodes' disks from the previous run over this SCM, so the cluster comes back."""
    if not path.exists():
        return []
    try:
        return [SimDatanode.from_dict(d) for d in json.loads(path.read_text())]
    except (OSError, ValueError, KeyError, TypeError) as e:
        store.close()
        raise CLIError(f"{path}: cannot load the simulated datanodes: {e}") from None


def _save_datanodes(path: Path, cluster: SimCluster) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(cluster.saved_datanodes()))
    os.replace(tmp, path)
