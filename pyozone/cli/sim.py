"""`pyozone sim`: the real SCM core with simulated datanodes on virtual time, for what-if runs."""

from __future__ import annotations

import argparse
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from pyozone.common.cli_options import CLIError, load_configuration
from pyozone.hdds.store import StoreError
from pyozone.scm.store.version import StorageError, open_scm_store
from pyozone.sim.cluster import SimCluster
from pyozone.sim.datanode import SimDatanode
from pyozone.sim.status import HEADER, cluster_status, format_row

FAULTS = ("kill", "restart", "partition", "heal")
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


def run(args: argparse.Namespace) -> int:
    for name in ("datanodes", "racks", "data_disks", "metadata_disks"):
        if getattr(args, name) < 1:
            raise CLIError(f"--{name.replace('_', '-')} must be at least 1")
    if args.minutes <= 0 or args.every <= 0:
        raise CLIError("--minutes and --every must be positive")
    faults = parse_faults(args)
    conf = load_configuration(args)
    store, state_file, restored = None, None, []
    if args.data_dir:
        conf.set("ozone.metadata.dirs", args.data_dir)
        try:
            _, store = open_scm_store(conf)
        except (StorageError, StoreError) as e:
            raise CLIError(str(e)) from None
        state_file = Path(args.data_dir) / SIM_STATE_FILE
        restored = _load_datanodes(state_file, store)
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
        )
        nodes = list(cluster.datanodes)
        if not args.json:
            print(HEADER)
        step_ms, end_ms = int(args.every * 60_000), int(args.minutes * 60_000)
        while cluster.clock.now_ms() < end_ms:
            target = min(cluster.clock.now_ms() + step_ms, end_ms)
            while faults and faults[0].minute * 60_000 <= target:
                fault = faults.pop(0)
                cluster.advance(max(0, int(fault.minute * 60_000) - cluster.clock.now_ms()))
                getattr(cluster, fault.action)(nodes[fault.node - 1])
                if not args.json:
                    print(f"-- {fault.action} datanode {fault.node} at minute {fault.minute:g}")
            cluster.advance(target - cluster.clock.now_ms())
            status = cluster_status(cluster.scm, cluster.clock.now_ms())
            print(json.dumps(status.to_dict()) if args.json else format_row(status))
        if state_file is not None:
            _save_datanodes(state_file, cluster)
    finally:
        if store is not None:
            store.close()
    return 0


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
