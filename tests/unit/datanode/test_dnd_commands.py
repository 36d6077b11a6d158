"""SCM's commands end to end: sent in a heartbeat response by the fake SCM, run by the datanode, and seen
by SCM in later heartbeats (reports, statuses, persisted state)."""

from __future__ import annotations

import asyncio
import json
import shutil
import time
from pathlib import Path
from typing import Any

from pyozone.common.net import HostPort
from pyozone.datanode.daemon import Datanode
from pyozone.datanode.storage import KeyValueContainer
from pyozone.hdds.commands import (
    CloseContainerCommand,
    ClosePipelineCommand,
    CreatePipelineCommand,
    DeleteBlocksCommand,
    DeleteContainerCommand,
    DeletedBlocksTransaction,
    FinalizeNewLayoutVersionCommand,
    RefreshVolumeUsageCommand,
    ReplicateContainerCommand,
    ReplicationCommandPriority,
    SetNodeOperationalStateCommand,
)
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.ids import DatanodeID
from pyozone.hdds.messages import DeleteBlockTransactionResult, Heartbeat
from pyozone.hdds.states import CommandStatus, NodeOperationalState, ReplicaState
from pyozone.hdds.states import SCMCommandType as T
from tests.polling import wait_for_async
from tests.unit.datanode.dnd_helpers import (
    FakeScm,
    async_test,
    dn_conf,
    put_block,
    running,
    wait_for_beat,
)

OTHER_A = "00000000-0000-4000-8000-00000000000a"
OTHER_B = "00000000-0000-4000-8000-00000000000b"
OTHERS = (OTHER_A, OTHER_B)


async def _started(dn: Datanode, scm: FakeScm) -> None:
    await wait_for_async(lambda: scm.beats(), what="first heartbeat")


async def _create(
    dn: Datanode, cid: int, state: ReplicaState = ReplicaState.OPEN, pipeline_id: str = "p1"
) -> KeyValueContainer:
    def build() -> KeyValueContainer:
        c = dn.containers.create(cid, dn.uuid, pipeline_id)
        if state is not ReplicaState.OPEN:
            c.mark_closing()
        if state is ReplicaState.QUASI_CLOSED:
            c.quasi_close()
        elif state is ReplicaState.CLOSED:
            c.close()
        return c

    return await asyncio.to_thread(build)


async def _reported(scm: FakeScm, cid: int, state: ReplicaState) -> float:
    """Waits until SCM has heard that `cid` is in `state` (and of every change made before); returns when."""
    await wait_for_beat(
        scm, lambda hb: (cid, state) in [(r.container_id, r.state) for r in hb.incremental_container_reports]
    )
    return time.monotonic()


def _pipeline(pid: str, nodes: list[str], leader: str | None) -> CreatePipelineCommand:
    """The other members (OTHER_A, OTHER_B) at RATIS ports where nothing listens."""
    others = tuple(
        DatanodeDetails(DatanodeID(n), "other", "127.0.0.1", (("RATIS", 1),)) if n in OTHERS else None
        for n in nodes
    )
    return CreatePipelineCommand(
        pipeline_id=pid, factor=len(nodes), nodes=tuple(nodes), suggested_leader=leader, datanodes=others
    )


def _close(cid: int, pipeline: str | None = None, force: bool = False, **kw: Any) -> CloseContainerCommand:
    return CloseContainerCommand(container_id=cid, pipeline_id=pipeline, force=force, **kw)


def _reports(hb: Heartbeat) -> dict[str, bool] | None:
    return None if hb.pipeline_reports is None else {r.pipeline_id: r.is_leader for r in hb.pipeline_reports}


# ---------------------------------------------------------------------- pipelines
@async_test
async def test_create_and_close_pipeline(tmp_path: Path, scm: FakeScm) -> None:
    p1 = "11111111-0000-4000-8000-000000000001"
    p2 = "11111111-0000-4000-8000-000000000002"
    p3 = "11111111-0000-4000-8000-000000000003"
    conf = dn_conf(tmp_path, scm.address, **{"hdds.heartbeat.interval": "30s"})
    async with running(conf) as dn:
        await wait_for_async(lambda: scm.registrations)
        scm.send(
            _pipeline(p1, [dn.uuid, OTHER_A, OTHER_B], dn.uuid),
            _pipeline(p2, [OTHER_A, dn.uuid, OTHER_B], OTHER_A),
            _pipeline(p3, [dn.uuid], None),
        )
        dn.scm_connections.trigger_heartbeat()  # delivers the commands; the reports must follow at once
        hb = await wait_for_beat(scm, lambda hb: _reports(hb) and len(hb.pipeline_reports) == 3, timeout=5)
        assert _reports(hb) == {p1: True, p2: False, p3: True}  # promptly, not after 30 s
        doc = json.loads((tmp_path / "meta" / "pipelines.json").read_text())
        assert doc[p1]["members"] == [dn.uuid, OTHER_A, OTHER_B]
        scm.send(ClosePipelineCommand(pipeline_id=p2))
        dn.scm_connections.trigger_heartbeat()
        await wait_for_async(lambda: p2 not in dn.pipelines)
    async with running(conf) as dn:  # membership survives a restart, as Ratis groups do
        await wait_for_async(lambda: len(scm.registrations) == 2)
        assert {r.pipeline_id: r.is_leader for r in scm.registrations[1].pipeline_reports} == {
            p1: True,
            p3: True,
        }


# ---------------------------------------------------------------------- closeContainer
@async_test
async def test_close_container_matrix(tmp_path: Path, scm: FakeScm) -> None:
    pid = "11111111-0000-4000-8000-000000000009"  # led by this datanode alone
    followed = "11111111-0000-4000-8000-00000000000a"  # led by another datanode
    async with running(dn_conf(tmp_path, scm.address)) as dn:
        await _started(dn, scm)
        scm.send(
            _pipeline(pid, [dn.uuid], dn.uuid), _pipeline(followed, [dn.uuid, OTHER_A, OTHER_B], OTHER_A)
        )
        await wait_for_async(lambda: pid in dn.pipelines and followed in dn.pipelines)
        await _create(dn, 1, pipeline_id=pid)  # the pipeline its close names (SCM's record of it)
        for cid in (2, 3, 6, 8):
            await _create(dn, cid)
        await _create(dn, 4, ReplicaState.QUASI_CLOSED)
        await _create(dn, 5, ReplicaState.QUASI_CLOSED)
        await _create(dn, 7, ReplicaState.CLOSED)
        since = await _reported(scm, 7, ReplicaState.CLOSED)
        scm.send(
            _close(1, pid),  # the pipeline's leader: closes through the pipeline log
            _close(8, followed),  # a follower: CLOSING until the leader's close entry arrives
            _close(2, "11111111-0000-4000-8000-0000000000ff"),  # pipeline gone: quasi-closes
            _close(3, "11111111-0000-4000-8000-0000000000ff", force=True),  # forced: closes
            _close(4, None, force=True),  # QUASI_CLOSED + force: closes
            _close(5, None),  # QUASI_CLOSED without force: stays
            _close(7, pid, force=True),  # CLOSED: nothing
            _close(99, pid),  # missing: nothing
        )
        expected = {
            1: ReplicaState.CLOSED,
            2: ReplicaState.QUASI_CLOSED,
            3: ReplicaState.CLOSED,
            4: ReplicaState.CLOSED,
            5: ReplicaState.QUASI_CLOSED,
            6: ReplicaState.OPEN,
            7: ReplicaState.CLOSED,
            8: ReplicaState.CLOSING,
        }
        await wait_for_async(
            lambda: {c.container_id: c.state for c in dn.containers} == expected, what="states"
        )
        reported = {
            1: [ReplicaState.CLOSING, ReplicaState.CLOSED],
            2: [ReplicaState.CLOSING, ReplicaState.QUASI_CLOSED],
            3: [ReplicaState.CLOSING, ReplicaState.CLOSED],
            4: [ReplicaState.CLOSED],
            8: [ReplicaState.CLOSING],
        }
        await wait_for_async(lambda: _icr_states(scm, since) == reported, what="incremental reports")


def _icr_states(scm: FakeScm, since: float) -> dict[int, list[ReplicaState]]:
    states: dict[int, list[ReplicaState]] = {}
    for hb in scm.beats(since):
        for r in hb.incremental_container_reports:
            states.setdefault(r.container_id, []).append(r.state)
    return states


# ---------------------------------------------------------------------- deleteBlocks
@async_test
async def test_delete_blocks_acks_each_transaction(tmp_path: Path, scm: FakeScm) -> None:
    async with running(dn_conf(tmp_path, scm.address)) as dn:
        await _started(dn, scm)
        closed = await _create(dn, 1)
        await asyncio.to_thread(put_block, closed, 1, b"a" * 2000, 1)
        await asyncio.to_thread(put_block, closed, 2, b"b" * 2000, 2)
        await asyncio.to_thread(lambda: (closed.mark_closing(), closed.close()))
        await _create(dn, 2)  # OPEN
        command = DeleteBlocksCommand(
            transactions=(
                DeletedBlocksTransaction(10, 1, (1,)),
                DeletedBlocksTransaction(11, 2, (1,)),  # OPEN: not applied
                DeletedBlocksTransaction(12, 77, (1,)),  # not here: nothing to delete
                DeletedBlocksTransaction(10, 1, (1,)),  # a resent transaction
            )
        )
        scm.send(command)
        hb = await wait_for_beat(
            scm, lambda hb: any(s.status is CommandStatus.EXECUTED for s in hb.command_status_reports)
        )
        [status] = hb.command_status_reports
        assert status.command_id == command.id and status.type is T.deleteBlocksCommand
        assert status.block_deletion_results == (
            DeleteBlockTransactionResult(10, 1, True),
            DeleteBlockTransactionResult(11, 2, False),
            DeleteBlockTransactionResult(12, 77, True),
            DeleteBlockTransactionResult(10, 1, True),
        )
        assert closed.key_count == 1 and [b.block_id.local_id for b in closed.list_blocks()] == [2]


@async_test
async def test_delete_blocks_beyond_the_queue_limit_fail(tmp_path: Path, scm: FakeScm) -> None:
    conf = dn_conf(tmp_path, scm.address, **{"hdds.datanode.block.delete.queue.limit": "2"})
    async with running(conf) as dn:
        await _started(dn, scm)
        commands = [
            DeleteBlocksCommand(transactions=(DeletedBlocksTransaction(i, 5, (1,)),)) for i in range(1, 6)
        ]
        scm.send(*commands)
        await wait_for_async(lambda: len(_final_statuses(scm)) == 5, what="five final statuses")
        statuses = _final_statuses(scm)
        assert [statuses[c.id] for c in commands] == [CommandStatus.EXECUTED] * 3 + [CommandStatus.FAILED] * 2


def _final_statuses(scm: FakeScm) -> dict[int, CommandStatus]:
    return {
        s.command_id: s.status
        for hb in scm.beats()
        for s in hb.command_status_reports
        if s.status is not CommandStatus.PENDING
    }


# ---------------------------------------------------------------------- deleteContainer
@async_test
async def test_delete_container(tmp_path: Path, scm: FakeScm) -> None:
    async with running(dn_conf(tmp_path, scm.address)) as dn:
        await _started(dn, scm)
        await _create(dn, 1, ReplicaState.CLOSED)
        full = await _create(dn, 2)
        await asyncio.to_thread(put_block, full, 1, b"x" * 100, 1)
        await asyncio.to_thread(lambda: (full.mark_closing(), full.close()))
        await _create(dn, 3)
        since = await _reported(scm, 3, ReplicaState.OPEN)
        scm.send(
            DeleteContainerCommand(container_id=1, force=False),
            DeleteContainerCommand(container_id=2, force=False),  # not empty: refused
            DeleteContainerCommand(container_id=3, force=True),  # OPEN, forced
            DeleteContainerCommand(container_id=4, force=True),  # not here
        )
        await wait_for_async(lambda: sorted(c.container_id for c in dn.containers) == [2], what="deletions")
        await wait_for_async(lambda: _icr_states(scm, since).get(3))
        icrs = _icr_states(scm, since)
        assert icrs == {1: [ReplicaState.DELETED], 3: [ReplicaState.DELETED]}
        assert full.directory.exists()  # the refused one keeps its data


# ---------------------------------------------------------------------- setNodeOperationalState
@async_test
async def test_operational_state_is_persisted_reported_and_scales_replication(
    tmp_path: Path, scm: FakeScm
) -> None:
    conf = dn_conf(tmp_path, scm.address)
    async with running(conf) as dn:
        await _started(dn, scm)
        assert dn.queue.replication_workers == 10
        expiry = int(time.time()) + 3600
        scm.send(
            SetNodeOperationalStateCommand(state=NodeOperationalState.IN_MAINTENANCE, expiry_epoch_s=expiry)
        )
        hb = await wait_for_beat(scm, lambda hb: hb.persisted_op_state is NodeOperationalState.IN_MAINTENANCE)
        assert hb.datanode.persisted_op_state_expiry == expiry
        await wait_for_async(lambda: dn.queue.replication_workers == 20)
    doc = json.loads((tmp_path / "meta" / "datanode.id").read_text())
    assert (doc["persistedOpState"], doc["persistedOpStateExpiry"]) == ("IN_MAINTENANCE", expiry)
    async with running(conf) as dn:
        await wait_for_async(lambda: len(scm.registrations) == 2)
        assert scm.registrations[1].datanode.persisted_op_state is NodeOperationalState.IN_MAINTENANCE
        assert dn.queue.replication_workers == 20
        scm.send(SetNodeOperationalStateCommand(state=NodeOperationalState.IN_SERVICE, expiry_epoch_s=0))
        await wait_for_beat(scm, lambda hb: hb.persisted_op_state is NodeOperationalState.IN_SERVICE)
        await wait_for_async(lambda: dn.queue.replication_workers == 10)


# ---------------------------------------------------------------------- deadlines and terms
@async_test
async def test_expired_and_old_term_commands_are_dropped(tmp_path: Path, scm: FakeScm) -> None:
    async with running(dn_conf(tmp_path, scm.address)) as dn:
        await _started(dn, scm)
        for cid in (1, 2, 3):
            await _create(dn, cid)
        past = int(time.time() * 1000) - 1000
        scm.send(_close(1, force=True, deadline_epoch_ms=past), _close(2, force=True, term=7))
        await wait_for_async(lambda: dn.containers.get(2).state is ReplicaState.CLOSED)
        scm.send(_close(3, force=True, term=6))  # SCM's term is 7 now: a stale leader's command
        count = len(scm.beats())
        await wait_for_async(lambda: len(scm.beats()) > count + 2)
        assert dn.containers.get(1).state is ReplicaState.OPEN
        assert dn.containers.get(3).state is ReplicaState.OPEN


# ---------------------------------------------------------------------- replicateContainer
@async_test
async def test_replicate_pushes_to_the_targets_replication_port(tmp_path: Path, scm: FakeScm) -> None:
    calls: list[tuple[int, HostPort, int, float]] = []
    gate = asyncio.Event()

    async def push(containers: Any, cid: int, target: HostPort, executor: Any, replica_index: int = 0,
                   timeout_s: float = 600) -> int:  # fmt: skip
        calls.append((cid, target, replica_index, timeout_s))
        await gate.wait()
        return 1234

    target = DatanodeDetails(OTHER_A, "dn-a", "127.0.0.9", (("REPLICATION", 4321), ("STANDALONE", 1)))
    conf = dn_conf(tmp_path, scm.address, **{"hdds.datanode.replication.streams.limit": "2"})
    async with running(conf, push=push) as dn:
        await _started(dn, scm)
        deadline = int(time.time() * 1000) + 60_000
        scm.send(
            *(
                ReplicateContainerCommand(
                    container_id=cid,
                    target=target,
                    replica_index=0,
                    priority=ReplicationCommandPriority.NORMAL,
                    deadline_epoch_ms=deadline,
                )
                for cid in (1, 2, 3)
            )
        )
        hb = await wait_for_beat(
            scm, lambda hb: hb.command_queue_report.get(T.replicateContainerCommand) == 3
        )
        assert hb.command_queue_report[T.deleteBlocksCommand] == 0
        assert [(c, t) for c, t, _, _ in calls] == [
            (1, HostPort("127.0.0.9", 4321)),
            (2, HostPort("127.0.0.9", 4321)),
        ]
        assert 50 < calls[0][3] <= 60
        gate.set()
        await wait_for_async(lambda: len(calls) == 3)
        await wait_for_beat(scm, lambda hb: hb.command_queue_report.get(T.replicateContainerCommand) == 0)


# ---------------------------------------------------------------------- small ones
@async_test
async def test_refresh_volume_usage_sends_a_node_report(tmp_path: Path, scm: FakeScm) -> None:
    async with running(dn_conf(tmp_path, scm.address)) as dn:
        await _started(dn, scm)
        scm.send(RefreshVolumeUsageCommand(), FinalizeNewLayoutVersionCommand())
        since = time.monotonic()
        hb = await wait_for_beat(scm, lambda hb: hb.node_report is not None, since)
        assert len(hb.node_report.storage) == 2
        assert dn.registered


@async_test
async def test_losing_a_pipelines_container_with_a_volume_fails_the_pipeline(
    tmp_path: Path, scm: FakeScm
) -> None:
    """The pipeline's later writes to that container could never be on this replica: SCM is asked to
    close the pipeline at once, so the other replicas close instead of taking writes alone."""
    pid, other = "11111111-0000-4000-8000-00000000000c", "11111111-0000-4000-8000-00000000000d"
    conf = dn_conf(tmp_path, scm.address, **{"hdds.node.report.interval": "200ms"})
    async with running(conf) as dn:
        await _started(dn, scm)
        scm.send(_pipeline(pid, [dn.uuid], dn.uuid), _pipeline(other, [dn.uuid], dn.uuid))
        await wait_for_async(lambda: pid in dn.groups and other in dn.groups, what="pipeline groups")
        first = await asyncio.to_thread(dn.containers.create, 1, dn.uuid, other)
        second = await asyncio.to_thread(dn.containers.create, 2, dn.uuid, pid)
        assert first.volume is not second.volume
        since = time.monotonic()
        doomed = second.volume.root
        shutil.move(doomed, tmp_path / "pulled-disk")
        doomed.write_text("a file where the disk was")
        hb = await wait_for_beat(scm, lambda hb: hb.pipeline_actions, since)
        assert [a.pipeline_id for a in hb.pipeline_actions] == [pid]
        assert "lost with a failed volume" in hb.pipeline_actions[0].reason
        assert 2 in dn.containers.missing and dn.groups.get(other) is not None
