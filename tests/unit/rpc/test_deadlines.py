"""A connection's deadlines on one timer (rpc/deadlines.py): each expires at its own time whatever order
they came in, an ended call never expires, and the entries of ended calls do not pile up."""

from __future__ import annotations

import asyncio

from pyozone.rpc.deadlines import COMPACT_SLACK, Deadlines
from tests.unit.rpc.rpc_support import scenario


def test_deadlines_expire_in_time_order_and_only_for_live_calls() -> None:
    async def test() -> None:
        loop = asyncio.get_running_loop()
        live: dict[int, str] = {}
        expired: list[tuple[int, float]] = []
        start = loop.time()
        deadlines = Deadlines(loop, live, lambda i, c: expired.append((i, loop.time())))
        for call_id, timeout in [(1, 0.3), (2, 0.05), (3, 0.15), (4, 0.1)]:
            live[call_id] = f"call {call_id}"
            deadlines.add(timeout, call_id, live[call_id])
        del live[4]  # ended before its deadline
        await asyncio.sleep(0.4)
        assert [i for i, _ in expired] == [2, 3, 1]
        for (_, at), timeout in zip(expired, [0.05, 0.15, 0.3], strict=True):
            assert timeout <= at - start + 0.002 < timeout + 0.2
        deadlines.close()

    scenario(test)


def test_the_entries_of_ended_calls_are_dropped() -> None:
    async def test() -> None:
        loop = asyncio.get_running_loop()
        live: dict[int, object] = {}
        deadlines = Deadlines(loop, live, lambda i, c: None)
        for call_id in range(20_000):
            live[call_id] = call = object()
            deadlines.add(60, call_id, call)
            if call_id >= 32:
                del live[call_id - 32]
            assert len(deadlines._heap) <= 2 * (len(live) + 1) + COMPACT_SLACK + 1
        deadlines.close()

    scenario(test)
