"""DeletedBlockLog: which transactions go where (getTransactions), command status
(SCMDeleteBlocksCommandStatusManager) and ACKs (commitTransactions)."""

from __future__ import annotations

import pytest

from pyozone.hdds.commands import CloseContainerCommand, DeleteBlocksCommand, SCMCommand
from pyozone.hdds.container import ContainerReplica
from pyozone.hdds.ids import RATIS_THREE
from pyozone.hdds.messages import CommandStatusReport, DeleteBlockTransactionResult
from pyozone.hdds.states import CommandStatus, LifeCycleEvent, LifeCycleState, ReplicaState, SCMCommandType
from pyozone.scm.block.command_status import CmdStatus
from pyozone.scm.block.deleted_block_log import DeletedBlockLog
from tests.unit.scm.container.scm_fakes import Harness, make_harness

E = LifeCycleEvent
TIMEOUT_MS = 300_000


class World:
    def __init__(self, datanodes: int = 3, **conf: str) -> None:
        self.h: Harness = make_harness(conf)
        self.dns = self.h.register(datanodes)
        self.healthy: set[int] = set()
        self.unhealthy: set[int] = set()
        self.log = self.new_log()

    def new_log(self) -> DeletedBlockLog:
        h = self.h
        return DeletedBlockLog(
            h.settings.block_deletion,
            h.clock,
            h.store,
            h.containers,
            h.sequence_ids,
            lambda cid: cid not in self.unhealthy,
        )

    def container(self, dn_indexes=(0, 1, 2), state=LifeCycleState.CLOSED) -> int:
        dns = tuple(self.dns[i] for i in dn_indexes)
        cid = self.h.containers.allocate_container(self.h.pipelines.add(dns), "om").container_id
        path = {
            LifeCycleState.OPEN: [],
            LifeCycleState.CLOSING: [E.FINALIZE],
            LifeCycleState.CLOSED: [E.FINALIZE, E.CLOSE],
            LifeCycleState.DELETED: [E.FINALIZE, E.CLOSE, E.DELETE, E.CLEANUP],
        }[state]
        for event in path:
            self.h.containers.update_state(cid, event)
        for dn in dns:
            self.h.containers.update_replica(ContainerReplica(cid, dn, ReplicaState.CLOSED, dn, 1))
        return cid

    def select(self, limit: int = 1000, dn_indexes=None) -> dict[str, list[int]]:
        dn_set = set(self.dns) if dn_indexes is None else {self.dns[i] for i in dn_indexes}
        chosen = self.log.get_transactions(limit, dn_set)
        return {dn: [tx.tx_id for tx in txs] for dn, txs in chosen.by_datanode.items()}

    def send(self, dn_index: int, tx_ids: list[int]) -> SCMCommand:
        """What the service does for one datanode, followed by the heartbeat carrying the command."""
        command = DeleteBlocksCommand(transactions=())
        self.log.record_transaction_created(self.dns[dn_index], command.id, tx_ids)
        self.log.on_sent(self.dns[dn_index], command)
        return command

    def report(
        self, dn_index: int, command: SCMCommand, status: CommandStatus, acks=(), success=True
    ) -> None:
        results = tuple(
            DeleteBlockTransactionResult(
                tx, self.log.get(tx).container_id if self.log.get(tx) else 0, success
            )
            for tx in acks
        )
        report = CommandStatusReport(command.id, SCMCommandType.deleteBlocksCommand, status, results)
        self.log.process_command_status(self.dns[dn_index], [report])

    def statuses(self, dn_index: int) -> list[CmdStatus]:
        return [r.status for r in self.log.command_records(self.dns[dn_index])]


# ---------------------------------------------------------------------- selection
def test_a_transaction_goes_to_every_replica_datanode() -> None:
    w = World()
    cid = w.container()
    (tx,) = w.log.add_transactions({cid: [1, 2, 3]})
    assert w.select() == {dn: [tx] for dn in w.dns}
    assert w.log.get_transactions(1000, set(w.dns)).blocks_added == 9


@pytest.mark.parametrize("state", [LifeCycleState.OPEN])
def test_open_containers_are_skipped_not_purged(state: LifeCycleState) -> None:
    w = World()
    (tx,) = w.log.add_transactions({w.container(state=state): [1]})
    assert w.select() == {} and w.log.transaction_ids() == [tx]


def test_closing_containers_are_eligible() -> None:
    w = World()
    (tx,) = w.log.add_transactions({w.container(state=LifeCycleState.CLOSING): [1]})
    assert w.select() == {dn: [tx] for dn in w.dns}


def test_transactions_of_deleted_or_unknown_containers_are_purged() -> None:
    w = World()
    live = w.container()
    deleted = w.container(state=LifeCycleState.DELETED)
    tx_live, tx_deleted, tx_unknown = w.log.add_transactions({live: [1], deleted: [2], 404: [3]})
    w.send(0, [tx_deleted])  # in-memory tracking of a purged tx goes too
    assert w.select() == {dn: [tx_live] for dn in w.dns}
    assert w.log.transaction_ids() == [tx_live] and w.log.get(tx_unknown) is None
    assert w.new_log().transaction_ids() == [tx_live]  # purged from the store as well


def test_skipped_unless_every_replica_datanode_is_eligible() -> None:
    w = World(datanodes=4)
    (tx,) = w.log.add_transactions({w.container((0, 1, 2)): [1]})
    assert w.select(dn_indexes=(0, 1, 3)) == {}
    assert w.select(dn_indexes=(0, 1, 2, 3)) == {dn: [tx] for dn in w.dns[:3]}


def test_skipped_while_the_replication_manager_finds_the_container_unhealthy() -> None:
    w = World()
    cid = w.container()
    (tx,) = w.log.add_transactions({cid: [1]})
    w.unhealthy.add(cid)
    assert w.select() == {}
    w.unhealthy.clear()
    assert w.select() == {dn: [tx] for dn in w.dns}


def test_per_datanode_cap_uses_the_distribution_factor() -> None:
    # 6 eligible datanodes, factor 1: 6 // 1 = 6, so each datanode takes at most 60 // 6 = 10 blocks.
    w = World(datanodes=6, **{"ozone.scm.block.deletion.per.dn.distribution.factor": "1"})
    a, b = w.container((0, 1, 2)), w.container((3, 4, 5))
    a_txs = [w.log.add_transactions({a: [1, 2]})[0] for _ in range(8)]
    b_txs = [w.log.add_transactions({b: [1, 2]})[0] for _ in range(8)]
    chosen = w.select(limit=60)
    assert chosen[w.dns[0]] == a_txs[:5] and chosen[w.dns[3]] == b_txs[:5]


def test_without_enough_datanodes_for_a_factor_the_cap_is_the_limit() -> None:
    w = World()  # 3 // 8 == 0
    cid = w.container()
    txs = [w.log.add_transactions({cid: [1, 2]})[0] for _ in range(8)]
    assert w.select(limit=1000)[w.dns[0]] == txs


def test_a_run_stops_once_the_block_limit_is_reached() -> None:
    w = World()
    cid = w.container()
    txs = [w.log.add_transactions({cid: [1, 2]})[0] for _ in range(5)]
    assert w.select(limit=12)[w.dns[0]] == txs[:2]  # 6 blocks per transaction over 3 datanodes


def test_the_scan_resumes_after_the_last_processed_transaction_and_wraps() -> None:
    w = World()
    cid = w.container()
    txs = [w.log.add_transactions({cid: [1]})[0] for _ in range(5)]
    runs = [w.select(limit=6)[w.dns[0]] for _ in range(4)]
    assert runs == [txs[0:2], txs[2:4], [txs[4], txs[0]], txs[1:3]]


def test_outstanding_commands_and_acks_make_duplicates() -> None:
    w = World()
    cid = w.container()
    (tx,) = w.log.add_transactions({cid: [1]})
    command = w.send(0, [tx])
    assert w.select() == {w.dns[1]: [tx], w.dns[2]: [tx]}  # dn0 has it in a SENT command
    w.report(0, command, CommandStatus.EXECUTED, acks=[tx])
    assert w.select() == {w.dns[1]: [tx], w.dns[2]: [tx]}  # dn0 ACKed it


# ---------------------------------------------------------------------- command status
def test_status_transitions() -> None:
    w = World()
    cid = w.container()
    (tx,) = w.log.add_transactions({cid: [1]})
    command = DeleteBlocksCommand(transactions=())
    w.log.record_transaction_created(w.dns[0], command.id, [tx])
    assert w.statuses(0) == [CmdStatus.TO_BE_SENT]
    w.log.on_sent(w.dns[0], CloseContainerCommand(container_id=1))  # other commands: no effect
    assert w.statuses(0) == [CmdStatus.TO_BE_SENT]
    w.log.on_sent(w.dns[0], command)
    assert w.statuses(0) == [CmdStatus.SENT]
    w.report(0, command, CommandStatus.PENDING)
    assert w.statuses(0) == [CmdStatus.SENT]
    w.report(0, command, CommandStatus.FAILED)
    assert w.statuses(0) == []


def test_a_report_for_a_command_never_sent_removes_it(caplog: pytest.LogCaptureFixture) -> None:
    w = World()
    (tx,) = w.log.add_transactions({w.container(): [1]})
    command = DeleteBlocksCommand(transactions=())
    w.log.record_transaction_created(w.dns[0], command.id, [tx])
    w.report(0, command, CommandStatus.EXECUTED)
    assert w.statuses(0) == [] and "never sent" in caplog.text


def test_sent_commands_without_update_for_300s_are_dropped_and_become_resendable() -> None:
    w = World()
    (tx,) = w.log.add_transactions({w.container(): [1]})
    w.send(0, [tx])
    w.h.clock.advance(100_000)
    pending = w.send(1, [tx])
    w.h.clock.advance(TIMEOUT_MS - 100_000)
    assert w.select() == {w.dns[2]: [tx]}  # exactly 300 s: not yet
    w.h.clock.advance(1)
    assert w.select() == {w.dns[0]: [tx], w.dns[2]: [tx]}
    w.report(1, pending, CommandStatus.PENDING)  # an update refreshes the record
    w.h.clock.advance(TIMEOUT_MS)
    assert w.dns[1] not in w.select()


def test_commands_never_sent_do_not_time_out() -> None:
    w = World()
    (tx,) = w.log.add_transactions({w.container(): [1]})
    w.log.record_transaction_created(w.dns[0], DeleteBlocksCommand(transactions=()).id, [tx])
    w.h.clock.advance(10 * TIMEOUT_MS)
    assert w.dns[0] not in w.select() and w.statuses(0) == [CmdStatus.TO_BE_SENT]


def test_a_dead_datanode_loses_its_command_records() -> None:
    w = World()
    (tx,) = w.log.add_transactions({w.container(): [1]})
    w.send(0, [tx])
    w.log.on_datanode_dead(w.dns[0])
    assert w.statuses(0) == [] and w.select()[w.dns[0]] == [tx]


# ---------------------------------------------------------------------- ACKs
def test_transaction_is_purged_only_when_every_replica_datanode_acked() -> None:
    w = World()
    (tx,) = w.log.add_transactions({w.container(): [1]})
    commands = [w.send(i, [tx]) for i in range(3)]
    w.report(0, commands[0], CommandStatus.EXECUTED, acks=[tx])
    w.report(1, commands[1], CommandStatus.EXECUTED, acks=[tx], success=False)  # failed: resent later
    assert w.log.transaction_ids() == [tx]
    w.report(2, commands[2], CommandStatus.EXECUTED, acks=[tx])
    assert w.log.transaction_ids() == [tx]
    again = w.send(1, [tx])
    w.report(1, again, CommandStatus.EXECUTED, acks=[tx])
    assert w.log.transaction_ids() == [] and w.log.commit_map_size == 0
    assert w.new_log().transaction_ids() == []


def test_fewer_replicas_than_required_never_purge() -> None:
    w = World()
    cid = w.container()
    w.h.containers.remove_replica(cid, w.dns[2])
    (tx,) = w.log.add_transactions({cid: [1]})
    for i in range(2):
        w.report(i, w.send(i, [tx]), CommandStatus.EXECUTED, acks=[tx])
    assert w.log.transaction_ids() == [tx]  # min(2 replicas, 2 ACKs) < 3 required


def test_a_new_replica_must_ack_too() -> None:
    w = World(datanodes=4)
    cid = w.container()
    (tx,) = w.log.add_transactions({cid: [1]})
    w.report(0, w.send(0, [tx]), CommandStatus.EXECUTED, acks=[tx])
    w.report(1, w.send(1, [tx]), CommandStatus.EXECUTED, acks=[tx])
    w.h.containers.update_replica(ContainerReplica(cid, w.dns[3], ReplicaState.CLOSED, w.dns[0], 1))
    w.report(2, w.send(2, [tx]), CommandStatus.EXECUTED, acks=[tx])
    assert w.log.transaction_ids() == [tx]
    w.report(3, w.send(3, [tx]), CommandStatus.EXECUTED, acks=[tx])
    assert w.log.transaction_ids() == []


def test_acks_without_a_commit_entry_are_stale_and_ignored() -> None:
    w = World()
    (tx,) = w.log.add_transactions({w.container(): [1]})
    command = DeleteBlocksCommand(transactions=())
    for i in range(3):
        w.report(i, command, CommandStatus.EXECUTED, acks=[tx])
    assert w.log.transaction_ids() == [tx] and w.log.commit_map_size == 0


def test_restart_keeps_transactions_and_forgets_in_memory_tracking() -> None:
    w = World()
    cid = w.container()
    txs = w.log.add_transactions({cid: [1, 2], w.container(): [3]})
    w.send(0, [txs[0]])
    w.log.increment_retry_count(txs)
    w.log = w.new_log()
    assert w.log.transaction_ids() == txs
    assert w.log.get(txs[0]).local_ids == (1, 2) and w.log.get(txs[0]).container_id == cid
    assert w.log.retry_count(txs[0]) == 0 and w.statuses(0) == []
    assert w.select()[w.dns[0]] == txs
    assert w.h.containers.get(cid).replication_config == RATIS_THREE
