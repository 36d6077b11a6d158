import pytest

from pyozone.common.net import (
    HostPort,
    address,
    bind_address,
    om_address,
    parse_host_port,
    scm_client_address,
    scm_datanode_address,
)
from pyozone.config import ConfigError, OzoneConfiguration


def test_host_and_port_parse() -> None:
    assert parse_host_port("127.0.0.1:9861", None, "k") == HostPort("127.0.0.1", 9861)
    assert parse_host_port("scm1", 9861, "k") == HostPort("scm1", 9861)


@pytest.mark.parametrize("bad", [":9861", "h:port", "h:70000"])
def test_bad_addresses_name_the_key(bad: str) -> None:
    with pytest.raises(ConfigError, match=r"ozone\.scm\.names"):
        parse_host_port(bad, 1, "ozone.scm.names")


def test_bind_address_defaults_to_all_interfaces_with_the_port_key() -> None:
    conf = OzoneConfiguration()
    assert address(conf, "ozone.scm.datanode.address", "ozone.scm.datanode.port") == HostPort("0.0.0.0", 9861)


def test_datanodes_find_scm_through_names_or_the_address() -> None:
    assert scm_datanode_address(OzoneConfiguration({"ozone.scm.names": "scm1,scm2"})) == HostPort(
        "scm1", 9861
    )
    conf = OzoneConfiguration({"ozone.scm.datanode.address": "127.0.0.1:19861", "ozone.scm.names": "x"})
    assert scm_datanode_address(conf) == HostPort("127.0.0.1", 19861)
    assert scm_client_address(OzoneConfiguration({"ozone.scm.names": "scm1"})) == HostPort("scm1", 9860)
    with pytest.raises(ConfigError, match=r"ozone\.scm\.names"):
        scm_datanode_address(OzoneConfiguration())


def test_om_address_without_a_port_means_9862() -> None:
    """Issue 11 defect 10: `ozone.om.address=om`, as Ozone's docker-compose writes it, was refused."""
    assert om_address(OzoneConfiguration({"ozone.om.address": "om"})) == HostPort("om", 9862)
    assert om_address(OzoneConfiguration({"ozone.om.address": "om:19862"})) == HostPort("om", 19862)


@pytest.mark.parametrize(
    ("overrides", "bound"),
    [
        ({}, HostPort("0.0.0.0", 9860)),  # Ozone's default bind host: clients reach it through 127.0.0.1 too
        ({"ozone.scm.client.bind.host": "10.0.0.7"}, HostPort("10.0.0.7", 9860)),
    ],
)
def test_a_host_address_binds_the_bind_host(overrides: dict[str, str], bound: HostPort) -> None:
    """Issue 11 defect 10: SCM listened only on the host of its address key."""
    conf = OzoneConfiguration({"ozone.scm.client.address": "scm:9860", **overrides})
    where = address(conf, "ozone.scm.client.address", "ozone.scm.client.port")
    assert bind_address(conf, where, "ozone.scm.client.bind.host") == bound


def test_a_loopback_address_stays_on_loopback_unless_a_bind_host_is_set() -> None:
    conf = OzoneConfiguration()
    assert bind_address(conf, HostPort("127.0.0.1", 1), "ozone.scm.client.bind.host") == HostPort(
        "127.0.0.1", 1
    )
    assert bind_address(conf, HostPort("127.0.0.1", 1), None) == HostPort("127.0.0.1", 1)
    conf = OzoneConfiguration({"ozone.scm.client.bind.host": "0.0.0.0"})
    assert bind_address(conf, HostPort("127.0.0.1", 1), "ozone.scm.client.bind.host") == HostPort(
        "0.0.0.0", 1
    )
