"""KeyReader: a committed key as an `io.RawIOBase`, for code that wants a standard binary file.

`io.BufferedReader`, fsspec's buffered files, pyarrow's `PythonFile` and `shutil.copyfileobj` expect a raw
file: `readinto` fills the caller's buffer, `seek` takes the three whences, `read` past the end gives b"".
Each call runs the key's KeyInputStream on the synchronous client's event-loop thread; the position lives
in the stream, so a seek costs nothing until the next read (which fetches from the new place).

A reader belongs to the process that opened it: after a fork the loop thread it runs on does not exist in
the child, so the child gets an error naming that instead of a read that never returns.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import io
import os
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from pyozone.client.crypto_streams import CryptoKeyInputStream
from pyozone.client.key_input import KeyInputStream
from pyozone.hdds.om_views import KeyInfo

T = TypeVar("T")
Stream = KeyInputStream | CryptoKeyInputStream
"""A key's plaintext: its stream, or the stream decrypting it (an encrypted key)."""
_WHENCES = (os.SEEK_SET, os.SEEK_CUR, os.SEEK_END)
_closing: set[asyncio.Task[None]] = set()


class KeyReader(io.RawIOBase):
    def __init__(self, loop: asyncio.AbstractEventLoop, stream: Stream) -> None:
        """`loop`: the running loop (on another thread) that owns `stream`."""
        super().__init__()
        self._loop = loop
        self._stream: Stream | None = stream  # dropped at close, with the channels it references
        self._pid = os.getpid()
        self.info: KeyInfo = stream.info
        self.size = stream.size
        self.name = f"/{stream.info.volume}/{stream.info.bucket}/{stream.info.name}"

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        problem = self.unusable() or ("called on its client's own loop thread" if self._on_loop() else None)
        if problem:
            coro.close()
            raise OSError(f"{self.name}: {problem}; open the key again")
        finished = threading.Event()
        answer: concurrent.futures.Future[T] = concurrent.futures.Future()
        task: list[asyncio.Task[T]] = []

        def done(t: asyncio.Task[T]) -> None:
            if t.cancelled():
                answer.cancel()
            elif (error := t.exception()) is not None:
                answer.set_exception(error)
            else:
                answer.set_result(t.result())
            finished.set()

        def start() -> None:
            task.append(self._loop.create_task(coro))
            task[0].add_done_callback(done)

        self._loop.call_soon_threadsafe(start)
        try:
            return answer.result()
        except BaseException:
            # The caller stopped waiting (Ctrl-C, a signal's timeout) or the call failed: it is ended before
            # this returns, so it never writes into memory the caller has taken back (readinto's buffer, a
            # BufferedReader's result) nor moves the position after it.
            with contextlib.suppress(RuntimeError):  # the loop is closed: nothing of it runs any more
                self._loop.call_soon_threadsafe(lambda: task[0].cancel())
                while not finished.wait(0.1) and self._loop.is_running():
                    pass
            raise

    def _on_loop(self) -> bool:
        """Whether this thread runs the loop, which then cannot wait for itself (a garbage collection there
        can finalize a reader)."""
        try:
            return asyncio.get_running_loop() is self._loop
        except RuntimeError:
            return False

    def unusable(self) -> str | None:
        """Why this reader cannot read in this process (opened before a fork, its client closed), or None."""
        if os.getpid() != self._pid:
            return f"opened in process {self._pid} before a fork"
        return "its client is closed" if self._loop.is_closed() else None

    def _live(self) -> Stream:
        self._checkClosed()  # type: ignore[attr-defined]  # io's own check, present on every IOBase
        assert self._stream is not None  # only close() drops it
        return self._stream

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:  # collections.abc.Buffer from Python 3.12
        """Copies straight from the received range into `buffer` (KeyInputStream.readinto); an encrypted
        key's plaintext is decrypted into bytes first."""
        stream = self._live()
        view = memoryview(buffer).cast("B")
        if isinstance(stream, KeyInputStream):
            return self._run(stream.readinto(view))
        data = self._run(stream.read(len(view)))
        view[: len(data)] = data
        return len(data)

    def read(self, size: int | None = -1) -> bytes:
        """As RawIOBase.read, without its intermediate buffer: the stream's bytes are returned as they are."""
        stream = self._live()
        return self._run(stream.read(-1 if size is None or size < 0 else size))

    def readall(self) -> bytes:
        return self.read(-1)

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        stream = self._live()
        if whence not in _WHENCES:
            raise ValueError(f"invalid whence ({whence}, should be 0, 1 or 2)")
        return stream.seek(offset, whence)

    def tell(self) -> int:
        return self._live().tell()

    def close(self) -> None:
        """Closes the datanode streams; only drops them once the client is closed (its loop closed them) or
        in a forked child (they belong to the parent). On the loop's own thread (a finalizer) the closing is
        scheduled instead of awaited."""
        stream, self._stream = self._stream, None
        try:
            if stream is None or self.unusable() is not None:
                return
            if self._on_loop():
                task = self._loop.create_task(stream.close())
                _closing.add(task)  # the loop keeps only weak references to its tasks
                task.add_done_callback(_closing.discard)
            else:
                self._run(stream.close())
        finally:
            super().close()
