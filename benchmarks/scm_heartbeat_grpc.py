"""Heartbeats per second through the real SCM daemon over gRPC, with many simulated datanodes.

`python -m pyozone scm` runs in its own process on 127.0.0.1 (fresh metadata dir, short intervals); this
process plays N datanodes on a few shared grpc.aio channels: each registers, then heartbeats (as fast as
possible with a bounded number in flight, or every --interval seconds). A datanode told to create a
pipeline reports it in its next heartbeat, so SCM opens pipelines and leaves safe mode as it would.

Baseline, same run and setup: a unary echo of an empty message against a minimal grpc.aio server in
its own process, which is what gRPC itself carries here; the SCM figure is also shown as a ratio of it.
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

import grpc

from benchmarks.common import print_table
from pyozone import protocol as p
from pyozone.hdds.datanode import DatanodeDetails, LayoutVersion, NodeReport, StorageReport
from pyozone.hdds.messages import Heartbeat
from pyozone.hdds.states import SCMCommandType
from pyozone.proto import ScmAdminProtocol_pb2 as admin_pb
from pyozone.proto import ScmAdminProtocol_pb2_grpc as admin_grpc
from pyozone.proto import ScmServerDatanodeHeartbeatProtocol_pb2 as pb
from pyozone.proto import ScmServerDatanodeHeartbeatProtocol_pb2_grpc as pb_grpc
from pyozone.proto import hdds_pb2

GB = 1 << 30
ECHO = "/bench.Echo/Echo"
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


async def serve_echo() -> None:
    """The baseline server: a generic unary handler on raw bytes, no protobuf, no work."""

    async def echo(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        return request

    server = grpc.aio.server()
    handler = grpc.unary_unary_rpc_method_handler(echo)
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("bench.Echo", {"Echo": handler}),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(port, flush=True)
    await server.wait_for_termination()


# ------------------------------------------------------------------ simulated datanodes
class SimulatedDatanode:
    """Requests are built once (the client shares the CPU with the server); a pipeline SCM asked it to
    create goes into the next heartbeat's pipeline report, then the plain heartbeat is used again."""

    def __init__(self, i: int, stub: pb_grpc.StorageContainerDatanodeProtocolServiceStub) -> None:
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


def channel(port: int) -> grpc.aio.Channel:
    # a local subchannel pool: each channel gets its own connection instead of sharing one
    options = [*p.grpc_options(p.MAX_HEARTBEAT_MESSAGE_BYTES), ("grpc.use_local_subchannel_pool", 1)]
    return grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=options)


async def scm_state(admin_port: int) -> tuple[bool, int, int]:
    """(in safe mode, pipelines, ALLOCATED pipelines) as the admin service reports them."""
    async with grpc.aio.insecure_channel(
        f"127.0.0.1:{admin_port}", options=p.grpc_options(p.MAX_ADMIN_MESSAGE_BYTES)
    ) as ch:
        admin = admin_grpc.ScmAdminProtocolServiceStub(ch)
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
    channels = [channel(echo_port) for _ in range(args.channels)]
    echoes = [ch.unary_unary(ECHO) for ch in channels]

    def echo_call(i: int) -> Call:
        async def call() -> None:
            await echoes[i % len(echoes)](b"")

        return call

    calls = deque((echo_call(i), None) for i in range(args.concurrency))
    try:
        return await drive(calls, args.concurrency, args.seconds)
    finally:
        for ch in channels:
            await ch.close()


async def run_load(
    args: argparse.Namespace, dn_port: int, admin_port: int, echo_port: int
) -> list[tuple[str, str]]:
    scm_channels = [channel(dn_port) for _ in range(args.channels)]
    stubs = [pb_grpc.StorageContainerDatanodeProtocolServiceStub(ch) for ch in scm_channels]
    datanodes = [SimulatedDatanode(i, stubs[i % len(stubs)]) for i in range(1, args.datanodes + 1)]
    try:
        registered = await drive(
            deque((dn.register, None) for dn in datanodes), args.concurrency, 600, once=True
        )
        beats = deque((dn.heartbeat, dn) for dn in datanodes)
        settle_s = await settle(beats, args, admin_port)
        heartbeats = await drive(beats, args.concurrency, args.seconds, args.interval)
    finally:
        for ch in scm_channels:
            await ch.close()
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
        ("baseline: gRPC echo", _rate(baseline)),
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
    parser.add_argument("--channels", type=int, default=8, help="gRPC connections the datanodes share")
    parser.add_argument(
        "--interval",
        type=float,
        default=0.0,
        help="seconds between one datanode's heartbeats (0: as fast as possible)",
    )
    parser.add_argument("--echo-server", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.echo_server:
        asyncio.run(serve_echo())
        return
    with tempfile.TemporaryDirectory(prefix="scm-heartbeat-bench-") as tmp:
        scm, dn_port, admin_port = start_scm(Path(tmp))
        echo, echo_port = start_echo_server()
        try:
            rows = asyncio.run(run_load(args, dn_port, admin_port, echo_port))
        finally:
            echo.kill()
            echo.wait()
            scm_exit = stop(scm)
    rows.append(("SCM exit code after SIGTERM", str(scm_exit)))
    print_table(
        f"SCM heartbeats over gRPC: {args.datanodes:,} simulated datanodes, {args.concurrency} in flight, "
        f"{args.channels} connections, {os.cpu_count()} cores shared by client and servers",
        rows,
    )


if __name__ == "__main__":
    main()
