"""OM's memory under a flood of requests with huge names (issue 11, defect 2).

An OM runs in its own process (`--serve`, on a stub SCM that only answers getScmInfo: the flood never
reaches SCM); this process sends `--requests` createVolume and lookupKey requests whose name is
`--name-mb` MiB, `--concurrency` at a time, the workers sharing one connection. A sampler reads the OM's
VmRSS every 20 ms. Printed: the OM's RSS before (the baseline of the same run), at its peak, and some
seconds after the flood; and what every request was answered (status, result code, longest details).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from benchmarks.common import print_table
from pyozone.framework.om import OM_SERVICE
from pyozone.hdds.limits import MiB
from pyozone.proto import OmClientProtocol_pb2 as pb
from pyozone.rpc import Channel, ChannelSettings, RpcError, StatusCode, Stub
from pyozone.rpc.loop import run as run_on_rpc_loop

SETTLE_S = 3.0


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def serve(data_dir: str) -> None:
    """The OM process: prints its port, serves until SIGTERM."""
    from pyozone.config import OzoneConfiguration
    from pyozone.framework.scm_admin import ScmInfo
    from pyozone.framework.scm_errors import ScmClientError
    from pyozone.om.server import OmDaemon

    class InfoOnlyScm:
        def scm_info(self) -> ScmInfo:
            return ScmInfo("CID-flood", "scm-1", False, True)

        def _refuse(self, *args: object) -> object:
            raise ScmClientError("the flood's stub SCM only answers getScmInfo", StatusCode.UNAVAILABLE)

        allocate_blocks = delete_key_blocks = container_location = _refuse

    conf = OzoneConfiguration(
        {
            "ozone.metadata.dirs": data_dir,
            "ozone.om.address": "127.0.0.1:0",
            "ozone.om.http-address": "127.0.0.1:0",
        }
    )

    async def run() -> None:
        daemon = OmDaemon(conf, InfoOnlyScm())  # type: ignore[arg-type]
        stop = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
        await daemon.start()
        print(daemon.rpc_port, flush=True)
        await stop.wait()
        await daemon.stop(0.5)

    run_on_rpc_loop(run())


@dataclass(frozen=True)
class FloodResult:
    baseline_mb: float
    peak_mb: float
    after_mb: float
    answers: Counter[str]
    longest_details: int
    seconds: float


def start_om(data_dir: str) -> tuple[subprocess.Popen[str], int]:
    om = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.om_name_flood", "--serve", data_dir],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parents[1],
    )
    assert om.stdout is not None
    line = om.stdout.readline()
    if not line:
        om.wait(10)
        raise RuntimeError(f"the OM process exited with {om.returncode} before serving")
    return om, int(line)


async def flood(port: int, requests: int, concurrency: int, name_bytes: int) -> tuple[Counter[str], int]:
    answers: Counter[str] = Counter()
    longest = 0
    todo = iter(range(requests))
    name = "v" * name_bytes

    async def worker() -> None:
        nonlocal longest
        async with Channel(f"127.0.0.1:{port}", ChannelSettings(max_message_bytes=MiB)) as channel:
            stub = Stub(channel, OM_SERVICE)
            for i in todo:
                try:
                    if i % 2:
                        await stub.lookupKey(pb.LookupKeyRequest(volume="vol", bucket="b", key=name))
                    else:
                        await stub.createVolume(pb.CreateVolumeRequest(volume=name))
                    answers["OK"] += 1
                except RpcError as e:
                    details = e.details() or ""
                    longest = max(longest, len(details))
                    answers[f"{e.code().name} {details.split(':', 1)[0][:60]}"] += 1

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return answers, longest


def run_flood(requests: int, concurrency: int, name_bytes: int) -> FloodResult:
    """Starts an OM process, floods it and stops it."""
    with tempfile.TemporaryDirectory(prefix="om-flood-") as data_dir:
        om, port = start_om(data_dir)
        try:
            time.sleep(0.5)
            baseline = rss_mb(om.pid)
            peak = baseline
            done = threading.Event()

            def sample() -> None:
                nonlocal peak
                while not done.wait(0.02):
                    peak = max(peak, rss_mb(om.pid))

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            start = time.perf_counter()
            answers, longest = asyncio.run(flood(port, requests, concurrency, name_bytes))
            seconds = time.perf_counter() - start
            time.sleep(SETTLE_S)
            done.set()
            sampler.join()
            after = rss_mb(om.pid)
            return FloodResult(baseline, peak, after, answers, longest, seconds)
        finally:
            om.send_signal(signal.SIGTERM)
            try:
                om.wait(10)
            except subprocess.TimeoutExpired:
                om.kill()
                om.wait()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--requests", type=int, default=70)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--name-mb", type=float, default=30)
    parser.add_argument("--serve", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.serve)
        return
    result = run_flood(args.requests, args.concurrency, int(args.name_mb * MiB))
    rows = [
        ("requests", f"{args.requests} ({args.concurrency} at a time, {args.name_mb:g} MiB names)"),
        ("took", f"{result.seconds:.1f} s"),
        ("OM RSS before", f"{result.baseline_mb:.0f} MB"),
        ("OM RSS peak", f"{result.peak_mb:.0f} MB"),
        (f"OM RSS {SETTLE_S:g} s after", f"{result.after_mb:.0f} MB"),
        ("longest details", f"{result.longest_details} chars"),
    ]
    rows += [(f"answer {answer}", str(n)) for answer, n in sorted(result.answers.items())]
    print_table(f"OM name flood (pid {os.getpid()})", rows)


if __name__ == "__main__":
    main()
