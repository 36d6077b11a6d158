"""ReadRounds: a caller is answered after a round begun after it asked; callers asking while a round runs
share the next one; a failed round refuses its callers with the server's refusal."""

from __future__ import annotations

import asyncio

import pytest

from pyozone.ratis_server.read_rounds import ReadRounds


class Member:
    """read_index() rounds the test finishes one by one."""

    def __init__(self) -> None:
        self.started: list[asyncio.Future[None]] = []

    async def read_index(self) -> None:
        round_ = asyncio.get_running_loop().create_future()
        self.started.append(round_)
        await round_


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


def test_a_caller_waits_for_a_round_begun_after_it_asked_and_latecomers_share_the_next() -> None:
    async def scenario() -> None:
        member = Member()
        reads = ReadRounds(member.read_index, lambda e: RuntimeError(f"refused: {e}"), "test")
        first = asyncio.ensure_future(reads.barrier())
        await _settle()
        assert len(member.started) == 1
        late = [asyncio.ensure_future(reads.barrier()) for _ in range(3)]  # while round 1 runs
        await _settle()
        member.started[0].set_result(None)
        await _settle()
        assert first.done() and not any(f.done() for f in late)  # round 1 began before they asked
        assert len(member.started) == 2
        member.started[1].set_result(None)
        await asyncio.gather(*late)
        assert reads.rounds == 2

    asyncio.run(scenario())


def test_a_failed_round_refuses_its_callers_and_the_next_caller_gets_a_new_round() -> None:
    async def scenario() -> None:
        member = Member()
        reads = ReadRounds(member.read_index, lambda e: RuntimeError(f"refused: {e}"), "test")
        waiting = asyncio.ensure_future(reads.barrier())
        await _settle()
        member.started[0].set_exception(ValueError("no longer leads"))
        with pytest.raises(RuntimeError, match="refused: no longer leads"):
            await waiting
        again = asyncio.ensure_future(reads.barrier())
        await _settle()
        member.started[1].set_result(None)
        await again
        assert reads.rounds == 2

    asyncio.run(scenario())
