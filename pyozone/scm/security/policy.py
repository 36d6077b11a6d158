"""Who may have which certificate, and who may read what from the CA.

A JOIN caller (a daemon's first CSR) gets a service certificate only: OM, DATANODE or S3G, and only what its
token allows (join_tokens.py: one certificate, one role, an identity that does not exist yet). Any caller may
renew its own common name, a datanode for its own datanode UUID only, an HA OM for its own node only. An
administrator may have a certificate made for any user. SCM and JOIN certificates are never made by getCert:
`pyozone scm --init` makes them, and another SCM of an HA service gets its sub-CA from getSCMCertificate
with a JOIN credential minted for its node (ScmSecurity.sign_scm). A datanode's certificate names its
datanode's UUID (authority.requested_identity): SCM's datanode protocol lets it speak for that datanode
alone (several datanodes on one host share a common name).
"""

from __future__ import annotations

from dataclasses import dataclass

from pyozone.hdds.security.errors import SecurityError, SecurityResult
from pyozone.hdds.security.users import Administrators, UserGroups
from pyozone.hdds.security.x509 import CertRole, Identity

JOIN_MAY_REQUEST = frozenset({CertRole.OM, CertRole.DATANODE, CertRole.S3G})
"""Roles a daemon may obtain with the JOIN credential."""

SECRET_KEY_READERS = frozenset({CertRole.OM, CertRole.DATANODE})
"""Who signs (OM) and verifies (datanodes) block tokens; nobody else ever sees a secret key."""

CERTIFICATE_READERS = frozenset({CertRole.SCM, CertRole.OM, CertRole.DATANODE, CertRole.S3G})
"""Services that may list and read the CA's certificates (besides administrators)."""


def _denied(message: str) -> SecurityError:
    return SecurityError(SecurityResult.PERMISSION_DENIED, message)


@dataclass(frozen=True, slots=True)
class AccessPolicy:
    admins: Administrators
    groups: UserGroups

    def is_admin(self, caller: Identity) -> bool:
        """An administrator of the CA (mint JOIN credentials, revoke, issue user certificates): a user
        ozone.administrators admits. A service's certificate never is, even when the list names it (it
        would mint credentials and certificates for any name)."""
        return caller.role is CertRole.USER and self.admins.admits(caller.principal, caller.role, self.groups)

    def check_csr(
        self,
        caller: Identity,
        requested: Identity,
        caller_node: str | None = None,
        requested_node: str | None = None,
    ) -> None:
        """Raises PERMISSION_DENIED unless `caller` may have a certificate naming `requested` (and, for a
        datanode or an HA OM, `requested_node`: X.node_of); `caller_node` is the node the caller's
        certificate names."""
        if requested.role in (CertRole.SCM, CertRole.JOIN):
            raise _denied(
                f"{requested.common_name}: {requested.role.name} certificates are made by "
                "`pyozone scm --init` (and an SCM's of a service at its scm --bootstrap) only"
            )
        if caller.role is CertRole.JOIN:
            if requested.role not in JOIN_MAY_REQUEST:
                raise _denied(
                    f"the JOIN credential may obtain OM, DATANODE or S3G certificates only, "
                    f"not {requested.role.name} ({requested.common_name})"
                )
            return
        if caller.common_name == requested.common_name:
            if caller_node != requested_node:
                datanode = caller.role is CertRole.DATANODE
                who, what = ("a datanode", "datanode") if datanode else ("an OM", "node")
                raise _denied(
                    f"{caller.common_name} of {what} {caller_node} may not obtain a certificate for "
                    f"{what} {requested_node}: {who} renews its own"
                )
            return  # renewal of the caller's own name
        if requested.role is CertRole.USER and self.is_admin(caller):
            return
        raise _denied(
            f"{caller.common_name} may not obtain a certificate for {requested.common_name} "
            "(only its own, or a user's when it is an administrator)"
        )

    def check_read_certificates(self, caller: Identity) -> None:
        if caller.role not in CERTIFICATE_READERS and not self.is_admin(caller):
            raise _denied(f"{caller.common_name} may not read certificates: administrators and services only")

    def check_read_secret_keys(self, caller: Identity) -> None:
        if caller.role not in SECRET_KEY_READERS:
            raise _denied(f"{caller.common_name} may not read secret keys: OM and datanodes only")
