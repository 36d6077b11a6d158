"""The S3 gateway's configuration is checked when the daemon is made, before it asks for a certificate."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyozone.config import ConfigError
from pyozone.s3g.daemon import S3GatewayDaemon
from tests.unit.s3g.test_daemon_volume import gateway_conf


def test_a_bad_client_checksum_type_is_refused_before_the_gateway_starts(tmp_path: Path) -> None:
    """The gateway builds its client after its certificate (secure): the client's checksum type is checked
    at construction, so a bad one never costs a certificate request or a start-up banner."""
    configuration = gateway_conf(tmp_path, 1)
    configuration.set("ozone.client.checksum.type", "bogus")
    with pytest.raises(ConfigError, match=r"ozone.client.checksum.type='bogus'.*must be one of NONE, CRC32"):
        S3GatewayDaemon(configuration)
