"""`python -m pyozone scm` as a real process: it becomes ready, SIGTERM stops it cleanly (exit 0), and a
restart reloads the pipelines created before."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pyozone
from pyozone.proto import ScmAdminProtocol_pb2 as pb
from pyozone.proto import hdds_pb2
from tests.polling import wait_for
from tests.unit.scm.server.scm_server_helpers import LOOPBACK, FakeDatanode, admin_stub, channel

LISTENING = re.compile(r"datanode protocol on [\d.]+:(\d+), admin on [\d.]+:(\d+), http on [\d.]+:(\d+)")


def pyozone_cmd(metadata_dir: Path, *args: str) -> list[str]:
    overrides = {
        "ozone.metadata.dirs": str(metadata_dir),
        **LOOPBACK,
        "hdds.scm.safemode.min.datanode": "1",
        "ozone.scm.pipeline.creation.auto.factor.one": "false",  # the only pipeline is the one we create
    }
    defines = [arg for key, value in overrides.items() for arg in ("-D", f"{key}={value}")]
    return [sys.executable, "-m", "pyozone", "scm", *args, *defines]


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OZONE_CONF_DIR", "PYOZONE_LOG_LEVEL")}
    env["PYTHONPATH"] = str(Path(pyozone.__file__).parents[1])
    return env


class ScmProcess:
    def __init__(self, metadata_dir: Path, log: Path) -> None:
        self.log = log
        with open(log, "w") as out:
            self.proc = subprocess.Popen(pyozone_cmd(metadata_dir), env=environment(), stderr=out)
        self.datanode_port, self.client_port, self.http_port = self._ports()

    def _ports(self, timeout_s: float = 10) -> tuple[int, int, int]:
        def listening() -> re.Match[str] | None:
            match = LISTENING.search(self.log.read_text())
            assert match or self.proc.poll() is None, self.log.read_text()
            return match

        match = wait_for(
            listening, timeout_s, lambda: f"SCM reporting its ports:\n{self.log.read_text()}", interval_s=0.05
        )
        return int(match[1]), int(match[2]), int(match[3])

    def ready(self) -> dict:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}/ready", timeout=2) as answer:
            return json.load(answer)

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=5)


async def register_and_create_pipeline(scm: ScmProcess) -> str:
    async with channel(scm.datanode_port) as dn_channel, channel(scm.client_port) as admin_channel:
        assert (await FakeDatanode(1, dn_channel).register()).success
        created = await admin_stub(admin_channel).createPipeline(
            pb.PipelineRequestProto(replicationType=hdds_pb2.RATIS, replicationFactor=hdds_pb2.ONE)
        )
        assert created.errorCode == pb.PipelineResponseProto.success
        return created.pipeline.id.id


async def pipeline_ids(scm: ScmProcess) -> list[str]:
    async with channel(scm.client_port) as ch:
        listed = await admin_stub(ch).listPipelines(pb.ListPipelineRequestProto())
        return [pipeline.id.id for pipeline in listed.pipelines]


def test_scm_process_readiness_sigterm_and_restart(tmp_path: Path) -> None:
    metadata = tmp_path / "meta"
    init = subprocess.run(
        pyozone_cmd(metadata, "--init"), env=environment(), capture_output=True, text=True, timeout=30
    )
    assert init.returncode == 0, init.stderr

    first = ScmProcess(metadata, tmp_path / "scm-1.log")
    try:
        assert first.ready()["ready"] is True  # ports are logged once both gRPC servers serve
        pid = asyncio.run(register_and_create_pipeline(first))
        started = time.monotonic()
        assert first.stop() == 0
        assert time.monotonic() - started < 5
        assert "SCM stopped" in first.log.read_text()
    finally:
        first.proc.kill()

    second = ScmProcess(metadata, tmp_path / "scm-2.log")
    try:
        assert asyncio.run(pipeline_ids(second)) == [pid]
        assert second.ready()["safeMode"] is True  # a restarted SCM re-enters safe mode
        assert second.stop() == 0
    finally:
        second.proc.kill()
