"""Rack mapping file and network topology (SCMNodeManager.register resolves the network location)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyozone.config import ConfigError
from pyozone.hdds.topology import DEFAULT_RACK, NetworkTopology, load_rack_mapping


def test_mapping_file_with_comments_and_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "racks.txt"
    path.write_text(
        "# host to rack\n"
        "dn1.example.com /rack1\n"
        "\n"
        "   # indented comment\n"
        "10.0.0.3\t/rack2   # by IP, trailing comment\n"
        "00000000-0000-4000-8000-000000000004 /dc1/rack3/\n"
    )
    assert load_rack_mapping(path) == {
        "dn1.example.com": "/rack1",
        "10.0.0.3": "/rack2",
        "00000000-0000-4000-8000-000000000004": "/dc1/rack3",
    }


@pytest.mark.parametrize("bad", ["dn5.example.com", "dn5.example.com rack5", "a /r1 extra"])
def test_bad_line_names_file_and_line(tmp_path: Path, bad: str) -> None:
    path = tmp_path / "racks.txt"
    path.write_text(f"# header\ndn1 /rack1\n{bad}\n")
    with pytest.raises(ConfigError, match=rf"{path}:3:"):
        load_rack_mapping(path)


def test_unreadable_mapping_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"net\.topology\.node\.switch\.mapping\.file"):
        load_rack_mapping(tmp_path / "missing.txt")


def test_empty_mapping_file(tmp_path: Path) -> None:
    path = tmp_path / "racks.txt"
    path.write_text("# nothing\n\n")
    assert load_rack_mapping(path) == {}


def test_resolve_by_uuid_hostname_or_ip_else_default_rack() -> None:
    topo = NetworkTopology({"uuid-1": "/r1", "host-2": "/r2", "10.0.0.3": "/r3"})
    assert topo.resolve("uuid-1", "h", "ip") == "/r1"
    assert topo.resolve("u", "host-2", "ip") == "/r2"
    assert topo.resolve("u", "h", "10.0.0.3") == "/r3"
    assert topo.resolve("u", "h", "10.0.0.4") == DEFAULT_RACK == "/default-rack"


def test_registration_places_nodes_on_their_racks(make_cluster, build, tmp_path: Path) -> None:
    path = tmp_path / "racks.txt"
    path.write_text(f"{build.details(0).hostname} /rack1\n{build.details(1).ip_address} /rack2\n")
    c = make_cluster(racks=load_rack_mapping(path))
    a, b, d = c.add(0), c.add(1), c.add(2)
    assert [c.nm.node(x).details.network_location for x in (a, b, d)] == ["/rack1", "/rack2", DEFAULT_RACK]
    topo = c.nm.topology
    assert topo.rack_count() == 3
    assert topo.racks() == {"/rack1": frozenset({a}), "/rack2": frozenset({b}), DEFAULT_RACK: frozenset({d})}


def test_default_rack_without_mapping(cluster) -> None:
    nodes = [cluster.add(i) for i in range(3)]
    assert {cluster.nm.node(n).details.network_location for n in nodes} == {DEFAULT_RACK}
    assert cluster.nm.topology.rack_count() == 1


def test_forget_removes_from_topology_and_reregistration_adds_back(cluster, build) -> None:
    dn = cluster.add(0)
    cluster.nm.forget(dn)
    assert not cluster.nm.topology.contains(dn)
    assert cluster.nm.topology.rack_count() == 0
    assert cluster.nm.is_registered(dn)
    cluster.nm.register(build.details(0))
    assert cluster.nm.topology.rack_of(dn) == DEFAULT_RACK


def test_topology_moves_a_node_between_racks() -> None:
    topo = NetworkTopology()
    topo.add("a", "/r1")
    topo.add("b", "/r1")
    topo.add("a", "/r2")
    assert topo.racks() == {"/r1": frozenset({"b"}), "/r2": frozenset({"a"})}
    topo.remove("b")
    assert topo.rack_count() == 1
