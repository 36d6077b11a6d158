"""Protocol Buffers' base-128 varint read from raw wire bytes, for the places that walk a message's fields
without parsing it: the RPC layer's size bounds per field (rpc/limits.py) and the Raft messages whose entry
data are handed on as views of the received bytes (protocol/raft.py)."""

from __future__ import annotations


def read_varint(raw: bytes | memoryview, pos: int) -> tuple[int, int]:
    """The varint at `pos` and the position after it; IndexError when `raw` ends inside it, ValueError when
    it runs past the 10 bytes of a 64-bit value."""
    value = shift = 0
    while shift < 70:
        byte = raw[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7
    raise ValueError("a varint longer than 10 bytes")
