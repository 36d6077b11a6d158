"""ScmRaftDriver's packing: transactions whole, in epoch order, within the entry size limit,
through the codec its glue gives it (ScmRatis.proto's); the step-up of a shell that applies its no-op
entries itself (the daemon's RaftMember)."""

from __future__ import annotations

from pyozone.hdds.clock import ManualClock
from pyozone.protocol.scm_ratis import ScmEntryCodec
from pyozone.scm.ha.context import ScmContext
from pyozone.scm.ha.driver import ScmRaftDriver, pack
from pyozone.scm.ha.replication import ScmReplication
from pyozone.scm.scm import StorageContainerManager
from pyozone.scm.settings import ScmSettings
from pyozone.scm.store.metadata_store import REPLICATED_TABLES, SCMMetadataStore, Transaction

CODEC = ScmEntryCodec(REPLICATED_TABLES)


def test_transactions_are_packed_whole_in_epoch_order_within_the_limit() -> None:
    transactions = [Transaction(e, (("containers", b"k%d" % e, b"x" * 100),)) for e in range(1, 8)]
    payloads = pack(transactions, CODEC, entry_byte_limit=300)
    decoded = [CODEC.decode(p) for p in payloads]
    assert len(payloads) > 1
    assert [op for d in decoded for op in d.ops] == [t.ops[0] for t in transactions]
    assert decoded[-1].epoch == 7 and [d.epoch for d in decoded] == sorted(d.epoch for d in decoded)
    assert all(len(p) <= 300 for p in payloads)
    assert pack([], CODEC) == []


def test_a_transaction_is_never_split_even_beyond_the_limit() -> None:
    big = Transaction(2, tuple(("deletedBlocks", b"%d" % i, b"y" * 50) for i in range(10)))
    payloads = pack([Transaction(1, (("containers", b"c", b"x"),)), big], CODEC, entry_byte_limit=100)
    assert [CODEC.decode(p).ops for p in payloads] == [(("containers", b"c", b"x"),), big.ops]


def _follower() -> ScmRaftDriver:
    core = StorageContainerManager(
        ScmSettings(), ManualClock(), SCMMetadataStore.in_memory(), context=ScmContext.ha_follower()
    )
    return ScmRaftDriver(ScmReplication(core), CODEC)


def test_a_shell_that_applies_its_own_noops_steps_the_leader_up_once_its_log_is_applied() -> None:
    driver = _follower()
    context = driver.context
    assert not driver.shell_applied(None, 3, 3)  # following: the applied index counts, nothing else
    assert not driver.shell_applied(2, 3, 4) and not context.is_leader()  # leads, its term's NOOP not applied
    assert driver.shell_applied(2, 4, 4)
    assert context.is_leader_ready() and context.known_term == 2 and driver.step_ups == 1
    assert not driver.shell_applied(2, 5, 5) and driver.step_ups == 1
