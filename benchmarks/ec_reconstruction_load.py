"""EC reconstruction load per datanode with pyozone's ops-per-node limit off and on (Ozone's "Replication
Manager" doc, "Future Ideas").

A simulated cluster (pyozone/sim: the real SCM core, virtual datanodes on virtual time) holds CLOSED EC
containers, each index on its own datanode, scattered over the racks. A few datanodes are killed; once
SCM declares them DEAD its Replication Manager reconstructs the lost indexes. The run samples, every
few virtual seconds, how many running reconstructions and replications keep each node busy as a target
(the coordinator is one) and as a source (a node read from), until every container is whole again.

The same cluster (same seed, same victims) runs twice in one invocation: with
hdds.scm.replication.datanode.ops.limit.enabled false (Ozone's throttling only) and true.

    python -m benchmarks.ec_reconstruction_load --datanodes 45 --racks 9 --containers 1000 --kill 3
"""

from __future__ import annotations

import argparse
import time

from pyozone.config import OzoneConfiguration
from pyozone.hdds.ids import ReplicationConfig
from pyozone.sim.cluster import SimCluster
from pyozone.sim.ec import RepairRun, kill_and_repair, place_ec_containers
from pyozone.sim.load import ROLES

HOUR = 3_600_000
ENABLED = "hdds.scm.replication.datanode.ops.limit.enabled"
LIMIT = "hdds.scm.replication.datanode.ops.limit"


def run(args: argparse.Namespace, enabled: bool) -> RepairRun:
    conf = OzoneConfiguration({ENABLED: str(enabled).lower(), LIMIT: str(args.limit)})
    cluster = SimCluster(args.datanodes, racks=args.racks, conf=conf, seed=args.seed)
    ids = place_ec_containers(cluster, args.containers, ReplicationConfig.parse(args.scheme))
    return kill_and_repair(cluster, ids, args.kill, args.timeout_hours * HOUR, args.sample_seconds * 1000)


def _ratio(on: float | None, off: float | None) -> str:
    if on is None or off is None or off == 0:
        return "-"
    return f"{on / off:.2f}"


def _minutes(ms: int | None) -> float | None:
    return None if ms is None else ms / 60_000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--datanodes", type=int, default=45)
    parser.add_argument("--racks", type=int, default=9)
    parser.add_argument("--containers", type=int, default=1000)
    parser.add_argument("--kill", type=int, default=3, help="datanodes killed at once")
    parser.add_argument("--scheme", default="rs-6-3-1024k")
    parser.add_argument("--limit", type=int, default=10, help=f"{LIMIT} for the run with the rule on")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--sample-seconds", type=int, default=5, help="virtual seconds between samples")
    parser.add_argument("--timeout-hours", type=int, default=6, help="virtual time allowed for the repair")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    off, on = run(args, False), run(args, True)
    rows: list[tuple[str, float | None, float | None]] = []
    for role in ROLES:
        rows.append((f"peak concurrent work per node, as {role}", off.peak[role], on.peak[role]))
        rows.append((f"p95 concurrent work per busy node, as {role}", off.p95[role], on.p95[role]))
    rows += [
        ("minutes from kill to DEAD", _minutes(off.dead_at_ms), _minutes(on.dead_at_ms)),
        ("minutes from DEAD to full health", _minutes(off.repair_ms), _minutes(on.repair_ms)),
        ("reconstruction commands sent", off.reconstructions_sent, on.reconstructions_sent),
        ("replication commands sent", off.replications_sent, on.replications_sent),
        ("reconstructions deferred (requeued)", off.reconstructions_deferred, on.reconstructions_deferred),
        ("reconstructions failed on a datanode", off.reconstructions_failed, on.reconstructions_failed),
    ]
    print(
        f"{args.datanodes} datanodes on {args.racks} racks, {args.containers} CLOSED {args.scheme} "
        f"containers, {args.kill} killed; ops limit {args.limit} per node per iteration when on"
    )
    width = max(len(name) for name, _, _ in rows)
    print(f"{'':<{width}}  {'off':>8}  {'on':>8}  {'on/off':>6}")
    for name, a, b in rows:
        shown = ["-" if v is None else f"{v:g}" for v in (a, b)]
        print(f"{name:<{width}}  {shown[0]:>8}  {shown[1]:>8}  {_ratio(b, a):>6}")
    print(f"wall time of both runs: {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
