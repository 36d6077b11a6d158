"""Per-node pipeline limit and open-container limit (Ozone's SCMNodeManager)."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("metadata_volumes", [0, 1, 4])
def test_fixed_limit_default_is_two_for_every_node(cluster, build, metadata_volumes: int) -> None:
    dn = cluster.add(0, build.node_report(metadata_volumes=metadata_volumes))
    assert cluster.nm.pipeline_limit(dn) == 2


def test_fixed_limit_from_configuration(make_cluster) -> None:
    c = make_cluster({"ozone.scm.datanode.pipeline.limit": "5"})
    assert [c.nm.pipeline_limit(dn) for dn in c.add_nodes(3, metadata_volumes=[1, 2, 4])] == [5, 5, 5]


@pytest.mark.parametrize(
    ("per_disk", "metadata_volumes", "expected"), [(2, 4, 8), (2, 2, 4), (2, 1, 2), (3, 2, 6)]
)
def test_dynamic_limit_from_metadata_volumes(
    make_cluster, per_disk: int, metadata_volumes: int, expected: int
):
    c = make_cluster(
        {"ozone.scm.datanode.pipeline.limit": "0", "ozone.scm.pipeline.per.metadata.disk": str(per_disk)}
    )
    (dn,) = c.add_nodes(1, metadata_volumes=metadata_volumes)
    assert c.nm.pipeline_limit(dn) == expected


def test_dynamic_limit_is_zero_without_a_healthy_data_volume(make_cluster, build) -> None:
    c = make_cluster({"ozone.scm.datanode.pipeline.limit": "0"})
    all_failed = c.add(0, build.node_report(data_volumes=0, metadata_volumes=4, failed_data_volumes=2))
    no_storage = c.add(1, build.node_report(data_volumes=0, metadata_volumes=4))
    one_healthy = c.add(2, build.node_report(data_volumes=1, metadata_volumes=4, failed_data_volumes=2))
    no_metadata = c.add(3, build.node_report(data_volumes=2, metadata_volumes=0))
    assert c.nm.pipeline_limit(all_failed) == 0
    assert c.nm.pipeline_limit(no_storage) == 0
    assert c.nm.pipeline_limit(one_healthy) == 8
    assert c.nm.pipeline_limit(no_metadata) == 0
    assert c.nm.pipeline_limit(build.dn_id(42)) == 0  # unknown node


def test_dynamic_limit_follows_node_reports(make_cluster, build) -> None:
    c = make_cluster({"ozone.scm.datanode.pipeline.limit": "0"})
    (dn,) = c.add_nodes(1, metadata_volumes=1)
    assert c.nm.pipeline_limit(dn) == 2
    c.nm.process_node_report(dn, build.node_report(metadata_volumes=3))
    assert c.nm.pipeline_limit(dn) == 6


def test_volume_counts(cluster, build) -> None:
    dn = cluster.add(0, build.node_report(data_volumes=3, metadata_volumes=2, failed_data_volumes=1))
    info = cluster.nm.node(dn)
    assert (info.healthy_volume_count(), info.failed_volume_count(), info.metadata_volume_count()) == (
        3,
        1,
        2,
    )


# ---------------------------------------------------------------------------------------- open containers
def test_open_container_limit_fixed(cluster, build) -> None:
    # owner.container.count = 3, limit 2: ceil(3 x volumes / 2)
    one = cluster.add(0, build.node_report(data_volumes=1))
    two = cluster.add(1, build.node_report(data_volumes=2))
    four = cluster.add(2, build.node_report(data_volumes=4))
    assert cluster.nm.open_container_limit([one]) == 2  # ceil(3/2)
    assert cluster.nm.open_container_limit([two]) == 3  # 6/2
    assert cluster.nm.open_container_limit([four]) == 6  # 12/2
    assert cluster.nm.open_container_limit([four, two, one]) == 2  # the minimum


def test_open_container_limit_failed_volumes_do_not_count(cluster, build) -> None:
    dn = cluster.add(0, build.node_report(data_volumes=2, failed_data_volumes=3))
    assert cluster.nm.open_container_limit([dn]) == 3


def test_open_container_limit_dynamic(make_cluster, build) -> None:
    c = make_cluster(
        {"ozone.scm.datanode.pipeline.limit": "0", "ozone.scm.pipeline.owner.container.count": "5"}
    )
    a = c.add(0, build.node_report(data_volumes=3, metadata_volumes=1))  # limit 2: ceil(15/2) = 8
    b = c.add(1, build.node_report(data_volumes=3, metadata_volumes=4))  # limit 8: ceil(15/8) = 2
    d = c.add(2, build.node_report(data_volumes=7, metadata_volumes=2))  # limit 4: ceil(35/4) = 9
    assert c.nm.open_container_limit([a]) == 8
    assert c.nm.open_container_limit([b]) == 2
    assert c.nm.open_container_limit([d]) == 9
    assert c.nm.open_container_limit([a, b, d]) == 2


def test_open_container_limit_zero_when_a_member_has_no_pipeline_limit(make_cluster, build) -> None:
    c = make_cluster({"ozone.scm.datanode.pipeline.limit": "0"})
    good = c.add(0, build.node_report(data_volumes=4, metadata_volumes=2))
    no_meta = c.add(1, build.node_report(data_volumes=4, metadata_volumes=0))
    assert c.nm.open_container_limit([good, no_meta]) == 0


@pytest.mark.parametrize(("limit", "expected"), [("1", 0), ("2", 1), ("3", 1)])
def test_open_container_limit_without_healthy_volume_uses_java_integer_division(
    make_cluster, build, limit: str, expected: int
) -> None:
    """1 + (a - 1) div b with a = 0: Java's division truncates toward zero, so -1 div 1 = -1, -1 div 2 = 0."""
    c = make_cluster({"ozone.scm.datanode.pipeline.limit": limit})
    dn = c.add(0, build.node_report(data_volumes=0, failed_data_volumes=1))
    assert c.nm.open_container_limit([dn]) == expected
