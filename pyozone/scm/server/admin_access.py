"""Who may change the cluster through SCM's admin protocol: the administrators (ozone.administrators and
ozone.administrators.groups; by default the user SCM runs as), as Ozone's SCM checkAdminAccess.

The check is on with ozone.security.enabled or ozone.acl.enabled; without either, SCM stays as open as it
was. The caller is who its certificate names over mutual TLS, else the user x-ozone-user claims (contract 4
of issue 15: the kernel's caller_name).
"""

from __future__ import annotations

from dataclasses import dataclass

import grpc

from pyozone.common.grpc_client import USER_METADATA
from pyozone.common.tls import grpc_peer_identity
from pyozone.common.tls_mode import grpc_tls_enabled, security_enabled
from pyozone.config import OzoneConfiguration
from pyozone.hdds.security.acl import caller_name
from pyozone.hdds.security.users import Administrators, UserGroups


@dataclass(frozen=True, slots=True)
class AdminAccess:
    enabled: bool
    tls: bool
    administrators: Administrators
    groups: UserGroups

    @classmethod
    def from_conf(cls, conf: OzoneConfiguration) -> AdminAccess:
        return cls(
            security_enabled(conf) or bool(conf.get("ozone.acl.enabled")),
            grpc_tls_enabled(conf),
            Administrators.from_conf(conf),
            UserGroups.from_conf(conf),
        )

    async def require(self, context: grpc.aio.ServicerContext) -> None:
        """Returns for an administrator; else ends the call with PERMISSION_DENIED in Ozone's words."""
        if not self.enabled:
            return
        claimed = next((v for k, v in context.invocation_metadata() or () if k == USER_METADATA), None)
        peer = grpc_peer_identity(context) if self.tls else None
        try:
            user, _ = caller_name(peer, claimed, self.tls)
        except ValueError as e:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"{USER_METADATA}: {e}")
        if not self.administrators.permits(user, self.groups.groups(user)):
            await context.abort(
                grpc.StatusCode.PERMISSION_DENIED,
                f"Access denied for user {user}. SCM superuser privilege is required.",
            )
