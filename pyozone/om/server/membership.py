"""Adding and removing an OM of an HA service: a Raft membership change (`RaftMember.set_configuration`, one
OM at a time; the new OM caught up as a learner first), as Ozone does it (docs/om.md "High availability":
adding an OM, removing an OM).

The leader's side (`OmMembership`, behind OzoneManagerAdminService):
- `configuration`: Ozone's getOMConfiguration: the group's members in force (the OM's Raft log) and the OMs
  its configuration names, each flagged when listed in ozone.om.decommissioned.nodes.SERVICE.
- `bootstrap`: Ozone's OMInterServiceProtocol.bootstrap: the leader checks that it leads
  (checkLeaderStatus), that its own configuration has the new OM at the address it gives and not
  decommissioned, that the OM is no member yet, and, on a mutual-TLS cluster, that the caller holds an OM
  certificate for that OM's host; then adds it (OzoneManagerRatisServer.addOMToRatisRing).
- `decommission`: Ozone's OMAdminProtocol.decommission: the OM must be a member other than the leader and
  listed in the leader's ozone.om.decommissioned.nodes.SERVICE; the leader removes it
  (removeOMFromRatisRing).

The new OM's side (`join_service`, `pyozone om --bootstrap`): unless `--force`, every other OM must have
the new OM in its configuration (Ozone's checkConfigBeforeBootstrap); then the leader is asked to add it. Its
first members are kept pending until the leader did (`PENDING_MEMBERS_FILE`).
An OM started without --bootstrap that is no member (a peer's log says so, or its own) refuses to start.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from pyozone.common.om_ha import OmAddresses, OmNodeDetails
from pyozone.config import OzoneConfiguration
from pyozone.config.keys import suffixed
from pyozone.framework.om_admin import OmAdminClient, OmAdminError
from pyozone.framework.om_errors import OMNotLeaderException
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.x509 import CertRole, Identity
from pyozone.om.server.ha import OmReplication
from pyozone.om.server.retry_cache import AnsweredStatus
from pyozone.protocol.om_admin import bootstrap_request, configuration_answer, node_info
from pyozone.ratis.messages import RaftPeerId
from pyozone.ratis_server.member_api import NotLeaderError, ReconfigurationError
from pyozone.ratis_server.server import RaftMember
from pyozone.ratis_server.transport import RaftPeer
from pyozone.rpc import RpcError, StatusCode

if TYPE_CHECKING:
    from pyozone.common.tls import TlsStore
    from pyozone.proto import OmAdminProtocol_pb2 as pb

log = logging.getLogger(__name__)

MEMBERS_FILE = "om-service-nodes"
"""In the group's Raft directory: the node ids of the group's first members, one a line."""
PENDING_MEMBERS_FILE = MEMBERS_FILE + ".pending"
"""`MEMBERS_FILE` of a bootstrapping OM until the leader added it (`members_confirmed`): a bootstrap that
failed leaves only this, and the OM refuses to start from it without --bootstrap (it would stand for
election in a group that does not count it)."""
BOOTSTRAP_TIMEOUT_S = 300.0
"""How long `pyozone om --bootstrap` looks for a leader that takes its request."""


class MembershipRefused(Exception):
    """This OM cannot join (or stay in) its service as started: the message says why and what to do."""


def _info(node: OmNodeDetails, decommissioned: bool = False) -> pb.OMNodeInfo:
    rpc, ratis = node.rpc_address, node.ratis_address
    return node_info(node.node_id, rpc.host, rpc.port, ratis.port, decommissioned)


class OmMembership:
    """The leader's side of membership changes for OM `node` of its service."""

    def __init__(
        self, conf: OzoneConfiguration, node: OmNodeDetails, replication: OmReplication, member: RaftMember
    ) -> None:
        self.conf = conf
        self.node = node
        self.replication = replication
        self.member = member

    def _configured(self) -> tuple[dict[str, OmNodeDetails], set[str]]:
        oms = OmAddresses.of_service(self.conf, self.node.service_id)
        return {n.node_id: n for n in oms.nodes}, set(oms.decommissioned)

    def members(self) -> tuple[str, ...]:
        """The node ids of the Raft group's members in force (its log's last configuration)."""
        return tuple(peer.id for peer in self.member.group.ids)

    def configuration(self) -> pb.OMConfigurationResponse:
        nodes, removed = self._configured()
        in_memory = []
        for peer in self.member.group.peers:
            known = nodes.get(peer.id.id)
            if known is not None:
                in_memory.append(_info(known))
            else:
                in_memory.append(node_info(peer.id.id, peer.address.host, 0, peer.address.port, False))
        status = self.member.status() if self.member.running else None
        in_conf = [_info(n, n.node_id in removed) for n in nodes.values()]
        logged = status is not None and status.last_index > 0
        return configuration_answer(self.node.node_id, in_memory, in_conf, logged)

    async def bootstrap(
        self, request: pb.BootstrapOMRequest, caller: Identity | None, caller_node: str | None = None
    ) -> int:
        """Adds the OM `request` names; the index of the configuration entry that made it a member.
        `caller`, `caller_node`: what the caller's certificate names over mutual TLS (its identity, and its
        X.om_node), None on a plaintext port: only the new OM's own certificate asks (its host and its
        node, so neither another OM of that host nor another service's OM nor a lone OM's may)."""
        self.replication.check_leader()
        new_id = request.nodeId
        nodes, removed = self._configured()
        nodes_key = suffixed("ozone.om.nodes", self.node.service_id)
        found = nodes.get(new_id)
        if found is None:
            raise AnsweredStatus(
                "FAILED_PRECONDITION",
                f"OM {self.node.node_id} does not have the bootstrapping OM({new_id}) information in its "
                f"configuration ({nodes_key}: {', '.join(nodes)}): add it to ozone-site.xml of every OM and "
                "restart them before bootstrapping",
            )
        if new_id in removed:
            raise AnsweredStatus(
                "FAILED_PRECONDITION",
                f"OM {self.node.node_id} configuration has bootstrapping OM({new_id}) in decommissioned "
                f"nodes list - {suffixed('ozone.om.decommissioned.nodes', self.node.service_id)}",
            )
        given = (request.hostAddress, request.ratisPort)
        if given != (found.ratis_address.host, found.ratis_address.port):
            raise AnsweredStatus(
                "INVALID_ARGUMENT",
                f"OM {self.node.node_id} configuration has bootstrapping OM({new_id}) Ratis address as "
                f"{found.ratis_address} where the bootstrapping OM address is {request.hostAddress}:"
                f"{request.ratisPort}",
            )
        node = X.om_node_name(self.node.service_id, new_id)
        if caller is not None and (
            caller.role is not CertRole.OM or caller.host != found.rpc_address.host or caller_node != node
        ):
            raise AnsweredStatus(
                "PERMISSION_DENIED",
                f"PERMISSION_DENIED: only OM {new_id} itself (an OM certificate for "
                f"{found.rpc_address.host} naming node {node}) may ask to bootstrap it, not "
                f"{caller.common_name} of {f'node {caller_node}' if caller_node else 'no OM node'}",
            )
        if new_id in self.members():
            raise AnsweredStatus(
                "ALREADY_EXISTS",
                f"OM {new_id} is already a member of the Ratis group of {self.node.service_id} "
                f"({', '.join(self.members())})",
            )
        peers = (*self.member.group.peers, RaftPeer(RaftPeerId(new_id), found.ratis_address))
        log.info(
            "%s: Submitting SetConfiguration request to Ratis server to add new OM peer %s to the Ratis "
            "group %s",
            self.node.node_id, new_id, self.member.group.group_id,
        )  # fmt: skip
        return await self._change(peers, "add", new_id)

    async def decommission(self, request: pb.DecommissionOMRequest) -> int:
        """Removes the OM `request` names; the index of the configuration entry that removed it."""
        self.replication.check_leader()
        gone = request.nodeId
        nodes, removed = self._configured()
        if gone == self.node.node_id:
            raise AnsweredStatus(
                "FAILED_PRECONDITION",
                f"OM node not present in the OM peer list: OM {gone} is the leader that got the request; "
                "hand the leadership to another OM first (pyozone admin om transfer)",
            )
        if gone not in self.members():
            raise AnsweredStatus(
                "NOT_FOUND",
                f"OM node not present in the OM peer list: {gone} is not a member of the Ratis group of "
                f"{self.node.service_id} ({', '.join(self.members())})",
            )
        decommissioned_key = suffixed("ozone.om.decommissioned.nodes", self.node.service_id)
        if gone not in removed:
            raise AnsweredStatus(
                "FAILED_PRECONDITION",
                f"Please add the to be decommissioned OM {gone} to the {decommissioned_key} config in "
                f"ozone-site.xml of all nodes (OM {self.node.node_id} does not list it)",
            )
        known = nodes.get(gone)
        if request.nodeAddress and known is not None and request.nodeAddress != known.rpc_address.host:
            raise AnsweredStatus(
                "INVALID_ARGUMENT",
                f"OM {gone}'s host address in config - {known.rpc_address.host} does not match the provided "
                f"host address {request.nodeAddress}",
            )
        peers = tuple(p for p in self.member.group.peers if p.id.id != gone)
        log.info(
            "%s: Submitting SetConfiguration request to Ratis server to remove OM peer %s from Ratis "
            "group %s",
            self.node.node_id, gone, self.member.group.group_id,
        )  # fmt: skip
        return await self._change(peers, "remove", gone)

    async def _change(self, peers: tuple[RaftPeer, ...], operation: str, node_id: str) -> int:
        try:
            index = await self.member.set_configuration(peers)
        except ReconfigurationError as e:
            raise AnsweredStatus(
                "FAILED_PRECONDITION", f"Failed to {operation} OM {node_id} in Ratis ring: {e.reason}"
            ) from None
        except NotLeaderError as e:
            leader = e.leader_id.id if e.leader_id is not None else None
            address = str(e.leader_address) if e.leader_address is not None else None
            raise AnsweredStatus(
                "UNAVAILABLE", OMNotLeaderException(self.node.node_id, leader, address).details()
            ) from None
        log.info("%s OM %s in Ratis group %s (configuration entry %d): members %s", operation, node_id,
                 self.member.group.group_id, index, ", ".join(self.members()))  # fmt: skip
        return index


def leader_members(
    nodes: dict[str, OmNodeDetails], tls: TlsStore | None
) -> Callable[[RaftPeerId], Awaitable[tuple[RaftPeerId, ...]]]:
    """`OmReplication.members_at_install`: the members in force on the leader whose checkpoint was
    installed (Ratis sends its configuration entry with the notification; OM's checkpoint has none), so an
    OM that was down during a membership change does not fall back to the group's first members. () when
    the leader does not answer: the first members, as before."""
    client = OmAdminClient(nodes, tls)

    async def ask(leader: RaftPeerId) -> tuple[RaftPeerId, ...]:
        if leader.id not in client.nodes:
            return ()
        try:
            answer = await asyncio.to_thread(client.configuration, leader.id)
        except RpcError as e:
            log.warning("OM %s did not tell its members (%s): the group's first members stand", leader, e)
            return ()
        return tuple(RaftPeerId(node.nodeID) for node in answer.nodesInMemory)

    return ask


# ---------------------------------------------------------------------- the joining OM's side


def _peers_without_me(client: OmAdminClient, me: OmNodeDetails) -> dict[str, str]:
    """Ozone's checkConfigBeforeBootstrap: each other OM whose configuration lacks this OM (or names it at
    another address, or as decommissioned), with why."""
    stale: dict[str, str] = {}
    for node in client.nodes:
        if node == me.node_id:
            continue
        try:
            answer = client.configuration(node)
        except RpcError as e:
            stale[node] = f"no answer ({e.code().name}: {e.details()})"
            continue
        mine = next((n for n in answer.nodesInNewConf if n.nodeID == me.node_id), None)
        if mine is None:
            stale[node] = f"does not have the bootstrapping OM({me.node_id}) information"
        elif (mine.hostAddress, mine.rpcPort) != (me.rpc_address.host, me.rpc_address.port):
            stale[node] = (
                f"has bootstrapping OM({me.node_id}) address as {mine.hostAddress}:{mine.rpcPort} where the "
                f"bootstrapping OM address is {me.rpc_address}"
            )
        elif mine.decommissioned:
            stale[node] = f"has bootstrapping OM({me.node_id}) in decommissioned nodes list"
    return stale


def _logged_views(client: OmAdminClient) -> Iterator[tuple[str, tuple[str, ...]]]:
    """Each OM that answers and has a Raft log, with the members in force there, asked one at a time."""
    for node in client.nodes:
        try:
            answer = client.configuration(node, timeout_s=5)
        except RpcError:
            continue
        if answer.logKnown:
            yield node, tuple(n.nodeID for n in answer.nodesInMemory)


def _members_per_peers(client: OmAdminClient) -> tuple[str, tuple[str, ...]] | None:
    """An OM whose Raft log has members, and those members; None when no OM that answers has a log (a new
    service: its OMs start together)."""
    return next(_logged_views(client), None)


def _peers_not_counting(client: OmAdminClient, node_id: str) -> dict[str, tuple[str, ...]]:
    """The members in force on each OM that answers with a Raft log, when none of them counts `node_id`;
    {} when one does, or none answers (a whole service starting together)."""
    views: dict[str, tuple[str, ...]] = {}
    for node, members in _logged_views(client):
        if node_id in members:
            return {}
        views[node] = members
    return views


async def first_members(
    me: OmNodeDetails,
    group_dir: Path,
    nodes: dict[str, OmNodeDetails],
    active: dict[str, OmNodeDetails],
    tls: TlsStore | None,
    bootstrap: bool,
) -> tuple[OmNodeDetails, ...]:
    """The group's members before any change in this OM's log (`MEMBERS_FILE` in its group's Raft
    directory, written at its first start): a new service's OMs (`active`); in a running service, the
    members a running OM has in force, with this one (bootstrapped), so no two OMs begin with different
    groups. Its log's configuration entries change them; the configuration's other OMs (`nodes`) are
    addresses only.

    MembershipRefused: a new OM started without --bootstrap that a running OM's log does not count, an OM
    with members that no running OM counts any more (removed while it was stopped), or an OM to bootstrap
    while no OM of the service answers with its members."""
    service = me.service_id
    path = group_dir / MEMBERS_FILE
    if not path.exists() and (group_dir / PENDING_MEMBERS_FILE).exists() and not bootstrap:
        raise MembershipRefused(
            f"OM {me.node_id}'s bootstrap into {service} did not finish (the leader never confirmed adding "
            f"it: {group_dir / PENDING_MEMBERS_FILE}): start it with `pyozone om --bootstrap`"
        )
    if path.exists():
        ids = path.read_text().split()
        missing = [node for node in ids if node not in nodes]
        if missing:
            raise MembershipRefused(
                f"the Raft log in {group_dir} began with OMs {', '.join(missing)}, which "
                f"{suffixed('ozone.om.nodes', service)} does not name: restore them in the configuration"
            )
        if not bootstrap:
            # A stopped OM never receives the entry that removed it: the running OMs know better than its log
            others = OmAdminClient({n: d for n, d in active.items() if n != me.node_id}, tls)
            views = await asyncio.to_thread(_peers_not_counting, others, me.node_id)
            if views:
                seen = "; ".join(f"OM {node}'s: {', '.join(members)}" for node, members in views.items())
                key = suffixed("ozone.om.decommissioned.nodes", service)
                raise MembershipRefused(
                    f"OM {me.node_id} is not a member of the Ratis group of {service} any more (members "
                    f"{seen}): it was decommissioned; list it in {key}, or start it with "
                    "`pyozone om --bootstrap` to add it again"
                )
        return tuple(nodes[node] for node in ids)
    client = OmAdminClient({n: d for n, d in active.items() if n != me.node_id}, tls)
    found = await asyncio.to_thread(_members_per_peers, client)
    if found is None:
        if bootstrap:
            raise MembershipRefused(
                f"no other OM of {service} answered with its Raft group's members: OM {me.node_id} "
                "bootstraps into a running service (start its OMs first)"
            )
        ids = list(active)  # a new service: its OMs start together
    else:
        peer, members = found
        if not bootstrap and me.node_id not in members:
            raise MembershipRefused(
                f"OM {me.node_id} is not a member of the Ratis group of {service} (OM {peer}'s members: "
                f"{', '.join(members)}): start it with `pyozone om --bootstrap` to add it to the running "
                "service"
            )
        unknown = [node for node in members if node not in nodes]
        if unknown:
            raise MembershipRefused(
                f"OM {peer}'s Raft group has OMs {', '.join(unknown)}, which "
                f"{suffixed('ozone.om.nodes', service)} here does not name: update this OM's configuration"
            )
        # the members in force on a running OM (and this one): the configuration entries that made them
        # reach this log from the leader
        ids = [*(node for node in members if node != me.node_id), me.node_id]
        if bootstrap:  # the members once the leader adds this OM: pending until it did
            path = group_dir / PENDING_MEMBERS_FILE
    group_dir.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".tmp")
    partial.write_text("\n".join(ids) + "\n")
    os.replace(partial, path)
    return tuple(nodes[node] for node in ids)


def members_confirmed(group_dir: Path) -> None:
    """The leader added this OM (or counted it already): its pending first members become its own."""
    pending = group_dir / PENDING_MEMBERS_FILE
    if pending.exists():
        os.replace(pending, group_dir / MEMBERS_FILE)


async def join_service(
    me: OmNodeDetails,
    nodes: dict[str, OmNodeDetails],
    member: RaftMember,
    tls: TlsStore | None,
    bootstrap: bool,
    force: bool,
    counted: bool = False,
    timeout_s: float = BOOTSTRAP_TIMEOUT_S,
) -> None:
    """Once this OM's Raft member runs. With `bootstrap`: unless `force`, every other OM must name this OM
    in its configuration; then the leader is asked to add it (an OM that is a member already is told so,
    and serves). `counted`: this OM's confirmed first members (`MEMBERS_FILE`) were there at its start; when
    its log counts it too and no running OM says otherwise, the bootstrap is skipped, as Ozone's when the
    node is already part of the ring (a whole service restarted with --bootstrap kept: each OM's admin
    service opens only after this, so they would wait for each other). Without: an OM whose log counts it
    no more (decommissioned) refuses to start. MembershipRefused says why."""
    members = tuple(peer.id for peer in member.group.ids)
    service = me.service_id
    others = {node: details for node, details in nodes.items() if node != me.node_id}
    client = OmAdminClient(others, tls)
    counted = counted and me.node_id in members
    if bootstrap and counted and not await asyncio.to_thread(_peers_not_counting, client, me.node_id):
        log.info("OM %s is already a member of the Ratis group of %s (its log's members: %s): skipping the "
                 "bootstrap", me.node_id, service, ", ".join(members))  # fmt: skip
        return
    if not bootstrap:
        if member.status().last_index > 0 and me.node_id not in members:
            raise MembershipRefused(
                f"OM {me.node_id} is not a member of the Ratis group of {service} (its Raft log's "
                f"members: {', '.join(members)}): it was decommissioned; start it with "
                "`pyozone om --bootstrap` to add it again"
            )
        return
    if not force:
        stale = await asyncio.to_thread(_peers_without_me, client, me)
        if stale:
            listed = "; ".join(f"OM {node} {why}" for node, why in stale.items())
            raise MembershipRefused(
                f"{listed}: they do not have or have incorrect information of the bootstrapping OM. Update "
                "their ozone-site.xml (and restart them) before proceeding, or bootstrap with --force if an "
                "OM is down and its configuration was checked by hand"
            )
    request = bootstrap_request(me.node_id, me.ratis_address.host, me.ratis_address.port)
    try:
        # the leader answers once the learner caught up and its configuration entry committed: a long wait
        leader, answer = await asyncio.to_thread(
            client.call_leader, "bootstrap", request, timeout_s, 1.0, timeout_s
        )
    except OmAdminError as e:
        if e.code is StatusCode.ALREADY_EXISTS:
            log.info("OM %s: %s", me.node_id, e)
            return
        raise MembershipRefused(f"Failed to Bootstrap OM {me.node_id}: {e}") from None
    log.info(
        "Successfully bootstrapped OM %s and joined the Ratis group %s of %s (leader %s, configuration "
        "entry %d)",
        me.node_id, member.group.group_id, service, leader, answer.configurationIndex,
    )  # fmt: skip
