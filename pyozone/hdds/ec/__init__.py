"""Erasure coding's shared rules: where each byte of a block group lives (layout.py) and the raw codec
that makes and rebuilds parity cells (codec.py), for the client's striped writes and reads and the
datanode's reconstruction alike."""

from pyozone.hdds.ec.layout import Cell, StripeLayout

__all__ = ["Cell", "StripeLayout"]
