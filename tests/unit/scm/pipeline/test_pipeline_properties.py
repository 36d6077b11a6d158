"""Property: filling a random cluster with RATIS/THREE pipelines never breaks RatisPipelineProvider's
limits."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyozone.hdds.ids import RATIS_ONE

INF = float("inf")


@st.composite
def cluster_shapes(draw):
    n = draw(st.integers(3, 40))
    rack_count = draw(st.integers(1, 4))
    return {
        "racks": draw(st.lists(st.integers(0, rack_count - 1), min_size=n, max_size=n)),
        "metadata": draw(st.lists(st.integers(1, 4), min_size=n, max_size=n)),
        "L": draw(st.integers(0, 4)),
        "G": draw(st.integers(0, 50)),
        "ratis_one_first": draw(st.booleans()),
        "seed": draw(st.integers(0, 2**32 - 1)),
    }


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=cluster_shapes())
def test_filling_never_exceeds_the_limits(make_cluster, shape) -> None:
    L, G, metadata = shape["L"], shape["G"], shape["metadata"]
    n = len(metadata)
    c = make_cluster(
        {"ozone.scm.datanode.pipeline.limit": str(L), "ozone.scm.ratis.pipeline.limit": str(G)},
        racks=[f"/rack{r}" for r in shape["racks"]],
        seed=shape["seed"],
    )
    c.add_nodes(n, metadata_volumes=metadata)
    ones = len(c.create_until_refusal(RATIS_ONE)[0]) if shape["ratis_one_first"] else 0

    made, _ = c.create_until_refusal()

    per_node = {dn: (L if L > 0 else 2 * md) for dn, md in zip(c.ids, metadata, strict=True)}
    if L > 0:
        cluster_allowed = L * n // 3  # every node is IN_SERVICE and HEALTHY; G is ignored
    elif G > 0:
        cluster_allowed = G - ones
    else:
        cluster_allowed = INF
    bound = min(cluster_allowed, sum(per_node.values()) // 3)
    assert len(made) <= max(bound, 0)
    counts = c.three_counts()
    for dn, limit in per_node.items():
        assert counts[dn] <= limit, (dn, counts[dn], limit)
    for p in made:
        assert len(set(p.nodes)) == 3, p.nodes
