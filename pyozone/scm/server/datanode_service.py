"""StorageContainerDatanodeProtocolService: getVersion, register and sendHeartbeat over the SCM core.

A thin adapter: convert the request, call the core on the event loop (the core is not thread-safe and
pyozone.rpc runs these coroutines on the loop), convert the answer back.

Over mutual TLS only datanode certificates may call it, and each speaks for the datanode whose UUID it
names alone: another datanode's register or heartbeat (its reports, its pipeline actions) is refused. A
plaintext port is open to whoever reaches it, as in Ozone's simple authentication.

With a `heartbeat_seconds` histogram each heartbeat handled is observed, from the request in to the
response built (scm_heartbeat_seconds, scm/server/metrics.py).
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from prometheus_client import Histogram

from pyozone import protocol as p
from pyozone.hdds.security.x509 import CertRole
from pyozone.rpc import CallContext
from pyozone.scm.scm import StorageContainerManager
from pyozone.scm.server.resolve import details_resolver
from pyozone.scm.server.rpc import parse, rpc
from pyozone.security.service_access import ServiceAccess

if TYPE_CHECKING:
    from pyozone.proto import ScmServerDatanodeHeartbeatProtocol_pb2 as pb

log = logging.getLogger(__name__)


class DatanodeProtocolService:
    def __init__(
        self,
        core: StorageContainerManager,
        scm_uuid: str,
        tls: bool = False,
        heartbeat_seconds: Histogram | None = None,
    ) -> None:
        """`tls`: the port is mutual TLS, so only datanodes may call, each for itself."""
        self.core = core
        self.heartbeat_seconds = heartbeat_seconds
        self.scm_uuid = scm_uuid
        self.access = ServiceAccess("SCM's datanode protocol", frozenset({CertRole.DATANODE}), tls)
        # commands naming other datanodes (pipeline members, replication targets) carry their addresses
        self._resolve = details_resolver(core.nodes)

    @rpc
    async def getVersion(
        self, request: pb.SCMVersionRequestProto, context: CallContext
    ) -> pb.SCMVersionResponseProto:
        await self.access.require(context)
        core = self.core
        return p.version_response_to_proto(
            p.VersionResponse(core.cluster_id, self.scm_uuid, core.nodes.layout)
        )

    @rpc
    async def register(
        self, request: pb.SCMRegisterRequestProto, context: CallContext
    ) -> pb.SCMRegisteredResponseProto:
        await self.access.require(context)
        req = parse(p.register_request_from_proto, request)
        dn = req.datanode
        await self.access.require_datanode(context, dn.uuid)
        theirs = req.cluster_id
        if theirs and theirs != self.core.cluster_id:
            error = (
                f"datanode {dn.uuid} ({dn.hostname}) belongs to cluster {theirs}, "
                f"but this SCM manages cluster {self.core.cluster_id}"
            )
            log.error("Refused registration: %s", error)
            return p.register_response_to_proto(
                p.RegisterResponse(self.core.cluster_id, dn.uuid, error=error)
            )
        node = self.core.register(dn, req.node_report, req.container_report, req.pipeline_reports, req.layout)
        return p.register_response_to_proto(
            p.RegisterResponse(
                node.cluster_id, node.datanode_uuid, node.network_location, dn.hostname, dn.ip_address
            )
        )

    @rpc
    async def sendHeartbeat(
        self, request: pb.SCMHeartbeatRequestProto, context: CallContext
    ) -> pb.SCMHeartbeatResponseProto:
        start = time.perf_counter()
        await self.access.require(context)
        hb = parse(p.heartbeat_from_proto, request)
        await self.access.require_datanode(context, hb.datanode.uuid)
        commands = self.core.heartbeat(hb)
        log.debug("Heartbeat from datanode %s: %d command(s) back", hb.datanode.uuid, len(commands))
        response = p.HeartbeatResponse(hb.datanode.uuid, tuple(commands), self.core.context.known_term)
        answer = p.heartbeat_response_to_proto(response, self._resolve)
        if self.heartbeat_seconds is not None:
            self.heartbeat_seconds.observe(time.perf_counter() - start)
        return answer
