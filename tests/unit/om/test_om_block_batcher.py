"""OM's block requests to SCM: a lone request goes at once; concurrent ones share one SCM call."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from pyozone import rpc
from pyozone.framework.scm_errors import ScmClientError
from pyozone.hdds.block import ExcludeList
from pyozone.hdds.ids import RATIS_THREE
from pyozone.om.block_batcher import BlockBatcher
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
