"""Which peer messages a Raft member takes: a call's messages before the core sees any (`refusal`), and,
on a leader, an answer no honest follower sends (`impossible`). One place for what a member trusts of its
peers, apart from how it carries out its core's outputs (server.py).

Security (mutual TLS when the member has a `TlsStore`): the rpc server takes only callers whose
certificate the cluster's CA signed, and a member takes a call's messages only when that certificate is a
service certificate of its `role` (OM's for OM's group) for the host the group lists for the member the
messages name as their sender. What the certificate proves: the caller holds a key the CA certified for
that role on that host. What it does not prove: which member of the group the caller is when members share
a host (three OMs on one machine hold certificates alike, so each could speak as another), nor that the
caller runs this group's software rather than another service of the same role on that host. On a
plaintext port nothing is proven, as Ozone's simple authentication trusts whoever calls: the group id and
the member table are checked, the sender is not.
"""

from __future__ import annotations

from collections.abc import Callable

from pyozone import rpc
from pyozone.common.net import HostPort
from pyozone.common.tls import TlsStore
from pyozone.hdds.security.x509 import CertRole
from pyozone.protocol.raft import RaftEnvelope
from pyozone.ratis.messages import (
    AppendEntriesReply,
    AppendEntriesRequest,
    AppendResult,
    InstallSnapshotReply,
    Message,
    RaftPeerId,
)
from pyozone.ratis.roles import RaftPeerRole
from pyozone.ratis.server import RaftServer
from pyozone.ratis_server.transport import RaftGroup
from pyozone.rpc.metadata import peer_identity


class InboundChecks:
    """The checks of member `me` of a group of `role`: `address_of` names the address of each peer the
    member knows (None for one it does not), which is who may speak to it; `sent` records what this member,
    leading, sent each follower, against which its answers are judged."""

    def __init__(
        self,
        me: RaftPeerId,
        tls: TlsStore | None,
        role: CertRole,
        address_of: Callable[[RaftPeerId], HostPort | None],
    ) -> None:
        self._me = me
        self._tls = tls
        self._role = role
        self._address_of = address_of
        self._sent_up_to: dict[RaftPeerId, int] = {}
        """The last index each follower was sent in an append of `_sent_term` (this member leading): an
        answer claiming more is one no honest follower sends."""
        self._sent_term = 0

    def sent(self, to: RaftPeerId, append: AppendEntriesRequest) -> None:
        """This member sent `append` to follower `to`."""
        if self._sent_term != append.leader_term:
            self._sent_up_to, self._sent_term = {}, append.leader_term
        last = append.previous_index + len(append.entries)
        self._sent_up_to[to] = max(self._sent_up_to.get(to, 0), last)

    def refusal(
        self, group: RaftGroup, envelopes: list[RaftEnvelope], context: rpc.CallContext
    ) -> tuple[rpc.StatusCode | None, str]:
        """Why a call's messages to this member of `group` (the members in force) are refused (the status
        and the reason), or (None, ""): the module's checks."""
        identity = None
        if self._tls is not None:
            try:
                identity = peer_identity(context)
            except ValueError as error:
                return rpc.StatusCode.PERMISSION_DENIED, f"the caller's certificate names no service: {error}"
            if identity is None or identity.role is not self._role:
                named = "no certificate" if identity is None else identity.common_name
                return (
                    rpc.StatusCode.PERMISSION_DENIED,
                    f"{named} may not send Raft messages to group {group.group_id}: "
                    f"{self._role.name} certificates only",
                )
        senders = {e.sender for e in envelopes}
        if len(senders) > 1:
            named = ", ".join(sorted(p.id for p in senders))
            return rpc.StatusCode.INVALID_ARGUMENT, f"one call speaks for one member, not for {named}"
        for envelope in envelopes:
            if envelope.group_id != group.group_id:
                return (
                    rpc.StatusCode.FAILED_PRECONDITION,
                    f"GroupMismatchException: a message for group {envelope.group_id!r} reached "
                    f"{self._me} of group {group.group_id!r}",
                )
            if envelope.receiver != self._me:
                return (
                    rpc.StatusCode.FAILED_PRECONDITION,
                    f"a message for {envelope.receiver} reached {self._me}",
                )
            address = self._address_of(envelope.sender)
            if address is None or envelope.sender == self._me:
                return (
                    rpc.StatusCode.PERMISSION_DENIED,
                    f"{envelope.sender} is not another member of group {group.group_id}",
                )
            if identity is not None and identity.host != address.host:
                return (
                    rpc.StatusCode.PERMISSION_DENIED,
                    f"{identity.common_name} may not speak for {envelope.sender}, a member on {address.host}",
                )
        return None, ""

    def impossible(self, core: RaftServer, sender: RaftPeerId, message: Message) -> str:
        """Why a leader's answer claims what no honest follower can (the wire checked each field alone), or
        "": SUCCESS up to an index past what this leader sent that follower in its term, or an installed
        snapshot past this leader's log (every entry a snapshot covers is committed, so in the leader's
        log). The core trusts both to advance the follower's match index and the commit index."""
        if core.role is not RaftPeerRole.LEADER or getattr(message, "term", None) != core.current_term:
            return ""
        if isinstance(message, AppendEntriesReply) and message.result is AppendResult.SUCCESS:
            sent = self._sent_up_to.get(sender, 0) if self._sent_term == core.current_term else 0
            if message.match_index > sent:
                return f"it matched up to {message.match_index}, but was sent entries up to {sent} only"
        if isinstance(message, InstallSnapshotReply) and message.snapshot_index > core.log.last_index:
            return (
                f"its snapshot at {message.snapshot_index} is past this leader's log ({core.log.last_index})"
            )
        return ""
