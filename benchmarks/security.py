"""Secure against insecure, in one run on this machine: write pipeline V2, reads and small keys.

Starts two 3-datanode clusters side by side on 127.0.0.1 (on /dev/shm by default: --on): `pyozone cluster
up`, and `pyozone cluster up --secure` (SCM's CA, mutual TLS on every port incl. the datastream ports,
block tokens and ACLs). It then measures in this process, one client per cluster, the clusters taking turns
(A then B, then B then A, ...) so a moment the machine is busier taxes both alike:
- V2 write MB/s: --count keys of --size by put_key(datastream=True); every byte goes client -> 1st -> 2nd
  -> 3rd datanode along the chain, and the secure cluster encrypts and decrypts it on every hop;
- read MB/s of the same keys over the datastream ports (every byte checked by sha256, outside the timing);
- small-key puts/s: --small-keys keys of --small-size by freon ockg with --threads threads (write
  pipeline V1: gRPC, each key an OM open and commit and a putBlock), in --rounds turns.
Beside each rate, the CPU seconds per GB (write and read) or per 1,000 keys of the cluster's daemons and of
this client, from /proc: on a machine of few cores, where TLS's cost goes. Each figure has its ratio
secure/insecure. Goal (issue 15): TLS costs at most 25 % on large objects (write and read ratio >= 0.75).

    python -m benchmarks.security [--size 128MB] [--count 4] [--small-keys 400] [--keep DIR] [--on DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.common import SHARED_DISK_DEFINES, print_table
from benchmarks.key_io import _pyozone
from pyozone.client import OzoneClient
from pyozone.cluster.layout import ClusterState
from pyozone.config.site import load_configuration
from pyozone.config.units import parse_size_bytes
from pyozone.freon.keys import FreonOptions, generate_keys

VOLUME, BUCKET = "bench", "security"
GOAL = 0.75  # secure/insecure for large objects: TLS costs at most 25 %
TICKS = os.sysconf("SC_CLK_TCK")


@dataclass
class Tally:
    """One measurement on one cluster: what was done, the wall time, the CPU time of daemons and client."""

    amount: float = 0.0  # bytes, or keys
    seconds: float = 0.0
    daemon_cpu_s: float = 0.0
    client_cpu_s: float = 0.0


@dataclass
class Cluster:
    name: str
    data_dir: Path
    client: OzoneClient
    pids: list[int]
    tallies: dict[str, Tally] = field(default_factory=dict)

    def timed(self, what: str, amount: float, fn: Callable[[], None]) -> None:
        """Runs fn and adds its wall and CPU time to the tally `what`."""
        tally = self.tallies.setdefault(what, Tally())
        daemons, client, start = self._daemon_cpu(), time.process_time(), time.perf_counter()
        fn()
        tally.seconds += time.perf_counter() - start
        tally.client_cpu_s += time.process_time() - client
        tally.daemon_cpu_s += self._daemon_cpu() - daemons
        tally.amount += amount

    def _daemon_cpu(self) -> float:
        """utime + stime of the cluster's processes (SCM, OM, S3G and the datanodes)."""
        total = 0
        for pid in self.pids:
            with contextlib.suppress(OSError):
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])
        return total / TICKS


@contextlib.contextmanager
def _cluster(name: str, data_dir: Path, secure: bool, remove: bool) -> Iterator[Cluster]:
    """A fresh 3-datanode cluster with the benchmark's bucket, warmed up (pipelines, containers, both
    datanode ports and, when secure, every TLS context and secret key in use)."""
    data_dir.mkdir(parents=True)
    up = _pyozone(
        "cluster", "up", "--background", "--datanodes", "3", "--data-dir", str(data_dir),
        *(["--secure"] if secure else []), *SHARED_DISK_DEFINES,
    )  # fmt: skip
    if up.returncode != 0:
        raise SystemExit(f"{name}: cluster up failed:\n{up.stdout}\n{up.stderr}")
    client = None
    try:
        client = OzoneClient(load_configuration(data_dir / "conf", {}))
        client.create_volume(VOLUME)
        client.create_bucket(VOLUME, BUCKET)
        warm = os.urandom(8 << 20)
        for datastream in (False, True):
            client.put_key(VOLUME, BUCKET, f"warm-up-{datastream}", warm, datastream=datastream)
            with client.read_key(VOLUME, BUCKET, f"warm-up-{datastream}") as reader:
                if reader.readall() != warm:
                    raise SystemExit(f"{name}: the warm-up key reads back different")
        pids = list(ClusterState.load(data_dir).pids.values())
        yield Cluster(name, data_dir, client, pids)
    finally:
        if client is not None:
            client.close()
        _pyozone("cluster", "down", "--data-dir", str(data_dir))
        if remove:
            shutil.rmtree(data_dir, ignore_errors=True)


def _turns(clusters: list[Cluster], turn: int) -> list[Cluster]:
    """A then B on even turns, B then A on odd ones."""
    return clusters if turn % 2 == 0 else clusters[::-1]


def measure(
    clusters: list[Cluster], size: int, count: int, small: int, small_keys: int, threads: int, rounds: int
) -> None:
    """Large keys written then read, then small keys, the clusters taking turns."""
    digests: dict[str, str] = {}
    for i in range(count):
        data = os.urandom(size)
        digests[f"big-{i}"] = hashlib.sha256(data).hexdigest()
        for c in _turns(clusters, i):

            def put(c: Cluster = c, key: str = f"big-{i}", data: bytes = data) -> None:
                path = c.client.put_key(VOLUME, BUCKET, key, data, datastream=True).write_path
                if path != "V2":
                    raise SystemExit(f"{c.name}: {key} was written by {path}, not V2")

            c.timed("write", size, put)
    for i in range(count):
        for c in _turns(clusters, i):
            got: list[bytes] = []

            def read(c: Cluster = c, key: str = f"big-{i}", got: list[bytes] = got) -> None:
                with c.client.read_key(VOLUME, BUCKET, key) as reader:
                    got.append(reader.readall())

            c.timed("read", size, read)
            if hashlib.sha256(got[0]).hexdigest() != digests[f"big-{i}"]:
                raise SystemExit(f"{c.name}: big-{i} reads back different")
    per_round = max(1, small_keys // rounds)
    for r in range(rounds):
        for c in _turns(clusters, r):
            options = FreonOptions(VOLUME, BUCKET, f"small-{r}", per_round, small, threads)

            def puts(c: Cluster = c, options: FreonOptions = options) -> None:
                report = generate_keys(c.client, options)
                if not report.ok:
                    raise SystemExit(f"{c.name}: small keys failed: {report.failures[:3]}")

            c.timed("small", per_round, puts)


def _rate(t: Tally, unit: str) -> float:
    return t.amount / t.seconds / (1e6 if unit == "MB/s" else 1)


def _cpu(t: Tally, per: float, label: str) -> str:
    return f"daemons {t.daemon_cpu_s / per:5.2f} + client {t.client_cpu_s / per:5.2f} CPU s per {label}"


def report(insecure: Cluster, secure: Cluster, args: argparse.Namespace) -> None:
    rows: list[tuple[str, str]] = []
    ratios: dict[str, float] = {}
    for what, label, unit, per, per_label in (
        ("write", f"V2 write, {args.count} x {args.size}", "MB/s", 1e9, "GB"),
        ("read", f"V2 read, {args.count} x {args.size}", "MB/s", 1e9, "GB"),
        ("small", f"small-key puts, {args.small_size}, {args.threads} threads", "keys/s", 1e3, "1000 keys"),
    ):
        a, b = insecure.tallies[what], secure.tallies[what]
        ratios[what] = _rate(b, unit) / _rate(a, unit)
        rates = f"insecure {_rate(a, unit):8.1f} {unit}   secure {_rate(b, unit):8.1f} {unit}"
        rows.append((label, f"{rates}   ratio {ratios[what]:.3f}"))
        for c, t in (("insecure", a), ("secure", b)):
            scale = t.amount / per
            rows.append((f"  {c} CPU", _cpu(t, scale, per_label)))
    print_table(
        f"Secure (CA, mutual TLS, block tokens, ACLs) against insecure: two 3-datanode clusters on "
        f"127.0.0.1, {os.cpu_count()} cores",
        rows,
    )
    large = min(ratios["write"], ratios["read"])
    verdict = "met" if large >= GOAL else "missed: profile the secure datanodes and client (py-spy)"
    print(
        f"\nlarge objects: secure/insecure write {ratios['write']:.3f}, read {ratios['read']:.3f} "
        f"(goal >= {GOAL}: {verdict}); small keys {ratios['small']:.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", default="128MB", help="bytes per large key (default 128MB)")
    parser.add_argument("--count", type=int, default=4, help="large keys per cluster (default 4)")
    parser.add_argument("--small-keys", type=int, default=400, help="small keys per cluster (default 400)")
    parser.add_argument("--small-size", default="4KB")
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2, help="turns the small keys are split in")
    parser.add_argument("--keep", metavar="DIR", help="use and keep this data dir instead of a temp one")
    parser.add_argument(
        "--on",
        default="/dev/shm" if Path("/dev/shm").is_dir() else None,
        help="where the temp data dir goes (default /dev/shm: memory, so the disk limits neither cluster)",
    )
    args = parser.parse_args()
    size, small = parse_size_bytes(args.size), parse_size_bytes(args.small_size)
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="pyozone-security-", dir=args.on))
    print(f"clusters under {root}")
    try:
        with (
            _cluster("insecure", root / "insecure", False, args.keep is None) as insecure,
            _cluster("secure", root / "secure", True, args.keep is None) as secure,
        ):
            measure([insecure, secure], size, args.count, small, args.small_keys, args.threads, args.rounds)
            report(insecure, secure, args)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
