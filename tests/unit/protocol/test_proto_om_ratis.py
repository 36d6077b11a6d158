"""OM's Raft entries (protocol/om_ratis.py): the ops in their order with the calls and answers, and damaged
bytes refused."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyozone.hdds.errors import ProtocolError
from pyozone.proto import OmClientProtocol_pb2 as om_pb
from pyozone.proto import OmRatis_pb2 as pb
from pyozone.protocol.om_ratis import CallAnswer, entry_from_bytes, entry_to_bytes

ops_strategy = st.lists(
    st.tuples(
        st.sampled_from(["keyTable", "openKeyTable", "meta"]),
        st.text(min_size=1, max_size=20),
        st.one_of(st.none(), st.binary(max_size=30)),
    ),
    max_size=12,
)


@given(ops_strategy)
def test_the_ops_come_back_in_their_order_with_deletions(ops: list) -> None:  # type: ignore[type-arg]
    assert list(entry_from_bytes(entry_to_bytes(ops, [])).ops) == ops


def test_the_answers_of_every_call_of_the_entry_come_back() -> None:
    response = om_pb.CreateVolumeResponse(volume=om_pb.VolumeInfo(volume="v", owner="me"))
    answers = [
        CallAnswer("client-a", 7, "createVolume", response.SerializeToString()),
        CallAnswer("client-b", 1, "deleteKey", b"", "NOT_FOUND", "KEY_NOT_FOUND: no key"),
    ]
    entry = entry_from_bytes(entry_to_bytes([("volumeTable", "/v", b"x")], answers))
    assert list(entry.answers) == answers
    assert om_pb.CreateVolumeResponse.FromString(entry.answers[0].response) == response


def test_damaged_entries_are_refused() -> None:
    with pytest.raises(ProtocolError, match="not an OM Raft entry"):
        entry_from_bytes(b"\xff\xff\xff")
    nameless = pb.OmReplicatedRequest()
    nameless.persistDb.tableUpdates.add(tableName="").records.add(key=b"k", value=b"v")
    with pytest.raises(ProtocolError, match="names no table"):
        entry_from_bytes(nameless.SerializeToString())
