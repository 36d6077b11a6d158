"""An OM service's nodes from configuration (pyozone/common/om_ha.py), as Ozone's OMHANodeDetails, and
OmAddresses: the OMs of a service, or the lone OM's address as OM and as a client read it."""

from __future__ import annotations

import hashlib
import re
import uuid

import pytest

from pyozone.common.net import HostPort
from pyozone.common.om_ha import (
    OmAddresses,
    client_om_service,
    local_om_node,
    om_raft_group_id,
    om_service_nodes,
)
from pyozone.config import ConfigError, OzoneConfiguration


def _ha(**extra: str) -> OzoneConfiguration:
    values = {
        "ozone.om.service.ids": "omservice",
        "ozone.om.nodes.omservice": "om1, om2,om3",
        "ozone.om.address.omservice.om1": "127.0.0.1:9862",
        "ozone.om.address.omservice.om2": "127.0.0.1:9962",
        "ozone.om.address.omservice.om3": "10.9.9.9",
        "ozone.om.ratis.port.omservice.om2": "9972",
        "ozone.om.http-address.omservice.om2": "127.0.0.1:9974",
    }
    values.update(extra)
    return OzoneConfiguration(values)


def test_nodes_in_the_order_named_with_ozone_defaults_for_what_is_unset() -> None:
    nodes = om_service_nodes(_ha(), "omservice")
    assert [n.node_id for n in nodes] == ["om1", "om2", "om3"]
    om1, om2, om3 = nodes
    assert (om1.rpc_address, om1.ratis_address, om1.http_address) == (
        HostPort("127.0.0.1", 9862),
        HostPort("127.0.0.1", 9872),
        HostPort("127.0.0.1", 9874),
    )
    assert (om2.ratis_address, om2.http_address) == (HostPort("127.0.0.1", 9972), HostPort("127.0.0.1", 9974))
    assert om3.rpc_address == HostPort("10.9.9.9", 9862)


def test_a_node_without_an_address_is_a_config_error_naming_the_key() -> None:
    conf = _ha(**{"ozone.om.nodes.omservice": "om1,om4"})
    with pytest.raises(ConfigError, match=r"ozone\.om\.address\.omservice\.om4: not set"):
        om_service_nodes(conf, "omservice")


def test_a_suffixed_key_is_typed_as_its_base() -> None:
    with pytest.raises(ConfigError, match=r"ozone\.om\.ratis\.port\.omservice\.om1: invalid value"):
        _ha(**{"ozone.om.ratis.port.omservice.om1": "ninety"})


def test_a_node_named_twice_is_refused() -> None:
    with pytest.raises(ConfigError, match="names an id twice"):
        om_service_nodes(_ha(**{"ozone.om.nodes.omservice": "om1,om1"}), "omservice")


def test_the_client_picks_the_one_service_or_the_internal_one_or_the_path_authority() -> None:
    assert client_om_service(OzoneConfiguration()) is None
    assert client_om_service(_ha()) == "omservice"
    assert client_om_service(_ha(), "omservice") == "omservice"
    assert client_om_service(_ha(), "om-host:9862") is None  # an address, not a service
    two = _ha(**{"ozone.om.service.ids": "omservice,other"})
    with pytest.raises(ConfigError, match=r"ozone\.om\.internal\.service\.id"):
        client_om_service(two)
    assert (
        client_om_service(
            _ha(**{"ozone.om.service.ids": "omservice,other", "ozone.om.internal.service.id": "other"})
        )
        == "other"
    )


def test_an_om_finds_itself_by_node_id_or_refuses_when_several_nodes_are_local() -> None:
    assert local_om_node(_ha(**{"ozone.om.node.id": "om2"})).node_id == "om2"  # type: ignore[union-attr]
    with pytest.raises(ConfigError, match=r"set ozone\.om\.node\.id"):
        local_om_node(_ha())  # om1 and om2 both on 127.0.0.1
    with pytest.raises(ConfigError, match=r"'om9' is not one of ozone\.om\.nodes\.omservice"):
        local_om_node(_ha(**{"ozone.om.node.id": "om9"}))
    alone = _ha(**{"ozone.om.address.omservice.om2": "10.9.9.8"})
    assert local_om_node(alone).node_id == "om1"  # type: ignore[union-attr]
    assert local_om_node(OzoneConfiguration()) is None


def test_the_raft_group_id_is_javas_name_uuid_of_the_service_id() -> None:
    """Ozone's OzoneManagerRatisServer: UUID.nameUUIDFromBytes(serviceId bytes), an MD5 (version 3) UUID
    without a namespace: the same for every OM of a service, another for another service."""
    group = uuid.UUID(om_raft_group_id("omservice"))
    assert (group.version, group.variant) == (3, uuid.RFC_4122)
    assert group.bytes[:6] == hashlib.md5(b"omservice").digest()[:6]
    assert om_raft_group_id("omservice") == "5cb24680-b9e7-3c90-a862-d66704efc61c"
    assert om_raft_group_id("other") != str(group)


def test_the_addresses_of_a_service_are_its_nodes_and_its_active_ones_less_the_decommissioned() -> None:
    oms = OmAddresses.from_conf(_ha(**{"ozone.om.decommissioned.nodes.omservice": "om2"}))
    assert oms.service_id == "omservice"
    assert oms.nodes == om_service_nodes(_ha(), "omservice")
    assert oms.decommissioned == ("om2",)
    assert [n.node_id for n in oms.active] == ["om1", "om3"]


def test_an_authority_names_a_service_or_the_lone_om() -> None:
    assert OmAddresses.from_conf(_ha(), "omservice").service_id == "omservice"
    lone = OmAddresses.from_conf(_ha(), "om-host")
    assert (lone.service_id, lone.client_address()) == (None, HostPort("om-host", 9862))


def test_a_named_service_must_be_configured() -> None:
    with pytest.raises(ConfigError, match=re.escape("OM service 'other' is not one of ozone.om.service.ids")):
        OmAddresses.of_service(_ha(), "other")


def test_the_lone_om_as_om_binds_it_and_as_a_client_reaches_it() -> None:
    default = OmAddresses.from_conf(OzoneConfiguration())
    assert default.lone_address() == HostPort("0.0.0.0", 9862)
    assert default.client_address() == HostPort("127.0.0.1", 9862)  # a bind address: this host's OM
    named = OmAddresses.from_conf(OzoneConfiguration({"ozone.om.address": "om"}))
    assert named.lone_address() == named.client_address() == HostPort("om", 9862)
    unset = OmAddresses.from_conf(OzoneConfiguration({"ozone.om.address": ""}))
    assert unset.lone_address() == HostPort("0.0.0.0", 9862)
    with pytest.raises(ConfigError, match=re.escape("ozone.om.address: not set: give the OM address as -D")):
        unset.client_address()
    with pytest.raises(ConfigError, match=re.escape("ozone.om.address: 'om:x' has an invalid port")):
        OmAddresses.from_conf(OzoneConfiguration({"ozone.om.address": "om:x"})).lone_address()
