"""BlockManager: allocateBlock and deleteBlocks (Ozone's BlockManagerImpl)."""

from __future__ import annotations

import itertools
import random

import pytest

from pyozone.config import OzoneConfiguration
from pyozone.hdds.block import ExcludeList
from pyozone.hdds.exceptions import ResultCode, SCMException
from pyozone.hdds.ids import RATIS_ONE, RATIS_THREE, BlockID
from pyozone.hdds.states import LifeCycleState, PipelineState
from pyozone.scm.block.manager import BlockManager
from pyozone.scm.events import SCMEvent
from pyozone.scm.settings import ScmSettings
from pyozone.scm.store import MemoryBackend, SCMMetadataStore
from pyozone.scm.store.metadata_store import TABLE_NAMES
from tests.unit.scm.container.scm_fakes import GB, Harness, make_harness, report_written

BLOCK = 256 << 20


class Safemode:
    def __init__(self, on: bool = False) -> None:
        self.on = on

    def __call__(self) -> bool:
        return self.on


def block_manager(h: Harness, safe_mode: Safemode | None = None, seed: int = 1) -> BlockManager:
    return BlockManager(
        h.settings, h.clock, h.events, h.store, h.containers, h.pipelines, h.sequence_ids,
        safe_mode or Safemode(), rng=random.Random(seed),
    )  # fmt: skip


# ---------------------------------------------------------------------- allocation
def test_safe_mode_refuses_allocation_and_deletion(h: Harness) -> None:
    h.pipelines.add(tuple(h.register(3)))
    safe_mode = Safemode(on=True)
    bm = block_manager(h, safe_mode)
    for call in (
        lambda: bm.allocate_block(BLOCK, RATIS_THREE, "om"),
        lambda: bm.delete_blocks([BlockID(1, 1)]),
    ):
        with pytest.raises(SCMException) as err:
            call()
        assert err.value.code is ResultCode.SAFE_MODE_EXCEPTION
    safe_mode.on = False
    assert bm.allocate_block(BLOCK, RATIS_THREE, "om").block_id == BlockID(1, 1)


@pytest.mark.parametrize("size", [-1, 5 * GB + 1])
def test_block_size_must_be_within_zero_and_a_container(h: Harness, size: int) -> None:
    h.pipelines.add(tuple(h.register(3)))
    with pytest.raises(SCMException) as err:
        block_manager(h).allocate_block(size, RATIS_THREE, "om")
    assert err.value.code is ResultCode.INVALID_BLOCK_SIZE


@pytest.mark.parametrize("size", [0, 1, 5 * GB])
def test_extreme_valid_sizes(h: Harness, size: int) -> None:
    h.pipelines.add(tuple(h.register(3)))
    block = block_manager(h).allocate_block(size, RATIS_THREE, "om")
    assert h.containers.get(block.container_id).used_bytes == 0  # replicas' reports set it, not SCM


def test_allocation_returns_the_container_pipeline_and_a_fresh_local_id(h: Harness) -> None:
    pipeline = h.pipelines.add(tuple(h.register(3)))
    bm = block_manager(h)
    blocks = [bm.allocate_block(BLOCK, RATIS_THREE, "om") for _ in range(4)]
    assert [b.block_id.local_id for b in blocks] == [1, 2, 3, 4]
    assert [b.container_id for b in blocks] == [1, 2, 1, 2]  # two open containers per owner here
    assert all(b.pipeline == pipeline and b.block_id.container_id == b.container_id for b in blocks)


def test_only_open_pipelines_of_the_requested_config_are_used(h: Harness) -> None:
    dns = h.register(6)
    h.pipelines.add(tuple(dns[:3]), PipelineState.ALLOCATED)
    h.pipelines.add(tuple(dns[3:]), PipelineState.DORMANT)
    one = h.pipelines.add((dns[0],), config=RATIS_ONE)
    three = h.pipelines.add(tuple(dns[3:]))
    bm = block_manager(h)
    assert {bm.allocate_block(BLOCK, RATIS_THREE, "om").pipeline.id for _ in range(10)} == {three.id}
    assert bm.allocate_block(BLOCK, RATIS_ONE, "om").pipeline.id == one.id


def test_blocks_never_written_do_not_fill_containers(h: Harness) -> None:
    """Issue 29: SCM does not count the blocks it hands out (Ozone's ContainerStateManagerImpl compares
    the replicas' reported used bytes): blocks nobody writes (freon omkg's empty keys) keep going to the
    same open containers, and SCM closes none of them."""
    h.pipelines.add(tuple(h.register(3)))
    bm = block_manager(h)
    blocks = [bm.allocate_block(BLOCK, RATIS_THREE, "om") for _ in range(10 * 5 * GB // BLOCK)]
    assert {b.container_id for b in blocks} == {1, 2}
    assert h.fired_of(SCMEvent.CLOSE_CONTAINER) == []
    assert {h.containers.get(c).state for c in (1, 2)} == {LifeCycleState.OPEN}


def test_containers_reported_full_give_way_to_a_new_one_on_the_pipeline(h: Harness) -> None:
    """ContainerManagerImpl.getMatchingContainer: no open container with room for the block (by what the
    replicas report) -> a new container on the same pipeline; the full ones close on their datanodes'
    CONTAINER_FULL action, not on an allocation."""
    pipeline = h.pipelines.add(tuple(h.register(3)))
    bm = block_manager(h)
    assert {bm.allocate_block(BLOCK, RATIS_THREE, "om").container_id for _ in range(4)} == {1, 2}
    for cid in (1, 2):
        report_written(h.containers, cid, 5 * GB - BLOCK + 1)
    block = bm.allocate_block(BLOCK, RATIS_THREE, "om")
    assert (block.container_id, block.pipeline.id) == (3, pipeline.id)
    assert h.fired_of(SCMEvent.CLOSE_CONTAINER) == []


def test_excluded_datanodes_pipelines_and_containers_are_avoided(h: Harness) -> None:
    dns = h.register(6)
    first = h.pipelines.add(tuple(dns[:3]))
    second = h.pipelines.add(tuple(dns[3:]))
    bm = block_manager(h)
    by_node = ExcludeList(datanodes=frozenset({dns[1]}))
    by_pipeline = ExcludeList(pipelines=frozenset({second.id}))
    assert {bm.allocate_block(BLOCK, RATIS_THREE, "om", by_node).pipeline.id for _ in range(8)} == {second.id}
    assert {bm.allocate_block(BLOCK, RATIS_THREE, "om", by_pipeline).pipeline.id for _ in range(8)} == {
        first.id
    }
    used = {bm.allocate_block(BLOCK, RATIS_THREE, "om", by_pipeline).container_id for _ in range(4)}
    avoid = ExcludeList(pipelines=frozenset({second.id}), containers=frozenset(used))
    assert bm.allocate_block(BLOCK, RATIS_THREE, "om", avoid).container_id not in used


def test_an_excluded_pipeline_is_never_handed_back(h: Harness) -> None:
    """Issue 11 defect 5: with every OPEN pipeline excluded, SCM used to drop the exclude list and hand the
    client the dead pipeline it had just left. It now asks for a new pipeline and for a retry."""
    dns = h.register(3)
    pipeline = h.pipelines.add(tuple(dns))
    h.pipelines.create_error = SCMException("limit", ResultCode.FAILED_TO_FIND_SUITABLE_NODE)
    bm = block_manager(h)
    for excluded in (
        ExcludeList(pipelines=frozenset({pipeline.id})),
        ExcludeList(datanodes=frozenset({dns[0]})),
        ExcludeList(datanodes=frozenset(dns), pipelines=frozenset({pipeline.id})),
    ):
        with pytest.raises(SCMException) as err:
            bm.allocate_block(BLOCK, RATIS_THREE, "om", excluded)
        assert err.value.code is ResultCode.FAILED_TO_FIND_ACTIVE_PIPELINE
        assert "limit" in str(err.value) and "excluded" in str(err.value)
    assert bm.allocate_block(BLOCK, RATIS_THREE, "om").pipeline == pipeline  # not excluded: served


def test_pipeline_choice_is_random_but_reproducible() -> None:
    def choices(seed: int) -> list[str]:
        h = make_harness()
        dns = h.register(9)
        for i in range(3):
            h.pipelines.add(tuple(dns[3 * i : 3 * i + 3]))
        bm = block_manager(h, seed=seed)
        return [bm.allocate_block(BLOCK, RATIS_THREE, "om").pipeline.id for _ in range(30)]

    assert choices(5) == choices(5)
    assert len(set(choices(5))) == 3


def test_no_open_pipeline_creates_one_and_asks_the_caller_to_retry(h: Harness) -> None:
    h.register(3, prefix="new")  # the datanodes the fake creates its pipeline on
    bm = block_manager(h)
    with pytest.raises(SCMException) as err:
        bm.allocate_block(BLOCK, RATIS_THREE, "om")
    assert err.value.code is ResultCode.FAILED_TO_FIND_ACTIVE_PIPELINE
    assert h.pipelines.create_calls == [RATIS_THREE]
    (created,) = h.pipelines.pipelines(RATIS_THREE, PipelineState.ALLOCATED)
    h.pipelines.set_state(created.id, PipelineState.OPEN)  # the datanodes reported it
    assert bm.allocate_block(BLOCK, RATIS_THREE, "om").pipeline.id == created.id


def test_refused_creation_with_allocated_pipelines_still_asks_for_a_retry(h: Harness) -> None:
    h.pipelines.add(tuple(h.register(3)), PipelineState.ALLOCATED)
    h.pipelines.create_error = SCMException("limit", ResultCode.FAILED_TO_FIND_SUITABLE_NODE)
    with pytest.raises(SCMException) as err:
        block_manager(h).allocate_block(BLOCK, RATIS_THREE, "om")
    assert err.value.code is ResultCode.FAILED_TO_FIND_ACTIVE_PIPELINE and "ALLOCATED" in str(err.value)


def test_refused_creation_reports_why(h: Harness) -> None:
    h.pipelines.create_error = SCMException("no healthy nodes", ResultCode.FAILED_TO_FIND_HEALTHY_NODES)
    with pytest.raises(SCMException) as err:
        block_manager(h).allocate_block(BLOCK, RATIS_THREE, "om")
    assert "no healthy nodes" in str(err.value)


def test_pipeline_whose_container_allocation_fails_is_skipped(h: Harness) -> None:
    """A CLOSED-but-listed pipeline refuses new containers; another pipeline serves the block."""
    dns = h.register(6)
    refusing = h.pipelines.add(tuple(dns[:3]))
    good = h.pipelines.add(tuple(dns[3:]))
    original = h.pipelines.add_container_to_pipeline

    def refuse(pid, cid, force=False):
        if pid == refusing.id:
            raise SCMException("closed", ResultCode.PIPELINE_STATE_CHANGE_NOT_ALLOWED)
        original(pid, cid, force)

    h.pipelines.add_container_to_pipeline = refuse  # type: ignore[method-assign]
    bm = block_manager(h)
    assert {bm.allocate_block(BLOCK, RATIS_THREE, "om").pipeline.id for _ in range(6)} == {good.id}


# ---------------------------------------------------------------------- deletion
def test_delete_blocks_makes_one_transaction_per_container(h: Harness) -> None:
    bm = block_manager(h)
    blocks = [BlockID(1, 10), BlockID(2, 20), BlockID(1, 11), BlockID(3, 30), BlockID(2, 21)]
    tx_ids = bm.delete_blocks(blocks)
    assert tx_ids == [1, 2, 3]
    log = bm.deleted_block_log
    assert [(log.get(t).container_id, log.get(t).local_ids) for t in tx_ids] == [
        (1, (10, 11)),
        (2, (20, 21)),
        (3, (30,)),
    ]
    assert bm.delete_blocks([BlockID(1, 12)]) == [4]


class CountingBackend(MemoryBackend):
    def __init__(self) -> None:
        super().__init__(TABLE_NAMES)
        self.writes: list[list] = []

    def write(self, ops) -> None:
        self.writes.append(list(ops))
        super().write(ops)


def test_delete_transactions_are_written_in_batches_capped_by_the_ratis_byte_limit() -> None:
    backend = CountingBackend()
    conf = OzoneConfiguration({"ozone.scm.ha.ratis.log.appender.queue.byte-limit": "1KB"})
    h = Harness(ScmSettings.from_conf(conf), store=SCMMetadataStore(backend))
    cap = int(1024 * 0.9)
    bm = block_manager(h)
    tx_ids = bm.delete_blocks([BlockID(c, local) for c in range(1, 41) for local in range(c, c + 3)])
    batches = [[len(value) for cf, _, value in ops if cf == "deletedBlocks"] for ops in backend.writes]
    batches = [b for b in batches if b]
    assert len(batches) > 2
    for sizes in batches:  # never past 90% of the limit (R19 D4: one SCM HA log entry carries it)
        assert sum(sizes) <= cap
    for sizes, after in itertools.pairwise(batches):  # written once the next would cross it
        assert sum(sizes) + after[0] > cap
    assert sum(len(b) for b in batches) == len(tx_ids) == 40
    assert len(bm.deleted_block_log) == 40
