"""A request body as the handlers read it: streamed through its integrity checks with a progress
deadline (a client that stops sending gets RequestTimeout), or read whole when it is a small XML document."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from aiohttp import HttpVersion11, hdrs, web

from pyozone.common.http_body import BodyIncomplete, TimedBody
from pyozone.s3g.auth.checksums import ChecksumAlgorithm
from pyozone.s3g.auth.payload import Payload, PayloadDigests
from pyozone.s3g.errors import S3Error, S3ErrorCode
from pyozone.s3g.numbers import decimal
from pyozone.s3g.xml import MAX_XML_BODY

CONTINUE = "100-continue"


class RequestBody:
    def __init__(self, http: web.Request, payload: Payload, idle_s: float, chunk_size: int) -> None:
        self._http = http
        self._payload = payload
        self._idle_s = idle_s
        self._chunk_size = chunk_size
        self._digests: PayloadDigests | None = None

    @property
    def declared_length(self) -> int | None:
        """The object's length the request announces (None: unknown until the body ends). An aws-chunked
        body announces it in x-amz-decoded-content-length (the payload checks hold it to that)."""
        headers = self._http.headers
        if headers.get("x-amz-content-sha256", "").startswith("STREAMING-"):
            decoded = headers.get("x-amz-decoded-content-length", "")
            return decimal(decoded)
        return self._http.content_length

    def require_length(self) -> int | None:
        """An object upload must say how long it is, by Content-Length or aws-chunked (S3's 411)."""
        chunked = "chunked" in self._http.headers.get("Transfer-Encoding", "").lower()
        if self._http.content_length is None and not chunked:
            raise S3Error(S3ErrorCode.MissingContentLength)
        return self.declared_length

    async def pieces(self, *, as_received: bool = False) -> AsyncIterator[memoryview]:
        """The object's bytes, each piece checked only with the whole: a handler commits nothing until the
        iteration ends (when the final checks have passed). In pieces of `chunk_size` checked ahead
        (`_checked_ahead`), or with `as_received` each piece as the socket gave it, checked on the loop
        before it is yielded: a reader that must see bytes as they come (POST Object's form, bounded
        before it is authenticated; a small XML document, bounded by its limit) holds one piece, not
        two of `chunk_size` (R30's P1: 8 MiB of an anonymous form before its 20 KB bound was looked at)."""
        try:
            async for piece in self._received() if as_received else self._checked_ahead():
                yield piece
        except BodyIncomplete as e:
            raise S3Error(S3ErrorCode.IncompleteBody) from e
        except ConnectionError:
            raise
        except OSError as e:  # aiohttp's payload errors: the body ended before its length
            raise S3Error(S3ErrorCode.IncompleteBody) from e
        self._digests = self._payload.finish()

    async def _received(self) -> AsyncIterator[memoryview]:
        await self._continue()
        body = TimedBody(self._http.content, self._idle_s)
        while data := await body.readany():
            for piece in self._payload.feed(data):
                yield piece

    async def _checked_ahead(self) -> AsyncIterator[memoryview]:
        """The checks (MD5, SHA-256, checksums, chunk signatures) of one chunk run on a worker thread while
        the handler writes the chunk before it: hashlib and zlib release the GIL, so the second core
        hashes while the event loop moves bytes."""
        loop = asyncio.get_running_loop()
        checking: asyncio.Future[list[memoryview]] | None = None
        async for chunk in self._chunks():
            checked = await checking if checking is not None else []
            checking = loop.run_in_executor(None, self._payload.feed, chunk)
            for piece in checked:
                yield piece
        for piece in await checking if checking is not None else []:
            yield piece

    async def _chunks(self) -> AsyncIterator[memoryview]:
        """The body as received, joined into pieces of exactly `chunk_size` (the last one shorter): one
        copy, into immutable bytes, so the client keeps them without another until they are acknowledged."""
        await self._continue()
        body = TimedBody(self._http.content, self._idle_s)
        parts: list[bytes | memoryview] = []
        size = 0
        while data := await body.readany():
            parts.append(data)
            size += len(data)
            if size < self._chunk_size:
                continue
            joined = memoryview(b"".join(parts))
            whole = len(joined) - len(joined) % self._chunk_size
            for start in range(0, whole, self._chunk_size):
                yield joined[start : start + self._chunk_size]
            parts = [joined[whole:]] if whole < len(joined) else []
            size = len(joined) - whole
        if size:
            yield memoryview(b"".join(parts))

    async def _continue(self) -> None:
        """A client that sent `Expect: 100-continue` is told to send the body only when a handler first
        reads it: after authentication and every check of the head, so a refused request's body is never
        sent (app.py turns off aiohttp's own answer, which comes before any check)."""
        http = self._http
        if http.version == HttpVersion11 and http.headers.get(hdrs.EXPECT, "").lower() == CONTINUE:
            await http.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            http.writer.output_size = 0  # the response proper has not begun

    @property
    def checksum_algorithm(self) -> ChecksumAlgorithm | None:
        """The algorithm of the checksum the client sent with the body (None: none)."""
        return self._payload.checksum_algorithm

    def digest(self) -> PayloadDigests:
        assert self._digests is not None, "pieces() has not run to the end"
        return self._digests

    async def read_all(self, limit: int = MAX_XML_BODY) -> bytes:
        """A small body whole (an XML document); longer than `limit` is refused before it is all read."""
        parts: list[bytes] = []
        size = 0
        async for piece in self.pieces(as_received=True):
            size += len(piece)
            if size > limit:
                raise S3Error(S3ErrorCode.MaxMessageLengthExceeded)
            parts.append(bytes(piece))
        return b"".join(parts)
