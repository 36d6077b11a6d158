"""LogAppender: the leader's ordered stream of log entries to one follower (Ratis' GrpcLogAppender).

Entries go out in index order on one appendEntries stream; the follower answers each in order. The
follower has failed when the stream breaks (a killed datanode resets its connection at once), when it
refuses an entry for a reason of its own, or when its oldest unanswered entry waits longer than the
request timeout (a hung or partitioned datanode). A failed follower is reported once and never retried:
the pipeline is closed (see group.py).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Callable

from pyozone import rpc
from pyozone.common.tls import TlsStore
from pyozone.datanode.traffic import TRAFFIC
from pyozone.hdds.security.x509 import CertRole
from pyozone.protocol import MAX_DATA_MESSAGE_BYTES
from pyozone.protocol.ratis import APPEND_ENTRIES, AppendReply, append_reply_from_bytes

log = logging.getLogger(__name__)


class LogAppender:
    def __init__(
        self,
        follower: str,
        target: str | None,
        on_reply: Callable[[str, AppendReply], None],
        on_failure: Callable[[str, str], None],
        request_timeout_s: float,
        tls: TlsStore | None = None,
    ) -> None:
        """`target` is the follower's RATIS "host:port" (None: SCM sent no address, so it cannot be
        reached and fails at the first entry); `tls` the datanode's certificate (mutual TLS)."""
        self.follower = follower
        self.target = target
        self.tls = tls
        self._on_reply = on_reply
        self._on_failure = on_failure
        self.request_timeout_s = request_timeout_s
        self._queue: asyncio.Queue[tuple[int, bytes] | None] = asyncio.Queue()
        self._outstanding: deque[tuple[int, float]] = deque()
        self._task: asyncio.Task[None] | None = None
        self._closed = False

    def send(self, index: int, entry: bytes) -> None:
        """Queues entry `index`, a serialized AppendEntriesRequestProto (protocol.ratis.encode_entry)."""
        if self._closed:
            return
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name=f"appender-{self.follower}")
        self._queue.put_nowait((index, entry))
        TRAFFIC.sent(self.follower, "V1", len(entry))

    def close(self) -> None:
        """Stops sending; entries not yet sent are dropped."""
        if self._closed:
            return
        self._closed = True
        self._queue.put_nowait(None)
        if self._task is not None:
            self._task.cancel()

    async def wait_closed(self) -> None:
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)

    def _fail(self, reason: str) -> None:
        if not self._closed:
            self._on_failure(self.follower, reason)
            self.close()

    async def _run(self) -> None:
        if self.target is None:
            self._fail("its RATIS address is unknown")
            return
        watchdog = asyncio.create_task(self._watchdog())
        channel: rpc.Channel | None = None
        call: rpc.StreamCall | None = None
        try:
            settings = rpc.ChannelSettings(max_message_bytes=MAX_DATA_MESSAGE_BYTES)
            channel = rpc.Channel(self.target, settings, self.tls, peer=CertRole.DATANODE)
            append = channel.stream_stream(APPEND_ENTRIES, append_reply_from_bytes)
            call = append(self._entries())  # entries arrive serialized
            async for reply in call:
                if self._outstanding and self._outstanding[0][0] == reply.index:
                    self._outstanding.popleft()
                self._on_reply(self.follower, reply)
                if self._closed:
                    return
            self._fail("it ended the stream")
        except asyncio.CancelledError:
            pass
        except rpc.RpcError as e:
            self._fail(f"{e.code().name}: {e.details()}")
        except Exception as e:  # a bug must not leave the pipeline silently stuck
            log.exception("appender to %s", self.follower)
            self._fail(repr(e))
        finally:
            watchdog.cancel()
            if call is not None:
                call.cancel()
            if channel is not None:
                await channel.close()

    async def _entries(self) -> AsyncIterator[bytes]:
        while (queued := await self._queue.get()) is not None:
            index, entry = queued
            self._outstanding.append((index, time.monotonic()))
            yield entry

    async def _watchdog(self) -> None:
        step = min(1.0, self.request_timeout_s / 4)
        while not self._closed:
            await asyncio.sleep(step)
            if self._outstanding:
                index, sent = self._outstanding[0]
                waited = time.monotonic() - sent
                if waited > self.request_timeout_s:
                    self._fail(f"no answer to entry {index} in {waited:.1f} s")
                    return
