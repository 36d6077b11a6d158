"""Record batches on the wire of `streamSnapshot`: each chunk one self-contained Arrow IPC stream.

Self-contained (schema + batch) so any chunk decodes on its own and the receiver checks each against the
table's schema; the schema costs well under a kilobyte per chunk of up to megabytes. A batch that encodes
larger than the message limit is split in halves until each part fits.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa


class TransportError(Exception):
    """A chunk that is not an Arrow IPC stream, or a row too large to send."""


def encode_batch(batch: pa.RecordBatch, max_bytes: int) -> Iterator[bytes]:
    """The batch as IPC streams of at most max_bytes each, rows in order."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    data = sink.getvalue().to_pybytes()
    if len(data) <= max_bytes:
        yield data
        return
    if batch.num_rows <= 1:
        raise TransportError(f"one row encodes to {len(data)} bytes, more than a message's {max_bytes}")
    half = batch.num_rows // 2
    yield from encode_batch(batch.slice(0, half), max_bytes)
    yield from encode_batch(batch.slice(half), max_bytes)


def decode_batches(data: bytes) -> list[pa.RecordBatch]:
    try:
        with pa.ipc.open_stream(data) as reader:
            return list(reader)
    except pa.ArrowException as e:
        raise TransportError(f"not an Arrow IPC stream: {e}") from None
