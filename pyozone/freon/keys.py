"""ockg and ockv: many keys from many threads through one OzoneClient.

The synchronous OzoneClient is safe to share: every call runs on its loop thread, so T worker threads
keep T keys in flight on the one asyncio data path.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from pyozone.client import OMException, OzoneClient, OzoneClientError
from pyozone.freon.content import key_chunks, key_name
from pyozone.freon.report import FreonReport

Progress = Callable[[int], None]
"""Called with 1 per finished key."""


@dataclass(frozen=True, slots=True)
class FreonOptions:
    volume: str = "vol1"
    bucket: str = "bucket1"
    prefix: str = "freon"
    number: int = 1000
    size: int = 10 * 1024
    threads: int = 10
    replication: str | None = None


def ensure_bucket(client: OzoneClient, options: FreonOptions) -> None:
    """Creates the volume and bucket unless they exist (Ozone's freon does the same)."""
    for create in (
        lambda: client.create_volume(options.volume),
        lambda: client.create_bucket(options.volume, options.bucket, options.replication),
    ):
        try:
            create()
        except OMException as e:
            if not e.result.endswith("ALREADY_EXISTS"):
                raise


def _run(
    operation: str,
    options: FreonOptions,
    one: Callable[[int], int],
    progress: Progress | None,
) -> FreonReport:
    latencies: list[float] = []
    failures: list[str] = []
    done_bytes = 0

    def task(index: int) -> tuple[int, float, str | None]:
        start = time.perf_counter()
        try:
            n = one(index)
            error = None
        except (OzoneClientError, ValueError) as e:
            n, error = 0, f"{key_name(options.prefix, index)}: {e}"
        return n, (time.perf_counter() - start) * 1000, error

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=max(1, options.threads)) as pool:
        for n, latency, error in pool.map(task, range(options.number)):
            if error is None:
                latencies.append(latency)
                done_bytes += n
            else:
                failures.append(error)
            if progress:
                progress(1)
    seconds = time.perf_counter() - start
    return FreonReport(operation, len(latencies), done_bytes, seconds, tuple(latencies), tuple(failures))


def generate_keys(
    client: OzoneClient, options: FreonOptions, progress: Progress | None = None
) -> FreonReport:
    """ockg: writes keys PREFIX/0 .. PREFIX/N-1 of `size` bytes each."""
    ensure_bucket(client, options)

    def put(index: int) -> int:
        # Streamed piece by piece through the key's output stream: memory stays bounded whatever -s is.
        name = key_name(options.prefix, index)
        written = 0
        with client.create_key(
            options.volume, options.bucket, name, options.size, options.replication
        ) as writer:
            for piece in key_chunks(options.prefix, index, options.size):
                writer.write(piece)
                written += len(piece)
        return written

    return _run("ockg", options, put, progress)


def _compare(pieces: Iterable[bytes], expected: Iterator[bytes], size: int) -> int:
    """Compares a key read piece by piece with its expected content, in bounded memory; its length."""
    offset = 0
    want = b""
    for piece in pieces:
        view = memoryview(piece)
        while view:
            if not want:
                want = next(expected)
            n = min(len(view), len(want))
            if view[:n] != want[:n]:
                first = offset + next(i for i in range(n) if view[i] != want[i])
                raise ValueError(f"content differs from byte {first} of {size}")
            view, want, offset = view[n:], want[n:], offset + n
    return offset


def verify_keys(
    client: OzoneClient, options: FreonOptions, progress: Progress | None = None, check_size: bool = False
) -> FreonReport:
    """ockv: reads keys PREFIX/0 .. PREFIX/N-1 and compares every byte with what ockg wrote; with
    `check_size` a key must also be exactly `size` bytes."""

    def check(index: int) -> int:
        name = key_name(options.prefix, index)
        with client.read_key(options.volume, options.bucket, name) as reader:
            if check_size and reader.size != options.size:
                raise ValueError(f"{reader.size} bytes, expected {options.size}")
            return _compare(reader, key_chunks(options.prefix, index, None), reader.size)

    return _run("ockv", options, check, progress)
