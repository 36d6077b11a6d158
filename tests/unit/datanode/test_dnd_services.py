"""The data services as the daemon mounts them: a client's createContainer on the STANDALONE port reaches
SCM as an incremental report, and replicateContainer pushes a closed replica to another datanode's
REPLICATION port, which imports and reports it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pyozone import rpc
from pyozone.hdds.commands import ReplicateContainerCommand, ReplicationCommandPriority
from pyozone.hdds.states import ReplicaState
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.protocol import MAX_DATA_MESSAGE_BYTES
from tests.polling import wait_for_async
from tests.unit.datanode.dnd_helpers import (
    FakeScm,
    allocated_on,
    async_test,
    dn_conf,
    put_block,
    running,
    wait_for_beat,
)


def _has_icr(cid: int, state: ReplicaState, uuid: str) -> object:
    return lambda hb: (
        hb.datanode.uuid == uuid
        and (cid, state) in [(r.container_id, r.state) for r in hb.incremental_container_reports]
    )


@async_test
async def test_a_client_create_container_is_reported_to_scm(tmp_path: Path, scm: FakeScm) -> None:
    pipeline = "11111111-0000-4000-8000-000000000001"
    async with running(dn_conf(tmp_path, scm.address), lookup=allocated_on(pipeline)) as dn:
        dn.pipelines.add(pipeline, (dn.uuid,), dn.uuid)  # as SCM's createPipeline would
        address = f"127.0.0.1:{dn.ports.standalone}"
        async with rpc.Channel(address, rpc.ChannelSettings(MAX_DATA_MESSAGE_BYTES)) as channel:
            call = rpc.Stub(channel, rpc.service(pb, "XceiverClientProtocolService")).send()
            request = pb.ContainerCommandRequestProto(
                cmdType=pb.CreateContainer,
                containerID=21,
                datanodeUuid="client",
                pipelineID=pipeline,
                createContainer=pb.CreateContainerRequestProto(),
            )
            await call.write(request)
            await call.done_writing()
            [response] = [r async for r in call]
        assert response.result == pb.SUCCESS, response
        await wait_for_beat(scm, _has_icr(21, ReplicaState.OPEN, dn.uuid))


@async_test
async def test_replicate_container_between_two_datanodes(tmp_path: Path, scm: FakeScm) -> None:
    async with (
        running(dn_conf(tmp_path / "source", scm.address)) as source,
        running(dn_conf(tmp_path / "target", scm.address)) as target,
    ):
        await wait_for_async(lambda: len(scm.registrations) == 2, what="both registered")

        def closed_container() -> None:
            container = source.containers.create(31, source.uuid, "p1")
            put_block(container, 1, b"replicated bytes" * 100, 1)
            container.mark_closing()
            container.close()

        await asyncio.to_thread(closed_container)
        scm.send(
            ReplicateContainerCommand(
                container_id=31,
                target=target.identity.identity.details(),
                priority=ReplicationCommandPriority.NORMAL,
            ),
            to=source.uuid,
        )
        await wait_for_beat(scm, _has_icr(31, ReplicaState.CLOSED, target.uuid), timeout=10)
        copy = target.containers.require(31)
        assert copy.key_count == 1 and copy.bcsid == 1
        assert copy.data.origin_node_id == source.uuid
