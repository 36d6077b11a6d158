"""The security settings every party reads, checked together once (Ozone's SecurityConfig).

Durations are milliseconds. A rule that would make renewal loop or a token outlive its key is refused here,
with the keys named, before any daemon starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pyozone.config import ConfigError, OzoneConfiguration
from pyozone.hdds.security.users import login_user
from pyozone.hdds.security.x509 import check_user_name


@dataclass(frozen=True, slots=True)
class SecurityConfig:
    enabled: bool
    mtls: bool
    key_len: int
    default_duration_ms: int
    max_duration_ms: int
    renew_grace_ms: int
    rotation_check_ms: int
    expired_check_ms: int
    join_token_expiry_ms: int
    crl_refresh_ms: int
    rootca_cert_file: Path | None
    rootca_key_file: Path | None
    secret_key_rotate_ms: int
    secret_key_expiry_ms: int
    secret_key_check_ms: int
    secret_key_algorithm: str
    secret_key_file_name: str
    block_token_expiry_ms: int
    join_credentials_file: Path | None

    @classmethod
    def from_conf(cls, conf: OzoneConfiguration) -> SecurityConfig:
        def path(key: str) -> Path | None:
            value = conf.get(key)
            return Path(value) if value else None

        settings = cls(
            enabled=conf.get("ozone.security.enabled"),
            mtls=conf.get("hdds.grpc.tls.enabled"),
            key_len=conf.get("hdds.key.len"),
            default_duration_ms=conf.get("hdds.x509.default.duration"),
            max_duration_ms=conf.get("hdds.x509.max.duration"),
            renew_grace_ms=conf.get("hdds.x509.renew.grace.duration"),
            rotation_check_ms=conf.get("hdds.x509.ca.rotation.check.interval"),
            expired_check_ms=conf.get("hdds.x509.expired.certificate.check.interval"),
            join_token_expiry_ms=conf.get("hdds.x509.join.token.expiry"),
            crl_refresh_ms=conf.get("hdds.x509.crl.refresh.interval"),
            rootca_cert_file=path("hdds.x509.rootca.certificate.file"),
            rootca_key_file=path("hdds.x509.rootca.private.key.file"),
            secret_key_rotate_ms=conf.get("hdds.secret.key.rotate.duration"),
            secret_key_expiry_ms=conf.get("hdds.secret.key.expiry.duration"),
            secret_key_check_ms=conf.get("hdds.secret.key.rotate.check.duration"),
            secret_key_algorithm=conf.get("hdds.secret.key.algorithm"),
            secret_key_file_name=conf.get("hdds.secret.key.file.name"),
            block_token_expiry_ms=conf.get("hdds.block.token.expiry.time"),
            join_credentials_file=path("ozone.security.join.credentials.file"),
        )
        settings.check()
        return settings

    def check(self) -> None:
        problems = []
        if self.mtls and not self.enabled:
            problems.append("hdds.grpc.tls.enabled=true needs ozone.security.enabled=true (certificates)")
        if self.enabled:
            if self.key_len < 2048:
                problems.append(f"hdds.key.len={self.key_len}: at least 2048 bits")
            if self.default_duration_ms <= 0 or self.default_duration_ms > self.max_duration_ms:
                problems.append(
                    "hdds.x509.default.duration must be positive and at most hdds.x509.max.duration"
                )
            if self.renew_grace_ms >= self.default_duration_ms:
                problems.append(
                    "hdds.x509.renew.grace.duration must be shorter than hdds.x509.default.duration "
                    "(else every certificate is due for renewal as soon as it is issued)"
                )
            if (self.rootca_cert_file is None) != (self.rootca_key_file is None):
                problems.append(
                    "hdds.x509.rootca.certificate.file and hdds.x509.rootca.private.key.file go together"
                )
            for key, value in (
                ("hdds.x509.ca.rotation.check.interval", self.rotation_check_ms),
                ("hdds.x509.expired.certificate.check.interval", self.expired_check_ms),
                ("hdds.x509.join.token.expiry", self.join_token_expiry_ms),
                ("hdds.x509.crl.refresh.interval", self.crl_refresh_ms),
                ("hdds.secret.key.rotate.duration", self.secret_key_rotate_ms),
                ("hdds.secret.key.rotate.check.duration", self.secret_key_check_ms),
            ):
                if value <= 0:
                    problems.append(f"{key} must be positive")
            if self.secret_key_expiry_ms < self.secret_key_rotate_ms + self.block_token_expiry_ms:
                problems.append(
                    "hdds.secret.key.expiry.duration must be at least hdds.secret.key.rotate.duration + "
                    "hdds.block.token.expiry.time (a token must verify until it expires)"
                )
        if problems:
            raise ConfigError("; ".join(problems))


def admin_user(conf: OzoneConfiguration) -> str:
    """Whom `scm --init` issues the first client certificate to: the first user of ozone.administrators,
    else the user running it (the administrator Ozone assumes when none is configured)."""
    users = [u.strip() for u in str(conf.get("ozone.administrators") or "").split(",")]
    return check_user_name(next((u for u in users if u and u != "*"), login_user()))
