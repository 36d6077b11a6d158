"""SCM's Raft entries (protocol/scm_ratis.py, ScmRatis.proto): the epoch and the ops in their order come
back, an op's bytes are bounded as the driver counts them, and damaged bytes are refused."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyozone.hdds.errors import ProtocolError
from pyozone.proto import OmRatis_pb2 as om_pb
from pyozone.proto import ScmRatis_pb2 as pb
from pyozone.protocol.scm_ratis import HEAD_BYTES, ScmEntryCodec, entry_from_bytes, entry_to_bytes, op_bytes
from pyozone.scm.store.metadata_store import REPLICATED_TABLES

ops_strategy = st.lists(
    st.tuples(
        st.sampled_from(["containers", "pipelines", "deletedBlocks", "sequenceId", "ümlaut"]),
        st.binary(max_size=20),
        st.one_of(st.none(), st.binary(max_size=300)),
    ),
    max_size=12,
)
epochs = st.integers(min_value=1, max_value=2**64 - 1)


@given(epochs, ops_strategy)
def test_the_epoch_and_the_ops_come_back_in_their_order_with_deletions(epoch: int, ops: list) -> None:  # type: ignore[type-arg]
    entry = entry_from_bytes(entry_to_bytes(epoch, ops))
    assert entry.epoch == epoch and list(entry.ops) == ops


@given(epochs, ops_strategy)
def test_an_entry_is_no_larger_than_the_bound_the_driver_counts(epoch: int, ops: list) -> None:  # type: ignore[type-arg]
    assert len(entry_to_bytes(epoch, ops)) <= HEAD_BYTES + sum(op_bytes(op) for op in ops)


def _entry(table: str = "containers", **record: object) -> bytes:
    message = pb.ScmRatisEntry(epoch=3)
    message.ops.add(tableName=table).records.add(**record)
    return message.SerializeToString()


def test_truncated_bytes_are_refused() -> None:
    whole = entry_to_bytes(5, [("containers", b"\x00\x01", b'{"state": "OPEN"}')])
    for cut in range(3, len(whole)):
        with pytest.raises(ProtocolError, match="not an SCM Raft entry"):
            entry_from_bytes(whole[:cut])


def test_an_entry_of_another_type_is_refused() -> None:
    om = om_pb.OmReplicatedRequest()
    om.persistDb.tableUpdates.add(tableName="keyTable").records.add(key=b"/v/b/k", value=b"x")
    with pytest.raises(ProtocolError, match="carries no epoch"):
        entry_from_bytes(om.SerializeToString())
    with pytest.raises(ProtocolError, match="carries no epoch"):
        entry_from_bytes(b"")
    # a field of the wrong wire type: `ops` as a varint
    with pytest.raises(ProtocolError, match="not an SCM Raft entry"):
        entry_from_bytes(b"\x08\x03\x12\x07\x0a\x01\xff")


def test_unknown_fields_are_skipped() -> None:
    unknown = b"\xf8\x01\x07"  # field 31, varint 7
    entry = entry_from_bytes(_entry(key=b"k", value=b"v") + unknown)
    assert entry.epoch == 3 and entry.ops == (("containers", b"k", b"v"),)


def test_an_op_without_a_column_family_is_refused_both_ways() -> None:
    with pytest.raises(ProtocolError, match="names no column family"):
        entry_from_bytes(_entry(table="", key=b"k", value=b"v"))
    with pytest.raises(ProtocolError, match="names no column family"):
        entry_to_bytes(1, [("", b"k", b"v")])


def test_a_deleted_record_with_a_value_is_refused() -> None:
    with pytest.raises(ProtocolError, match=r"ops\[0\].records\[0\]: a deleted record carries a value"):
        entry_from_bytes(_entry(key=b"k", value=b"v", deleted=True))


def test_an_epoch_below_one_is_not_encoded() -> None:
    with pytest.raises(ProtocolError, match="epochs count from 1"):
        entry_to_bytes(0, [("containers", b"k", b"v")])


def test_the_codec_refuses_a_column_family_that_is_not_one_of_scm_db_s_replicated_tables() -> None:
    """R19 D6: an entry naming a table scm.db does not have, or scmTransactionInfos (each SCM writes its
    own as it applies), is refused as a whole at decode, before anything of it is applied."""
    codec = ScmEntryCodec(REPLICATED_TABLES)
    good = entry_to_bytes(3, [("containers", b"k", b"v"), ("sequenceId", b"s", b"1")])
    assert codec.decode(good).ops == (("containers", b"k", b"v"), ("sequenceId", b"s", b"1"))
    unknown = entry_to_bytes(3, [("containers", b"k", b"v"), ("noSuchTable", b"k", b"v")])
    with pytest.raises(ProtocolError, match=r"ops\[1\].tableName: 'noSuchTable' is not one of scm.db's"):
        codec.decode(unknown)
    info = entry_to_bytes(3, [("scmTransactionInfos", b"#TRANSACTIONINFO", b'"9#999999"')])
    with pytest.raises(ProtocolError, match=r"'scmTransactionInfos' is not one of scm.db's replicated"):
        codec.decode(info)
