"""KeyOutputStream: a key's bytes over as many blocks as it takes (Ozone's KeyOutputStream).

Blocks come from OM: first the ones openKey pre-allocated, then allocateBlock. When a block fails the
stream does what Ozone's handleException does: it lets the putBlocks in flight settle, keeps the block
at its acknowledged length (dropping it when nothing was acknowledged), excludes what failed (the
container, the pipeline, the lagging or unreachable datanodes), discards pre-allocated blocks that hit
the exclusions, and rewrites every unacknowledged byte to a new block. Failures in a row without progress
form a run that backs off and ends at ozone.client.max.retries rewrites or at ozone.client.retry.deadline
(retry.py); allocating the next block within a run waits for SCM (no pipeline outside the exclude list until
it replaces the dead one) as long as the deadline allows. Then BlockWriteError names every try, the
pipelines and the time spent. As in Ozone (whose retry count goes back to 0 once the rewritten data went
out), a failure after newly acknowledged data starts a new run: a big key crosses many container closes in
its life and each may cost one rewrite.

Nothing is visible before close() commits the key with exactly the acknowledged blocks and `metadata` (a
writer may change it until then: the S3 gateway learns an object's MD5 ETag only at its end); a stream
that is aborted (or just dropped) commits nothing and OM cleans up the open key.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import replace

from pyozone.client.block_output import BlockFailure, BlockOutputStream, FailureKind
from pyozone.client.config import ClientConfig
from pyozone.client.datastream import BlockDataStreamOutput
from pyozone.client.errors import BlockWriteError, OMException, OMUnavailableError, OzoneClientError
from pyozone.client.exclude import ExcludeList
from pyozone.client.retry import RetryRun
from pyozone.framework.datanode import ChannelPool
from pyozone.framework.om import OmClient
from pyozone.hdds.locations import DatanodeRef, KeyLocation
from pyozone.hdds.om_views import KeyCondition, KeyInfo

Route = Callable[[tuple[DatanodeRef, ...]], tuple[DatanodeRef, ...]]


class KeyOutputStream:
    RETRIES_KEY = "ozone.client.max.retries"

    def __init__(
        self,
        om: OmClient,
        pool: ChannelPool,
        config: ClientConfig,
        volume: str,
        bucket: str,
        key: str,
        client_id: int,
        preallocated: list[KeyLocation],
        clock: Callable[[], float] = time.monotonic,
        route: Route | None = None,
        metadata: Mapping[str, str] | None = None,
        part: tuple[str, int] | None = None,
    ) -> None:
        """`route`: the chain order of a pipeline's members for write pipeline V2; None writes by V1.
        `part`: (upload id, part number) when the stream writes a part of a multipart upload; close()
        commits the part (named by metadata["ETag"]) instead of the key."""
        self.volume, self.bucket, self.key = volume, bucket, key
        self.metadata: dict[str, str] = dict(metadata or {})
        self.part = part
        self.client_id = client_id
        self._om = om
        self._pool = pool
        self._config = config
        self._preallocated = deque(preallocated)
        self._exclude = ExcludeList(config.exclude_expiry_s)
        self._blocks: list[KeyLocation] = []  # acknowledged, in key order
        self._current: BlockOutputStream | None = None
        self._offset = 0  # key bytes in self._blocks
        self._written = 0  # key bytes the caller handed over
        self._clock = clock
        self._failures: list[str] = []
        self._retry_run: RetryRun | None = None  # the failures since data was last acknowledged
        self._state = "open"
        self._route = route
        self._retry_policy = config.write_retry
        self.key_info: KeyInfo | None = None
        self.condition: KeyCondition | None = None
        """An S3 conditional write, which the commit must meet (OM checks it in the commit's step)."""

    @property
    def write_path(self) -> str:
        """Which write pipeline writes this key's blocks: "V1" or "V2" (datastream)."""
        return "V1" if self._route is None else "V2"

    @property
    def exclude_list(self) -> ExcludeList:
        return self._exclude

    @property
    def retries(self) -> int:
        return len(self._failures)

    @property
    def written(self) -> int:
        return self._written

    async def write(self, data: bytes | bytearray | memoryview) -> int:
        self._check_open()
        self._written += len(data)
        await self._run(memoryview(data).cast("B"), final=False)
        return len(data)

    async def close(self, within_s: float | None = None) -> KeyInfo:
        """Writes what is buffered, waits until every replica has it and commits the key. `within_s`:
        the commit's wait for an unreachable OM ends this many seconds from now at the latest."""
        until = None if within_s is None else time.monotonic() + within_s
        if self._state == "committed" and self.key_info is not None:
            return self.key_info
        self._check_open()
        await self._run(memoryview(b""), final=True)
        if self._offset != self._written:  # the retry bookkeeping lost or duplicated bytes
            raise BlockWriteError(f"{self._name()}: {self._offset} bytes in blocks, {self._written} written")
        if self.part is None:
            committed = await self._om.commit_key(
                self.volume, self.bucket, self.key, self.client_id, self._offset, self._blocks, self.metadata,
                self.condition, None if until is None else until - time.monotonic(),
            )  # fmt: skip
        else:
            committed = await self._om.commit_multipart_part(
                self.volume, self.bucket, self.key, self.client_id, *self.part, self._offset, self._blocks,
                self.metadata,
            )  # fmt: skip
        self.key_info = replace(committed, write_path=self.write_path)
        self._state = "committed"
        return self.key_info

    async def abort(self) -> None:
        """Stops writing and commits nothing."""
        if self._state != "open":
            return
        self._state = "aborted"
        if self._current is not None:
            current, self._current = self._current, None
            await current.close()

    async def __aenter__(self) -> KeyOutputStream:
        return self

    async def __aexit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            await self.close()
        else:
            await self.abort()

    # ------------------------------------------------------------------ internals
    def _name(self) -> str:
        return f"/{self.volume}/{self.bucket}/{self.key}"

    def _check_open(self) -> None:
        if self._state != "open":
            raise OzoneClientError(f"{self._name()}: the stream is {self._state}")

    async def _run(self, view: memoryview, final: bool) -> None:
        while True:
            try:
                while view:
                    block = await self._block()
                    room = self._capacity(block)
                    n = min(len(view), room - block.length)
                    block.accept(view[:n])
                    view = view[n:]
                    await block.emit()
                    if block.length >= room:
                        await self._finish(block)
                if final and self._current is not None:
                    await self._finish(self._current)
                return
            except BlockFailure as failure:
                retained = await self._handle(failure)
                view = memoryview(retained + bytes(view))
            except BaseException:
                await self.abort()
                raise

    def _capacity(self, block: BlockOutputStream) -> int:
        """The block's length as OM allocated it (a small key's own size), at most a block."""
        allocated = block.location.length
        return min(allocated, self._config.block_size) if allocated > 0 else self._config.block_size

    async def _block(self) -> BlockOutputStream:
        if self._current is None:
            while self._preallocated:
                location = self._preallocated.popleft()
                members = tuple(m.uuid for m in location.pipeline.members)
                if not self._exclude.excludes(location.container_id, location.pipeline.id, members):
                    break
            else:
                location = await self._allocate()
            if self._route is None:
                self._current = BlockOutputStream(location, self._config, self._pool)
            else:
                chain = self._route(location.pipeline.members)
                self._current = BlockDataStreamOutput(location, self._config, self._pool, chain)
        return self._current

    async def _allocate(self) -> KeyLocation:
        """A new block; within a run of failures, SCM's "no pipeline yet" is waited out until the deadline."""
        run = self._retry_run
        budget = None if run is None else run.remaining_s
        try:
            return await self._om.allocate_block(
                self.volume, self.bucket, self.key, self.client_id, self._exclude.to_proto(), budget
            )
        except OMException as e:
            if not self._failures or e.result != "KEY_ALLOCATION_ERROR":
                raise
            # SCM found no place outside what this key's own failures excluded: those failures are the news
            raise OMException(
                e.result,
                f"{e.message}; the exclude list ({self._exclude}) came from this key's failures: "
                + "; ".join(self._failures),
            ) from None
        except OMUnavailableError as e:
            if run is None:
                raise
            raise BlockWriteError(
                f"{self._name()}: gave up after {len(run.tries)} failures in {run.elapsed_s:.1f}s "
                f"(ozone.client.retry.deadline {self._config.retry_deadline_s:g}s): no block outside "
                f"the exclude list ({self._exclude}): {e}; tried: " + "; ".join(run.tries)
            ) from None

    async def _finish(self, block: BlockOutputStream) -> None:
        await block.emit(final=True)
        self._current = None
        self._exclude_servers(block)
        await block.close()
        if block.acked:
            self._blocks.append(block.committed(self._offset))
            self._offset += block.acked
            self._retry_run = None  # progress

    async def _handle(self, failure: BlockFailure) -> bytes:
        """Ozone's handleException: what to exclude, what is kept, what must be rewritten."""
        block, self._current = self._current, None
        assert block is not None
        await block.settle()
        await block.close()
        loc = block.location
        leader = loc.pipeline.leader()
        what = (
            f"block {loc.block_name} on pipeline {loc.pipeline.id} "
            f"(leader {leader.address if leader else '-'}): {failure}"
        )
        self._exclude_failed(failure, loc)
        self._exclude_servers(block)
        if block.acked:
            self._blocks.append(block.committed(self._offset))
            self._offset += block.acked
        retained = block.retained()
        await self._next_try(what, failure, bool(block.acked), len(retained))
        return retained

    def _exclude_failed(self, failure: BlockFailure, location: KeyLocation) -> None:
        """Where the next block must not go after `failure` at `location`."""
        match failure.kind:
            case FailureKind.CONTAINER:
                self._exclude.add_container(location.container_id)
            case FailureKind.NOT_REPLICATED | FailureKind.PIPELINE:
                self._exclude.add_pipeline(location.pipeline.id)
                for uuid in failure.datanodes:
                    self._exclude.add_datanode(uuid)

    def _exclude_servers(self, block: BlockOutputStream) -> None:
        """The members a watch of `block` found failing: later blocks go elsewhere, though `block` kept its
        data and its pipeline (Ozone's KeyOutputStream adds BlockOutputStream.getFailedServers to the
        exclude list as it closes a block, or on a failure)."""
        for uuid in sorted(block.failed_servers):
            self._exclude.add_datanode(uuid)

    async def _next_try(self, what: str, failure: BlockFailure, progressed: bool, unwritten: int) -> None:
        """Counts a failed block in the run of failures (a new run when data was acknowledged since the
        last one) and waits its backoff; BlockWriteError when the run is over (retry.py)."""
        self._failures.append(what)
        if self._retry_run is None or progressed:
            self._retry_run = RetryRun(self._retry_policy, self._clock)
        run = self._retry_run
        delay = run.fail(what, backoff=failure.kind is not FailureKind.CONTAINER)
        if delay is None:
            await self.abort()
            why = (
                f"{self.RETRIES_KEY} {self._retry_policy.max_retries}"
                if len(run.tries) > self._retry_policy.max_retries
                else f"ozone.client.retry.deadline {self._config.retry_deadline_s:g}s"
            )
            raise BlockWriteError(
                f"{self._name()}: gave up after {len(run.tries) - 1} retries in {run.elapsed_s:.1f}s "
                f"({why}); {unwritten} bytes unwritten; tried: " + "; ".join(run.tries)
            )
        if delay:
            await asyncio.sleep(delay)
