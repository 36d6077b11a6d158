"""An open key as the file object pyarrow's Parquet writer takes.

It streams into the key; nothing is visible until `commit()` (OM's commitKey), and `abort()` leaves no key
behind. (Reads use the client's KeyReader, an io.RawIOBase.)
"""

from __future__ import annotations

import io

from pyozone.client import KeyWriter

SINK_BUFFER = 4 << 20  # Parquet writes many small pieces (page headers); the key gets them in 4 MiB writes


class _KeySink(io.RawIOBase):
    def __init__(self, writer: KeyWriter) -> None:
        self._writer = writer
        self._written = 0

    def writable(self) -> bool:
        return True

    def write(self, data: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        # A copy: the client keeps read-only views until the datanodes acknowledge them, and the one
        # BufferedWriter passes is read-only over the buffer it refills as soon as this returns.
        n = self._writer.write(bytes(data))
        self._written += n
        return n

    def tell(self) -> int:
        return self._written


class KeySink(io.BufferedWriter):
    """An open key written through a buffer; `tell()` is the bytes written so far."""

    def __init__(self, writer: KeyWriter) -> None:
        super().__init__(_KeySink(writer), buffer_size=SINK_BUFFER)
        self._writer = writer

    def commit(self) -> None:
        if not self.closed:
            self.flush()
        self._writer.close()

    def abort(self) -> None:
        self._writer.abort()
