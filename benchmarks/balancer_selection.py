"""One Container Balancer iteration's selection over a large cluster, in-process, beside the Replication
Manager's full scan of the same cluster (issue 32: under a second of SCM time at 5,000 datanodes and a
million containers).

The cluster is rm_check's (CLOSED RATIS/THREE containers of 1 GB bulk-loaded, three replicas over at
least two racks); node reports then make 5% of the datanodes 80% used, 5% empty and the rest 40%. The
timed part is what the balancer does when an iteration starts: read every datanode's usage, classify,
and match sources with targets until the iteration's limits, sending each move's low-priority replicate
command (BalancerIteration's construction and its `select_step`s, one per SCM tick: the longest tick is
printed too).

    python -m benchmarks.balancer_selection --datanodes 5000 --containers 1000000
"""

from __future__ import annotations

import argparse
import time

from benchmarks.common import peak_rss_mb, print_table
from benchmarks.rm_check import build_scm, records, timed
from pyozone.hdds.datanode import NodeReport, StorageReport
from pyozone.scm.balancer.iteration import BalancerIteration

TB = 1 << 40


def set_usage(scm, nodes: list[str]) -> None:
    """Every datanode holds its containers (the node manager's sets) and reports 10 TB of which 5% of
    the nodes use 80%, 5% none and the others 40%."""
    for dn in nodes:
        scm.nodes.set_containers(dn, scm.containers.containers_on(dn))
    tenth = max(1, len(nodes) // 20)
    for i, dn in enumerate(nodes):
        share = 0.8 if i < tenth else 0.0 if i >= len(nodes) - tenth else 0.4
        used = int(10 * TB * share)
        report = NodeReport((StorageReport(f"{dn}-d", "/data", 10 * TB, used, 10 * TB - used),), ())
        scm.nodes.process_node_report(dn, report)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--containers", type=int, default=1_000_000)
    parser.add_argument("--datanodes", type=int, default=5000)
    parser.add_argument("--racks", type=int, default=50)
    args = parser.parse_args()

    scm, nodes = build_scm(args.datanodes, args.racks)
    load_s, _ = timed(lambda: scm.containers.bulk_load(*records(args.containers, nodes)))
    set_usage(scm, nodes)
    scm.safe_mode.force_exit()
    rm, balancer = scm.replication, scm.balancer
    scan_s, _ = timed(rm.process_all)
    config = balancer.default_config
    balancer.moves.set_timeouts(config.move_timeout_ms, config.move_replication_timeout_ms)

    started = time.perf_counter()
    iteration = BalancerIteration(1, config, scm.nodes, scm.containers, rm, balancer.moves, 0)
    done = iteration.select_step()
    steps = [time.perf_counter() - started]  # the first tick: the iteration's start and first step
    while not done:
        step_started = time.perf_counter()
        done = iteration.select_step()
        steps.append(time.perf_counter() - step_started)
    select_s = time.perf_counter() - started
    status = iteration.status(0)
    print_table(
        f"Container Balancer selection: {args.containers:,} containers on {args.datanodes:,} datanodes, "
        f"{args.racks} racks (hdds.container.balancer.* defaults)",
        [
            ("bulk load", f"{load_s:.1f} s"),
            ("RM full scan (process_all)", f"{scan_s:.2f} s"),
            ("one iteration's selection", f"{select_s:.2f} s"),
            ("SCM ticks it spans / the longest", f"{len(steps):,} / {max(steps) * 1000:,.0f} ms"),
            (
                "over / under-utilized datanodes",
                f"{len(iteration.over):,} / {len(iteration.under):,}",
            ),
            ("moves started", f"{status.moves_scheduled:,} ({status.size_scheduled / (1 << 30):,.0f} GB)"),
            ("datanodes involved", f"{status.datanodes_involved:,}"),
            ("peak RSS", f"{peak_rss_mb():,.0f} MB"),
        ],
    )


if __name__ == "__main__":
    main()
