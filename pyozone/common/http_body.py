"""Reading a request body with a progress deadline: a client that stops sending mid-body (a slow-body
slowloris, or a dead peer) fails the read after `idle_s` without a byte, as S3 answers RequestTimeout,
instead of holding its handler forever. A slow client that keeps sending is never cut off."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Coroutine
from typing import Any, TypeVar

from aiohttp import StreamReader

T = TypeVar("T")


class BodyTimeout(Exception):
    """No byte of the body arrived for the idle timeout: S3's RequestTimeout (400)."""


class BodyIncomplete(Exception):
    """The client ended its side of the connection before the body's end: S3's IncompleteBody (400)."""


class TimedBody:
    """Reads from `stream` (a request's `content`); each read fails with BodyTimeout once `idle_s` pass
    without a new byte arriving, however long it already waited."""

    def __init__(self, stream: StreamReader, idle_s: float) -> None:
        self._stream = stream
        self._idle_s = idle_s

    async def readany(self) -> bytes:
        """What is buffered, or the next bytes to arrive; b"" at the body's end."""
        return await self._progressing(self._stream.readany())

    async def readexactly(self, n: int) -> bytes:
        """Raises asyncio.IncompleteReadError if the body ends first."""
        return await self._progressing(self._stream.readexactly(n))

    async def readline(self) -> bytes:
        """Up to and including b"\\n" (aws-chunked framing); aiohttp bounds the line's length."""
        return await self._progressing(self._stream.readline())

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while chunk := await self.readany():
            yield chunk

    async def _progressing(self, read: Coroutine[Any, Any, T]) -> T:
        task = asyncio.ensure_future(read)
        try:
            seen = self._stream.total_bytes
            while True:
                done, _ = await asyncio.wait((task,), timeout=self._idle_s)
                if done:
                    return task.result()
                if self._stream.total_bytes == seen:
                    raise BodyTimeout(f"no body byte for {self._idle_s:g} s")
                seen = self._stream.total_bytes
        finally:
            task.cancel()  # a no-op once it is done
