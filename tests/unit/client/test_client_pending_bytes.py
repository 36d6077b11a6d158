"""PendingBytes keeps a writer's accepted bytes until they are sent: never a buffer its owner may refill."""

from __future__ import annotations

from pyozone.client.block_output import PendingBytes


def test_bytes_are_kept_without_a_copy() -> None:
    data = b"x" * 100
    pending = PendingBytes()
    pending.add(memoryview(data)[10:50])
    assert pending.views[0].obj is data


def test_a_read_only_view_of_a_mutable_buffer_is_copied() -> None:
    """io.BufferedWriter hands raw.write a read-only view of the buffer it refills as soon as it returns."""
    buffer = bytearray(b"a" * 64)
    pending = PendingBytes()
    pending.add(memoryview(buffer).toreadonly())
    pending.add(buffer)
    buffer[:] = b"b" * 64
    assert pending.peek(128) == b"a" * 128
