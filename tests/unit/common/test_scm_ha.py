"""An SCM service's nodes from configuration (pyozone/common/scm_ha.py), as Ozone's SCMNodeInfo and
SCMHANodeDetails: per-node ports over the unsuffixed keys over Ozone's defaults, the service chosen as
HddsUtils.getScmServiceId, the local node, the primordial node, the Raft group of the cluster id, and
ScmAddresses: where every SCM listens per protocol, or the lone SCM's address for it."""

from __future__ import annotations

import re
import uuid

import pytest

from pyozone.common.net import HostPort
from pyozone.common.scm_ha import (
    ScmAddresses,
    ScmProtocol,
    local_scm_node,
    primordial_scm_node,
    scm_raft_group_id,
    scm_service_id,
    scm_service_nodes,
)
from pyozone.config import ConfigError, OzoneConfiguration


def _ha(**extra: str) -> OzoneConfiguration:
    values = {
        "ozone.scm.service.ids": "scmservice",
        "ozone.scm.nodes.scmservice": "scm1, scm2,scm3",
        "ozone.scm.address.scmservice.scm1": "127.0.0.1",
        "ozone.scm.address.scmservice.scm2": "127.0.0.1",
        "ozone.scm.address.scmservice.scm3": "10.9.9.9",
        "ozone.scm.client.port.scmservice.scm2": "19860",
        "ozone.scm.block.client.port.scmservice.scm2": "19863",
        "ozone.scm.datanode.port.scmservice.scm2": "19861",
        "ozone.scm.security.service.port.scmservice.scm2": "19961",
        "ozone.scm.ratis.port.scmservice.scm2": "19894",
        "ozone.scm.grpc.port.scmservice.scm2": "19895",
        "ozone.scm.http-address.scmservice.scm2": "127.0.0.1:19876",
    }
    values.update(extra)
    return OzoneConfiguration(values)


def test_ozone_names_and_defaults_of_the_service_keys() -> None:
    conf = OzoneConfiguration()
    assert (conf.get("ozone.scm.ratis.port"), conf.get("ozone.scm.grpc.port")) == (9894, 9895)
    assert conf.get("ozone.scm.skip.bootstrap.validation") is False
    assert conf.get("ozone.scm.ha.ratis.segment.size") == 64 << 20
    assert conf.get("ozone.scm.ha.ratis.leader.election.timeout") == 5_000
    assert conf.get("ozone.scm.ha.ratis.server.leaderelection.pre-vote") is True
    assert conf.get("ozone.scm.ha.ratis.request.timeout") == 30_000
    assert conf.get("ozone.scm.ha.ratis.server.retry.cache.timeout") == 60_000
    assert conf.get("ozone.scm.ha.ratis.snapshot.threshold") == 1000
    assert conf.get("ozone.scm.ha.ratis.log.purge.enabled") is False
    assert conf.get("ozone.scm.ha.ratis.log.purge.gap") == 1_000_000
    for unset in ("ozone.scm.service.ids", "ozone.scm.node.id", "ozone.scm.primordial.node.id"):
        assert conf.get(unset) is None
    assert scm_service_id(conf) is None and local_scm_node(conf) is None  # a lone SCM, as before


def test_nodes_in_the_order_named_with_per_node_ports_over_the_unsuffixed_keys_over_the_defaults() -> None:
    conf = _ha(**{"ozone.scm.ratis.port": "29894", "ozone.scm.http-address": "0.0.0.0:29876"})
    scm1, scm2, scm3 = scm_service_nodes(conf, "scmservice")
    assert [n.node_id for n in (scm1, scm2, scm3)] == ["scm1", "scm2", "scm3"]
    assert (scm1.service_id, scm1.host) == ("scmservice", "127.0.0.1")
    assert [
        scm1.client_address.port,
        scm1.block_client_address.port,
        scm1.datanode_address.port,
        scm1.security_address.port,
        scm1.ratis_address.port,
        scm1.grpc_address.port,
        scm1.http_address.port,
    ] == [9860, 9863, 9861, 9961, 29894, 9895, 29876]
    assert [
        scm2.client_address,
        scm2.block_client_address,
        scm2.datanode_address,
        scm2.security_address,
        scm2.ratis_address,
        scm2.grpc_address,
        scm2.http_address,
    ] == [HostPort("127.0.0.1", p) for p in (19860, 19863, 19861, 19961, 19894, 19895, 19876)]
    assert scm3.client_address == HostPort("10.9.9.9", 9860)
    assert scm3.http_address == HostPort("10.9.9.9", 29876)


@pytest.mark.parametrize(
    ("extra", "error"),
    [
        ({"ozone.scm.nodes.scmservice": "scm1,scm4"}, r"ozone\.scm\.address\.scmservice\.scm4: not set"),
        ({"ozone.scm.nodes.scmservice": ""}, r"ozone\.scm\.nodes\.scmservice: not set"),
        ({"ozone.scm.nodes.scmservice": "scm1,scm1"}, r"ozone\.scm\.nodes\.scmservice: .* names an id twice"),
        (
            {"ozone.scm.address.scmservice.scm1": "127.0.0.1:9860"},
            r"ozone\.scm\.address\.scmservice\.scm1: '127\.0\.0\.1:9860' is a host name, without a port",
        ),
    ],
    ids=["no-address", "no-nodes", "node-twice", "address-with-port"],
)
def test_a_bad_service_is_a_config_error_naming_the_key(extra: dict[str, str], error: str) -> None:
    with pytest.raises(ConfigError, match=error):
        scm_service_nodes(_ha(**extra), "scmservice")


def test_a_per_node_port_is_typed_as_its_base_key() -> None:
    with pytest.raises(ConfigError, match=r"ozone\.scm\.ratis\.port\.scmservice\.scm1: invalid value"):
        _ha(**{"ozone.scm.ratis.port.scmservice.scm1": "ninety"})


def test_the_service_is_the_default_one_or_the_only_one() -> None:
    assert scm_service_id(_ha()) == "scmservice"
    two = _ha(**{"ozone.scm.service.ids": "scmservice,other"})
    with pytest.raises(ConfigError, match=r"set ozone\.scm\.default\.service\.id"):
        scm_service_id(two)
    chosen = _ha(
        **{"ozone.scm.service.ids": "scmservice,other", "ozone.scm.default.service.id": "scmservice"}
    )
    assert scm_service_id(chosen) == "scmservice"
    with pytest.raises(ConfigError, match=r"ozone\.scm\.default\.service\.id: 'nope' is not one of"):
        scm_service_id(_ha(**{"ozone.scm.default.service.id": "nope"}))
    with pytest.raises(ConfigError, match=r"is not one of ozone\.scm\.service\.ids"):
        scm_service_nodes(_ha(), "other")


def test_an_scm_finds_itself_by_node_id_or_refuses_when_several_nodes_are_local() -> None:
    assert local_scm_node(_ha(**{"ozone.scm.node.id": "scm2"})).node_id == "scm2"  # type: ignore[union-attr]
    with pytest.raises(ConfigError, match=r"cannot tell which SCM this is .*: set ozone\.scm\.node\.id"):
        local_scm_node(_ha())  # scm1 and scm2 both on 127.0.0.1
    with pytest.raises(ConfigError, match=r"ozone\.scm\.node\.id: 'scm9' is not one of ozone\.scm\.nodes"):
        local_scm_node(_ha(**{"ozone.scm.node.id": "scm9"}))
    alone = _ha(**{"ozone.scm.address.scmservice.scm2": "10.9.9.8"})
    assert local_scm_node(alone).node_id == "scm1"  # type: ignore[union-attr]


def test_the_primordial_scm_is_named_by_node_id_or_by_a_host_of_one_scm() -> None:
    assert primordial_scm_node(_ha(), "scmservice") is None
    by_id = _ha(**{"ozone.scm.primordial.node.id": "scm2"})
    assert primordial_scm_node(by_id, "scmservice").node_id == "scm2"  # type: ignore[union-attr]
    by_host = _ha(**{"ozone.scm.primordial.node.id": "10.9.9.9"})
    assert primordial_scm_node(by_host, "scmservice").node_id == "scm3"  # type: ignore[union-attr]
    with pytest.raises(ConfigError, match=r"'127\.0\.0\.1' is the host of scm1, scm2: name one node id"):
        primordial_scm_node(_ha(**{"ozone.scm.primordial.node.id": "127.0.0.1"}), "scmservice")
    with pytest.raises(ConfigError, match=r"ozone\.scm\.primordial\.node\.id: 'scm7' is neither a node id"):
        primordial_scm_node(_ha(**{"ozone.scm.primordial.node.id": "scm7"}), "scmservice")


def test_the_raft_group_is_the_cluster_ids_uuid_or_javas_name_uuid_of_another_id() -> None:
    """Ozone's SCMRatisServerImpl.buildRaftGroupId: UUID.fromString of the cluster id less `CID-`, the same on
    every SCM of a cluster. pyozone's cluster id may be no UUID (CID-pyozone): Java's nameUUIDFromBytes."""
    cluster_uuid = "4b1b0e4e-2b4d-4c39-9a53-2d7c2b1e3f10"
    assert scm_raft_group_id(f"CID-{cluster_uuid}") == cluster_uuid
    assert scm_raft_group_id(f"CID-{cluster_uuid.upper()}") == cluster_uuid  # Java's UUID.toString
    named = uuid.UUID(scm_raft_group_id("CID-pyozone"))
    assert (named.version, named.variant) == (3, uuid.RFC_4122)
    # the MD5 of "CID-pyozone" with the version (3) and variant bits set: what Java's nameUUIDFromBytes gives
    assert str(named) == "5073c604-e304-3bd4-8c27-f644e3903cc7"
    assert scm_raft_group_id("CID-other") != str(named)


def test_the_addresses_of_a_service_are_each_scms_port_of_each_protocol() -> None:
    scms = ScmAddresses.from_conf(_ha())
    assert scms.service_id == "scmservice"
    assert scms.nodes == scm_service_nodes(_ha(), "scmservice")
    assert scms.endpoints(ScmProtocol.CLIENT) == (
        ("scm1", HostPort("127.0.0.1", 9860)),
        ("scm2", HostPort("127.0.0.1", 19860)),
        ("scm3", HostPort("10.9.9.9", 9860)),
    )
    ports = {p: scms.endpoints(p)[1][1].port for p in ScmProtocol}
    assert ports == {
        ScmProtocol.CLIENT: 19860,
        ScmProtocol.BLOCK: 19863,
        ScmProtocol.DATANODE: 19861,
        ScmProtocol.SECURITY: 19961,
    }


def test_a_named_service_is_taken_without_choosing_among_several() -> None:
    two = _ha(**{"ozone.scm.service.ids": "scmservice,other"})
    with pytest.raises(ConfigError, match=re.escape("set ozone.scm.default.service.id")):
        ScmAddresses.from_conf(two)
    assert ScmAddresses.from_conf(two, "scmservice").service_id == "scmservice"


def test_a_lone_scm_is_at_each_protocols_address_else_the_first_of_ozone_scm_names() -> None:
    conf = OzoneConfiguration(
        {"ozone.scm.names": "scm-a,scm-b", "ozone.scm.block.client.address": "blocks:1234"}
    )
    scms = ScmAddresses.from_conf(conf)
    assert scms.service_id is None and scms.nodes == ()
    assert scms.endpoints(ScmProtocol.CLIENT) == (("", HostPort("scm-a", 9860)),)
    assert scms.lone_address(ScmProtocol.BLOCK) == HostPort("blocks", 1234)
    assert scms.lone_address(ScmProtocol.DATANODE) == HostPort("scm-a", 9861)
    assert scms.lone_address(ScmProtocol.SECURITY) == HostPort("scm-a", 9961)


@pytest.mark.parametrize(
    ("protocol", "error"),
    [
        (ScmProtocol.CLIENT, "ozone.scm.client.address: not set, and ozone.scm.names neither: give the SCM"),
        (ScmProtocol.BLOCK, "ozone.scm.block.client.address: not set, and ozone.scm.names neither"),
        (ScmProtocol.DATANODE, "ozone.scm.names: not set, and ozone.scm.datanode.address neither"),
        (ScmProtocol.SECURITY, "ozone.scm.security.service.address: not set, and ozone.scm.names neither"),
    ],
)
def test_a_lone_scm_without_an_address_is_a_config_error_when_that_protocol_is_asked_for(
    protocol: ScmProtocol, error: str
) -> None:
    scms = ScmAddresses.from_conf(OzoneConfiguration())  # no error yet: a caller may need no SCM protocol
    with pytest.raises(ConfigError, match=re.escape(error)):
        scms.endpoints(protocol)
