"""Where lookupKey sends readers: the container location cache (LRU, ttl, short life for containers not
yet CLOSED) and the read pipeline (OPEN: the live pipeline; else replicas, nearest first, UNHEALTHY last)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pyozone.config import OzoneConfiguration
from pyozone.framework.scm_admin import ReplicaLocation
from pyozone.hdds.clock import ManualClock
from pyozone.hdds.ids import RATIS_THREE, BlockID
from pyozone.hdds.om_records import KeyBlock
from pyozone.hdds.states import LifeCycleState, ReplicaState
from pyozone.om.locations import UNSETTLED_CONTAINER_MAX_AGE_MS, LocationCache, read_pipeline
from pyozone.om.scm import ContainerLocation
from pyozone.om.settings import OMSettings
from pyozone.proto import hdds_pb2
from tests.builders import dn_id
from tests.unit.om.om_fakes import (
    MEMBERS,
    PIPELINE,
    FakeScm,
    closed_location,
    details,
    make_om,
    open_location,
)


def test_the_cache_keeps_closed_containers_for_the_ttl(tmp_path: Path) -> None:
    scm, clock = FakeScm(), ManualClock()
    scm.locations[5] = closed_location(5, (1, ReplicaState.CLOSED))
    cache = LocationCache(scm.container_location, clock, size=10, ttl_ms=60_000)
    for _ in range(3):
        assert cache.get(5).state is LifeCycleState.CLOSED
    assert scm.location_calls == 1
    clock.advance(59_999)
    cache.get(5)
    assert scm.location_calls == 1
    clock.advance(1)
    cache.get(5)
    assert scm.location_calls == 2


def test_open_containers_are_fetched_again_after_a_few_seconds() -> None:
    scm, clock = FakeScm(), ManualClock()
    scm.locations[7] = open_location(7)
    cache = LocationCache(scm.container_location, clock, size=10, ttl_ms=60_000)
    cache.get(7)
    clock.advance(UNSETTLED_CONTAINER_MAX_AGE_MS - 1)
    cache.get(7)
    assert scm.location_calls == 1
    scm.locations[7] = closed_location(7, (1, ReplicaState.CLOSED))  # it closed meanwhile
    clock.advance(1)
    assert cache.get(7).state is LifeCycleState.CLOSED
    assert scm.location_calls == 2


@pytest.mark.parametrize("state", [LifeCycleState.CLOSING, LifeCycleState.QUASI_CLOSED])
def test_closing_containers_are_fetched_again_after_a_few_seconds(state: LifeCycleState) -> None:
    scm, clock = FakeScm(), ManualClock()
    scm.locations[7] = replace(closed_location(7, (1, ReplicaState.CLOSING)), state=state)
    cache = LocationCache(scm.container_location, clock, size=10, ttl_ms=60_000)
    cache.get(7)
    clock.advance(UNSETTLED_CONTAINER_MAX_AGE_MS)
    scm.locations[7] = closed_location(7, (1, ReplicaState.CLOSED))
    assert cache.get(7).state is LifeCycleState.CLOSED
    assert scm.location_calls == 2


def test_a_closed_container_without_replicas_is_fetched_again_after_a_few_seconds() -> None:
    """SCM restarted and has not heard from the datanodes yet: that answer must not last the ttl."""
    scm, clock = FakeScm(), ManualClock()
    scm.locations[5] = closed_location(5)
    cache = LocationCache(scm.container_location, clock, size=10, ttl_ms=60_000)
    assert cache.get(5).replicas == ()
    scm.locations[5] = closed_location(5, (1, ReplicaState.CLOSED))  # the datanode reported
    clock.advance(UNSETTLED_CONTAINER_MAX_AGE_MS)
    assert [r.state for r in cache.get(5).replicas] == [ReplicaState.CLOSED]
    assert scm.location_calls == 2


def test_a_refresh_asks_scm_whatever_the_cache_holds() -> None:
    scm, clock = FakeScm(), ManualClock()
    scm.locations[5] = closed_location(5, (1, ReplicaState.CLOSED))
    cache = LocationCache(scm.container_location, clock, size=10, ttl_ms=60_000)
    cache.get(5)
    scm.locations[5] = closed_location(5, (2, ReplicaState.CLOSED))  # the replica moved (decommission)
    assert [r.datanode.hostname for r in cache.get(5, refresh=True).replicas] == ["dn2"]
    assert [r.datanode.hostname for r in cache.get(5).replicas] == ["dn2"]  # and the cache has it
    assert scm.location_calls == 2


def test_the_cache_is_an_lru_of_its_size() -> None:
    scm, clock = FakeScm(), ManualClock()
    cache = LocationCache(scm.container_location, clock, size=2, ttl_ms=60_000)
    cache.get(1)
    cache.get(2)
    cache.get(1)  # 2 is now the least recently used
    cache.get(3)
    assert len(cache) == 2
    calls = scm.location_calls
    cache.get(1)
    assert scm.location_calls == calls
    cache.get(2)
    assert scm.location_calls == calls + 1


def members(pipeline: hdds_pb2.Pipeline) -> list[str]:
    return [m.hostName for m in pipeline.members]


def test_an_open_container_is_read_through_its_pipeline() -> None:
    pipeline = read_pipeline(open_location(7), "dn3")
    assert pipeline is not None
    assert members(pipeline) == ["dn1", "dn2", "dn3"]  # the pipeline's order, leader named
    assert pipeline.leaderID == dn_id(2)
    assert pipeline.type == hdds_pb2.RATIS and pipeline.state == hdds_pb2.PIPELINE_OPEN
    ports = {p.name: p.value for p in pipeline.members[2].ports}
    assert ports["STANDALONE"] == 9863


def test_an_open_container_without_its_pipeline_is_read_from_replicas() -> None:
    location = ContainerLocation(
        8,
        LifeCycleState.OPEN,
        PIPELINE.replication_config,
        None,
        {},
        closed_location(8, (2, ReplicaState.OPEN)).replicas,
    )
    pipeline = read_pipeline(location, "")
    assert pipeline is not None and members(pipeline) == ["dn2"]


def test_replicas_nearest_first_and_unhealthy_last() -> None:
    location = closed_location(
        9,
        (1, ReplicaState.UNHEALTHY),
        (2, ReplicaState.CLOSED),
        (3, ReplicaState.CLOSED),
        (4, ReplicaState.QUASI_CLOSED),
        (5, ReplicaState.DELETED),
    )
    for host, expected in (
        ("", ["dn2", "dn3", "dn4", "dn1"]),
        ("dn3", ["dn3", "dn2", "dn4", "dn1"]),
        ("10.0.0.4", ["dn4", "dn2", "dn3", "dn1"]),
        ("dn1", ["dn2", "dn3", "dn4", "dn1"]),  # an UNHEALTHY replica stays last even on the reader's host
        ("elsewhere", ["dn2", "dn3", "dn4", "dn1"]),
    ):
        pipeline = read_pipeline(location, host)
        assert pipeline is not None and members(pipeline) == expected, host
    assert pipeline.type == hdds_pb2.STAND_ALONE and pipeline.state == hdds_pb2.PIPELINE_CLOSED
    assert {p.name for p in pipeline.members[0].ports} == {"RATIS", "STANDALONE"}


def test_replicas_on_the_readers_rack_come_before_other_racks(tmp_path: Path) -> None:
    racks = {2: "/rack-b", 3: "/rack-a", 4: "/rack-a"}
    replicas = tuple(
        ReplicaLocation(replace(details(i), network_location=racks[i]), ReplicaState.CLOSED)
        for i in (2, 3, 4)
    )
    location = ContainerLocation(9, LifeCycleState.CLOSED, RATIS_THREE, None, {}, replicas)
    for host, rack, expected in (
        ("client-a", "/rack-a", ["dn3", "dn4", "dn2"]),
        ("client-b", "/rack-b", ["dn2", "dn3", "dn4"]),
        ("dn4", "/rack-a", ["dn4", "dn3", "dn2"]),  # its own host first, then its rack
        ("nowhere", "", ["dn2", "dn3", "dn4"]),
    ):
        pipeline = read_pipeline(location, host, rack)
        assert pipeline is not None and members(pipeline) == expected, host
    mapping = tmp_path / "racks.txt"
    mapping.write_text("client-a /rack-a\n10.9.9.9 /rack-b\n")
    settings = OMSettings.from_conf(
        OzoneConfiguration({"net.topology.node.switch.mapping.file": str(mapping)})
    )
    assert (settings.rack_of("client-a"), settings.rack_of("10.9.9.9"), settings.rack_of("x")) == (
        "/rack-a",
        "/rack-b",
        "",
    )


def test_an_unknown_container_has_no_pipeline() -> None:
    assert read_pipeline(ContainerLocation(1, None), "dn1") is None


def test_lookup_key_fills_pipelines_and_states(tmp_path: Path) -> None:
    scm = FakeScm()
    om = make_om(tmp_path, scm)
    om.volumes.create("vol1")
    om.buckets.create("vol1", "bkt1")
    session = om.keys.open("vol1", "bkt1", "k", 2000)
    a, b = (x.block_id for x in session.key.blocks)
    om.keys.commit(
        "vol1", "bkt1", "k", session.client_id, 2000, [KeyBlock(a, 0, 1000), KeyBlock(b, 1000, 1000)]
    )
    scm.locations[1] = closed_location(1, (1, ReplicaState.CLOSED), (2, ReplicaState.CLOSED))
    located = om.keys.lookup("vol1", "bkt1", "k", "dn2")
    assert [x.container_state for x in located.locations] == ["CLOSED", "CLOSED"]
    assert [members(x.pipeline) for x in located.locations] == [["dn2", "dn1"], ["dn2", "dn1"]]
    assert scm.location_calls == 1  # both blocks sit in container 1: one question to SCM
    assert located.key.blocks[0].block_id == BlockID(1, a.local_id)
    assert details(1).hostname == "dn1" and MEMBERS
    om.keys.lookup("vol1", "bkt1", "k", "dn2")
    assert scm.location_calls == 1
    om.keys.lookup("vol1", "bkt1", "k", "dn2", refresh=True)  # a reader retrying: forceUpdateContainerCache
    assert scm.location_calls == 2
