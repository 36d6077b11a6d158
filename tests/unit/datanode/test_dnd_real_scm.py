"""Three datanodes against the real SCM daemon, in-process: SCM leaves safe mode with OPEN pipelines; after
an SCM restart the datanodes register again and SCM leaves safe mode again."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from pyozone.config import OzoneConfiguration
from pyozone.datanode.daemon import Datanode
from pyozone.hdds.states import PipelineState, ReplicationFactor
from pyozone.scm.server import ScmDaemon
from pyozone.scm.store.version import init_scm, open_scm_store
from tests.polling import wait_for_async
from tests.unit.datanode.dnd_helpers import async_test, dn_conf, running

FAST_SCM = {
    "hdds.heartbeat.interval": "100ms",
    "ozone.scm.heartbeat.thread.interval": "100ms",
    "ozone.scm.pipeline.creation.interval": "200ms",
    "hdds.scm.safemode.rule.refresh.interval": "200ms",
}


def _scm_conf(root: Path, port: int = 0) -> OzoneConfiguration:
    return OzoneConfiguration(
        {
            "ozone.metadata.dirs": str(root / "scm"),
            "ozone.scm.datanode.address": f"127.0.0.1:{port}",
            "ozone.scm.client.address": "127.0.0.1:0",
            "ozone.scm.block.client.address": "127.0.0.1:0",
            "ozone.scm.http-address": "127.0.0.1:0",
            **FAST_SCM,
        }
    )


@contextlib.asynccontextmanager
async def _scm(conf: OzoneConfiguration) -> AsyncIterator[ScmDaemon]:
    init_scm(conf)
    storage, metadata = open_scm_store(conf)
    daemon = ScmDaemon(conf, storage, metadata)
    await daemon.start()
    try:
        yield daemon
    finally:
        await daemon.stop(0.5)


def _open_three(daemon: ScmDaemon) -> bool:
    core = daemon.core
    return not core.safe_mode.in_safe_mode() and any(
        p.state is PipelineState.OPEN and p.replication_config.factor == ReplicationFactor.THREE
        for p in core.pipelines.pipelines()
    )


@async_test
async def test_three_datanodes_take_scm_out_of_safe_mode(tmp_path: Path) -> None:
    async with _scm(_scm_conf(tmp_path)) as scm, contextlib.AsyncExitStack() as stack:
        datanodes: list[Datanode] = []
        for i in range(3):
            conf = dn_conf(tmp_path / f"dn{i}", f"127.0.0.1:{scm.datanode_port}")
            datanodes.append(await stack.enter_async_context(running(conf)))
        await wait_for_async(
            lambda: _open_three(scm), timeout_s=15, what="safe mode exit with an OPEN pipeline"
        )
        three = next(
            p
            for p in scm.core.pipelines.pipelines()
            if p.state is PipelineState.OPEN and p.replication_config.factor == ReplicationFactor.THREE
        )
        assert set(three.nodes) == {dn.uuid for dn in datanodes}
        leaders = [dn for dn in datanodes if (m := dn.pipelines.get(three.id)) is not None and m.is_leader]
        assert len(leaders) == 1


@async_test
async def test_datanodes_register_again_after_an_scm_restart(tmp_path: Path) -> None:
    async with contextlib.AsyncExitStack() as stack:
        scm = await stack.enter_async_context(_scm(_scm_conf(tmp_path)))
        port = scm.datanode_port
        datanodes = [
            await stack.enter_async_context(running(dn_conf(tmp_path / f"dn{i}", f"127.0.0.1:{port}")))
            for i in range(3)
        ]
        await wait_for_async(lambda: _open_three(scm), timeout_s=15, what="first safe mode exit")
        await scm.stop(0.1)
        await asyncio.sleep(0.5)  # an outage, not a bare restart: the datanodes' heartbeats fail meanwhile
        async with _scm(_scm_conf(tmp_path, port)) as again:
            await wait_for_async(
                lambda: all(dn.scm_connections.loops[0].registrations >= 2 for dn in datanodes), timeout_s=15
            )
            await wait_for_async(
                lambda: _open_three(again), timeout_s=15, what="safe mode exit after restart"
            )
