"""get_matching_container: open-container limit first, then round-robin by space, else allocate
(WritableRatisContainerProvider).

With the default owner.container.count (3) and pipeline limit (2), a member with V healthy volumes
allows ceil(3V / 2) open containers per owner on the pipeline: 2 for one volume, 5 for three.
"""

from __future__ import annotations

from dataclasses import replace

from pyozone.hdds.states import LifeCycleEvent, PipelineState
from pyozone.scm.settings import ContainerSettings, ScmSettings
from tests.unit.scm.container.scm_fakes import GB, Harness, make_harness, node_report, report_written

SIZE = 256 << 20


def pick(h: Harness, pipeline, owner: str = "om", size: int = SIZE, excluded: frozenset[int] = frozenset()):
    info = h.containers.get_matching_container(size, owner, pipeline, excluded)
    return None if info is None else info.container_id


def test_tops_up_to_the_open_container_limit_then_round_robins(h: Harness) -> None:
    pipeline = h.pipelines.add(tuple(h.register(3, volumes=1)))
    assert h.nodes.open_container_limit(pipeline.nodes) == 2
    assert [pick(h, pipeline) for _ in range(6)] == [1, 2, 1, 2, 1, 2]
    assert h.containers.count() == 2


def test_limit_is_the_smallest_over_the_members(h: Harness) -> None:
    dns = h.register(2, volumes=3) + h.register(1, volumes=1)
    pipeline = h.pipelines.add(tuple(dns))
    assert h.nodes.open_container_limit(pipeline.nodes) == 2
    wide = h.pipelines.add(tuple(h.register(3, volumes=3)))
    assert h.nodes.open_container_limit(wide.nodes) == 5
    assert sorted({pick(h, wide) for _ in range(10)}) == [1, 2, 3, 4, 5]


def test_container_without_space_is_skipped_and_a_new_one_allocated_when_none_fits(h: Harness) -> None:
    pipeline = h.pipelines.add(tuple(h.register(3, volumes=1)))
    assert [pick(h, pipeline) for _ in range(2)] == [1, 2]
    report_written(h.containers, 1, 5 * GB - SIZE + 1)
    assert [pick(h, pipeline) for _ in range(3)] == [2, 2, 2]
    report_written(h.containers, 2, 5 * GB - SIZE + 1)
    assert pick(h, pipeline) == 3  # nothing fits: a new container beyond the limit
    assert pick(h, pipeline, size=SIZE - 1) == 3  # round-robin resumes after the last used (2)
    assert pick(h, pipeline, size=SIZE - 1) == 1  # and wraps round to 1, where SIZE - 1 fits exactly


def one_container_allowed() -> Harness:
    """An allowance of one open container per owner: no owner.container.count to scale by volumes (a
    value ozone-site.xml may not give, so the settings are built directly)."""
    return Harness(ScmSettings(container=ContainerSettings(owner_container_count=0)))


def test_exact_fit_counts_as_space() -> None:
    h = one_container_allowed()
    pipeline = h.pipelines.add(tuple(h.register(3, volumes=1)))
    assert pick(h, pipeline) == 1
    report_written(h.containers, 1, 5 * GB - 2 * SIZE)
    assert pick(h, pipeline, size=2 * SIZE) == 1


def test_excluded_containers_are_not_chosen(h: Harness) -> None:
    pipeline = h.pipelines.add(tuple(h.register(3, volumes=1)))
    assert [pick(h, pipeline) for _ in range(2)] == [1, 2]
    assert [pick(h, pipeline, excluded=frozenset({1})) for _ in range(3)] == [2, 2, 2]
    assert pick(h, pipeline, excluded=frozenset({1, 2})) == 3


def test_owners_have_their_own_containers(h: Harness) -> None:
    pipeline = h.pipelines.add(tuple(h.register(3, volumes=1)))
    assert [pick(h, pipeline, "om-a") for _ in range(2)] == [1, 2]
    assert [pick(h, pipeline, "om-b") for _ in range(3)] == [3, 4, 3]
    assert {h.containers.get(c).owner for c in (3, 4)} == {"om-b"}


def test_with_an_allowance_of_one_a_container_is_reused_until_full() -> None:
    h = one_container_allowed()
    pipeline = h.pipelines.add(tuple(h.register(3, volumes=1)))
    assert h.nodes.open_container_limit(pipeline.nodes) == 1
    assert [pick(h, pipeline) for _ in range(3)] == [1, 1, 1]
    report_written(h.containers, 1, 5 * GB)
    assert pick(h, pipeline) == 2


def test_finalized_containers_leave_the_rotation(h: Harness) -> None:
    pipeline = h.pipelines.add(tuple(h.register(3, volumes=1)))
    assert [pick(h, pipeline) for _ in range(2)] == [1, 2]
    h.containers.update_state(1, LifeCycleEvent.FINALIZE)
    assert pick(h, pipeline) == 3  # the owner is below its limit again
    assert [pick(h, pipeline) for _ in range(2)] == [2, 3]


def test_no_new_container_where_a_member_has_no_room_for_one(h: Harness) -> None:
    """Issue 28, defect 16 (HDDS-12468): a member without a volume able to take a container gets none;
    the existing ones still take blocks."""
    dns = h.register(3, volumes=1)
    pipeline = h.pipelines.add(tuple(dns))
    assert [pick(h, pipeline) for _ in range(2)] == [1, 2]
    h.nodes.process_node_report(dns[1], replace(node_report(1), storage=()))  # its volume is gone
    assert [pick(h, pipeline) for _ in range(2)] == [1, 2]
    for cid in (1, 2):
        report_written(h.containers, cid, 5 * GB)
    assert pick(h, pipeline) is None and h.containers.count() == 2


def test_refused_allocation_yields_none(h: Harness) -> None:
    pipeline = h.pipelines.add(tuple(h.register(3, volumes=1)), PipelineState.CLOSED)
    assert pick(h, pipeline) is None
    assert h.containers.count() == 0


def test_with_no_allowance_containers_are_only_allocated_when_none_fits() -> None:
    h = make_harness({"ozone.scm.datanode.pipeline.limit": "0"})
    dns = h.register(3, volumes=1)
    for dn in dns:  # no metadata disk: a pipeline limit of 0 per node
        h.nodes.process_node_report(dn, replace(node_report(1), metadata_storage=()))
    pipeline = h.pipelines.add(tuple(dns))
    assert h.nodes.open_container_limit(pipeline.nodes) == 0
    assert [pick(h, pipeline) for _ in range(3)] == [1, 1, 1]
