"""Background data scanner: re-reads closed replicas and checks every chunk against its checksums.

Bit rot on an idle replica is otherwise found only when a client reads it, possibly after the other
replicas are gone too; the scanner finds it early and marks the replica UNHEALTHY, so SCM re-replicates.
Reads are throttled so the scan does not compete with client I/O.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pyozone.datanode.storage import chunk_io
from pyozone.datanode.storage.container import KeyValueContainer
from pyozone.datanode.storage.container_set import ContainerSet
from pyozone.hdds.block_data import BlockData
from pyozone.hdds.checksum import ChecksumMismatch, verify
from pyozone.hdds.states import ReplicaState

log = logging.getLogger(__name__)

SCANNABLE = (ReplicaState.CLOSED, ReplicaState.QUASI_CLOSED)
_PAGE = 1000


@dataclass(frozen=True, slots=True)
class ScanResult:
    container_id: int
    healthy: bool
    errors: tuple[str, ...] = ()
    blocks_scanned: int = 0
    bytes_scanned: int = 0
    skipped: bool = False  # not CLOSED/QUASI_CLOSED (open replicas change under the scanner), or deleted


class Throttle:
    """Sleeps as needed to keep the average rate since reset() at or below bytes_per_second."""

    def __init__(
        self,
        bytes_per_second: int | None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.bytes_per_second = bytes_per_second
        self._clock, self._sleep = clock, sleep
        self._start, self._bytes = clock(), 0

    def reset(self) -> None:
        self._start, self._bytes = self._clock(), 0

    def consume(self, n: int) -> None:
        if not self.bytes_per_second:
            return
        self._bytes += n
        ahead = self._bytes / self.bytes_per_second - (self._clock() - self._start)
        if ahead > 0:
            self._sleep(ahead)


def verify_block(chunks_dir: Path, block: BlockData, throttle: Throttle | None = None) -> str | None:
    """None if every chunk of the block reads back and matches its checksums, else what is wrong."""
    if not block.chunks:
        return None
    path = chunk_io.block_file(chunks_dir, block.block_id.local_id)
    if not path.is_file():
        return f"{block.block_id}: block file {path.name} is missing"
    size = chunk_io.file_size(path)
    if size < block.file_length:
        return f"{block.block_id}: block file is {size} bytes, its chunks need {block.file_length}"
    for chunk in block.chunks:
        try:
            verify(chunk_io.read_at(path, chunk.offset, chunk.length), chunk.checksum_data)
        except ChecksumMismatch as e:
            return f"{block.block_id} chunk {chunk.name}: {e}"
        except (OSError, ValueError) as e:
            return f"{block.block_id} chunk {chunk.name}: cannot verify: {e}"
        if throttle is not None:
            throttle.consume(chunk.length)
    return None


def verify_blocks(
    chunks_dir: Path, blocks: Iterable[BlockData], throttle: Throttle | None = None
) -> list[str]:
    return [error for block in blocks if (error := verify_block(chunks_dir, block, throttle))]


def _blocks(container: KeyValueContainer) -> Iterator[BlockData]:
    start = 0
    while page := container.list_blocks(start, _PAGE):
        yield from page
        start = page[-1].block_id.local_id + 1


class ContainerScanner:
    def __init__(
        self,
        containers: ContainerSet,
        bandwidth_bytes_per_second: int | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.containers = containers
        self.throttle = Throttle(bandwidth_bytes_per_second, clock, sleep)

    def scan_container(self, container: KeyValueContainer) -> ScanResult:
        """Verifies one replica; a damaged one is marked UNHEALTHY (its listener reports it). One deleted
        before or while it is read (SCM force-deletes replicas at any time) is skipped: its files went, none
        failed."""
        cid = container.container_id
        if container.state not in SCANNABLE:
            return ScanResult(cid, healthy=True, skipped=True)
        self.throttle.reset()
        errors: list[str] = []
        blocks = scanned = 0
        try:
            for block in _blocks(container):
                blocks += 1
                error = verify_block(container.chunks_dir, block, self.throttle)
                if error:
                    errors.append(error)
                else:
                    scanned += block.size
        except Exception as e:
            if self._gone(container):  # whatever its reads raised (a closed DB, files gone): not a failure
                return ScanResult(cid, healthy=True, skipped=True)
            if not isinstance(e, (ValueError, KeyError, TypeError)):
                raise
            errors.append(f"block metadata of container {cid} is damaged: {e}")  # it does not parse
        if self._gone(container):
            return ScanResult(cid, healthy=True, skipped=True)
        if errors and container.state in SCANNABLE:
            container.mark_unhealthy(
                f"scanner: {errors[0]}" + (f" (+{len(errors) - 1} more)" if errors[1:] else "")
            )
        return ScanResult(cid, not errors, tuple(errors), blocks, scanned)

    def _gone(self, container: KeyValueContainer) -> bool:
        """Whether the replica was deleted (or replaced) since its scan began: the set forgets it first."""
        return container.deleted or self.containers.get(container.container_id) is not container

    def scan_all(self) -> Iterator[ScanResult]:
        """Scans every CLOSED and QUASI_CLOSED replica once, lowest container id first."""
        for container in sorted(self.containers.by_state(*SCANNABLE), key=lambda c: c.container_id):
            result = self.scan_container(container)
            if not result.healthy:
                log.warning("container %d failed its scan: %s", result.container_id, "; ".join(result.errors))
            yield result
