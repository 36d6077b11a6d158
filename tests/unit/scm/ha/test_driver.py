"""ScmRaftDriver's entry format and packing (design 2.3): transactions whole, in epoch order, within
the entry size limit."""

from __future__ import annotations

from pyozone.scm.ha.driver import decode, encode, pack
from pyozone.scm.store.metadata_store import Transaction


def test_an_entry_carries_its_records_and_last_epoch() -> None:
    ops = (("containers", b"\x00\x01", b'{"a": 1}'), ("pipelines", b"p-1", None), ("meta", b"", b""))
    records = decode(encode(9, ops))
    assert records.epoch == 9 and records.ops == ops


def test_transactions_are_packed_whole_in_epoch_order_within_the_limit() -> None:
    transactions = [Transaction(e, (("containers", b"k%d" % e, b"x" * 100),)) for e in range(1, 8)]
    payloads = pack(transactions, entry_byte_limit=300)
    decoded = [decode(p) for p in payloads]
    assert len(payloads) > 1
    assert [op for d in decoded for op in d.ops] == [t.ops[0] for t in transactions]
    assert decoded[-1].epoch == 7 and [d.epoch for d in decoded] == sorted(d.epoch for d in decoded)
    assert all(len(p) <= 300 for p in payloads)
    assert pack([]) == []
