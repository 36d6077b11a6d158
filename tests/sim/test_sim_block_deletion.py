"""Block deletion through the whole core (DeletedBlockLogImpl, SCMBlockDeletingService): deleteBlocks ->
transaction -> SCMBlockDeletingService -> deleteBlocksCommand to every replica -> EXECUTED ACKs -> purge."""

from __future__ import annotations

import pytest

from pyozone.hdds.exceptions import ResultCode, SCMException
from pyozone.hdds.ids import BlockID
from pyozone.hdds.states import LifeCycleState, NodeState, ReplicaState, SCMCommandType
from pyozone.scm.events import SCMEvent

DELETE = SCMCommandType.deleteBlocksCommand
OVERRIDES = {
    "ozone.scm.container.size": "10MB",
    "ozone.scm.block.size": "1MB",
    "ozone.scm.close.container.wait.duration": "10s",
    "hdds.scm.wait.time.after.safemode.exit": "3m",
    "hdds.scm.block.deleting.service.interval": "10s",
}

BUG_SEPARATE_LOG = (
    "BUG: pyozone/scm/block/manager.py BlockManager.__init__ does "
    "`deleted_block_log or DeletedBlockLog(...)`; DeletedBlockLog defines __len__, so the (empty) log "
    "StorageContainerManager passes in is falsy and BlockManager builds a second, private DeletedBlockLog. "
    "scm.blocks.delete_blocks() writes there, while SCMBlockDeletingService reads scm.deleted_blocks, whose "
    "in-memory tx-id index never sees the new transactions (until an SCM restart reloads the table): no "
    "deleteBlocksCommand is ever sent"
)


def _closed_container_with_blocks(c, sim, blocks: int = 3):
    """Writes blocks for one owner, closes their container and waits for 3 CLOSED replicas."""
    written = [c.write_block(sim.MB, owner="om") for _ in range(blocks)]
    cid = written[0].container_id
    mine = [b.block_id for b in written if b.container_id == cid]
    others = [b.block_id for b in written if b.container_id != cid]
    c.scm.events.fire(SCMEvent.CLOSE_CONTAINER, cid)
    assert c.run_until(
        lambda: (
            c.scm.containers.get(cid).state is LifeCycleState.CLOSED
            and [r.state for r in c.scm.containers.replicas(cid)] == [ReplicaState.CLOSED] * 3
        ),
        3 * sim.MINUTE,
    )
    return cid, mine, others


def _run_deletion_flow(c, sim, add_transactions) -> None:
    scm = c.scm
    exited = sim.leave_safe_mode(c)
    ready_at = exited + scm.settings.safe_mode.wait_after_exit_ms
    cid, mine, others = _closed_container_with_blocks(c, sim)
    open_cid = others[0].container_id if others else c.write_block(sim.MB, owner="other").container_id
    open_blocks = [b for b in others if b.container_id == open_cid] or []
    assert scm.containers.get(open_cid).state is LifeCycleState.OPEN
    replica_dns = {r.datanode for r in scm.containers.replicas(cid)}
    assert c.clock.now_ms() < ready_at, "setup took longer than the post-safe-mode wait"

    (closed_tx,) = add_transactions({cid: [b.local_id for b in mine]})
    (open_tx,) = add_transactions({open_cid: [b.local_id for b in open_blocks] or [999_999]})
    assert set(scm.deleted_blocks.transaction_ids()) == {closed_tx, open_tx}

    # Nothing is sent before the service may run (out of safe mode for
    # hdds.scm.wait.time.after.safemode.exit).
    sim.advance_to(c, ready_at - sim.SECOND)
    assert all(c.datanodes[dn].executed.get(DELETE, 0) == 0 for dn in c.datanodes)

    interval = scm.settings.block_deletion.interval_ms

    def purged() -> bool:
        records = [
            tx for dn in c.datanodes for r in scm.deleted_blocks.command_records(dn) for tx in r.tx_ids
        ]
        assert open_tx not in records, "a transaction of an OPEN container was selected"
        return closed_tx not in scm.deleted_blocks.transaction_ids()

    assert c.run_until(purged, interval + 2 * sim.HEARTBEAT + 2 * sim.SECOND)
    # One command reached each replica datanode and no other; their EXECUTED ACKs purged the transaction.
    for dn in c.datanodes:
        assert c.datanodes[dn].executed.get(DELETE, 0) == (1 if dn in replica_dns else 0), dn
        assert scm.deleted_blocks.command_records(dn) == ()
    assert scm.deleted_blocks.get(closed_tx) is None

    # The OPEN container's transaction stays in the log and is never sent.
    c.advance(3 * interval)
    assert scm.deleted_blocks.transaction_ids() == [open_tx]
    assert scm.deleted_blocks.retry_count(open_tx) == 0
    assert sum(c.datanodes[dn].executed.get(DELETE, 0) for dn in c.datanodes) == len(replica_dns)


def test_block_manager_and_deleting_service_share_one_deleted_block_log(sim):
    c = sim.cluster(3)
    assert c.scm.blocks.deleted_block_log is c.scm.deleted_blocks


def test_delete_blocks_reach_every_replica_and_are_purged(sim):
    c = sim.cluster(5, OVERRIDES)

    def through_block_manager(container_blocks):
        # What OM does: deleteBlocks with block ids; one transaction per container (BlockManagerImpl).
        ids = [BlockID(cid, lid) for cid, lids in container_blocks.items() for lid in lids]
        return c.scm.blocks.delete_blocks(ids)

    _run_deletion_flow(c, sim, through_block_manager)


def test_deletion_transactions_are_sent_acked_and_purged_by_the_service(sim):
    """The same flow, adding transactions to the log the service reads (works around the bug above)."""
    c = sim.cluster(5, OVERRIDES)
    _run_deletion_flow(
        c, sim, lambda container_blocks: c.scm.deleted_blocks.add_transactions(container_blocks)
    )


def test_delete_blocks_refused_in_safe_mode(sim):
    c = sim.cluster(5, OVERRIDES)
    c.advance(5 * sim.SECOND)
    assert c.scm.safe_mode.in_safe_mode()
    with pytest.raises(SCMException) as e:
        c.scm.blocks.delete_blocks([BlockID(1, 1)])
    assert e.value.code is ResultCode.SAFE_MODE_EXCEPTION
    assert len(c.scm.deleted_blocks) == 0


def test_transaction_of_under_replicated_container_is_not_sent(sim):
    c = sim.cluster(
        6,
        {
            **OVERRIDES,
            "hdds.scm.wait.time.after.safemode.exit": "30s",
            "ozone.scm.stale.node.interval": "90s",
            "ozone.scm.dead.node.interval": "180s",
        },
    )
    scm = c.scm
    sim.leave_safe_mode(c)
    cid, mine, _ = _closed_container_with_blocks(c, sim, blocks=1)
    victim = scm.containers.replicas(cid)[0].datanode
    scm.replication.stop()  # it would repair the container at once, ending the case under test
    c.kill(victim)
    assert c.run_until(lambda: sim.health(c, victim) is NodeState.DEAD, 5 * sim.MINUTE)
    assert len(scm.containers.replicas(cid)) == 2

    (tx,) = scm.deleted_blocks.add_transactions({cid: [b.local_id for b in mine]})
    c.advance(2 * sim.MINUTE)
    assert all(c.datanodes[dn].executed.get(DELETE, 0) == 0 for dn in c.datanodes)
    assert scm.deleted_blocks.transaction_ids() == [tx]
    # Repaired, the container is HEALTHY again and its transaction goes out and is purged.
    scm.replication.start()
    assert c.run_until(lambda: scm.deleted_blocks.transaction_ids() == [], 15 * sim.MINUTE)
