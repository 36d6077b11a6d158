"""SCMBlockDeletingService: eligible datanodes, one deleteBlocks command per datanode, and a full cycle."""

from __future__ import annotations

from pyozone.hdds.commands import DeleteBlocksCommand, DeletedBlocksTransaction
from pyozone.hdds.container import ContainerReplica
from pyozone.hdds.messages import CommandStatusReport, DeleteBlockTransactionResult
from pyozone.hdds.states import (
    CommandStatus,
    LifeCycleEvent,
    NodeOperationalState,
    ReplicaState,
    SCMCommandType,
)
from pyozone.scm.block.command_status import CmdStatus
from pyozone.scm.block.deleted_block_log import DeletedBlockLog
from pyozone.scm.block.deleting_service import SCMBlockDeletingService
from pyozone.scm.ha.context import ScmContext
from tests.unit.scm.container.scm_fakes import Harness, make_harness

DELETE_BLOCKS = SCMCommandType.deleteBlocksCommand


def setup(
    datanodes: int = 3, **conf: str
) -> tuple[Harness, list[str], DeletedBlockLog, SCMBlockDeletingService]:
    h = make_harness(conf)
    dns = h.register(datanodes)
    log = DeletedBlockLog(h.settings.block_deletion, h.clock, h.store, h.containers, h.sequence_ids)
    return h, dns, log, SCMBlockDeletingService(h.settings.block_deletion, log, h.nodes)


def closed_container(h: Harness, dns: list[str]) -> int:
    cid = h.containers.allocate_container(h.pipelines.add(tuple(dns)), "om").container_id
    h.containers.update_state(cid, LifeCycleEvent.FINALIZE)
    h.containers.update_state(cid, LifeCycleEvent.CLOSE)
    for dn in dns:
        h.containers.update_replica(ContainerReplica(cid, dn, ReplicaState.CLOSED, dn, 1))
    return cid


def queued(h: Harness, dn: str):
    return [c for c in h.commands(dn) if c.type is DELETE_BLOCKS]


def test_eligible_datanodes_are_in_service_healthy_with_room_in_both_queues() -> None:
    h, dns, _, service = setup(datanodes=6)
    h.nodes.set_operational_state(dns[1], NodeOperationalState.DECOMMISSIONING)
    h.clock.advance(6 * 60_000)
    for dn in dns[:5]:
        h.nodes.process_heartbeat(dn)
    h.nodes.check_health()  # dns[5] missed its heartbeats: STALE
    h.nodes.process_heartbeat(dns[2], command_queue_report={DELETE_BLOCKS: 5})  # its own queue is full
    h.nodes.process_heartbeat(dns[3], command_queue_report={DELETE_BLOCKS: 4})
    for _ in range(2):  # SCM already holds two for dns[4]
        h.nodes.add_datanode_command(dns[4], DeleteBlocksCommand(transactions=()))
    assert service.eligible_datanodes() == {dns[0], dns[3]}


def test_a_run_queues_one_command_per_datanode_with_its_transactions() -> None:
    h, dns, log, service = setup()
    h.nodes.context = ScmContext.ha_leader(3)
    first, second = closed_container(h, dns), closed_container(h, dns)
    tx_ids = log.add_transactions({first: [11, 12], second: [21]})
    assert service.run() == 3
    for dn in dns:
        (command,) = queued(h, dn)
        assert command.term == 3
        assert command.transactions == (
            DeletedBlocksTransaction(tx_ids[0], first, (11, 12)),
            DeletedBlocksTransaction(tx_ids[1], second, (21,)),
        )
        assert [(r.command_id, r.tx_ids, r.status) for r in log.command_records(dn)] == [
            (command.id, frozenset(tx_ids), CmdStatus.TO_BE_SENT)
        ]
    assert [log.retry_count(tx) for tx in tx_ids] == [1, 1]
    assert service.run() == 0  # everything is outstanding on every datanode


def test_nothing_to_do_queues_nothing() -> None:
    h, dns, _, service = setup()
    assert service.run() == 0 and all(queued(h, dn) == [] for dn in dns)


def test_run_is_skipped_while_too_many_transactions_await_acks() -> None:
    h, dns, log, service = setup(**{"hdds.scm.block.deletion.txn.dn.commit.map.limit": "1"})
    cid = closed_container(h, dns)
    log.add_transactions({cid: [1]})
    assert service.run() == 3
    log.add_transactions({cid: [2]})
    assert service.run() == 0  # one transaction in the commit map reaches the limit


def test_full_cycle_from_run_to_purge() -> None:
    h, dns, log, service = setup()
    cid = closed_container(h, dns)
    (tx,) = log.add_transactions({cid: [1, 2, 3]})
    service.run()
    for dn in dns:
        for command in h.nodes.process_heartbeat(dn):  # the heartbeat response carries it...
            log.on_sent(dn, command)  # ...and the SCM core tells the log
        assert [r.status for r in log.command_records(dn)] == [CmdStatus.SENT]
    assert service.run() == 0
    for dn in dns:
        (record,) = log.command_records(dn)
        ack = CommandStatusReport(
            record.command_id,
            DELETE_BLOCKS,
            CommandStatus.EXECUTED,
            (DeleteBlockTransactionResult(tx, cid, True),),
        )
        log.process_command_status(dn, [ack])
        assert log.command_records(dn) == ()
    assert len(log) == 0
