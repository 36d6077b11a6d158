"""Heartbeats per second through the real SCM daemon over pyozone.rpc, with many simulated datanodes.

`python -m pyozone scm` runs in its own process on 127.0.0.1 (fresh metadata dir, short intervals); this
process plays N datanodes on one rpc.Channel's connection (every channel of a process to one server shares
it): each registers, then heartbeats (as fast as possible with a bounded number in flight, or every
--interval seconds). A datanode told to create a pipeline reports it in its next heartbeat, so SCM opens
pipelines and leaves safe mode as it would.

Baseline, same run and setup: a unary call with an empty request and a fixed empty answer against a
minimal rpc.Server in its own process, which is what the RPC layer itself carries here; the SCM figure is
also shown as a ratio of it. (The module keeps its name from its gRPC days: README.md runs it so.)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from benchmarks.common import print_table
from pyozone import protocol as p
from pyozone import rpc
from pyozone.framework.scm_admin import ADMIN_SERVICE
from pyozone.hdds.datanode import DatanodeDetails, LayoutVersion, NodeReport, StorageReport
from pyozone.hdds.messages import Heartbeat
from pyozone.hdds.states import SCMCommandType
from pyozone.proto import ScmAdminProtocol_pb2 as admin_pb
from pyozone.proto import ScmServerDatanodeHeartbeatProtocol_pb2 as pb
from pyozone.proto import hdds_pb2
from pyozone.rpc import loop as rpc_loop

GB = 1 << 30
DATANODE_SERVICE = rpc.service(pb, "StorageContainerDatanodeProtocolService")
ECHO = DATANODE_SERVICE.methods["getVersion"].path
LISTENING = re.compile(r"datanode protocol on [\d.]+:(\d+), admin on [\d.]+:(\d+)")
SCM_SETTINGS = {
    "ozone.scm.datanode.address": "127.0.0.1:0",
    "ozone.scm.client.address": "127.0.0.1:0",
    "ozone.scm.block.client.address": "127.0.0.1:0",
    "ozone.scm.http-address": "127.0.0.1:0",
    "ozone.scm.heartbeat.thread.interval": "1s",
    "hdds.scm.safemode.rule.refresh.interval": "1s",
    "ozone.scm.pipeline.creation.interval": "5s",
}

Call = Callable[[], Awaitable[None]]


# ------------------------------------------------------------------ processes
def pyozone_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OZONE_CONF_DIR", "PYOZONE_LOG_LEVEL")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])
    return env


def start_scm(workdir: Path) -> tuple[subprocess.Popen[bytes], int, int]:
    """Initialises and starts an SCM; returns it with its datanode and admin ports (read from its log)."""
    defines = [f"ozone.metadata.dirs={workdir / 'meta'}", *(f"{k}={v}" for k, v in SCM_SETTINGS.items())]
    cmd = [sys.executable, "-m", "pyozone", "scm", *(a for d in defines for a in ("-D", d))]
    subprocess.run([*cmd, "--init"], env=pyozone_env(), check=True, capture_output=True, timeout=60)
    log = workdir / "scm.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, env=pyozone_env(), stderr=out)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        match = LISTENING.search(log.read_text())
        if match:
            return proc, int(match[1]), int(match[2])
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    raise SystemExit(f"the SCM did not start:\n{log.read_text()}")


def stop(proc: subprocess.Popen[bytes]) -> int:
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()


def start_echo_server() -> tuple[subprocess.Popen[bytes], int]:
    cmd = [sys.executable, "-m", "benchmarks.scm_heartbeat_grpc", "--echo-server"]
    proc = subprocess.Popen(cmd, env=pyozone_env(), stdout=subprocess.PIPE)
    assert proc.stdout is not None
    return proc, int(proc.stdout.readline())


class _Echo:
    """The baseline service: getVersion answers empty bytes (an empty message), no work."""

    async def getVersion(self, request: pb.SCMVersionRequestProto, context: rpc.CallContext) -> bytes:
        return b""


async def serve_echo() -> None:
    server = rpc.Server(rpc.ServerSettings(p.MAX_HEARTBEAT_MESSAGE_BYTES))
    server.add_service(DATANODE_SERVICE, _Echo())
    print(await server.start("127.0.0.1", 0), flush=True)
    await asyncio.Event().wait()


# ------------------------------------------------------------------ simulated datanodes
class SimulatedDatanode:
    """Requests are built once (the client shares the CPU with the server); a pipeline SCM asked it to
    create goes into the next heartbeat's pipeline report, then the plain heartbeat is used again."""

    def __init__(self, i: int, stub: Any) -> None:
        self.details = DatanodeDetails(f"00000000-0000-4000-8000-{i:012d}", f"dn{i}.bench", "127.0.0.1")
        self.stub = stub
        self.plain = p.heartbeat_to_proto(Heartbeat(self.details))
        self.pending = self.plain
        self.next_due = 0.0

    def register_request(self) -> pb.SCMRegisterRequestProto:
        report = NodeReport(
            (StorageReport(f"d-{self.details.uuid}", "/data/d0", 1000 * GB, 100 * GB, 900 * GB),),
            (StorageReport(f"m-{self.details.uuid}", "/data/m0", 100 * GB, 1 * GB, 99 * GB),),
        )
        return p.register_request_to_proto(
            p.RegisterRequest(self.details, report, layout=LayoutVersion(1, 1))
        )

    async def register(self) -> None:
        answer = await self.stub.register(self.register_request())
        if answer.errorCode != pb.SCMRegisteredResponseProto.success:
            raise SystemExit(f"registration refused: {answer.errorMessage}")

    async def heartbeat(self) -> None:
        request, self.pending = self.pending, self.plain
        answer = await self.stub.sendHeartbeat(request)
        created = [
            c.createPipelineCommandProto
            for c in answer.commands
            if c.commandType == SCMCommandType.createPipelineCommand
        ]
        if created:
            self.pending = pb.SCMHeartbeatRequestProto()
            self.pending.CopyFrom(self.plain)
            for command in created:
                self.pending.pipelineReports.pipelineReport.add(
                    pipelineID=command.pipelineID, isLeader=self._leads(command)
                )

    def _leads(self, command: pb.CreatePipelineCommandProto) -> bool:
        """A one-node pipeline, or SCM's suggested leader (priority 1) of a larger one."""
        members = zip(command.datanode, command.priority, strict=True)
        return command.factor == 1 or any(d.uuid == self.details.uuid and prio for d, prio in members)


# ------------------------------------------------------------------ load
class Latencies:
    def __init__(self) -> None:
        self.ms: list[float] = []
        self.calls = 0
        self.seconds = 0.0

    def rate(self) -> float:
        return self.calls / self.seconds if self.seconds else 0.0

    def pct(self, q: float) -> float:
        ordered = sorted(self.ms)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


async def drive(
    calls: deque[tuple[Call, SimulatedDatanode | None]],
    concurrency: int,
    seconds: float,
    interval_s: float = 0.0,
    once: bool = False,
) -> Latencies:
    """`concurrency` workers take calls round-robin from `calls` until `seconds` pass (or, with `once`,
    until each ran once). With `interval_s`, a datanode's calls are that far apart."""
    result = Latencies()
    loop = asyncio.get_running_loop()
    start = loop.time()
    end = start + seconds

    async def worker() -> None:
        while calls and loop.time() < end:
            call, dn = calls.popleft()
            if dn is not None and interval_s:
                delay = dn.next_due - loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
                dn.next_due = loop.time() + interval_s  # like a datanode: an interval after the last send
            t0 = time.perf_counter()
            await call()
            result.ms.append((time.perf_counter() - t0) * 1000)
            result.calls += 1
            if not once:
                calls.append((call, dn))

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    result.seconds = loop.time() - start
    return result


def channel(port: int) -> rpc.Channel:
    return rpc.Channel(f"127.0.0.1:{port}", rpc.ChannelSettings(p.MAX_HEARTBEAT_MESSAGE_BYTES))


async def scm_state(admin_port: int) -> tuple[bool, int, int]:
    """(in safe mode, pipelines, ALLOCATED pipelines) as the admin service reports them."""
    async with rpc.Channel(f"127.0.0.1:{admin_port}", rpc.ChannelSettings(p.MAX_ADMIN_MESSAGE_BYTES)) as ch:
        admin: Any = rpc.Stub(ch, ADMIN_SERVICE)
        info = await admin.getScmInfo(admin_pb.GetScmInfoRequestProto())
        pipelines = (await admin.listPipelines(admin_pb.ListPipelineRequestProto())).pipelines
    allocated = sum(1 for x in pipelines if x.state == hdds_pb2.PIPELINE_ALLOCATED)
    return info.inSafeMode, len(pipelines), allocated


async def settle(
    beats: deque[tuple[Call, SimulatedDatanode | None]],
    args: argparse.Namespace,
    admin_port: int,
    limit_s: float = 120,
) -> float:
    """Unmeasured heartbeats until SCM is out of safe mode and every pipeline it created is OPEN: the
    measured phase then sees steady-state heartbeats, not the one-off burst of pipeline creation."""
    start = time.perf_counter()
    while time.perf_counter() - start < limit_s:
        await drive(beats, args.concurrency, 1.0, args.interval)
        in_safe_mode, _, allocated = await scm_state(admin_port)
        if not in_safe_mode and not allocated:
            break
    return time.perf_counter() - start


async def echo_baseline(args: argparse.Namespace, echo_port: int) -> Latencies:
    ch = channel(echo_port)
    echo = ch.unary_unary(ECHO)

    async def call() -> None:
        await echo(b"")

    calls: deque[tuple[Call, SimulatedDatanode | None]] = deque((call, None) for _ in range(args.concurrency))
    try:
        return await drive(calls, args.concurrency, args.seconds)
    finally:
        await ch.close()


async def run_load(
    args: argparse.Namespace, dn_port: int, admin_port: int, echo_port: int
) -> list[tuple[str, str]]:
    scm_channel = channel(dn_port)
    stub = rpc.Stub(scm_channel, DATANODE_SERVICE)
    datanodes = [SimulatedDatanode(i, stub) for i in range(1, args.datanodes + 1)]
    try:
        registered = await drive(
            deque((dn.register, None) for dn in datanodes), args.concurrency, 600, once=True
        )
        beats = deque((dn.heartbeat, dn) for dn in datanodes)
        settle_s = await settle(beats, args, admin_port)
        heartbeats = await drive(beats, args.concurrency, args.seconds, args.interval)
    finally:
        await scm_channel.close()
    in_safe_mode, pipelines, allocated = await scm_state(admin_port)
    baseline = await echo_baseline(args, echo_port)
    ratio = heartbeats.rate() / baseline.rate() if baseline.rate() else 0.0
    offered = f"{args.datanodes / args.interval:,.0f} /s" if args.interval else "as fast as possible"
    return [
        ("offered heartbeat load", f"{offered:>9}"),
        ("registrations", _rate(registered)),
        ("warm-up (safe mode exit, pipelines OPEN)", f"{settle_s:>9.1f} s"),
        ("SCM heartbeats", _rate(heartbeats)),
        ("  latency p50 / p99", _latency(heartbeats)),
        ("baseline: rpc echo", _rate(baseline)),
        ("  latency p50 / p99", _latency(baseline)),
        ("SCM heartbeats / echo", f"{ratio:>9.2f}"),
        (
            "SCM after the run",
            f"safe mode {'on' if in_safe_mode else 'off'}, {pipelines:,} pipelines ({allocated} ALLOCATED)",
        ),
    ]


def _rate(result: Latencies) -> str:
    return f"{result.rate():>9,.0f} /s  ({result.calls:,} in {result.seconds:.1f} s)"


def _latency(result: Latencies) -> str:
    return f"{result.pct(0.5):>9.2f} / {result.pct(0.99):.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--datanodes", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each measured phase")
    parser.add_argument("--concurrency", type=int, default=64, help="RPCs in flight at once")
    parser.add_argument(
        "--interval",
        type=float,
        default=0.0,
        help="seconds between one datanode's heartbeats (0: as fast as possible)",
    )
    parser.add_argument("--echo-server", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.echo_server:
        rpc_loop.run(serve_echo())
        return
    with tempfile.TemporaryDirectory(prefix="scm-heartbeat-bench-") as tmp:
        scm, dn_port, admin_port = start_scm(Path(tmp))
        echo, echo_port = start_echo_server()
        try:
            rows = rpc_loop.run(run_load(args, dn_port, admin_port, echo_port))
        finally:
            echo.kill()
            echo.wait()
            scm_exit = stop(scm)
    rows.append(("SCM exit code after SIGTERM", str(scm_exit)))
    print_table(
        f"SCM heartbeats over pyozone.rpc: {args.datanodes:,} simulated datanodes, {args.concurrency} in "
        f"flight, one connection, {os.cpu_count()} cores shared by client and servers",
        rows,
    )


if __name__ == "__main__":
    main()
