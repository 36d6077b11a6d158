"""A connection's deadlines on one timer (rpc/deadlines.py): each expires at its own time whatever order
they came in, an ended call never expires (nor a later call with its id), the entries of ended calls do
not pile up, and no entry keeps its call alive."""

from __future__ import annotations

import asyncio
import gc
import weakref

from pyozone.rpc.deadlines import COMPACT_SLACK, Deadlines
from tests.unit.rpc.rpc_support import scenario


class Call:
    def __init__(self, name: str = "") -> None:
        self.name = name
        self.deadline_seq = -1


def test_deadlines_expire_in_time_order_and_only_for_live_calls() -> None:
    async def test() -> None:
        loop = asyncio.get_running_loop()
        live: dict[int, Call] = {}
        expired: list[tuple[str, float]] = []
        start = loop.time()
        deadlines = Deadlines(loop, live, lambda i, c: expired.append((c.name, loop.time())))
        for call_id, timeout in [(1, 0.3), (2, 0.05), (3, 0.15), (4, 0.1), (5, 0.1)]:
            live[call_id] = Call(f"call {call_id}")
            deadlines.add(timeout, call_id, live[call_id])
        del live[4]  # ended before its deadline
        live[5] = Call("a later call 5, without a deadline")
        await asyncio.sleep(0.4)
        assert [name for name, _ in expired] == ["call 2", "call 3", "call 1"]
        for (_, at), timeout in zip(expired, [0.05, 0.15, 0.3], strict=True):
            assert timeout <= at - start + 0.002 < timeout + 1  # late only by what a loaded machine adds
        deadlines.close()

    scenario(test)


def test_the_entries_of_ended_calls_are_dropped_and_hold_no_call() -> None:
    async def test() -> None:
        loop = asyncio.get_running_loop()
        live: dict[int, Call] = {}
        deadlines = Deadlines(loop, live, lambda i, c: None)
        first = Call()
        ended = weakref.ref(first)
        for call_id in range(20_000):
            live[call_id] = call = first if call_id == 0 else Call()
            deadlines.add(60, call_id, call)
            if call_id >= 32:
                del live[call_id - 32]
            assert len(deadlines._heap) <= 2 * (len(live) + 1) + COMPACT_SLACK + 1
        del first, call
        gc.collect()
        assert ended() is None
        deadlines.close()

    scenario(test)
