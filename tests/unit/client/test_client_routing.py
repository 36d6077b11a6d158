"""chain_order: the datastream chain goes nearest first (same host, then same rack), each hop choosing from
the members left by distance to itself, so a pipeline over two racks crosses between them once."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyozone.client.client import AsyncOzoneClient
from pyozone.client.config import client_rack
from pyozone.client.routing import chain_order
from pyozone.config import ConfigError, OzoneConfiguration
from pyozone.hdds.locations import DatanodeRef
from pyozone.hdds.topology import DEFAULT_RACK

MAPPING = "net.topology.node.switch.mapping.file"


def dn(name: str, rack: str = "") -> DatanodeRef:
    return DatanodeRef(f"uuid-{name}", name, f"10.0.0.{name[-1]}", 9859, 9855, rack)


DN1, DN2, DN3 = dn("dn1", "/rack1"), dn("dn2", "/rack1"), dn("dn3", "/rack2")
PIPELINE = (DN1, DN2, DN3)


def names(chain: tuple[DatanodeRef, ...]) -> list[str]:
    return [m.host for m in chain]


# ------------------------------------------------------------------ the order
def test_client_on_the_other_rack_starts_there_then_crosses_once() -> None:
    assert names(chain_order(PIPELINE, "client", "/rack2")) == ["dn3", "dn1", "dn2"]


def test_client_on_a_members_host_starts_with_it() -> None:
    assert names(chain_order(PIPELINE, "dn2", "/rack1")) == ["dn2", "dn1", "dn3"]


def test_same_host_beats_same_rack() -> None:
    # the client's rack holds dn1 and dn2, but it runs on dn3's host (its rack as the mapping says)
    assert names(chain_order(PIPELINE, "dn3", "/rack1")) == ["dn3", "dn1", "dn2"]


def test_same_rack_beats_pipeline_order() -> None:
    pipeline = (dn("dn1", "/rack1"), dn("dn2", "/rack2"), dn("dn3", "/rack1"))
    assert names(chain_order(pipeline, "client", "/rack2")) == ["dn2", "dn1", "dn3"]
    assert names(chain_order(pipeline, "client", "/rack1")) == ["dn1", "dn3", "dn2"]


def test_each_hop_chooses_nearest_to_itself() -> None:
    """Greedy from each chosen member: after dn3 (/rack2) comes dn5, its rack-mate, though dn1 and dn4 are
    listed before it; from a client on /rack1, both /rack1 members come before either /rack2 one."""
    pipeline = (dn("dn1", "/rack1"), dn("dn3", "/rack2"), dn("dn4", "/rack1"), dn("dn5", "/rack2"))
    assert names(chain_order(pipeline, "dn3", "/rack2")) == ["dn3", "dn5", "dn1", "dn4"]
    assert names(chain_order(pipeline, "client", "/rack1")) == ["dn1", "dn4", "dn3", "dn5"]


def test_ties_keep_pipeline_order() -> None:
    assert names(chain_order(PIPELINE, "client", "/rack9")) == ["dn1", "dn2", "dn3"]
    assert names(chain_order((DN3, DN2, DN1), "client", "/rack9")) == ["dn3", "dn2", "dn1"]
    assert names(chain_order((DN2, DN1, DN3), "client", "/rack1")) == ["dn2", "dn1", "dn3"]


def test_client_without_host_or_rack_keeps_pipeline_order_but_hops_still_group_racks() -> None:
    """No client host or rack: the first member is the pipeline's first; from it, its rack-mates next."""
    pipeline = (dn("dn1", "/rack1"), dn("dn3", "/rack2"), dn("dn2", "/rack1"))
    assert names(chain_order(pipeline, "", "")) == ["dn1", "dn2", "dn3"]


def test_members_without_a_rack_are_on_the_default_rack() -> None:
    pipeline = (dn("dn1", "/rack1"), dn("dn2"), dn("dn3", "/rack1"), dn("dn4"))
    assert names(chain_order(pipeline, "client", DEFAULT_RACK)) == ["dn2", "dn4", "dn1", "dn3"]
    assert names(chain_order(pipeline, "dn2", "")) == ["dn2", "dn4", "dn1", "dn3"]


def test_one_member_and_none() -> None:
    assert chain_order((DN1,), "client", "/rack2") == (DN1,)
    assert chain_order((), "client", "/rack2") == ()


racks = st.sampled_from(["", "/rack1", "/rack2", "/rack3"])
hosts = st.sampled_from(["", "dn1", "dn2", "dn3", "dn4", "client"])


@settings(max_examples=200, deadline=None)
@given(st.lists(racks, min_size=1, max_size=6), hosts, racks)
def test_chain_is_a_permutation_that_crosses_each_rack_boundary_once(
    member_racks: list[str], host: str, rack: str
) -> None:
    """Every member once; every rack's members consecutive (no rack is entered twice)."""
    pipeline = tuple(dn(f"dn{i}", r) for i, r in enumerate(member_racks, 1))
    chain = chain_order(pipeline, host, rack)
    assert sorted(names(chain)) == sorted(names(pipeline))
    runs = [r for r, _ in itertools.groupby(m.rack or DEFAULT_RACK for m in chain)]
    assert len(runs) == len(set(runs))


# ------------------------------------------------------------------ the client's rack
def mapping(tmp_path: Path, text: str) -> OzoneConfiguration:
    path = tmp_path / "racks.map"
    path.write_text(text)
    return OzoneConfiguration({MAPPING: str(path)})


def test_client_rack_reads_the_mapping_file(tmp_path: Path) -> None:
    conf = mapping(tmp_path, "# client hosts\nedge1 /rack2\n10.1.1.1 /rack3/  # an IP\n\ndn1 /rack1\n")
    assert client_rack(conf, "edge1") == "/rack2"
    assert client_rack(conf, "10.1.1.1") == "/rack3"
    assert client_rack(conf, "dn1") == "/rack1"


def test_client_rack_is_empty_for_an_unmapped_host_or_no_mapping(tmp_path: Path) -> None:
    assert client_rack(mapping(tmp_path, "edge1 /rack2\n"), "elsewhere") == ""
    assert client_rack(OzoneConfiguration(), "edge1") == ""


@pytest.mark.parametrize("text", ["edge1 rack2\n", "edge1\n", "edge1 /rack2 extra\n"])
def test_client_rack_refuses_a_bad_mapping_line(tmp_path: Path, text: str) -> None:
    with pytest.raises(ConfigError, match=r"racks\.map:1: expected 'NAME /rack'"):
        client_rack(mapping(tmp_path, text), "edge1")


def test_client_rack_names_a_missing_file(tmp_path: Path) -> None:
    conf = OzoneConfiguration({MAPPING: str(tmp_path / "absent.map")})
    with pytest.raises(ConfigError, match=f"{MAPPING}: cannot read"):
        client_rack(conf, "edge1")


def test_the_client_routes_from_its_own_host_and_rack(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("socket.gethostname", lambda: "edge1")
    client = AsyncOzoneClient(mapping(tmp_path, "edge1 /rack2\n"), om_address="127.0.0.1:1")
    assert (client.client_host, client.client_rack) == ("edge1", "/rack2")
    assert names(client._route(PIPELINE)) == ["dn3", "dn1", "dn2"]
