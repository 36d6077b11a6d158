"""Where each byte of an EC block group lives (Ozone's ECBlockInputStream and ECKeyOutputStream arithmetic).

A block group of `length` bytes is cut into cells of `cell` bytes dealt round-robin over the data indexes
1..d: stripe s holds the group's bytes [s*d*cell, (s+1)*d*cell). Every parity index p (d+1..d+p) holds one
parity cell per stripe, as long as that stripe's first cell (the longest), so a parity replica is as long as
replica 1. Each replica is an ordinary block on its datanode: its cells one after another, stripe by stripe.
Only the last stripe may be partial; its cells are coded as if zero-padded to the first cell's length.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from pyozone.hdds.ids import ReplicationConfig

BLOCK_GROUP_LEN = "blockGroupLen"
"""The BlockData metadata key (Ozone's) under which every index's putBlock records its group's length."""


@dataclass(frozen=True, slots=True)
class Cell:
    """One data cell: group bytes [group_offset, group_offset + length) stored at replica `index`'s bytes
    [index_offset, index_offset + length)."""

    stripe: int
    index: int
    group_offset: int
    index_offset: int
    length: int


@dataclass(frozen=True, slots=True)
class StripeLayout:
    data: int
    parity: int
    cell: int

    @classmethod
    def of(cls, config: ReplicationConfig) -> StripeLayout:
        return cls(config.ec_data, config.ec_parity, config.ec_chunk_size)

    def __post_init__(self) -> None:
        if self.data < 1 or self.parity < 1 or self.cell < 1:
            raise ValueError(f"EC layout needs positive data, parity and cell size, got {self}")

    @property
    def nodes(self) -> int:
        return self.data + self.parity

    @property
    def stripe_bytes(self) -> int:
        """Data bytes of one full stripe."""
        return self.data * self.cell

    def group_capacity(self, block_size: int) -> int:
        """Key bytes one block group holds when each replica holds up to `block_size` bytes (Ozone's
        ECKeyOutputStream: `block_size` on every data index)."""
        return self.data * block_size

    def is_parity(self, index: int) -> bool:
        return index > self.data

    def stripes(self, length: int) -> int:
        """Stripes of a group of `length` bytes (0 for an empty group)."""
        return -(-length // self.stripe_bytes)

    def stripe_cell_lengths(self, length: int, stripe: int) -> list[int]:
        """The data cells' lengths in one stripe of a group of `length` bytes (index 1 first); 0 for a
        cell past the group's end."""
        rest = max(0, length - stripe * self.stripe_bytes)
        return [max(0, min(self.cell, rest - i * self.cell)) for i in range(self.data)]

    def cell_length(self, length: int, stripe: int, index: int) -> int:
        """How many bytes replica `index` holds of one stripe of a group of `length` bytes: a data cell its
        own length, a parity cell the stripe's first cell's."""
        lengths = self.stripe_cell_lengths(length, stripe)
        return lengths[index - 1] if index <= self.data else lengths[0]

    def index_length(self, length: int, index: int) -> int:
        """How many bytes replica `index` (1-based) holds of a group of `length` bytes."""
        if not 1 <= index <= self.nodes:
            raise ValueError(f"replica index {index} is outside 1..{self.nodes}")
        full, rest = divmod(length, self.stripe_bytes)
        position = 0 if self.is_parity(index) else index - 1
        return full * self.cell + max(0, min(self.cell, rest - position * self.cell))

    def cells(self, offset: int, end: int) -> Iterator[Cell]:
        """The data cells (or parts of cells) covering group bytes [offset, end), in group order."""
        while offset < end:
            stripe, within = divmod(offset, self.stripe_bytes)
            position, in_cell = divmod(within, self.cell)
            length = min(self.cell - in_cell, end - offset)
            yield Cell(stripe, position + 1, offset, stripe * self.cell + in_cell, length)
            offset += length


def padded(cell: bytes | bytearray | memoryview, length: int) -> bytes | bytearray | memoryview:
    """A short data cell zero-padded to its stripe's first cell's length, as the codec takes it (one copy,
    only of a short cell)."""
    return cell if len(cell) == length else bytes(cell) + bytes(length - len(cell))
