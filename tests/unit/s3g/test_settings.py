"""Where the gateway listens: a cluster on 127.0.0.1 never listens beyond this machine (the default
ozone.s3g.http-bind-host, 0.0.0.0, is for an address that is not loopback)."""

from __future__ import annotations

from pyozone.config import OzoneConfiguration
from pyozone.s3g.settings import S3GatewaySettings


def test_a_loopback_address_binds_loopback() -> None:
    conf = OzoneConfiguration({"ozone.s3g.http-address": "127.0.0.1:9878"})
    assert S3GatewaySettings.from_conf(conf).bind_host == "127.0.0.1"


def test_the_default_address_binds_every_interface() -> None:
    assert S3GatewaySettings.from_conf(OzoneConfiguration()).bind_host == "0.0.0.0"


def test_an_explicit_bind_host_wins() -> None:
    conf = OzoneConfiguration({"ozone.s3g.http-address": "127.0.0.1:9878", "ozone.s3g.http-bind-host": "::1"})
    assert S3GatewaySettings.from_conf(conf).bind_host == "::1"
