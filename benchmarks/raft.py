"""What a Raft write costs: small entries (100 B) submitted by 32 concurrent callers to a 3-member group
(pyozone/ratis_server's RaftMember, one OS process per member, on loopback), beside the same RPC layer's raw
echo (benchmarks/rpc.py's pyozone.rpc case: 32 calls in flight, 100 B) in the same run.

The callers run inside the leader's process, as OM's request handlers will (`await member.submit(...)`): a
write is answered once a majority holds it and the leader applied it to its state machine (a dict). Each
member keeps its log in the segmented log files (SegmentedRaftLog, fsynced by the group commit) under
`--dir`, default a temporary directory under /dev/shm: a memory disk, so the figures are the shell's, the
core's, the log format's and the transport's, not a disk's. The table gives writes/s and the CPU each
process spent per write (CpuMeter), and the echo's calls/s and CPU per call, for the ratio of the two.

    python -m benchmarks.raft [--seconds 5] [--warmup 1] [--callers 32] [--size 100] [--dir DIR]
                              [--py-spy FILE]   # also profile the leader (py-spy record, raw stacks)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import select
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import CpuMeter, print_table
from benchmarks.rpc import Result, _pyozone_rpc_case, measure
from pyozone.cluster.layout import free_ports
from pyozone.common.net import HostPort
from pyozone.ratis.messages import LogEntry, RaftPeerId
from pyozone.ratis.roles import RaftPeerRole
from pyozone.ratis_server.segmented_log import SegmentedRaftLog
from pyozone.ratis_server.server import RaftMember
from pyozone.ratis_server.transport import RaftGroup, RaftPeer
from pyozone.rpc.loop import run

HOST = "127.0.0.1"
GROUP_ID = "bench"


class Dict:
    def __init__(self) -> None:
        self.values: dict[int, bytes] = {}

    def apply(self, entry: LogEntry) -> object:
        self.values[entry.index] = entry.payload
        return entry.index


def _group(ports: list[int]) -> RaftGroup:
    return RaftGroup(
        GROUP_ID, tuple(RaftPeer(RaftPeerId(f"om{i + 1}"), HostPort(HOST, p)) for i, p in enumerate(ports))
    )


async def member(me: str, ports: list[int], args: argparse.Namespace) -> None:
    """One member; the leader also runs the callers and prints `start` and `end WRITES SECONDS`."""
    node = RaftMember(
        RaftPeerId(me), _group(ports), SegmentedRaftLog(Path(args.dir) / me), Dict(), rng=random.Random()
    )
    await node.start()
    print("ready", flush=True)
    while node.status().role is not RaftPeerRole.LEADER:
        if node.status().leader is not None:
            await asyncio.Event().wait()  # a follower serves until killed
        await asyncio.sleep(0.05)
    payload = os.urandom(args.size)
    writes, running = 0, True

    async def caller(number: int) -> None:
        nonlocal writes
        call = 0
        while running:
            call += 1
            await node.submit(payload, f"client-{number}", call)
            writes += 1

    callers = [asyncio.create_task(caller(n)) for n in range(args.callers)]
    await asyncio.sleep(args.warmup)
    print("start", flush=True)
    w0, t0 = writes, time.perf_counter()
    await asyncio.sleep(args.seconds)
    w1, t1 = writes, time.perf_counter()
    print(f"end {w1 - w0} {t1 - t0}", flush=True)
    running = False
    await asyncio.gather(*callers)
    await asyncio.Event().wait()


def _line(processes: dict[str, subprocess.Popen[str]], timeout_s: float) -> tuple[str, str]:
    """The next line any member prints, and who printed it."""
    by_fd = {p.stdout.fileno(): name for name, p in processes.items() if p.stdout is not None}
    ready, _, _ = select.select(list(by_fd), [], [], timeout_s)
    if not ready:
        raise SystemExit("the group printed nothing in time")
    name = by_fd[ready[0]]
    stdout = processes[name].stdout
    assert stdout is not None
    line = stdout.readline()
    if not line:
        raise SystemExit(f"{name} exited")
    return name, line.strip()


def raft_writes(args: argparse.Namespace) -> tuple[int, float, dict[str, float], str]:
    """Writes, seconds, CPU ms per write per member (and in total), and the leader's name."""
    ports = free_ports(3)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    processes: dict[str, subprocess.Popen[str]] = {}
    profiler: subprocess.Popen[bytes] | None = None
    try:
        for i in range(3):
            cmd = [
                *(sys.executable, "-m", "benchmarks.raft", "--member", f"om{i + 1}"),
                *("--ports", ",".join(map(str, ports)), "--dir", args.dir),
                *("--seconds", str(args.seconds), "--warmup", str(args.warmup)),
                *("--callers", str(args.callers), "--size", str(args.size)),
            ]
            processes[f"om{i + 1}"] = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True)
        meter = CpuMeter({name: p.pid for name, p in processes.items()})
        while True:
            leader, line = _line(processes, 60)
            if line == "start":
                break
        before = meter.read()
        if args.py_spy:
            profiler = subprocess.Popen(
                [
                    shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy")),
                    "record",
                    "--pid",
                    str(processes[leader].pid),
                    "--duration",
                    str(int(args.seconds)),
                    "--format",
                    "raw",
                    "--output",
                    args.py_spy,
                    "--nonblocking",
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        while True:
            name, line = _line(processes, args.seconds + 60)
            if name == leader and line.startswith("end"):
                break
        after = meter.read()
        _, writes, seconds = line.split()
        if profiler is not None:
            profiler.wait(60)
        per_write = meter.per_op_ms(before, after, int(writes))
        per_write.pop("this process")
        per_write["total"] = sum(v for k, v in per_write.items() if k != "total")
        return int(writes), float(seconds), per_write, leader
    finally:
        for process in processes.values():
            process.kill()
            process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--callers", type=int, default=32)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument(
        "--dir", help="where the members' files go (default: a temporary directory in /dev/shm)"
    )
    parser.add_argument("--py-spy", help="profile the leader into this file (py-spy's raw stacks)")
    parser.add_argument("--member", help=argparse.SUPPRESS)
    parser.add_argument("--ports", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.member:
        run(member(args.member, [int(p) for p in args.ports.split(",")], args))
        return
    shm = "/dev/shm" if Path("/dev/shm").is_dir() else None
    with tempfile.TemporaryDirectory(prefix="pyozone-raft-bench-", dir=args.dir or shm) as tmp:
        args.dir = tmp
        writes, seconds, per_write, leader = raft_writes(args)
    echo_case = _pyozone_rpc_case()
    assert echo_case is not None
    echo_args = argparse.Namespace(
        seconds=args.seconds, warmup=args.warmup, inflight=args.callers, size=args.size
    )
    echo: Result = measure(echo_case, None, echo_args)
    rate = writes / seconds
    client, server = (echo.client_cpu * 1000 / echo.calls, echo.server_cpu * 1000 / echo.calls)
    cpu = ", ".join(f"{name} {ms:.2f}" for name, ms in per_write.items() if name != "total")
    rows = [
        ("raft writes", f"{rate:9,.0f} writes/s   (3 members, leader {leader}, {args.callers} callers)"),
        ("  CPU ms per write", f"{cpu}; total {per_write['total']:.2f}"),
        ("pyozone.rpc echo", f"{echo.rate:9,.0f} calls/s   ({args.callers} in flight)"),
        ("  CPU ms per call", f"client {client:.3f}, server {server:.3f}; total {client + server:.3f}"),
        ("raft / echo", f"{rate / echo.rate:.3f} of the echo's rate"),
    ]
    print_table(
        f"Raft writes of {args.size} B vs the RPC echo, one run (load {os.getloadavg()[0]:.1f})", rows
    )


if __name__ == "__main__":
    main()
