"""ScmRaftDriver's packing (design 2.3): transactions whole, in epoch order, within the entry size limit,
through the codec its glue gives it (ScmRatis.proto's)."""

from __future__ import annotations

from pyozone.protocol.scm_ratis import ScmEntryCodec
from pyozone.scm.ha.driver import pack
from pyozone.scm.store.metadata_store import Transaction

CODEC = ScmEntryCodec()


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
