"""The SCM client's failover (framework/scm_failover.py, Ozone's SCMFailoverProxyProviderBase): the refusal
an SCM of a service answers is read; a call follows the leader a follower names, tries the others in turn
when none is named, waits once every SCM was asked, and gives up after the configured retries with an error
naming every SCM. A lone SCM is called once, as before SCM HA."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from pyozone.common.net import HostPort
from pyozone.common.scm_ha import ScmAddresses, ScmProtocol
from pyozone.config import OzoneConfiguration
from pyozone.framework.scm_errors import ScmClientError
from pyozone.framework.scm_failover import (
    FailoverStub,
    ScmEndpoint,
    ScmFailoverPolicy,
    ScmLeaderNotReady,
    ScmNodes,
    ScmNotLeader,
    parse_refusal,
    unreachable,
)
from pyozone.rpc import RpcError, StatusCode

NODES = ScmNodes(
    tuple(ScmEndpoint(f"scm{i}", HostPort("127.0.0.1", 28100 + i)) for i in (1, 2, 3)),
    ScmFailoverPolicy(max_retry=6, retry_interval_s=2.0, max_retry_timeout_s=10.0),
)


def not_leader(me: str, leader: str | None) -> RpcError:
    suggested = f"Suggested leader is Server:{leader}." if leader else "Could not determine the leader node."
    return RpcError(
        StatusCode.UNAVAILABLE, f"ServerNotLeaderException: Server:{me} is not the leader. {suggested}"
    )


def down(node: str) -> RpcError:
    return RpcError(StatusCode.UNAVAILABLE, f"failed to connect to {node}: Connection refused")


class Scm:
    """One SCM's stub: `answer(node)` is what it does with a call (an RpcError to raise, else the answer)."""

    def __init__(self, node: str, answer: Callable[[str], Any], log: list[str]) -> None:
        self.node = node
        self.answer = answer
        self.log = log

    def allocate(self, request: Any, timeout: float | None = None) -> Any:
        self.log.append(self.node)
        result = self.answer(self.node)
        if isinstance(result, RpcError):
            raise result
        return result


class Harness:
    def __init__(self, answer: Callable[[str], Any], nodes: ScmNodes = NODES) -> None:
        self.log: list[str] = []
        self.sleeps: list[float] = []
        self.now = 0.0

        def sleep(seconds: float) -> None:
            self.sleeps.append(seconds)
            self.now += seconds

        self.stub = FailoverStub(
            nodes, lambda e: (Scm(e.node_id, answer, self.log), lambda: None), sleep, lambda: self.now
        )


# ---------------------------------------------------------------------- the refusal read
def test_the_refusals_an_scm_of_a_service_answers_are_read() -> None:
    at_port = not_leader("scm2", "scm1.example.com:9863")
    assert parse_refusal(at_port) == ScmNotLeader("scm2", "scm1.example.com:9863")
    assert parse_refusal(not_leader("scm2", None)) == ScmNotLeader("scm2", None)
    stepped_down = RpcError(
        StatusCode.UNAVAILABLE,
        "ServerNotLeaderException: Server:scm1 is not the leader (an entry was not committed: lost). "
        "Suggested leader is Server:scm3.",
    )
    assert parse_refusal(stepped_down) == ScmNotLeader("scm1", "scm3")
    not_ready = "LeaderNotReadyException: Server:scm1 is in LEADER state but not yet ready."
    assert parse_refusal(RpcError(StatusCode.UNAVAILABLE, not_ready)) == ScmLeaderNotReady("scm1")


def test_other_answers_are_no_refusal() -> None:
    no_pipeline = RpcError(StatusCode.UNAVAILABLE, "FAILED_TO_FIND_ACTIVE_PIPELINE: no OPEN pipeline")
    assert parse_refusal(no_pipeline) is None and not unreachable(no_pipeline)
    wrong_status = RpcError(StatusCode.FAILED_PRECONDITION, not_leader("scm2", None).details())
    assert parse_refusal(wrong_status) is None
    assert unreachable(down("scm1")) and unreachable(RpcError(StatusCode.DEADLINE_EXCEEDED, "late"))


def test_ozone_keys_and_defaults() -> None:
    policy = ScmFailoverPolicy.from_conf(OzoneConfiguration())
    assert policy == ScmFailoverPolicy(15, 2.0, 600.0, 900.0)
    # Ozone's SCMClientConfig.getRetryCount: max.retry.timeout over the interval when that is larger
    assert policy.retry_count == 300
    conf = OzoneConfiguration(
        {"hdds.scmclient.failover.max.retry": "4", "hdds.scmclient.max.retry.timeout": "1s"}
    )
    assert ScmFailoverPolicy.from_conf(conf).retry_count == 4


# ---------------------------------------------------------------------- the loop
def test_a_call_follows_the_leader_a_follower_names_and_stays_there() -> None:
    leader = "scm3"
    harness = Harness(lambda node: "ok" if node == leader else not_leader(node, "127.0.0.1:28103"))
    assert harness.stub.allocate("request", timeout=5) == "ok"
    assert harness.log == ["scm1", "scm3"]
    assert harness.sleeps == []
    assert harness.stub.allocate("request", timeout=5) == "ok"
    assert harness.log == ["scm1", "scm3", "scm3"]
    assert harness.stub.address == HostPort("127.0.0.1", 28103)


def test_a_leader_named_by_node_id_is_followed() -> None:
    harness = Harness(lambda node: "ok" if node == "scm2" else not_leader(node, "scm2"))
    assert harness.stub.allocate("request") == "ok"
    assert harness.log == ["scm1", "scm2"]


def test_without_a_named_leader_each_other_scm_is_tried_in_turn() -> None:
    harness = Harness(
        lambda node: "ok" if node == "scm3" else (down(node) if node == "scm1" else not_leader(node, None))
    )
    assert harness.stub.allocate("request") == "ok"
    assert harness.log == ["scm1", "scm2", "scm3"]
    assert harness.sleeps == []


def test_a_full_round_waits_the_interval_and_a_dead_leader_named_is_not_asked_again_at_once() -> None:
    answers = {
        "scm1": [down("scm1"), down("scm1")],
        "scm2": [not_leader("scm2", "scm1"), "ok"],
        "scm3": [not_leader("scm3", "scm1")],
    }
    harness = Harness(lambda node: answers[node].pop(0))
    assert harness.stub.allocate("request") == "ok"
    # scm1 down; scm2 names the dead scm1 (asked already): scm3; scm3 names scm1: a new round after a wait
    assert harness.log == ["scm1", "scm2", "scm3", "scm1", "scm2"]
    assert harness.sleeps == [2.0]


def test_a_leader_not_ready_is_asked_again_after_the_interval() -> None:
    answers = {
        "scm1": [
            RpcError(
                StatusCode.UNAVAILABLE,
                "LeaderNotReadyException: Server:scm1 is in LEADER state but not yet ready.",
            ),
            "ok",
        ]
    }
    harness = Harness(lambda node: answers[node].pop(0))
    assert harness.stub.allocate("request") == "ok"
    assert harness.log == ["scm1", "scm1"]
    assert harness.sleeps == [2.0]


def test_the_client_gives_up_after_the_configured_retries_naming_every_scm() -> None:
    harness = Harness(lambda node: not_leader(node, None))
    with pytest.raises(ScmClientError) as error:
        harness.stub.allocate("request")
    assert len(harness.log) == 7  # the first attempt and 6 failovers (hdds.scmclient.failover.max.retry)
    message = str(error.value)
    assert "after 6 failovers" in message and "hdds.scmclient.failover.max.retry 6" in message
    assert all(f"scm{i} at 127.0.0.1:2810{i}" in message for i in (1, 2, 3))
    assert "Could not determine the leader node" in message
    assert error.value.retryable


def test_the_client_gives_up_once_max_retry_timeout_passed() -> None:
    nodes = ScmNodes(
        NODES.endpoints, ScmFailoverPolicy(max_retry=100, retry_interval_s=2.0, max_retry_timeout_s=5.0)
    )
    harness = Harness(lambda node: down(node), nodes)
    with pytest.raises(ScmClientError) as error:
        harness.stub.allocate("request")
    assert "at most 5s: hdds.scmclient.max.retry.timeout or the caller's shorter bound" in str(error.value)
    assert harness.sleeps == [2.0, 2.0, 2.0]
    assert harness.now == 6.0


def test_a_caller_bounds_how_long_it_fails_over_never_past_the_configured_timeout() -> None:
    assert ScmNodes(NODES.endpoints).waiting_at_most(30).policy.max_retry_timeout_s == 30
    short = ScmNodes(NODES.endpoints, ScmFailoverPolicy(max_retry_timeout_s=5.0))
    assert short.waiting_at_most(30).policy.max_retry_timeout_s == 5.0


def test_an_answer_of_the_scm_itself_is_the_callers_at_once() -> None:
    refused = RpcError(StatusCode.UNAVAILABLE, "FAILED_TO_FIND_ACTIVE_PIPELINE: no OPEN pipeline")
    harness = Harness(lambda node: refused)
    with pytest.raises(RpcError) as error:
        harness.stub.allocate("request")
    assert error.value is refused
    assert harness.log == ["scm1"]


def test_a_lone_scm_is_called_once() -> None:
    harness = Harness(lambda node: down(node), ScmNodes.lone(HostPort("127.0.0.1", 28100)))
    with pytest.raises(RpcError):
        harness.stub.allocate("request")
    assert harness.log == [""]
    assert harness.sleeps == []


def test_scm_nodes_from_the_configuration() -> None:
    values = {
        "ozone.scm.service.ids": "svc",
        "ozone.scm.nodes.svc": "a,b",
        "ozone.scm.address.svc.a": "host-a",
        "ozone.scm.address.svc.b": "host-b",
        "ozone.scm.block.client.port.svc.b": "29999",
    }
    nodes = ScmNodes.from_conf(OzoneConfiguration(values), lambda n: n.block_client_address, pytest.fail)
    assert nodes.endpoints == (
        ScmEndpoint("a", HostPort("host-a", 9863)),
        ScmEndpoint("b", HostPort("host-b", 29999)),
    )
    lone = ScmNodes.from_conf(OzoneConfiguration(), lambda n: n.client_address, lambda _: HostPort("x", 1))
    assert lone.endpoints == (ScmEndpoint("", HostPort("x", 1)),) and not lone.service


def test_scm_nodes_of_the_addresses_at_one_protocols_port_with_the_configured_policy() -> None:
    values = {
        "ozone.scm.service.ids": "svc",
        "ozone.scm.nodes.svc": "a,b",
        "ozone.scm.address.svc.a": "host-a",
        "ozone.scm.address.svc.b": "host-b",
        "ozone.scm.block.client.port.svc.b": "29999",
        "hdds.scmclient.failover.max.retry": "3",
    }
    conf = OzoneConfiguration(values)
    nodes = ScmNodes.configured(conf, ScmProtocol.BLOCK)
    assert nodes == ScmNodes.of(
        ScmAddresses.from_conf(conf), ScmProtocol.BLOCK, ScmFailoverPolicy(max_retry=3)
    )
    assert nodes.endpoints == (
        ScmEndpoint("a", HostPort("host-a", 9863)),
        ScmEndpoint("b", HostPort("host-b", 29999)),
    )
    lone = ScmNodes.configured(OzoneConfiguration({"ozone.scm.names": "x"}), ScmProtocol.CLIENT)
    assert lone == ScmNodes.lone(HostPort("x", 9860)) and not lone.service
