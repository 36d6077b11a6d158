import pytest

from pyozone.common.net import HostPort, address, parse_host_port, scm_client_address, scm_datanode_address
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
