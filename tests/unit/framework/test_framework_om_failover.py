"""The OM client fails over among an HA service's OMs (Ozone's OMFailoverProxyProvider): a follower names the
leader and the call goes there at once; an unreachable OM sends a repeatable call to the next one; a refusal
means the call was not executed, so any call may fail over on it; the attempts are bounded."""

from __future__ import annotations

import asyncio
import socket
from functools import partial

import pytest

from pyozone import rpc
from pyozone.client.config import ClientConfig
from pyozone.config import OzoneConfiguration
from pyozone.framework import om as om_module
from pyozone.framework.om import OM_SERVICE, OmClient
from pyozone.framework.om_errors import OMLeaderNotReadyException, OMNotLeaderException, OMUnavailableError
from pyozone.proto import OmClientProtocol_pb2 as pb
from pyozone.rpc.metadata import CALL_ID_METADATA, CLIENT_ID_METADATA


class Om:
    """infoVolume as one OM of a service: the leader answers (owner = its node id), a follower refuses naming
    `leader`, a leader not ready refuses `not_ready` times first."""

    def __init__(self, node_id: str) -> None:
        self.node_id = node_id
        self.leader: str | None = node_id
        self.leader_address = ""
        self.not_ready = 0
        self.calls = 0

    async def infoVolume(self, request: pb.InfoVolumeRequest, context: rpc.CallContext):  # type: ignore[no-untyped-def]
        self.calls += 1
        if self.not_ready:
            self.not_ready -= 1
            await context.abort(rpc.StatusCode.UNAVAILABLE, OMLeaderNotReadyException(self.node_id).details())
        if self.leader != self.node_id:
            refusal = OMNotLeaderException(self.node_id, self.leader, self.leader_address)
            await context.abort(rpc.StatusCode.UNAVAILABLE, refusal.details())
        return pb.InfoVolumeResponse(volume=pb.VolumeInfo(volume=request.volume, owner=self.node_id))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _service(
    oms: list[Om], down: set[str] = frozenset(), attempts: int = 6
) -> tuple[list[rpc.Server], OzoneConfiguration]:  # type: ignore[assignment]
    servers, values = (
        [],
        {
            "ozone.om.service.ids": "omservice",
            "ozone.om.nodes.omservice": ",".join(om.node_id for om in oms),
            "ozone.client.wait.between.retries.millis": "10",
            "ozone.client.failover.max.attempts": str(attempts),
        },
    )
    for om in oms:
        if om.node_id in down:
            port = _free_port()  # nobody listens
        else:
            server = rpc.Server(rpc.ServerSettings(max_message_bytes=1 << 20))
            server.add_service(OM_SERVICE, om)
            port = await server.start("127.0.0.1", 0)
            servers.append(server)
        values[f"ozone.om.address.omservice.{om.node_id}"] = f"127.0.0.1:{port}"
    for om in oms:
        om.leader_address = values.get(f"ozone.om.address.omservice.{om.leader}", "")
    return servers, OzoneConfiguration(values)


async def _ask(
    oms: list[Om], down: set[str] = frozenset(), retry: bool = False, attempts: int = 6
) -> tuple[str, OmClient]:  # type: ignore[assignment]
    servers, conf = await _service(oms, down, attempts)
    client = OmClient(ClientConfig.from_conf(conf))
    try:
        answer = await client._call(
            "infoVolume", pb.InfoVolumeRequest(volume="v"), lambda r: r.volume.owner, retry=retry
        )
        return answer, client
    finally:
        await client.close()
        for server in servers:
            await server.stop(0)


def test_a_follower_names_the_leader_and_the_call_goes_there_at_once() -> None:
    om1, om2, om3 = Om("om1"), Om("om2"), Om("om3")
    om1.leader = om2.leader = om3.leader = "om3"
    owner, client = asyncio.run(_ask([om1, om2, om3]))
    assert owner == "om3"
    assert (om1.calls, om2.calls, om3.calls) == (1, 0, 1)  # om2 skipped: om1 named om3
    assert client.address.endswith(str(om3.leader_address.rpartition(":")[2]))  # it stays with the leader


def test_a_follower_that_knows_no_leader_sends_the_call_to_the_next_om() -> None:
    om1, om2 = Om("om1"), Om("om2")
    om1.leader = None
    owner, _ = asyncio.run(_ask([om1, om2]))
    assert owner == "om2"


def test_a_leader_not_ready_is_asked_again() -> None:
    om1 = Om("om1")
    om1.not_ready = 2
    owner, _ = asyncio.run(_ask([om1, Om("om2")]))
    assert (owner, om1.calls) == ("om1", 3)


def test_an_unreachable_om_fails_over_every_call_of_a_service() -> None:
    """Each call names its client and itself (OM's retry cache answers a repeat), so any may fail over."""
    for retry in (True, False):
        owner, _ = asyncio.run(_ask([Om("om1"), Om("om2")], down={"om1"}, retry=retry))
        assert owner == "om2"


def test_every_attempt_of_a_call_names_the_same_client_and_call() -> None:
    seen: list[tuple[str, str]] = []

    class Named(Om):
        async def infoVolume(self, request, context):  # type: ignore[no-untyped-def]
            named = dict(context.invocation_metadata())
            seen.append((named[CLIENT_ID_METADATA], named[CALL_ID_METADATA]))
            return await super().infoVolume(request, context)

    om1, om2 = Named("om1"), Named("om2")
    om1.leader = om2.leader = "om2"
    asyncio.run(_ask([om1, om2]))
    assert len(seen) == 2 and seen[0] == seen[1]
    asyncio.run(_ask([om1, om2]))
    assert seen[2][0] != seen[0][0]  # another client


def test_followers_naming_a_dead_leader_do_not_trap_the_client() -> None:
    """The leader (om1) is down and both followers still name it until om3 wins the election (at its second
    call here): the client asks every OM once per round and waits between rounds, so it reaches om3 (it
    used to go om1, om2 naming om1, om1, om2, ... never asking om3, until its attempts ran out)."""
    om2 = Om("om2")

    class Elected(Om):
        async def infoVolume(self, request, context):  # type: ignore[no-untyped-def]
            if self.calls == 1:  # the election is over
                self.leader = om2.leader = self.node_id
            return await super().infoVolume(request, context)

    om3 = Elected("om3")
    om2.leader = om3.leader = "om1"
    owner, _ = asyncio.run(_ask([Om("om1"), om2, om3], down={"om1"}))
    assert (owner, om2.calls, om3.calls) == ("om3", 2, 2)


def test_calls_refused_together_move_the_client_once() -> None:
    """Two calls in flight at om1 are both refused naming om2: the first moves the client there, the second
    follows it (it used to move on from om2 to om3, a follower, and come back)."""
    arrived: list[asyncio.Event] = []

    class Together(Om):
        async def infoVolume(self, request, context):  # type: ignore[no-untyped-def]
            self.calls += 1
            if self.calls == 2:
                arrived[0].set()
            await arrived[0].wait()  # both calls are here: refuse both
            await context.abort(rpc.StatusCode.UNAVAILABLE, OMNotLeaderException("om1", "om2").details())

    om1, om2, om3 = Together("om1"), Om("om2"), Om("om3")
    om3.leader = "om2"

    async def scenario() -> list[str]:
        arrived.append(asyncio.Event())
        servers, conf = await _service([om1, om2, om3])
        client = OmClient(ClientConfig.from_conf(conf))
        try:
            ask = partial(
                client._call, "infoVolume", pb.InfoVolumeRequest(volume="v"), lambda r: r.volume.owner
            )
            return list(await asyncio.gather(ask(), ask()))
        finally:
            await client.close()
            for server in servers:
                await server.stop(0)

    assert asyncio.run(scenario()) == ["om2", "om2"]
    assert (om1.calls, om2.calls, om3.calls) == (2, 2, 0)


def test_an_unreachable_lone_om_is_not_failed_over() -> None:
    with pytest.raises(OMUnavailableError):
        asyncio.run(_ask([Om("om1")], down={"om1"}))


def test_failovers_are_bounded_by_ozone_client_failover_max_attempts() -> None:
    om1, om2 = Om("om1"), Om("om2")
    om1.leader, om2.leader = "om2", "om1"  # each names the other: no leader anywhere
    with pytest.raises(OMNotLeaderException):
        asyncio.run(_ask([om1, om2]))
    assert om1.calls + om2.calls == 7  # the first call and 6 failovers


def test_a_follower_naming_a_leader_found_down_makes_the_client_wait_not_spin(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The leader died; a follower still names it until the next is elected: each time the client comes
    back to the dead leader it waits ozone.client.wait.between.retries.millis, so its failovers last as
    long as an election rather than a few milliseconds (without a wait, each failover burnt the budget)."""
    waits: list[float] = []

    class Recording:
        def __getattr__(self, name: str) -> object:
            return getattr(asyncio, name)

        @staticmethod
        async def sleep(delay: float) -> None:
            waits.append(delay)

    monkeypatch.setattr(om_module, "asyncio", Recording())
    om1, om2 = Om("om1"), Om("om2")
    om2.leader = "om1"
    with pytest.raises(OMUnavailableError):  # the last of the 6 failovers met om1 down
        asyncio.run(_ask([om1, om2], down={"om1"}))
    assert om2.calls == 3  # om1 (down), om2 naming om1, three times over
    assert waits == [0.01] * 3  # a wait at each return to om1 (before: none)


class SickLeader(Om):
    """The leader answers UNAVAILABLE with its own code `sick` times (SCM cannot allocate a block)."""

    def __init__(self, node_id: str, sick: int = 1 << 30) -> None:
        super().__init__(node_id)
        self.sick = sick

    async def infoVolume(self, request, context):  # type: ignore[no-untyped-def]
        if self.leader == self.node_id and self.sick:
            self.calls += 1
            self.sick -= 1
            details = "SCM_UNAVAILABLE: cannot reach SCM: FAILED_TO_FIND_ACTIVE_PIPELINE"
            await context.abort(rpc.StatusCode.UNAVAILABLE, details)
        return await super().infoVolume(request, context)


def test_the_leaders_own_unavailable_answer_is_raised_not_failed_over() -> None:
    """The leader answered (SCM_UNAVAILABLE): the client reports that, as against a lone OM; it used to
    take it for an unreachable OM, fail over to the followers and report one's OMNotLeaderException."""
    om1, om2, om3 = SickLeader("om1"), SickLeader("om2"), SickLeader("om3")
    om2.leader = om3.leader = "om1"
    with pytest.raises(OMUnavailableError) as raised:
        asyncio.run(_ask([om1, om2, om3]))
    assert raised.value.result == "SCM_UNAVAILABLE" and "FAILED_TO_FIND_ACTIVE_PIPELINE" in str(raised.value)
    assert (om1.calls, om2.calls, om3.calls) == (1, 0, 0)


def test_a_retried_call_waits_out_the_leaders_unavailable_answer_on_the_leader() -> None:
    om1, om2 = SickLeader("om1", sick=2), Om("om2")
    om2.leader = "om1"
    owner, _ = asyncio.run(_ask([om1, om2], retry=True))
    assert (owner, om1.calls, om2.calls) == ("om1", 3, 0)


def test_out_of_failovers_the_client_reports_the_unreachable_leader_not_a_followers_refusal() -> None:
    """om1 (the leader its follower names) is down; the failovers end at om2's refusal: the error says om1
    is unreachable (it said "om2 is not the leader", which hid why the call failed)."""
    om2 = Om("om2")
    om2.leader = "om1"
    with pytest.raises(OMUnavailableError) as raised:  # om1, om2, om1, om2, om1, om2: 5 failovers
        asyncio.run(_ask([Om("om1"), om2], down={"om1"}, attempts=5))
    assert "failed to connect" in str(raised.value) and "OM:om2 is not the leader" in str(raised.value)
    assert om2.calls == 3


def test_the_refusals_read_as_ozone_writes_them() -> None:
    text = OMNotLeaderException("om1", "om2", "host2:9862").details()
    assert text == "OMNotLeaderException: OM:om1 is not the leader. Suggested leader is OM:om2[host2:9862]."
    parsed = OMNotLeaderException.parse(text)
    assert parsed is not None and (parsed.leader_id, parsed.leader_address) == ("om2", "host2:9862")
    unknown = OMNotLeaderException.parse(OMNotLeaderException("om1").details())
    assert unknown is not None and unknown.leader_id is None
    assert OMNotLeaderException.parse("OMNotLeaderException: garbage") is None
