"""A disk swapped for an empty one while the datanode was down: at the next start the datanode knows which
containers went with it (witnessed_container.db), refuses to create them again and asks SCM to close the
pipelines that created them; the pipelines whose containers are intact go on."""

from __future__ import annotations

import asyncio
import shutil
import time
from pathlib import Path

from pyozone.datanode.storage import ContainerError, Result
from pyozone.hdds.commands import CreatePipelineCommand
from tests.polling import wait_for_async
from tests.unit.datanode.dnd_helpers import (
    FakeScm,
    async_test,
    dn_conf,
    put_block,
    running,
    wait_for_beat,
)

LOSES = "11111111-0000-4000-8000-0000000000e1"
KEEPS = "11111111-0000-4000-8000-0000000000e2"


def _pipeline(pid: str, node: str) -> CreatePipelineCommand:
    return CreatePipelineCommand(pipeline_id=pid, factor=1, nodes=(node,), suggested_leader=node)


@async_test
async def test_a_swapped_disk_fails_the_pipelines_whose_containers_it_held(
    tmp_path: Path, scm: FakeScm
) -> None:
    conf = dn_conf(tmp_path, scm.address)
    async with running(conf) as dn:
        await wait_for_async(lambda: scm.beats(), what="first heartbeat")
        scm.send(_pipeline(LOSES, dn.uuid), _pipeline(KEEPS, dn.uuid))
        await wait_for_async(lambda: LOSES in dn.groups and KEEPS in dn.groups, what="pipeline groups")
        lost = await asyncio.to_thread(dn.containers.create, 1, dn.uuid, LOSES)
        kept = await asyncio.to_thread(dn.containers.create, 2, dn.uuid, KEEPS)
        assert lost.volume is not kept.volume
        await asyncio.to_thread(put_block, lost, 1, b"older block", 3)
        disk = lost.volume.root
    shutil.rmtree(disk)
    disk.mkdir()

    since = time.monotonic()
    async with running(conf) as dn:
        hb = await wait_for_beat(scm, lambda hb: hb.pipeline_actions, since)
        assert [a.pipeline_id for a in hb.pipeline_actions] == [LOSES]
        assert "restarted without its containers [1]" in hb.pipeline_actions[0].reason
        assert dn.containers.lost_from(LOSES) == [1] and 2 in dn.containers
        try:
            await asyncio.to_thread(dn.containers.create, 1, dn.uuid, LOSES)
            raise AssertionError("a lost container was created again")
        except ContainerError as e:
            assert e.result is Result.CONTAINER_MISSING
        assert dn.groups.get(KEEPS).failure is None  # type: ignore[union-attr]
