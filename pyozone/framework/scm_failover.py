"""Failover between the SCMs of a service, for every client of SCM's block and admin protocols (Ozone's
SCMFailoverProxyProviderBase with SCMClientConfig's retry policy).

`ScmNodes` is where a client may send one protocol's calls: the SCMs of the service (`ozone.scm.service.ids`,
common/scm_ha.py's ScmAddresses), each at that protocol's port, or a lone SCM at its configured address (one
node: every call goes there once, as before SCM HA). `FailoverStub` sends each call to the SCM it last found
leading; an SCM that refuses as a follower (Ozone's ServerNotLeaderException, status UNAVAILABLE) sends it to
the leader it names, else to the next SCM not asked since the client last waited; an SCM that cannot be
reached (or does not answer in time) to the next; once every SCM was asked the client waits
`hdds.scmclient.failover.retry.interval`; a leader not ready yet (LeaderNotReadyException) is asked again
after that wait. It gives up after Ozone's retry count (the larger of `hdds.scmclient.failover.max.retry` and
`hdds.scmclient.max.retry.timeout` over the interval) or once `max.retry.timeout` passed, with an error naming
every SCM and the last answer. Any other answer (SCM's own refusals, no OPEN pipeline) is the caller's, at
once. The refusal is read here, from Ozone's text; the daemon only writes it.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from pyozone.common.net import HostPort
from pyozone.common.scm_ha import ScmAddresses, ScmNodeDetails, ScmProtocol, scm_service_id, scm_service_nodes
from pyozone.common.tls import TlsStore
from pyozone.config import OzoneConfiguration
from pyozone.framework.failover_round import next_in_round
from pyozone.framework.scm_errors import ScmClientError
from pyozone.hdds.security.x509 import CertRole
from pyozone.rpc.client import ChannelSettings
from pyozone.rpc.metadata import user_metadata
from pyozone.rpc.service import ServiceSpec, Stub
from pyozone.rpc.status import RpcError, StatusCode
from pyozone.rpc.sync import SyncChannel

_CONNECTION_LOST = ("failed to connect to ", "connection to ", "the server is closing this connection")
"""How the RPC layer's own UNAVAILABLE reads (rpc/client.py, client_connection.py): the SCM was not reached,
or the connection went before it answered."""


@dataclass(frozen=True, slots=True)
class ScmNotLeader:
    """Ozone's ServerNotLeaderException from an SCM of a service: `server` is not the leader; `leader` is
    the one it suggests (HOST:PORT at the protocol called, or a node id), None when it knows none."""

    server: str
    leader: str | None

    PREFIX = "ServerNotLeaderException: "
    _TEXT = re.compile(
        r"Server:(?P<server>\S+) is not the leader(?: \(.*\))?\."
        r"(?: Suggested leader is Server:(?P<leader>\S+)\.| Could not determine the leader node\.)?"
    )


@dataclass(frozen=True, slots=True)
class ScmLeaderNotReady:
    """Ozone's LeaderNotReadyException: `server` leads but has not applied its log to its term's start; the
    same SCM takes the call after a wait."""

    server: str

    PREFIX = "LeaderNotReadyException: Server:"


ScmRefusal = ScmNotLeader | ScmLeaderNotReady


def parse_refusal(e: RpcError) -> ScmRefusal | None:
    """The HA refusal an SCM answered (status UNAVAILABLE, Ozone's exception text), None for anything
    else."""
    if e.code() is not StatusCode.UNAVAILABLE:
        return None
    details = (e.details() or "").strip()
    if details.startswith(ScmLeaderNotReady.PREFIX):
        server = details[len(ScmLeaderNotReady.PREFIX) :].partition(" ")[0]
        return ScmLeaderNotReady(server) if server else None
    if details.startswith(ScmNotLeader.PREFIX):
        match = ScmNotLeader._TEXT.fullmatch(details[len(ScmNotLeader.PREFIX) :])
        if match is not None:
            return ScmNotLeader(match["server"], match["leader"])
    return None


def unreachable(e: RpcError) -> bool:
    """The SCM was not reached, lost the connection, or did not answer in time: another SCM may lead."""
    if e.code() is StatusCode.DEADLINE_EXCEEDED:
        return True
    return e.code() is StatusCode.UNAVAILABLE and (e.details() or "").startswith(_CONNECTION_LOST)


@dataclass(frozen=True, slots=True)
class ScmFailoverPolicy:
    """Ozone's SCMClientConfig: `hdds.scmclient.failover.max.retry` (15), `.failover.retry.interval` (2s),
    `.max.retry.timeout` (10m), `.rpc.timeout` (15m)."""

    max_retry: int = 15
    retry_interval_s: float = 2.0
    max_retry_timeout_s: float = 600.0
    rpc_timeout_s: float = 900.0

    @classmethod
    def from_conf(cls, conf: OzoneConfiguration) -> ScmFailoverPolicy:
        return cls(
            int(conf.get("hdds.scmclient.failover.max.retry")),
            int(conf.get("hdds.scmclient.failover.retry.interval")) / 1000,
            int(conf.get("hdds.scmclient.max.retry.timeout")) / 1000,
            int(conf.get("hdds.scmclient.rpc.timeout")) / 1000,
        )

    @property
    def retry_count(self) -> int:
        """Ozone's SCMClientConfig.getRetryCount: the configured count, or max.retry.timeout over the
        interval when that is larger."""
        if self.retry_interval_s <= 0:
            return self.max_retry
        return max(self.max_retry, int(self.max_retry_timeout_s / self.retry_interval_s))


@dataclass(frozen=True, slots=True)
class ScmEndpoint:
    """One SCM at one protocol's port: `node_id` "" for a lone SCM."""

    node_id: str
    address: HostPort


@dataclass(frozen=True, slots=True)
class ScmNodes:
    """The SCMs a client of one protocol may call, in the order the service names them."""

    endpoints: tuple[ScmEndpoint, ...]
    policy: ScmFailoverPolicy = ScmFailoverPolicy()

    def __post_init__(self) -> None:
        if not self.endpoints:
            raise ValueError("an SCM client needs at least one SCM")

    @classmethod
    def lone(cls, address: HostPort, policy: ScmFailoverPolicy = ScmFailoverPolicy()) -> ScmNodes:
        return cls((ScmEndpoint("", address),), policy)

    @classmethod
    def of(
        cls, addresses: ScmAddresses, protocol: ScmProtocol, policy: ScmFailoverPolicy = ScmFailoverPolicy()
    ) -> ScmNodes:
        """The SCMs of `addresses` at `protocol`'s port."""
        return cls(tuple(ScmEndpoint(node_id, at) for node_id, at in addresses.endpoints(protocol)), policy)

    @classmethod
    def configured(
        cls, conf: OzoneConfiguration, protocol: ScmProtocol, service_id: str | None = None
    ) -> ScmNodes:
        """A command's or daemon's edge: the SCMs of `service_id` (default: this configuration's SCM
        service, else the lone SCM) at `protocol`'s port, failing over by this configuration's policy."""
        return cls.of(ScmAddresses.from_conf(conf, service_id), protocol, ScmFailoverPolicy.from_conf(conf))

    @classmethod
    def from_conf(
        cls,
        conf: OzoneConfiguration,
        port: Callable[[ScmNodeDetails], HostPort],
        alone: Callable[[OzoneConfiguration], HostPort],
        service_id: str | None = None,
    ) -> ScmNodes:
        """The SCMs of `service_id` (default: this configuration's SCM service) at `port`; without a
        service, the lone SCM at `alone(conf)`: for the datanode's container lookups (datanode/daemon.py
        scm_lookup_nodes), whose lone SCM falls back to the datanode address's host, a rule ScmAddresses has
        not."""
        policy = ScmFailoverPolicy.from_conf(conf)
        service = service_id or scm_service_id(conf)
        if service is None:
            return cls.lone(alone(conf), policy)
        return cls(tuple(ScmEndpoint(n.node_id, port(n)) for n in scm_service_nodes(conf, service)), policy)

    @property
    def service(self) -> bool:
        return len(self.endpoints) > 1

    def waiting_at_most(self, seconds: float) -> ScmNodes:
        """These SCMs, failing over for at most `seconds` (a caller that holds something while it waits:
        a datanode's write thread, an operator's status command), or the configured timeout if shorter."""
        bounded = min(self.policy.max_retry_timeout_s, seconds)
        return replace(self, policy=replace(self.policy, max_retry_timeout_s=bounded))


@dataclass(frozen=True, slots=True)
class _Node:
    endpoint: ScmEndpoint
    stub: Any
    close: Callable[[], None]

    def named(self, leader: str) -> bool:
        return leader in (self.endpoint.node_id, str(self.endpoint.address))


OpenStub = Callable[[ScmEndpoint], tuple[Any, Callable[[], None]]]
"""A stub to one SCM, and what closes it."""


def channel_stubs(
    nodes: ScmNodes, spec: ServiceSpec, max_message_bytes: int, tls: TlsStore | None, peer: CertRole | None
) -> OpenStub:
    """Stubs on one rpc.SyncChannel per SCM; an SCM of a service that refuses a connection is not waited
    for (`fail_fast`): the next one is asked."""
    settings = ChannelSettings(max_message_bytes, fail_fast=nodes.service)

    def open_stub(endpoint: ScmEndpoint) -> tuple[Any, Callable[[], None]]:
        channel = SyncChannel(endpoint.address, settings, tls, peer, user_metadata(tls))
        return Stub(channel, spec), channel.close

    return open_stub


class FailoverStub:
    """A stub whose unary calls (`stub.method(request, timeout=...)`) go to the leading SCM of `nodes`,
    failing over as the module says; safe to use from several threads (the move is locked, each call
    loops on its own)."""

    def __init__(
        self,
        nodes: ScmNodes,
        open_stub: OpenStub,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.nodes = nodes
        self._nodes = [_Node(e, *open_stub(e)) for e in nodes.endpoints]
        self._sleep = sleep
        self._clock = clock
        self._lock = threading.Lock()
        self._current = 0
        self._tried: set[int] = set()
        """The SCMs asked since the client last waited."""

    @property
    def address(self) -> HostPort:
        """The SCM calls go to now."""
        return self._nodes[self._current].endpoint.address

    @property
    def current(self) -> Any:
        """The stub of the SCM calls go to now (a server stream, which any SCM answers)."""
        return self._nodes[self._current].stub

    def close(self) -> None:
        for node in self._nodes:
            node.close()

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_"):
            raise AttributeError(name)

        def call(request: Any, timeout: float | None = None, **kwargs: Any) -> Any:
            return self._call(name, request, timeout, kwargs)

        return call

    def on_every_scm(self, name: str) -> Callable[..., list[Any]]:
        """A call every SCM of the service takes for itself, sent to each in turn (Ozone's ADMIN_COMMAND_TYPE
        of StorageContainerLocationProtocol: "admin command should take effect on all SCM instance": each
        SCM's own Replication Manager and safe mode); its answers, one per SCM. The first SCM that fails
        raises, naming itself: the command did not take effect everywhere, and the operator repeats it."""

        def call(request: Any, timeout: float | None = None, **kwargs: Any) -> list[Any]:
            answers = []
            for node in self._nodes:
                try:
                    answers.append(getattr(node.stub, name)(request, timeout=timeout, **kwargs))
                except RpcError as e:
                    if not self.nodes.service:
                        raise
                    raise ScmClientError(
                        f"{name} did not reach every SCM of the service: {node.endpoint.node_id} at "
                        f"{node.endpoint.address}: {e.details() or e.code().name}",
                        e.code(),
                    ) from None
            return answers

        return call

    def _fail_over(self, leader: str | None, asked: int) -> bool:
        """Moves to the named leader, else to the next SCM not asked in this round; True when every SCM
        was asked: the caller waits before the new round. When another call already moved on from
        `asked`, this one follows (nothing moves)."""
        with self._lock:
            if asked != self._current:
                return False
            named = [
                i for i, n in enumerate(self._nodes) if leader is not None and n.named(leader) and i != asked
            ]
            self._current, new_round = next_in_round(asked, len(self._nodes), named, self._tried)
            return new_round

    def _call(self, name: str, request: Any, timeout: float | None, kwargs: dict[str, Any]) -> Any:
        policy = self.nodes.policy
        if timeout is not None:
            timeout = min(timeout, policy.rpc_timeout_s)
        if not self.nodes.service:
            return getattr(self._nodes[0].stub, name)(request, timeout=timeout, **kwargs)
        deadline = self._clock() + policy.max_retry_timeout_s
        retries = 0
        while True:
            asked = self._current
            node = self._nodes[asked]
            try:
                response = getattr(node.stub, name)(request, timeout=timeout, **kwargs)
            except RpcError as e:
                refusal = parse_refusal(e)
                if refusal is None and not unreachable(e):
                    raise
                if retries >= policy.retry_count or self._clock() >= deadline:
                    raise ScmClientError(
                        f"{name}: no SCM of the service ({self._names()}) took the call after {retries} "
                        f"failovers (hdds.scmclient.failover.max.retry {policy.max_retry}; at most "
                        f"{policy.max_retry_timeout_s:g}s: hdds.scmclient.max.retry.timeout or the caller's "
                        "shorter bound); the last, "
                        f"{node.endpoint.node_id} at {node.endpoint.address}: {e.details() or e.code().name}",
                        StatusCode.UNAVAILABLE,
                    ) from None
                retries += 1
                if isinstance(refusal, ScmLeaderNotReady) or self._fail_over(
                    refusal.leader if isinstance(refusal, ScmNotLeader) else None, asked
                ):
                    self._sleep(policy.retry_interval_s)
                continue
            with self._lock:
                self._tried.clear()
            return response

    def _names(self) -> str:
        return ", ".join(f"{n.endpoint.node_id} at {n.endpoint.address}" for n in self._nodes)
