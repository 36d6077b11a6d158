"""ockg and ockv: many keys from many threads through one OzoneClient.

The synchronous OzoneClient is safe to share: every call runs on its loop thread, so T worker threads
keep T keys in flight on the one asyncio data path.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import partial

from pyozone.client import OMException, OMUnavailableError, OzoneClient, OzoneClientError
from pyozone.freon.content import key_chunks, key_name
from pyozone.freon.report import FreonReport
from pyozone.freon.runner import Load, Progress, Run, RunEnd, RunOver, run
from pyozone.hdds.ids import ReplicationConfig


@dataclass(frozen=True, slots=True)
class FreonOptions:
    """What the key tools (ockg, ockv, omkg) write or read: keys PREFIX/0, PREFIX/1, ... of `size` bytes in
    VOLUME/BUCKET. `number` None: no cap (the run ends at `duration_s` or when stopped)."""

    volume: str = "vol1"
    bucket: str = "bucket1"
    prefix: str = "freon"
    number: int | None = 1000
    size: int = 10 * 1024
    threads: int = 10
    replication: ReplicationConfig | None = None
    duration_s: float | None = None

    @property
    def load(self) -> Load:
        return Load(self.number, self.threads, self.duration_s)

    def key_run(self, operation: str) -> Run:
        """A run of key `operation`: keys counted, a failure named by its key."""
        return Run(operation, "keys", (OzoneClientError, ValueError), partial(key_name, self.prefix))


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


def generate_keys(
    client: OzoneClient, options: FreonOptions, progress: Progress | None = None
) -> FreonReport:
    """ockg: writes keys PREFIX/0 .. PREFIX/N-1 of `size` bytes each. A key the end of the run (its
    duration) cuts short is counted as interrupted: one still being written is aborted (nothing of it is
    committed); one whose commit waits for an unreachable OM waits no longer than the run, its outcome
    then as OM applied its last attempt."""
    ensure_bucket(client, options)
    end = RunEnd(options.load)

    def put(index: int) -> int:
        # Streamed piece by piece through the key's output stream: memory stays bounded whatever -s is.
        name = key_name(options.prefix, index)
        written = 0
        with client.create_key(
            options.volume, options.bucket, name, options.size, options.replication
        ) as writer:
            for piece in key_chunks(options.prefix, index, options.size):
                if end.over():
                    raise RunOver(f"{name}: {written} of {options.size} bytes written")  # aborts the key
                writer.write(piece)
                written += len(piece)
            if end.over():
                raise RunOver(f"{name}: written, not committed")  # aborts the key
            try:
                writer.close(end.remaining_s())
            except OMUnavailableError as e:
                if end.over():
                    raise RunOver(f"{name}: the run ended during its commit: {e}") from None
                raise
        return written

    return run(options.key_run("ockg"), options.load, put, progress, end=end)


def _compare(pieces: Iterable[bytes], expected: Iterator[bytes], size: int, end: RunEnd) -> int:
    """Compares a key read piece by piece with its expected content, in bounded memory; its length.
    RunOver when the run ends before the key does."""
    offset = 0
    want = b""
    for piece in pieces:
        if end.over():
            raise RunOver(f"{offset} of {size} bytes checked")
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
    `check_size` a key must also be exactly `size` bytes. A key the end of the run cuts short is counted
    as interrupted."""
    end = RunEnd(options.load)

    def check(index: int) -> int:
        name = key_name(options.prefix, index)
        with client.read_key(options.volume, options.bucket, name) as reader:
            if check_size and reader.size != options.size:
                raise ValueError(f"{reader.size} bytes, expected {options.size}")
            return _compare(reader, key_chunks(options.prefix, index, None), reader.size, end)

    return run(options.key_run("ockv"), options.load, check, progress, end=end)
