"""What the chaos suite writes and reads back: a `Workload` is one write path (Ratis keys by V1, V2 or the
client's choice by size here; EC and S3 add their own and register them in WORKLOADS), plus the mixed key
sizes and the naming of errors.
"""

from __future__ import annotations

import asyncio
import functools
import math
import random
from collections.abc import Callable
from typing import Protocol

from pyozone.client import OMException, OzoneClient
from pyozone.config import OzoneConfiguration

KiB, MiB = 1024, 1024 * 1024


class Workload(Protocol):
    """One write path under chaos. `write` returns only once the key is acknowledged (committed): what it
    returned for must read back byte for byte. Both may raise anything; the suite names the class."""

    name: str

    def prepare(self) -> None:
        """Creates what the keys go into (volume, bucket)."""

    def write(self, key: str, data: bytes) -> None: ...

    def read(self, key: str) -> bytes: ...

    def block_ids(self, key: str) -> list[tuple[int, int]]:
        """(container, local id) of each block of the key, as OM's key locations name them."""

    def close(self) -> None: ...


class KeyWorkload:
    """Keys through the Ozone client (Ratis, the bucket's default replication: THREE). `datastream`: None
    lets the client pick by size (V1 below ozone.fs.datastream.auto.threshold, V2 from it), True or False
    forces write pipeline V2 or V1."""

    NAMES = {
        None: "keys (V1 below 4 MB, V2 from 4 MB)",
        False: "V1 keys (ratis)",
        True: "V2 keys (datastream)",
    }

    def __init__(
        self,
        conf: OzoneConfiguration,
        op_timeout_s: float,
        datastream: bool | None = None,
        volume: str = "chaos",
        bucket: str = "keys",
    ):
        self.name = self.NAMES[datastream]
        self._datastream = datastream
        self._client = OzoneClient(conf)
        self._timeout_s = op_timeout_s
        self._volume, self._bucket = volume, bucket

    def prepare(self) -> None:
        for create in (
            lambda: self._client.create_volume(self._volume),
            lambda: self._client.create_bucket(self._volume, self._bucket),
        ):
            try:
                create()
            except OMException as e:
                if "EXISTS" not in e.result:
                    raise

    def write(self, key: str, data: bytes) -> None:
        """Bounded by op_timeout_s (asyncio.TimeoutError past it), so a hung write cannot stall the run."""
        put = self._client.async_client.put_key(
            self._volume, self._bucket, key, data, datastream=self._datastream
        )
        self._client.run(asyncio.wait_for(put, self._timeout_s))

    def read(self, key: str) -> bytes:
        async def read_all() -> bytes:
            stream = await self._client.async_client.read_key(self._volume, self._bucket, key)
            async with stream:
                return await stream.read(-1)

        return self._client.run(asyncio.wait_for(read_all(), self._timeout_s))

    def block_ids(self, key: str) -> list[tuple[int, int]]:
        info = self._client.key_info(self._volume, self._bucket, key)
        return [(location.container_id, location.local_id) for location in info.locations]

    def close(self) -> None:
        self._client.close()


WORKLOADS: dict[str, Callable[[OzoneConfiguration, float], Workload]] = {
    "keys": KeyWorkload,
    "v1": functools.partial(KeyWorkload, datastream=False),
    "v2": functools.partial(KeyWorkload, datastream=True),
}


def key_size(rng: random.Random, smallest: int = KiB, largest: int = 20 * MiB) -> int:
    """Log-uniform between smallest and largest: as many 1-10 KB keys as 1-10 MB ones, so the run has
    many small single-chunk keys and multi-block ones alike."""
    return int(math.exp(rng.uniform(math.log(smallest), math.log(largest))))


def error_class(e: BaseException) -> str:
    """The name a write error is counted under: its class, and OM's result code when OM refused."""
    if isinstance(e, OMException):
        return f"{type(e).__name__}:{e.result}"
    if isinstance(e, TimeoutError):
        return "Timeout (chaos op deadline)"
    return type(e).__name__
