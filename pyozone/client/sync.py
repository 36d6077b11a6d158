"""OzoneClient: the synchronous API, running AsyncOzoneClient on a private event-loop thread.

One implementation, two APIs: every method submits the async one to the client's loop and waits for it,
so scripts, the CLI and freon's worker threads share the asyncio data path (and any number of threads
may call one OzoneClient at once; their calls interleave on the loop).
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Coroutine, Iterable, Iterator, Mapping
from concurrent.futures import Future
from typing import Any, BinaryIO, TypeVar

from pyozone.client import key_reader
from pyozone.client.client import AsyncOzoneClient, Progress, Source
from pyozone.client.config import ClientConfig
from pyozone.client.crypto_streams import CryptoKeyInputStream
from pyozone.client.key_input import KeyInputStream
from pyozone.client.key_output import KeyOutputStream
from pyozone.config import OzoneConfiguration
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.om_views import BucketInfo, KeyInfo, VolumeInfo
from pyozone.rpc.loop import new_event_loop

T = TypeVar("T")


class _Loop:
    def __init__(self) -> None:
        self.loop = new_event_loop()  # uvloop, as the daemons' (pyozone.rpc.loop)
        self._thread = threading.Thread(target=self.loop.run_forever, name="ozone-client", daemon=True)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self.submit(coro).result()

    def submit(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def stop(self) -> None:
        """Cancels what is still running (background call tasks, a stream finishing) and waits for
        it, so closing the loop destroys no pending task ("Task was destroyed but it is pending!")."""
        self.run(_cancel_the_rest())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join()
        self.loop.close()


async def _cancel_the_rest() -> None:
    tasks = asyncio.all_tasks() - {asyncio.current_task()}
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await asyncio.get_running_loop().shutdown_asyncgens()


class KeyWriter:
    """The synchronous face of a KeyOutputStream."""

    def __init__(self, loop: _Loop, stream: KeyOutputStream) -> None:
        self._loop = loop
        self.stream = stream

    def write(self, data: bytes | bytearray | memoryview) -> int:
        return self._loop.run(self.stream.write(data))

    def close(self, within_s: float | None = None) -> KeyInfo:
        """`within_s`: as KeyOutputStream.close."""
        return self._loop.run(self.stream.close(within_s))

    def abort(self) -> None:
        self._loop.run(self.stream.abort())

    def __enter__(self) -> KeyWriter:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


class KeyReader:
    """The synchronous face of a KeyInputStream (a file-like object opened for binary reading)."""

    def __init__(self, loop: _Loop, stream: KeyInputStream | CryptoKeyInputStream) -> None:
        self._loop = loop
        self.stream = stream
        self.size = stream.size
        self.info = stream.info

    def read(self, n: int = -1) -> bytes:
        return self._loop.run(self.stream.read(n))

    def readall(self) -> bytes:
        return self.read(-1)

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        return self.stream.seek(offset, whence)

    def tell(self) -> int:
        return self.stream.tell()

    def __iter__(self) -> Iterator[bytes]:
        while piece := self.read(self.stream.buffer_size):
            yield piece

    def close(self) -> None:
        self._loop.run(self.stream.close())

    def __enter__(self) -> KeyReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class OzoneClient:
    def __init__(
        self,
        conf: OzoneConfiguration | str | None = None,
        om_address: str | None = None,
        *,
        config: ClientConfig | None = None,
    ) -> None:
        """As AsyncOzoneClient: `OzoneClient(conf)`, `OzoneClient("host:port")`, or with om_address=."""
        self._async = AsyncOzoneClient(conf, om_address, config=config)
        self.config = self._async.config
        self._loop = _Loop()

    @property
    def async_client(self) -> AsyncOzoneClient:
        return self._async

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Runs a coroutine of the async client on this client's loop (for callers mixing the APIs)."""
        return self._loop.run(coro)

    def submit(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        """Starts a coroutine of the async client on this client's loop and returns at once (many calls in
        flight from one thread: freon's run_tasks)."""
        return self._loop.submit(coro)

    def close(self) -> None:
        if self._loop is not None:
            self._loop.run(self._async.close())
            self._loop.stop()
            self._loop = None  # type: ignore[assignment]

    def __enter__(self) -> OzoneClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ volumes
    def create_volume(self, volume: str, owner: str = "", quota_bytes: int = 0) -> VolumeInfo:
        return self.run(self._async.create_volume(volume, owner, quota_bytes))

    def volume_info(self, volume: str) -> VolumeInfo:
        return self.run(self._async.volume_info(volume))

    def list_volumes(self, prefix: str = "", start: str = "", limit: int | None = None) -> list[VolumeInfo]:
        return self.run(self._async.list_volumes(prefix, start, limit))

    def delete_volume(self, volume: str) -> None:
        self.run(self._async.delete_volume(volume))

    # ------------------------------------------------------------------ buckets
    def create_bucket(
        self, volume: str, bucket: str, replication: ReplicationConfig | str | None = None
    ) -> BucketInfo:
        return self.run(self._async.create_bucket(volume, bucket, replication))

    def bucket_info(self, volume: str, bucket: str) -> BucketInfo:
        return self.run(self._async.bucket_info(volume, bucket))

    def list_buckets(
        self, volume: str, prefix: str = "", start: str = "", limit: int | None = None
    ) -> list[BucketInfo]:
        return self.run(self._async.list_buckets(volume, prefix, start, limit))

    def delete_bucket(self, volume: str, bucket: str) -> None:
        self.run(self._async.delete_bucket(volume, bucket))

    # ------------------------------------------------------------------ keys
    def create_key(
        self, volume: str, bucket: str, key: str, size_hint: int = 0,
        replication: ReplicationConfig | str | None = None, datastream: bool | None = None,
    ) -> KeyWriter:  # fmt: skip
        return KeyWriter(
            self._loop,
            self.run(self._async.create_key(volume, bucket, key, size_hint, replication, datastream)),
        )

    def read_key(self, volume: str, bucket: str, key: str) -> KeyReader:
        return KeyReader(self._loop, self.run(self._async.read_key(volume, bucket, key)))

    def open_key_reader(self, volume: str, bucket: str, key: str) -> key_reader.KeyReader:
        """The key as an io.RawIOBase (readinto, seek): wrap it in io.BufferedReader, or hand it to fsspec."""
        return key_reader.KeyReader(self._loop.loop, self.run(self._async.read_key(volume, bucket, key)))

    def put_key(
        self, volume: str, bucket: str, key: str, data: Source, progress: Progress | None = None,
        replication: ReplicationConfig | str | None = None, datastream: bool | None = None,
    ) -> KeyInfo:  # fmt: skip
        return self.run(self._async.put_key(volume, bucket, key, data, progress, replication, datastream))

    def put_keys(
        self, volume: str, bucket: str, keys: Mapping[str, bytes] | Iterable[tuple[str, bytes]],
        concurrency: int = 16, replication: ReplicationConfig | str | None = None,
    ) -> list[KeyInfo]:  # fmt: skip
        """As AsyncOzoneClient.put_keys: many keys, up to `concurrency` in flight, from one thread."""
        return self.run(self._async.put_keys(volume, bucket, keys, concurrency, replication))

    def get_key(
        self, volume: str, bucket: str, key: str, dest: str | os.PathLike[str] | BinaryIO,
        progress: Progress | None = None,
    ) -> KeyInfo:  # fmt: skip
        return self.run(self._async.get_key(volume, bucket, key, dest, progress))

    def key_info(self, volume: str, bucket: str, key: str) -> KeyInfo:
        return self.run(self._async.key_info(volume, bucket, key))

    def list_keys(
        self, volume: str, bucket: str, prefix: str = "", start: str = "", limit: int | None = None
    ) -> list[KeyInfo]:
        return self.run(self._async.list_keys(volume, bucket, prefix, start, limit))

    def rename_key(self, volume: str, bucket: str, key: str, to_key: str) -> None:
        self.run(self._async.rename_key(volume, bucket, key, to_key))

    def delete_key(self, volume: str, bucket: str, key: str) -> None:
        self.run(self._async.delete_key(volume, bucket, key))
