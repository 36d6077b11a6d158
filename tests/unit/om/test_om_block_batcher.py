"""OM's block requests to SCM: a lone request goes at once; concurrent ones share one SCM call."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import pytest

from pyozone import rpc
from pyozone.framework.scm_errors import ScmClientError
from pyozone.hdds.block import ExcludeList
from pyozone.hdds.ids import RATIS_THREE
from pyozone.om.block_batcher import BatchStats, BlockBatcher, LoopBlockBatcher
from pyozone.protocol.block import MAX_BLOCKS_PER_REQUEST
from tests.unit.om.om_fakes import FakeScm

WAIT_S = 10


class SlowScm(FakeScm):
    """Holds its first allocation until released, so others queue behind it."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.entered = threading.Event()

    def allocate_blocks(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        self.entered.set()
        assert self.release.wait(WAIT_S)
        return super().allocate_blocks(*args, **kwargs)


def test_a_lone_request_is_one_scm_call_of_its_own_size() -> None:
    scm = FakeScm()
    blocks = BlockBatcher(scm).allocate_blocks(100, RATIS_THREE, 2, ExcludeList(), "om")
    assert len(blocks) == 2
    assert [a[2] for a in scm.allocations] == [2]


def test_requests_arriving_during_a_call_share_the_next_one() -> None:
    scm = SlowScm()
    batcher = BlockBatcher(scm)
    results: dict[int, list] = {}

    def request(i: int, count: int) -> None:
        results[i] = batcher.allocate_blocks(100, RATIS_THREE, count, ExcludeList(), "om")

    first = threading.Thread(target=request, args=(0, 1))
    first.start()
    assert scm.entered.wait(WAIT_S)
    others = [threading.Thread(target=request, args=(i, i)) for i in (1, 2, 3)]
    for t in others:
        t.start()
    while batcher.stats().requests < 4:
        threading.Event().wait(0.001)
    scm.release.set()
    for t in (first, *others):
        t.join(WAIT_S)
    assert [a[2] for a in scm.allocations] == [1, 6]
    assert {i: len(b) for i, b in results.items()} == {0: 1, 1: 1, 2: 2, 3: 3}
    handed = [b.block_id for blocks in results.values() for b in blocks]
    assert len(set(handed)) == 7
    assert batcher.stats().calls == 2


def test_requests_of_another_size_or_exclusions_do_not_share() -> None:
    scm = FakeScm()
    batcher = BlockBatcher(scm)
    batcher.allocate_blocks(100, RATIS_THREE, 1, ExcludeList(), "om")
    batcher.allocate_blocks(200, RATIS_THREE, 1, ExcludeList(), "om")
    batcher.allocate_blocks(100, RATIS_THREE, 1, ExcludeList(containers=frozenset({1})), "om")  # type: ignore[arg-type]
    assert [(a[0], a[2]) for a in scm.allocations] == [(100, 1), (200, 1), (100, 1)]


def test_every_request_of_a_failed_call_gets_scms_error() -> None:
    scm = FakeScm()
    scm.unreachable = True
    with pytest.raises(ScmClientError) as error:
        BlockBatcher(scm).allocate_blocks(100, RATIS_THREE, 1, ExcludeList(), "om")
    assert error.value.code is rpc.StatusCode.UNAVAILABLE


def test_a_batch_never_asks_scm_for_more_than_it_takes_in_one_request() -> None:
    scm = SlowScm()
    batcher = BlockBatcher(scm)
    with ThreadPoolExecutor(20) as pool:
        first = pool.submit(batcher.allocate_blocks, 100, RATIS_THREE, 1, ExcludeList(), "om")
        assert scm.entered.wait(WAIT_S)
        rest = [
            pool.submit(batcher.allocate_blocks, 100, RATIS_THREE, 64, ExcludeList(), "om") for _ in range(16)
        ]
        while batcher.stats().requests < 17:
            threading.Event().wait(0.001)
        scm.release.set()
        assert len(first.result(WAIT_S)) == 1
        assert all(len(f.result(WAIT_S)) == 64 for f in rest)
    assert max(a[2] for a in scm.allocations) <= MAX_BLOCKS_PER_REQUEST


def test_on_the_loop_requests_during_a_call_share_the_next_one_and_its_failure() -> None:
    """LoopBlockBatcher (openKey on OM's loop, issue 29): a lone request is its own SCM call in the pool;
    those arriving while it is out share one call, each gets its own blocks, and a refusal reaches each
    request of its batch."""
    scm = SlowScm()
    batcher = BlockBatcher(scm)

    async def body() -> None:
        with ThreadPoolExecutor(2) as pool:
            lanes = LoopBlockBatcher(batcher, pool)
            ask = partial(lanes.allocate_blocks, 100, RATIS_THREE)
            first = asyncio.ensure_future(ask(1, ExcludeList(), "om"))
            assert await asyncio.to_thread(scm.entered.wait, WAIT_S)
            others = [asyncio.ensure_future(ask(n, ExcludeList(), "om")) for n in (1, 2, 3)]
            await asyncio.sleep(0)
            scm.release.set()
            answers = await asyncio.gather(first, *others)
            assert [len(a) for a in answers] == [1, 1, 2, 3]
            assert len({b.block_id for a in answers for b in a}) == 7
            assert [a[2] for a in scm.allocations] == [1, 6]
            assert batcher.stats() == BatchStats(2, 4)

            scm.unreachable = True
            refused = await asyncio.gather(
                *(ask(1, ExcludeList(), "om") for _ in range(3)), return_exceptions=True
            )
            assert all(isinstance(e, ScmClientError) for e in refused)

    asyncio.run(body())
