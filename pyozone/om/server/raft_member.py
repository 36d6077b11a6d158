"""OM's member of its service's Raft group: the shell's checks, and over mutual TLS the OM node a peer's
certificate names.

The Raft shell (ratis_server RaftMember.refusal) takes a call's messages only from an OM certificate for
the host the group lists for the sender. The OMs of one service on one host hold certificates alike in
role and host; each also names its own service and node ("SERVICE/NODE", X.om_node, issued by SCM's CA
to that OM alone: scm/security/join_tokens.py), so here a peer speaks only for the node its certificate
names: om1's certificate cannot send messages as om2, nor can an OM of another service on that host.
"""

from __future__ import annotations

from typing import Any

from pyozone import rpc
from pyozone.hdds.security import x509 as X
from pyozone.protocol.raft import RaftEnvelope
from pyozone.ratis.messages import RaftPeerId
from pyozone.ratis_server.server import RaftMember
from pyozone.security.service_access import peer_certificate


def om_peer_refusal(cert: X.Certificate, service_id: str, sender: RaftPeerId) -> str | None:
    """Why the OM holding `cert` may not speak for `sender` of `service_id`'s group, or None when it may."""
    expected = X.om_node_name(service_id, sender.id)
    named = X.om_node(cert)
    if named == expected:
        return None
    holds = f"OM node {named}" if named else "no OM node"
    return f"{X.common_name(cert)} of {holds} may not speak for {sender} ({expected}): each OM for itself"


class OmRaftMember(RaftMember):
    """A RaftMember of OM service `service_id` that also checks the node of a TLS peer's certificate."""

    def __init__(self, *args: Any, service_id: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.service_id = service_id

    def refusal(
        self, envelopes: list[RaftEnvelope], context: rpc.CallContext
    ) -> tuple[rpc.StatusCode | None, str]:
        code, why = super().refusal(envelopes, context)
        if code is not None or not envelopes:
            return code, why
        cert = peer_certificate(context)
        if cert is None:  # plaintext: nobody is proven (the shell's docstring)
            return None, ""
        why = om_peer_refusal(cert, self.service_id, envelopes[0].sender)
        return (None, "") if why is None else (rpc.StatusCode.PERMISSION_DENIED, why)
