"""Who may use SCM's admin protocol, as Ozone's StorageContainerManager.checkAdminAccess(user, isRead).

A call that changes the cluster is for administrators only (ozone.administrators and
ozone.administrators.groups; by default the user SCM runs as). A call that reads SCM's containers,
pipelines or datanodes (where each replica lives) is also for read-only administrators
(ozone.readonly.administrators, ozone.readonly.administrators.groups) and, over mutual TLS, for the
services that read containers for their own work (OM, the datanodes): the kernel's AdminRule, which the
web APIs that show where data lives apply too (common/web/ops.py readers_only).

The checks are on with ozone.security.enabled or ozone.acl.enabled; without either, SCM stays as open as it
was. The caller is who its certificate names over mutual TLS, whatever x-ozone-user claims: SCM takes no
proxied user, so the S3 gateway's certificate is the unprivileged "s3g" (issue 28 defect 3). Without TLS it
is the user x-ozone-user claims (the kernel's certificate_caller).
"""

from __future__ import annotations

from dataclasses import dataclass

from pyozone import rpc
from pyozone.common.tls_mode import mtls_enabled, security_enabled
from pyozone.config import OzoneConfiguration
from pyozone.hdds.security.acl import certificate_caller
from pyozone.hdds.security.users import AdminRight, AdminRule
from pyozone.rpc.metadata import USER_METADATA, peer_identity


@dataclass(frozen=True, slots=True)
class AdminAccess:
    enabled: bool
    tls: bool
    rule: AdminRule

    @classmethod
    def from_conf(cls, conf: OzoneConfiguration) -> AdminAccess:
        return cls(
            security_enabled(conf) or bool(conf.get("ozone.acl.enabled")),
            mtls_enabled(conf),
            AdminRule.from_conf(conf),
        )

    async def require(self, context: rpc.CallContext, right: AdminRight = AdminRight.WRITE) -> None:
        """Returns when the caller may; else ends the call with PERMISSION_DENIED in Ozone's words."""
        if not self.enabled:
            return
        claimed = next((v for k, v in context.invocation_metadata() or () if k == USER_METADATA), None)
        peer = peer_identity(context) if self.tls else None
        try:
            user = certificate_caller(peer, claimed, self.tls)
        except ValueError as e:
            await context.abort(rpc.StatusCode.INVALID_ARGUMENT, f"{USER_METADATA}: {e}")
        if self.rule.permits(user, right, peer.role if peer is not None else None):
            return
        await context.abort(
            rpc.StatusCode.PERMISSION_DENIED,
            f"Access denied for user {user}. SCM superuser privilege is required.",
        )
