"""Erasure coding's shared rules: where each byte of a block group lives (layout.py) and the raw codec
that makes and rebuilds parity cells (codec.py), for the client's striped writes and reads and the
datanode's reconstruction alike."""

from pyozone.hdds.ec.layout import BLOCK_GROUP_LEN, Cell, StripeLayout, padded

__all__ = ["BLOCK_GROUP_LEN", "Cell", "StripeLayout", "padded"]
