"""The wire format without I/O (rpc/frames.py): any split of a byte stream decodes to the same frames; a
body `admit` refuses is skipped as it arrives, never buffered; a frame above the limit, or a head longer
than its frame, is a broken peer."""

from __future__ import annotations

import os
import time
import tracemalloc

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyozone.rpc.frames import HEADER, Flag, Frame, FrameDecoder, FrameError, Kind, encode

frames = st.lists(
    st.tuples(
        st.sampled_from(list(Kind)),
        st.sampled_from([Flag.NONE, Flag.MESSAGE, Flag.MESSAGE | Flag.END_STREAM]),
        st.integers(0, 0xFFFFFFFF),
        st.binary(max_size=40),
        st.binary(max_size=300),
    ),
    max_size=12,
)


def splits(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]


def decode(decoder: FrameDecoder, pieces: list[bytes]) -> list[Frame]:
    out: list[Frame] = []
    for piece in pieces:
        out += decoder.feed(piece)
    return out


@given(frames, st.lists(st.integers(0, 10_000), max_size=20))
def test_any_split_of_a_stream_decodes_to_the_same_frames(sent: list, cuts: list[int]) -> None:
    data = b"".join(encode(*f) for f in sent)
    got = decode(FrameDecoder(1024), splits(data, cuts))
    assert [(f.kind, f.flags, f.call_id, f.head, f.body) for f in got] == sent
    assert all(f.body_size == len(f.body or b"") for f in got)


@given(frames, st.lists(st.integers(0, 10_000), max_size=20), st.integers(0, 300))
def test_a_refused_body_is_skipped_and_never_buffered(sent: list, cuts: list[int], limit: int) -> None:
    """admit sees the head and the size; a refused body is reported as None with its size, the frames
    after it decode as they would, and the buffer never holds more than a header and a head beyond what
    was admitted."""
    data = b"".join(encode(*f) for f in sent)
    seen: list[tuple[int, int, bytes, int]] = []

    def admit(kind: int, call_id: int, head: bytes, size: int) -> bool:
        seen.append((kind, call_id, head, size))
        return size <= limit

    decoder = FrameDecoder(1024, admit)
    got: list[Frame] = []
    for piece in splits(data, cuts):
        got += decoder.feed(piece)
        assert len(decoder._buf) <= HEADER.size + 40 + limit + len(piece)
    assert not decoder.pending
    expected = []
    for kind, flags, call_id, head, body in sent:
        refused = bool(body) and kind in (Kind.CALL, Kind.MESSAGE, Kind.END) and len(body) > limit
        expected.append((kind, flags, call_id, head, None if refused else body, len(body)))
    assert [(f.kind, f.flags, f.call_id, f.head, f.body, f.body_size) for f in got] == expected


def test_a_30_mb_body_above_the_limit_is_skipped_in_pieces_without_being_buffered() -> None:
    decoder = FrameDecoder(64 << 20, lambda kind, call_id, head, size: size <= 4 << 20)
    frame = encode(Kind.CALL, Flag.MESSAGE, 7, b"head", b"x" * (30 << 20))
    out: list[Frame] = []
    for i in range(0, len(frame), 65536):
        out += decoder.feed(frame[i : i + 65536])
        assert len(decoder._buf) < 65536 + HEADER.size
    assert [(f.call_id, f.head, f.body, f.body_size) for f in out] == [(7, b"head", None, 30 << 20)]
    assert decoder.feed(encode(Kind.PING, 0, 1)) == [Frame(Kind.PING, 0, 1, b"", b"", 0)]


@pytest.mark.parametrize(
    "header",
    [
        HEADER.pack(1 << 31, Kind.CALL, 0, 0, 1),  # a length prefix of 2^31
        HEADER.pack(0xFFFFFFFF, Kind.MESSAGE, 0, 0, 1),
        HEADER.pack(10, Kind.CALL, 0, 11, 1),  # a head longer than its frame
    ],
)
def test_a_frame_above_the_limit_is_refused_from_its_header_alone(header: bytes) -> None:
    decoder = FrameDecoder(1 << 20, lambda *a: True)
    with pytest.raises(FrameError):
        decoder.feed(header)


def test_garbage_is_refused_and_a_truncated_frame_waits_for_the_rest() -> None:
    with pytest.raises(FrameError):
        FrameDecoder(1 << 20).feed(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    decoder = FrameDecoder(1 << 20)
    frame = encode(Kind.MESSAGE, Flag.MESSAGE, 3, b"", b"body")
    assert decoder.feed(frame[:-1]) == [] and decoder.pending
    assert decoder.feed(frame[-1:]) == [Frame(Kind.MESSAGE, Flag.MESSAGE, 3, b"", b"body", 4)]
    assert not decoder.pending


def test_a_large_frame_arriving_in_small_reads_is_decoded_in_linear_time() -> None:
    """Issue 29 D2: each read of a partial frame copied everything buffered so far (32 MiB in 64 KiB
    reads took 22 s); the pieces are appended and decoded once the frame is whole."""
    body = bytes(32 << 20)
    data = encode(Kind.PING, 0, 0, b"", body)
    decoder = FrameDecoder(len(data))
    piece = 32 << 10
    began = time.monotonic()
    got = decode(decoder, [data[i : i + piece] for i in range(0, len(data), piece)])
    assert time.monotonic() - began < 2.0
    assert len(got) == 1 and got[0].body == body


def test_a_large_body_arriving_in_reads_is_copied_once() -> None:
    """Fewer copies (issue 30): a 4 MiB chunk's frame, read in 64 KiB pieces, is decoded with one copy of its
    body (the pieces joined), not three (appended to a buffer, the buffer copied to bytes, the body sliced
    out of those): the memory the decode allocates at its peak is one body, not three."""
    body = os.urandom(4 << 20)
    data = encode(Kind.CALL, Flag.MESSAGE, 5, b"head", body) + encode(Kind.PING, 0, 6)
    pieces = [data[i : i + (64 << 10)] for i in range(0, len(data), 64 << 10)]
    decoder = FrameDecoder(len(data))
    tracemalloc.start()
    try:
        got = decode(decoder, pieces)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [(f.kind, f.call_id, f.head, f.body) for f in got] == [
        (Kind.CALL, 5, b"head", body),
        (Kind.PING, 6, b"", b""),
    ]
    assert len(body) <= peak < len(body) + (1 << 20)
