"""KeyReader: a key as io.RawIOBase (readinto into the caller's buffer, the three whences, reads past the
end), under io.BufferedReader, after its client closed and in a forked child."""

from __future__ import annotations

import asyncio
import io
import multiprocessing
import os
import signal
import threading

import pytest

from pyozone.client import OzoneClient
from pyozone.client.key_input import KeyInputStream
from pyozone.client.key_reader import KeyReader
from pyozone.hdds.ids import RATIS_THREE
from pyozone.hdds.om_views import KeyInfo
from tests.unit.client.fakes import BLOCK, BUFFER


@pytest.fixture
def data(client: OzoneClient) -> bytes:
    data = os.urandom(2 * BLOCK + BUFFER + 7)
    client.put_key("vol", "bucket", "k", data)
    return data


def test_raw_io_contract(client: OzoneClient, data: bytes) -> None:
    with client.open_key_reader("vol", "bucket", "k") as reader:
        assert isinstance(reader, io.RawIOBase)
        assert reader.readable() and reader.seekable() and not reader.writable()
        assert reader.size == len(data) and reader.info.name == "k"
        buffer = bytearray(BUFFER + 3)
        assert reader.readinto(buffer) == len(buffer)
        assert buffer == data[: len(buffer)]
        assert reader.tell() == len(buffer)
        assert reader.seek(BLOCK - 2) == BLOCK - 2  # across a block boundary
        assert reader.read(5) == data[BLOCK - 2 : BLOCK + 3]
        assert reader.seek(-3, os.SEEK_CUR) == BLOCK
        assert reader.read(1) == data[BLOCK : BLOCK + 1]
        assert reader.seek(-4, os.SEEK_END) == len(data) - 4
        view = memoryview(bytearray(10))
        assert reader.readinto(view) == 4 and view[:4] == data[-4:]
        assert reader.read(10) == b"" and reader.readinto(bytearray(3)) == 0
        reader.seek(len(data) + 100)  # past the end, as a file allows
        assert reader.read() == b""
        reader.seek(0)
        assert reader.readall() == data
        with pytest.raises(ValueError):
            reader.seek(-1)
        with pytest.raises(ValueError):
            reader.seek(0, 3)
    assert reader.closed
    with pytest.raises(ValueError):
        reader.read(1)
    reader.close()  # twice is fine


def test_buffered_reader_and_copy(client: OzoneClient, data: bytes) -> None:
    with io.BufferedReader(client.open_key_reader("vol", "bucket", "k"), buffer_size=1000) as f:
        assert f.read(10) == data[:10]
        f.seek(BLOCK + 1)
        assert f.peek(1)[:1] == data[BLOCK + 1 : BLOCK + 2]
        out = io.BytesIO()
        f.seek(0)
        while piece := f.read1(777):
            out.write(piece)
    assert out.getvalue() == data


def test_empty_key(client: OzoneClient) -> None:
    client.put_key("vol", "bucket", "empty", b"")
    with client.open_key_reader("vol", "bucket", "empty") as reader:
        assert reader.size == 0 and reader.read() == b"" and reader.readinto(bytearray(4)) == 0


def test_after_the_client_closed(make_client, data: bytes) -> None:  # type: ignore[no-untyped-def]
    client = make_client()
    reader = client.open_key_reader("vol", "bucket", "k")
    client.close()
    with pytest.raises(OSError, match="its client is closed"):
        reader.read(1)
    reader.close()  # no error: closing the client ended the reader's streams


def _read_in_child(reader: KeyReader, queue: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    try:
        reader.read(1)
        queue.put("read")
    except OSError as e:
        queue.put(str(e))
    reader.close()  # must not wait for the parent's loop thread


def test_forked_child_is_told_to_reopen(client: OzoneClient, data: bytes) -> None:
    reader = client.open_key_reader("vol", "bucket", "k")
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_read_in_child, args=(reader, queue))
    child.start()
    child.join(30)
    assert child.exitcode == 0
    assert "before a fork" in queue.get(timeout=5)
    assert reader.read(3) == data[:3]  # the parent's reader is untouched
    reader.close()


def test_on_the_loop_thread_nothing_waits_for_itself(client: OzoneClient, data: bytes) -> None:
    """A garbage collection on the client's loop thread may finalize a reader: closing is scheduled there, and
    a read is refused instead of waiting for the thread it runs on."""
    reading = client.open_key_reader("vol", "bucket", "k")
    closing = client.open_key_reader("vol", "bucket", "k")

    async def on_the_loop() -> str:
        closing.close()
        try:
            reading.read(1)
        except OSError as e:
            return str(e)
        return "read"

    assert "own loop thread" in client.run(on_the_loop())
    assert closing.closed
    assert reading.read(2) == data[:2]
    reading.close()


class _Interrupted(Exception):
    """What a signal handler raises in the waiting thread (Ctrl-C's KeyboardInterrupt, pytest-timeout's)."""


class _StalledStream(KeyInputStream):
    """A key stream whose readinto waits for `go`, then writes into the caller's buffer."""

    def __init__(self, data: bytes) -> None:  # no OM, no blocks: only what KeyReader asks of a stream
        self.info = KeyInfo("vol", "bucket", "stalled", len(data), 0, 0, RATIS_THREE)
        self.size, self._pos, self.data = len(data), 0, data
        self.go = asyncio.Event()
        self.ended: str | None = None

    async def readinto(self, buffer: memoryview) -> int:
        try:
            await self.go.wait()
        except asyncio.CancelledError:
            self.ended = "cancelled"
            raise
        buffer[: self.size] = self.data
        self.ended = "wrote"
        return self.size


def test_an_interrupted_readinto_ends_before_the_caller_has_its_buffer_back() -> None:
    """A caller that stops waiting (a signal's exception in its thread) gets control back only once the
    read on the loop thread has ended: it never writes into the caller's buffer afterwards (which, under
    io.BufferedReader, can be memory already freed)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    stream = _StalledStream(b"x" * 64)
    reader = KeyReader(loop, stream)
    buffer = bytearray(64)

    def interrupt(signum: int, frame: object) -> None:
        raise _Interrupted

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.05)
        with pytest.raises(_Interrupted):
            reader.readinto(buffer)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert stream.ended == "cancelled"  # ended before readinto returned, not left running
    loop.call_soon_threadsafe(stream.go.set)
    asyncio.run_coroutine_threadsafe(asyncio.sleep(0), loop).result()
    assert buffer == bytearray(64) and stream.ended == "cancelled"
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
    loop.close()
