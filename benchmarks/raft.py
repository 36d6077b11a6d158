"""What a Raft write costs: small entries (100 B) submitted by 32 concurrent callers to a 3-member group
(pyozone/ratis_server's RaftMember, one OS process per member, on loopback), beside the same RPC layer's raw
echo (benchmarks/rpc.py's pyozone.rpc case: 32 calls in flight, 100 B) in the same run.

The callers run inside the leader's process, as OM's request handlers will (`await member.submit(...)`): a
write is answered once a majority holds it and the leader applied it to its state machine (a dict). Each
member keeps its log in the segmented log files (SegmentedRaftLog, fsynced by the group commit) under
`--dir`, default a temporary directory under /dev/shm: a memory disk, so the figures are the shell's, the
core's, the log format's and the transport's, not a disk's. The table gives writes/s and the CPU each
process spent per write (CpuMeter), and the echo's calls/s and CPU per call, for the ratio of the two.

With `--data BYTES` (e.g. 4194304, a datanode's 4 MB chunk), each write also carries that much state
machine data (a `DataStateMachine`, as a datanode pipeline's writeChunk: `submit(..., data=)`): every member
writes it at append into a file of its own under `--dir` (not fsynced, as a datanode's chunk file) before it
acknowledges the entry, the leader sends it from its data cache, entries are applied with `apply_async`;
the settings are a datanode's (`dfs.container.ratis.log.appender.queue.byte-limit` 32 MB, push_commit, no
retry cache). The table adds MB/s of data, and the echo runs with (nearly) that size, the RPC layer's limit
allowing (4 MB less 64 KB).

    python -m benchmarks.raft [--seconds 5] [--warmup 1] [--callers 32] [--size 100] [--dir DIR]
                              [--data BYTES]    # each write carries BYTES of state machine data
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
from pyozone.ratis.settings import RaftSettings
from pyozone.ratis_server.segmented_log import SegmentedRaftLog
from pyozone.ratis_server.server import RaftMember
from pyozone.ratis_server.transport import RaftGroup, RaftPeer
from pyozone.rpc.loop import run

HOST = "127.0.0.1"
GROUP_ID = "bench"
DATA_SETTINGS = RaftSettings(
    rpc_timeout_min_ms=1000, rpc_timeout_max_ms=2000, append_byte_limit=32 << 20, push_commit=True
)
"""A datanode pipeline's: dfs.container.ratis.log.appender.queue.byte-limit (32 MB), push_commit; election
timeouts a loaded two-core machine keeps (a datanode's are 5 s)."""
ECHO_LIMIT = (4 << 20) - (64 << 10)


class Dict:
    def __init__(self) -> None:
        self.values: dict[int, bytes] = {}

    def apply(self, entry: LogEntry) -> object:
        self.values[entry.index] = entry.payload
        return entry.index


class Chunks:
    """A `DataStateMachine` as a datanode's: each entry's data written at append to one file (not synced,
    as `chunk.write.sync` false), read back by offset for a follower the leader no longer caches it for."""

    def __init__(self, path: Path) -> None:
        self._file = path.open("w+b")
        self._at: dict[int, tuple[int, int]] = {}  # index -> (offset, length)
        self._end = 0
        self.values: dict[int, bytes] = {}

    def apply(self, entry: LogEntry) -> object:
        raise AssertionError("entries go to apply_async")

    async def write_data(self, entry: LogEntry, data: memoryview) -> None:
        offset, self._end = self._end, self._end + len(data)
        self._at[entry.index] = (offset, len(data))
        await asyncio.to_thread(os.pwrite, self._file.fileno(), data, offset)

    async def read_data(self, entry: LogEntry) -> bytes:
        offset, length = self._at[entry.index]
        return await asyncio.to_thread(os.pread, self._file.fileno(), length, offset)

    def apply_async(self, entry: LogEntry) -> asyncio.Future[object]:
        self.values[entry.index] = entry.payload
        done: asyncio.Future[object] = asyncio.get_running_loop().create_future()
        done.set_result(entry.index)
        return done


def _group(ports: list[int]) -> RaftGroup:
    return RaftGroup(
        GROUP_ID, tuple(RaftPeer(RaftPeerId(f"om{i + 1}"), HostPort(HOST, p)) for i, p in enumerate(ports))
    )


async def member(me: str, ports: list[int], args: argparse.Namespace) -> None:
    """One member; the leader also runs the callers and prints `start` and `end WRITES SECONDS`."""
    machine = Chunks(Path(args.dir) / f"{me}.chunks") if args.data else Dict()
    node = RaftMember(
        RaftPeerId(me),
        _group(ports),
        SegmentedRaftLog(Path(args.dir) / me),
        machine,
        DATA_SETTINGS if args.data else None,
        rng=random.Random(),
    )
    await node.start()
    print("ready", flush=True)
    while node.status().role is not RaftPeerRole.LEADER:
        if node.status().leader is not None:
            await asyncio.Event().wait()  # a follower serves until killed
        await asyncio.sleep(0.05)
    payload = os.urandom(args.size)
    data = os.urandom(args.data) if args.data else None
    writes, running = 0, True

    async def caller(number: int) -> None:
        nonlocal writes
        call = 0
        while running:
            call += 1
            if data is None:
                await node.submit(payload, f"client-{number}", call)
            else:  # a datanode's container operations: idempotent, no retry cache
                await node.submit(payload, "", number << 32 | call, data=data)
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
                *("--data", str(args.data)),
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
    parser.add_argument("--data", type=int, default=0, help="bytes of state machine data per write")
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
    echo_size = min(args.data, ECHO_LIMIT) if args.data else args.size
    echo_args = argparse.Namespace(
        seconds=args.seconds, warmup=args.warmup, inflight=args.callers, size=echo_size
    )
    echo: Result = measure(echo_case, None, echo_args)
    rate = writes / seconds
    client, server = (echo.client_cpu * 1000 / echo.calls, echo.server_cpu * 1000 / echo.calls)
    cpu = ", ".join(f"{name} {ms:.2f}" for name, ms in per_write.items() if name != "total")
    rows = [
        ("raft writes", f"{rate:9,.0f} writes/s   (3 members, leader {leader}, {args.callers} callers)"),
        ("  CPU ms per write", f"{cpu}; total {per_write['total']:.2f}"),
        ("pyozone.rpc echo", f"{echo.rate:9,.0f} calls/s   ({args.callers} in flight, {echo_size:,} B)"),
        ("  CPU ms per call", f"client {client:.3f}, server {server:.3f}; total {client + server:.3f}"),
        ("raft / echo", f"{rate / echo.rate:.3f} of the echo's rate"),
    ]
    what = f"{args.size} B"
    if args.data:
        mib = 1 << 20
        rows[1:1] = [("  data", f"{rate * args.data / mib:9,.1f} MiB/s written on each member")]
        rows.insert(-1, ("  echo data", f"{echo.rate * echo_size / mib:9,.1f} MiB/s each way"))
        what += f" with {args.data:,} B of state machine data"
    print_table(f"Raft writes of {what} vs the RPC echo, one run (load {os.getloadavg()[0]:.1f})", rows)


if __name__ == "__main__":
    main()
