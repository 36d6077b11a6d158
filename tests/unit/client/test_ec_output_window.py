"""The EC writer's window, with stub index writers whose putBlocks the test answers: at most
ozone.client.stream.buffer.max.size of stripes go out unacknowledged, a putBlock covers a flush.size of
stripes, and a stripe waiting for room stays pending (it is sent once the oldest batch is acknowledged)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pyozone.client import ec_output
from pyozone.client.config import ClientConfig
from pyozone.client.ec_output import ECKeyOutputStream
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.locations import DatanodeRef, KeyLocation, PipelineRef
from tests.polling import wait_for_async
from tests.unit.client.fakes import FLUSH, MAX, small_conf

RS = ReplicationConfig.parse("rs-3-2-1k")
STRIPE = RS.ec_data * RS.ec_chunk_size


class StubIndex:
    """An index writer whose putBlocks stay unanswered until the test answers them."""

    def __init__(self) -> None:
        self.cells: list[bytes] = []
        self.puts: list[tuple[int, bool, asyncio.Future[None]]] = []
        self.failure = None

    def write_cell(self, cell: memoryview, sums: object) -> None:
        self.cells.append(bytes(cell))

    def put(self, group_length: int, eof: bool) -> asyncio.Future[None]:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.puts.append((group_length, eof, future))
        return future

    async def close(self) -> None:
        pass


def location() -> KeyLocation:
    members = tuple(DatanodeRef(f"dn{i}", f"dn{i}", "127.0.0.1", 1) for i in range(1, 6))
    return KeyLocation(1, 1001, 0, 0, 0, PipelineRef("ec-pipeline", members, "", (1, 2, 3, 4, 5), RS))


async def sent(stubs: dict[int, StubIndex], stripes: int) -> None:
    """Waits until `stripes` stripes went out, then shows no more do: time passes (a plain sleep, as a
    test that something does not happen may) while the writer waits for an answer."""
    await wait_for_async(
        lambda: len(stubs.get(1, StubIndex()).cells) >= stripes, what=f"{stripes} stripes sent"
    )
    await asyncio.sleep(0.2)
    assert len(stubs[1].cells) == stripes


def test_at_most_max_size_of_stripes_unacknowledged(monkeypatch: pytest.MonkeyPatch) -> None:
    stubs: dict[int, StubIndex] = {}

    def stub(group: Any, index: int, *rest: Any) -> StubIndex:
        return stubs.setdefault(index, StubIndex())

    monkeypatch.setattr(ec_output, "index_output", stub)
    config = ClientConfig.from_conf(small_conf("127.0.0.1:1"))
    window, per_put = MAX // STRIPE, FLUSH // STRIPE  # 5 stripes, a putBlock per 2

    def answer(first: int | None = None) -> None:
        for index in stubs.values():
            for _, _, future in index.puts[:first]:
                if not future.done():
                    future.set_result(None)

    async def scenario() -> None:
        stream = ECKeyOutputStream(None, None, config, "vol", "bucket", "k", 1, [location()])  # type: ignore[arg-type]
        writing = asyncio.ensure_future(stream.write(bytes(12 * STRIPE)))
        await sent(stubs, window)
        assert not writing.done()
        assert [(n, eof) for n, eof, _ in stubs[4].puts] == [
            (per_put * STRIPE, False),
            (2 * per_put * STRIPE, False),
        ]
        answer(first=1)  # the oldest batch acknowledged: as many stripes more go out
        await sent(stubs, window + per_put)
        assert not writing.done()

        async def done() -> bool:
            answer()
            return writing.done()

        await wait_for_async(done, what="the write returned")
        assert all(len(index.cells) == 12 for index in stubs.values())  # every stripe went out
        await stream.abort()

    asyncio.run(scenario())
