"""The Replication Manager's check stage over a large cluster, in-process: containers per second and
peak RSS.

An SCM core with registered datanodes (spread over racks) is loaded with CLOSED RATIS/THREE containers,
three replicas each on three distinct nodes across at least two racks, straight into memory
(ContainerManager.bulk_load: going through millions of reports would measure the report path instead).
Then, in the same run:

* baseline: a bare pure-Python loop over the same containers and replicas that only counts states, the
  floor any Python scan pays;
* check stage: ReplicationManager.process_all, the full scan that builds the report and the queue;
* full chain: the read-only chain per container (check_container_status) over a sample, for what a
  container costs when it is not plainly healthy.

    python -m benchmarks.rm_check --containers 1000000
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from collections.abc import Iterator

from benchmarks.common import peak_rss_mb, print_table
from pyozone.hdds.clock import ManualClock
from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.container_health import ContainerHealthState
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.ids import RATIS_THREE
from pyozone.hdds.states import LifeCycleState, ReplicaState
from pyozone.hdds.topology import NetworkTopology
from pyozone.scm.container.manager import ContainerManager
from pyozone.scm.node.storage_report import node_report
from pyozone.scm.scm import StorageContainerManager
from pyozone.scm.settings import ScmSettings
from pyozone.scm.store import SCMMetadataStore

GB = 1 << 30


def build_scm(datanodes: int, racks: int) -> tuple[StorageContainerManager, list[str]]:
    racks_of = {f"{i:08x}-0000-4000-8000-{i:012d}": f"/rack{i % racks + 1}" for i in range(datanodes)}
    scm = StorageContainerManager(
        ScmSettings(), ManualClock(), SCMMetadataStore.in_memory(), topology=NetworkTopology(racks_of)
    )
    for i, uuid in enumerate(racks_of):
        details = DatanodeDetails(uuid, f"dn{i}.bench", f"10.1.{i // 250}.{i % 250 + 1}")
        scm.register(details, node_report(uuid, 1, 1))
    return scm, list(racks_of)


def records(count: int, nodes: list[str]) -> tuple[Iterator[ContainerInfo], Iterator[ContainerReplica]]:
    """Containers 1..count; container i on nodes i, i+1, i+2 (mod n), which span at least two racks
    when nodes are dealt to racks round-robin. Shared objects keep memory what SCM itself would use."""
    closed, owner, n = ReplicaState.CLOSED, "bench", len(nodes)
    ids = range(1, count + 1)

    def infos() -> Iterator[ContainerInfo]:
        for cid in ids:
            yield ContainerInfo(cid, LifeCycleState.CLOSED, 0, None, RATIS_THREE, owner, GB, 100, 500)

    def replicas() -> Iterator[ContainerReplica]:
        for cid in ids:
            for k in range(3):
                dn = nodes[(cid + k) % n]
                yield ContainerReplica(cid, dn, closed, dn, 500, 100, GB)

    return infos(), replicas()


def bare_loop(containers: ContainerManager) -> int:
    """The baseline: every container and replica visited, states counted, nothing decided."""
    states: Counter[LifeCycleState] = Counter()
    replica_states: Counter[ReplicaState] = Counter()
    for container in containers.containers():
        states[container.state] += 1
        for replica in containers.replicas(container.container_id):
            replica_states[replica.state] += 1
    return sum(states.values())


def timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--containers", type=int, default=1_000_000)
    parser.add_argument("--datanodes", type=int, default=30)
    parser.add_argument("--racks", type=int, default=3)
    parser.add_argument("--chain-sample", type=int, default=20_000, help="containers for the full-chain rate")
    args = parser.parse_args()

    scm, nodes = build_scm(args.datanodes, args.racks)
    load_s, _ = timed(lambda: scm.containers.bulk_load(*records(args.containers, nodes)))
    rm = scm.replication

    base_s, scanned = timed(lambda: bare_loop(scm.containers))
    check_s, report = timed(rm.process_all)
    sample = range(1, min(args.chain_sample, args.containers) + 1)
    chain_s, _ = timed(lambda: [rm.check_container_status(cid) for cid in sample])

    healthy = report.stat(LifeCycleState.CLOSED) == args.containers and not any(
        report.stat(state) for state in ContainerHealthState if state is not ContainerHealthState.HEALTHY
    )
    n = args.containers
    print_table(
        f"Replication Manager check stage: {n:,} containers, {3 * n:,} replicas, "
        f"{args.datanodes} datanodes on {args.racks} racks",
        [
            ("bulk load", f"{load_s:.1f} s"),
            ("baseline: bare loop", f"{scanned / base_s:,.0f} containers/s ({base_s:.2f} s)"),
            ("check stage (process_all)", f"{n / check_s:,.0f} containers/s ({check_s:.2f} s)"),
            ("check stage / baseline", f"{base_s / check_s:.2f}"),
            ("full chain, read-only", f"{len(sample) / chain_s:,.0f} containers/s ({len(sample):,} sampled)"),
            ("report", "all CLOSED, all HEALTHY" if healthy else "UNEXPECTED: " + str(report.to_dict())),
            ("peak RSS", f"{peak_rss_mb():,.0f} MB"),
        ],
    )


if __name__ == "__main__":
    main()
