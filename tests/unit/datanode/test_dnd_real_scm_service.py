"""Three datanodes against a real service of three SCM daemons, in-process (issue 31): every datanode
registers and reports to every SCM; the leader's pipelines open on the datanodes; when the leader stops the
new leader already knows every datanode and replica and its commands are taken (newer term); the stopped
SCM, back, is reported to again."""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from pathlib import Path

from pyozone.config import OzoneConfiguration
from pyozone.datanode.daemon import Datanode
from pyozone.hdds.ids import RATIS_THREE
from pyozone.hdds.states import PipelineState
from pyozone.scm.server import ScmDaemon
from tests.polling import wait_for_async
from tests.unit.datanode.dnd_helpers import async_test, dn_conf, running
from tests.unit.scm.server.test_scm_ha import NODES, Service, planned


def _dn_conf(root: Path, svc: Service) -> OzoneConfiguration:
    service_keys = {k: v for k, v in svc.values.items() if k.startswith("ozone.scm.")}
    return dn_conf(root, "", **service_keys)


def _ready_leader(svc: Service) -> ScmDaemon | None:
    for daemon in svc.daemons.values():
        assert daemon.ha is not None
        core = daemon.core
        if (
            daemon.ha.context.is_leader_ready()
            and not core.safe_mode.in_safe_mode()
            and core.pipelines.pipelines(RATIS_THREE, PipelineState.OPEN)
        ):
            return daemon
    return None


def _known_everywhere(svc: Service, datanodes: list[Datanode]) -> bool:
    return all(d.core.nodes.get(dn.uuid) is not None for d in svc.daemons.values() for dn in datanodes)


@async_test
async def test_datanodes_report_to_every_scm_and_follow_the_leader_across_a_failover(tmp_path: Path):
    svc = planned(tmp_path / "scms")
    for node in NODES:
        assert await asyncio.to_thread(svc.cli, node, "--init") == 0
    try:
        await svc.start("scm1")
        for node in NODES[1:]:
            assert await asyncio.to_thread(svc.cli, node, "--bootstrap") == 0
            await svc.start(node)
        async with AsyncExitStack() as stack:
            datanodes = [
                await stack.enter_async_context(running(_dn_conf(tmp_path / f"dn{i}", svc))) for i in range(3)
            ]
            await wait_for_async(lambda: _known_everywhere(svc, datanodes), 30, "every datanode at every SCM")
            leader = await wait_for_async(lambda: _ready_leader(svc), 30, "a leader with an OPEN pipeline")
            opened = {p.id for p in leader.core.pipelines.pipelines(RATIS_THREE, PipelineState.OPEN)}
            assert all(opened & {m.pipeline_id for m in dn.pipelines.all()} for dn in datanodes)
            first_term = leader.ha.context.term_of_leader()

            old = next(n for n, d in svc.daemons.items() if d is leader)
            await svc.stop(old)
            new = await wait_for_async(lambda: _ready_leader(svc), 30, "a new leader with an OPEN pipeline")
            assert new.ha.context.term_of_leader() > first_term
            await wait_for_async(
                lambda: all(dn.queue.max_term >= new.ha.context.term_of_leader() for dn in datanodes),
                30, "the new term heard by every datanode",
            )  # fmt: skip
            for dn in datanodes:
                assert new.core.nodes.get(dn.uuid) is not None

            await svc.start(old)
            await wait_for_async(
                lambda: _known_everywhere(svc, datanodes), 30, "the restarted SCM reported to"
            )
            assert all(all(s["registered"] for s in dn.scm_connections.status()) for dn in datanodes)
    finally:
        for node in list(svc.daemons):
            await svc.stop(node)
