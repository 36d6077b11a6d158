"""The raw EC codec: parity cells from data cells, and lost cells from any `data` others.

Reed-Solomon is pyeclib's `isa_l_rs_cauchy` (the wheel bundles ISA-L): its Cauchy matrix is the one Ozone's RS
coder uses, so parity replicas hold exactly the bytes Ozone writes. XOR is numpy's. pyeclib codes whole
objects into fragments behind an 80-byte header; with its checksums off the header depends only on the
fragment's index and size, so encoding uses the data fragments' payloads as they are and decoding puts back
headers made once per cell size (`_shape`). Cells of one call are equal in length: the caller zero-pads a
partial stripe's cells to its first cell's length (layout.py). Indexes are replica indexes, 1-based.

Copies: encode() joins the data cells into one buffer (pyeclib takes one object; encode_stripe() takes the
writer's stripe buffer as it is); decode joins each source cell with its header (pyeclib's input form).
pyeclib and numpy load on first use, so importing the kernel loads neither.
"""

from __future__ import annotations

import ctypes
import functools
import threading
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, Protocol

from pyozone.hdds.ids import ReplicationConfig

Buffer = bytes | bytearray | memoryview


class ECCodecError(Exception):
    """Cells that cannot be coded: too few, unequal lengths, or indexes outside the group."""


class RawCodec(Protocol):
    data: int
    parity: int

    def encode(self, cells: Sequence[Buffer]) -> list[memoryview]:
        """The parity cells (indexes data+1..data+parity) of `data` equal-length data cells."""
        ...

    def encode_stripe(self, stripe: Buffer, length: int) -> list[memoryview]:
        """encode() of the `data` cells of `length` bytes that `stripe` holds back to back."""
        ...

    def decode(self, cells: Mapping[int, Buffer], missing: Sequence[int]) -> dict[int, memoryview]:
        """Cells `missing` rebuilt from at least `data` available cells of one stripe (by index)."""
        ...


def codec_for(config: ReplicationConfig) -> RawCodec:
    return _codec(config.ec_codec.upper(), config.ec_data, config.ec_parity)


@lru_cache(maxsize=32)
def _codec(name: str, data: int, parity: int) -> RawCodec:
    if name == "RS":
        return ReedSolomon(data, parity)
    if name == "XOR":
        if parity != 1:
            raise ECCodecError(f"XOR has one parity, not {parity}")
        return Xor(data)
    raise ECCodecError(f"unknown EC codec {name!r}")


def _check(cells: Sequence[Buffer] | Mapping[int, Buffer], want: int, what: str) -> int:
    lengths = {len(c) for c in (cells.values() if isinstance(cells, Mapping) else cells)}
    if len(cells) < want:
        raise ECCodecError(f"{what} needs {want} cells, got {len(cells)}")
    if len(lengths) != 1:
        raise ECCodecError(f"{what} needs cells of one length, got lengths {sorted(lengths)}")
    return lengths.pop()


class Xor:
    """Ozone's XOR codec: the one parity cell is the XOR of the data cells."""

    def __init__(self, data: int) -> None:
        self.data, self.parity = data, 1

    def _xor(self, cells: Sequence[Buffer]) -> memoryview:
        import numpy as np

        out = np.frombuffer(cells[0], dtype=np.uint8).copy()
        for cell in cells[1:]:
            np.bitwise_xor(out, np.frombuffer(cell, dtype=np.uint8), out=out)
        return memoryview(out.data).cast("B")

    def encode(self, cells: Sequence[Buffer]) -> list[memoryview]:
        _check(cells, self.data, "XOR encode")
        if len(cells) != self.data:
            raise ECCodecError(f"XOR encode takes {self.data} data cells, got {len(cells)}")
        return [self._xor(cells)]

    def encode_stripe(self, stripe: Buffer, length: int) -> list[memoryview]:
        view = memoryview(stripe)
        if len(view) != self.data * length:
            raise ECCodecError(f"a stripe of {self.data} cells of {length} bytes is not {len(view)} bytes")
        return self.encode([view[i * length : (i + 1) * length] for i in range(self.data)])

    def decode(self, cells: Mapping[int, Buffer], missing: Sequence[int]) -> dict[int, memoryview]:
        _check_indexes(cells, missing, self.data + 1)
        if len(missing) > 1:
            raise ECCodecError(f"XOR rebuilds one cell, not {len(missing)}")
        _check(cells, self.data, "XOR decode")
        sources = [cells[i] for i in sorted(cells)[: self.data]]
        return {missing[0]: self._xor(sources)} if missing else {}


def _check_indexes(cells: Mapping[int, Buffer], missing: Sequence[int], nodes: int) -> None:
    bad = [i for i in (*cells, *missing) if not 1 <= i <= nodes]
    if bad:
        raise ECCodecError(f"replica indexes {bad} are outside 1..{nodes}")
    if set(cells) & set(missing):
        raise ECCodecError(f"indexes {sorted(set(cells) & set(missing))} are both given and missing")


_HEADER = 80
"""pyeclib's fragment header (fragment_header_t)."""


class ReedSolomon:
    """Reed-Solomon over ISA-L's Cauchy matrix (Ozone's), through pyeclib; one driver per thread."""

    def __init__(self, data: int, parity: int) -> None:
        self.data, self.parity = data, parity
        self._local = threading.local()
        self._shapes: dict[int, tuple[int, list[bytes]]] = {}
        self._lock = threading.Lock()

    def _driver(self) -> Any:
        driver = getattr(self._local, "driver", None)
        if driver is None:
            from pyeclib.ec_iface import ECDriver

            _keep_coding_buffers_on_heap()

            driver = self._local.driver = ECDriver(k=self.data, m=self.parity, ec_type="isa_l_rs_cauchy")
        return driver

    def _shape(self, length: int) -> tuple[int, list[bytes]]:
        """For cells of `length` bytes: pyeclib's fragment payload size (the length, unless it aligns it)
        and each index's fragment header, taken once from coding zeros (coding them per call would cost
        twenty times the decode itself)."""
        with self._lock:
            shape = self._shapes.get(length)
        if shape is None:
            fragments = self._driver().encode(bytes(self.data * length))
            shape = (len(fragments[0]) - _HEADER, [f[:_HEADER] for f in fragments])
            with self._lock:
                self._shapes[length] = shape
                while len(self._shapes) > 16:
                    self._shapes.pop(next(iter(self._shapes)))
        return shape

    def encode(self, cells: Sequence[Buffer]) -> list[memoryview]:
        length = _check(cells, self.data, "RS encode")
        if len(cells) != self.data:
            raise ECCodecError(f"RS encode takes {self.data} data cells, got {len(cells)}")
        return self.encode_stripe(_joined(cells), length)

    def encode_stripe(self, stripe: Buffer, length: int) -> list[memoryview]:
        """The parity cells of a stripe held as one buffer of `data` cells of `length` bytes each. pyeclib
        takes only `bytes`: a `bytes` stripe goes to it as it is, any other buffer is copied once."""
        if len(stripe) != self.data * length:
            raise ECCodecError(f"a stripe of {self.data} cells of {length} bytes is not {len(stripe)} bytes")
        fragments = self._driver().encode(stripe if isinstance(stripe, bytes) else bytes(stripe))
        if len(fragments[0]) - _HEADER != length:  # pyeclib aligned the cells: not the payloads we sent
            view = memoryview(stripe)
            return self._encode_padded(
                [view[i * length : (i + 1) * length] for i in range(self.data)], length
            )
        return [memoryview(f)[_HEADER:] for f in fragments[self.data :]]

    def _encode_padded(self, cells: Sequence[Buffer], length: int) -> list[memoryview]:
        size, _ = self._shape(length)
        padded = b"".join(bytes(c) + bytes(size - length) for c in cells)
        fragments = self._driver().encode(padded)
        return [memoryview(f)[_HEADER : _HEADER + length] for f in fragments[self.data :]]

    def decode(self, cells: Mapping[int, Buffer], missing: Sequence[int]) -> dict[int, memoryview]:
        _check_indexes(cells, missing, self.data + self.parity)
        length = _check(cells, self.data, "RS decode")
        if not missing:
            return {}
        size, headers = self._shape(length)
        pad = bytes(size - length)
        chosen = sorted(cells)[: self.data]
        fragments = [headers[i - 1] + bytes(cells[i]) + pad for i in chosen]
        rebuilt = self._driver().reconstruct(fragments, [i - 1 for i in missing])
        # pyeclib answers in index order, whatever the order asked: each fragment's header names its index
        by_index = {int.from_bytes(f[:4], "little") + 1: f for f in rebuilt}
        return {i: memoryview(by_index[i])[_HEADER : _HEADER + length] for i in missing}


_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters


@functools.cache
def _keep_coding_buffers_on_heap() -> None:
    """pyeclib allocates every fragment afresh. Above glibc's mmap threshold (128 KiB until a freed mapping
    raises it, which pyeclib's aligned buffers never do) each one is a new mapping whose pages fault in one
    by one, and the heap is trimmed back after each stripe: coding a 3 MiB stripe ran at 50-100 MB/s instead
    of 1.5-2 GB/s (measured). Sets at once what glibc's dynamic threshold would reach (32 MiB, trimming
    above twice that), for the whole process, once. Not glibc: nothing to do."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(_M_MMAP_THRESHOLD, 32 << 20)
        libc.mallopt(_M_TRIM_THRESHOLD, 64 << 20)
    except (OSError, AttributeError):
        pass


def _joined(cells: Sequence[Buffer]) -> bytes:
    """The cells as one `bytes` (pyeclib's input form)."""
    if len(cells) == 1 and isinstance(cells[0], bytes):
        return cells[0]
    return b"".join(cells)
