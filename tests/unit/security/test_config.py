"""SecurityConfig: Ozone's security keys read together, and the combinations that cannot work refused."""

from __future__ import annotations

import pytest

from pyozone.config import ConfigError, OzoneConfiguration
from pyozone.security.config import SecurityConfig

SECURE = {"ozone.security.enabled": "true"}


def test_defaults_are_ozones() -> None:
    s = SecurityConfig.from_conf(OzoneConfiguration(SECURE))
    day = 86_400_000
    assert (s.default_duration_ms, s.max_duration_ms, s.renew_grace_ms) == (365 * day, 1865 * day, 28 * day)
    assert (s.secret_key_rotate_ms, s.secret_key_expiry_ms) == (day, 9 * day)
    assert s.secret_key_file_name == "secret_keys.json" and s.key_len == 2048


def test_insecure_defaults_pass() -> None:
    s = SecurityConfig.from_conf(OzoneConfiguration())
    assert not s.enabled and not s.mtls


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"hdds.grpc.tls.enabled": "true"}, "hdds.grpc.tls.enabled=true needs ozone.security.enabled=true"),
        (
            {**SECURE, "hdds.x509.default.duration": "PT20S", "hdds.x509.renew.grace.duration": "PT20S"},
            "hdds.x509.renew.grace.duration must be shorter than hdds.x509.default.duration",
        ),
        (
            {**SECURE, "hdds.x509.default.duration": "P2000D"},
            "hdds.x509.default.duration must be positive and at most hdds.x509.max.duration",
        ),
        (
            {**SECURE, "hdds.secret.key.expiry.duration": "1d"},
            "hdds.secret.key.expiry.duration must be at least hdds.secret.key.rotate.duration + "
            "hdds.block.token.expiry.time",
        ),
        (
            {**SECURE, "hdds.x509.rootca.certificate.file": "/ca.crt"},
            "hdds.x509.rootca.certificate.file and hdds.x509.rootca.private.key.file go together",
        ),
        ({**SECURE, "hdds.key.len": "1024"}, "hdds.key.len=1024: at least 2048 bits"),
        ({**SECURE, "hdds.secret.key.rotate.check.duration": "0"}, "rotate.check.duration must be positive"),
    ],
)
def test_combinations_that_cannot_work_are_refused(overrides: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace(".", r"\.").replace("+", r"\+")):
        SecurityConfig.from_conf(OzoneConfiguration(overrides))


def test_every_problem_is_reported_at_once() -> None:
    conf = OzoneConfiguration({**SECURE, "hdds.key.len": "1024", "hdds.secret.key.expiry.duration": "1d"})
    with pytest.raises(ConfigError) as e:
        SecurityConfig.from_conf(conf)
    assert "hdds.key.len" in str(e.value) and "hdds.secret.key.expiry.duration" in str(e.value)
