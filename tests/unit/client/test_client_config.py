"""ClientConfig, the one thing the client builds from the configuration (pyozone/client/config.py): its
rules name the key, the value and where it was set; the OMs it calls and its rack come with it."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from pyozone.client.client import AsyncOzoneClient
from pyozone.client.config import ClientConfig
from pyozone.common.net import HostPort
from pyozone.config import ConfigError, OzoneConfiguration
from pyozone.framework.om import OmEndpoint
from pyozone.hdds.checksum import ChecksumType

OM = {"ozone.om.address": "om-host:9862"}


@pytest.mark.parametrize("name", list(ChecksumType.__members__))
def test_each_of_ozones_checksum_types_is_taken(name: str) -> None:
    config = ClientConfig.from_conf(OzoneConfiguration({**OM, "ozone.client.checksum.type": name}))
    assert config.checksum_type is ChecksumType[name]


@pytest.mark.parametrize("value", ["ADLER32", "crc32", ""])
def test_another_checksum_type_is_a_config_error_naming_key_value_and_source(value: str) -> None:
    """The rule config/validate.py held until issue 34: Ozone's ChecksumType.valueOf, case and all."""
    conf = OzoneConfiguration()
    conf.set("ozone.om.address", "om-host:9862")
    conf.set("ozone.client.checksum.type", value, source="override")
    with pytest.raises(ConfigError) as e:
        ClientConfig.from_conf(conf)
    assert str(e.value) == (
        f"ozone.client.checksum.type={value!r} (override): must be one of NONE, CRC32, CRC32C, SHA256, MD5"
    )


def test_the_oms_of_a_service_or_the_lone_om() -> None:
    service = {
        "ozone.om.service.ids": "omservice",
        "ozone.om.nodes.omservice": "om1,om2",
        "ozone.om.address.omservice.om1": "h1",
        "ozone.om.address.omservice.om2": "h2:9962",
    }
    assert ClientConfig.from_conf(OzoneConfiguration(service)).om_nodes == (
        OmEndpoint("om1", HostPort("h1", 9862)),
        OmEndpoint("om2", HostPort("h2", 9962)),
    )
    assert ClientConfig.from_conf(OzoneConfiguration(OM)).om_nodes == (
        OmEndpoint("", HostPort("om-host", 9862)),
    )
    assert ClientConfig.from_conf(OzoneConfiguration(), "other:1").om_address == HostPort("other", 1)


def test_the_clients_rack_is_read_with_its_config_and_taken_by_the_client(tmp_path: Path) -> None:
    mapping = tmp_path / "racks.map"
    mapping.write_text(f"{socket.gethostname()} /rack7\n")
    conf = OzoneConfiguration({**OM, "net.topology.node.switch.mapping.file": str(mapping)})
    config = ClientConfig.from_conf(conf)
    assert config.rack == "/rack7"
    assert AsyncOzoneClient(conf).client_rack == "/rack7"
    assert AsyncOzoneClient(config=config).client_rack == "/rack7"  # a given config is taken as it is
    assert ClientConfig.from_conf(OzoneConfiguration(OM)).rack == ""
