"""The reconstructECContainers handler: the command's indexes, its status to SCM, and a run whose sources
are real datanodes behind gRPC (the coordinator's own streams, not in-process ones)."""

from __future__ import annotations

import asyncio
from concurrent.futures import Executor
from contextlib import AsyncExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pyozone.datanode.commands.reconstruct_ec import ReconstructECHandler, reconstruction_of
from pyozone.datanode.ec import RpcPeers
from pyozone.hdds.commands import ReconstructECContainersCommand, ReconstructionSource
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.messages import CommandStatusReport
from pyozone.hdds.states import CommandStatus
from tests.unit.datanode.dns_helpers import serve
from tests.unit.datanode.ec.ec_helpers import (
    CID,
    FakeTarget,
    close_sources,
    details,
    open_sources,
    payload,
    write_group,
)

RS32 = ReplicationConfig.parse("rs-3-2-4k")
CELL = 4096


@dataclass
class Reports:
    statuses: list[CommandStatusReport] = field(default_factory=list)

    def set_command_status(self, status: CommandStatusReport) -> None:
        self.statuses.append(status)


@dataclass
class Context:
    """What the handler uses of CommandContext."""

    executor: Executor
    reports: Reports = field(default_factory=Reports)
    datanode_uuid: str = str(details(99).uuid)
    tls: None = None
    tokens: None = None


def command(sources: dict[int, DatanodeDetails], targets: dict[int, DatanodeDetails], **kw: Any):
    return ReconstructECContainersCommand(
        container_id=CID, sources=tuple(ReconstructionSource(d, i) for i, d in sources.items()),
        targets=tuple(targets.values()), missing_indexes=bytes(targets), replication_config=RS32, **kw,
    )  # fmt: skip


def test_targets_pair_with_the_missing_indexes_in_order() -> None:
    job = reconstruction_of(command({i: details(i) for i in (1, 3, 4)}, {5: details(55), 2: details(52)}))
    assert job.targets == {5: details(55), 2: details(52)}
    assert sorted(job.sources) == [1, 3, 4]


def test_a_malformed_command_fails_at_once(executor: Executor) -> None:
    ctx = Context(executor)
    handler = ReconstructECHandler(ctx)  # type: ignore[arg-type]
    bad = replace(command({i: details(i) for i in (1, 3, 4)}, {2: details(52)}), missing_indexes=b"\x02\x05")
    asyncio.run(handler.handle(bad))
    assert [s.status for s in ctx.reports.statuses] == [CommandStatus.FAILED]


def test_a_rebuild_over_the_data_port_reports_executed(tmp_path: Path, executor: Executor) -> None:
    sources = open_sources(tmp_path, [1, 3, 4, 5])
    cells = write_group(sources, RS32, 1, payload(3 * CELL * 5 + 123, 1))
    close_sources(sources)
    target = FakeTarget("dst2")
    ctx = Context(executor)

    async def scenario() -> None:
        async with AsyncExitStack() as stack:
            served = {i: await stack.enter_async_context(serve(s.node, executor)) for i, s in sources.items()}
            remote = {
                i: DatanodeDetails(
                    details(i).uuid, f"dn{i}", "127.0.0.1", (("STANDALONE", a.data_address.port),)
                )
                for i, a in served.items()
            }
            peers = RpcPeers(30)
            stack.push_async_callback(peers.close)

            def connect(d: DatanodeDetails) -> Any:
                return target if d == details(52) else peers.connect(d)

            handler = ReconstructECHandler(ctx, connect)  # type: ignore[arg-type]
            await handler.handle(command(remote, {2: details(52)}))

    try:
        asyncio.run(scenario())
    finally:
        for source in sources.values():
            source.node.close()
    assert [s.status for s in ctx.reports.statuses] == [CommandStatus.EXECUTED]
    replica = target.replicas[CID]
    assert replica.state == "CLOSED"
    assert replica.block_bytes(1) == b"".join(cells[2])


def test_an_unreachable_source_fails_the_command(executor: Executor) -> None:
    ctx = Context(executor)
    target = FakeTarget("dst2")
    peers_made: list[RpcPeers] = []

    async def scenario() -> None:
        peers = RpcPeers(5)
        peers_made.append(peers)

        def connect(d: DatanodeDetails) -> Any:
            return target if d == details(52) else peers.connect(d)

        handler = ReconstructECHandler(ctx, connect)  # type: ignore[arg-type]
        dead = {
            i: DatanodeDetails(details(i).uuid, f"dn{i}", "127.0.0.1", (("STANDALONE", 1),))
            for i in (1, 3, 4)
        }
        try:
            await handler.handle(command(dead, {2: details(52)}))
        finally:
            await peers.close()

    asyncio.run(scenario())
    assert [s.status for s in ctx.reports.statuses] == [CommandStatus.FAILED]
    assert target.replicas == {}  # nothing was created: listing the sources failed first


def test_dropped_commands_report_failed(executor: Executor) -> None:
    ctx = Context(executor)
    handler = ReconstructECHandler(ctx)  # type: ignore[arg-type]
    handler.on_dropped(command({}, {2: details(52)}), "its deadline has passed")
    assert [s.status for s in ctx.reports.statuses] == [CommandStatus.FAILED]
