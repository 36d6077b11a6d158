"""Heartbeats per second processed by the SCM core with thousands of simulated datanodes.

Two figures: (1) the core alone: scm.heartbeat() on prebuilt heartbeats from registered, healthy nodes
(what the gRPC server will hand it); (2) the whole simulator loop (virtual time, reports, commands).
Baseline, same run: a bare dict update per heartbeat (look the node up, store the time, drain an empty
queue), the floor for any Python implementation.
"""

from __future__ import annotations

import argparse
import time

from benchmarks.common import peak_rss_mb, print_table, rate
from pyozone.config import OzoneConfiguration
from pyozone.hdds.messages import Heartbeat
from pyozone.sim.cluster import SimCluster


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--datanodes", type=int, default=5000)
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()
    start = time.perf_counter()
    cluster = SimCluster(
        args.datanodes, racks=max(1, args.datanodes // 20), conf=OzoneConfiguration(), seed=1
    )
    cluster.advance(60_000)
    setup_s = time.perf_counter() - start
    registered = sum(1 for n in cluster.datanodes.values() if n.registered)
    scm = cluster.scm
    beats = [Heartbeat(datanode=n.details, persisted_op_state=n.op_state) for n in cluster.datanodes.values()]

    def core() -> int:
        for hb in beats:
            scm.heartbeat(hb)
        return len(beats)

    core_rate, core_ops, _ = rate(core, args.seconds)

    before = cluster.heartbeats_delivered
    t0 = time.perf_counter()
    cluster.advance(600_000)
    loop_s = time.perf_counter() - t0
    loop_beats = cluster.heartbeats_delivered - before

    last: dict[str, int] = {n: 0 for n in cluster.datanodes}
    queues: dict[str, list] = {}

    def bare() -> int:
        now = time.monotonic_ns()
        for hb in beats:
            uuid = hb.datanode.uuid
            if uuid in last:
                last[uuid] = now
            queues.pop(uuid, None)
        return len(beats)

    base, _, _ = rate(bare, args.seconds)
    print_table(
        f"Heartbeats, {args.datanodes:,} simulated datanodes ({registered:,} registered, "
        f"setup {setup_s:.1f} s)",
        [
            ("core: scm.heartbeat()", f"{core_rate:>12,.0f} /s ({core_ops:,} heartbeats)"),
            (
                "simulator loop, 10 virtual min",
                f"{loop_beats / loop_s:>12,.0f} /s ({loop_beats:,} heartbeats "
                f"in {loop_s:.1f} s, with health checks and reports)",
            ),
            ("baseline: bare dict update", f"{base:>12,.0f} /s"),
            ("core / baseline", f"{core_rate / base:.3f}"),
            ("peak RSS", f"{peak_rss_mb():.0f} MB"),
        ],
    )


if __name__ == "__main__":
    main()
