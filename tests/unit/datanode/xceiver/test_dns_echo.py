"""A datanode's Echo (freon dne): payloadSizeResp zero bytes back, bounded as OM's echoRPC."""

from __future__ import annotations

import pytest

from pyozone.datanode.xceiver import Dispatcher
from pyozone.hdds.limits import MAX_ECHO_PAYLOAD_BYTES
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from tests.unit.datanode.dns_helpers import Node, request


def echo(dispatcher: Dispatcher, size: int, payload: bytes = b"") -> pb.ContainerCommandResponseProto:
    body = pb.EchoRequestProto(payload=payload, payloadSizeResp=size)
    return dispatcher.dispatch(request(pb.Echo, 0, echo=body))


def test_echo_answers_the_size_asked_up_to_the_limit(node_a: Node) -> None:
    dispatcher = Dispatcher(node_a.containers, node_a.uuid, node_a.full.append)
    assert echo(dispatcher, 0, b"x" * 1000).echo.payload == b""
    answer = echo(dispatcher, MAX_ECHO_PAYLOAD_BYTES)
    assert answer.result == pb.SUCCESS and answer.echo.payload == bytes(MAX_ECHO_PAYLOAD_BYTES)


@pytest.mark.parametrize(
    ("size", "message"),
    [
        (-1, "echo.payloadSizeResp: must be at least 0, got -1"),
        (MAX_ECHO_PAYLOAD_BYTES + 1, f"echo.payloadSizeResp: must be at most {MAX_ECHO_PAYLOAD_BYTES}, got "),
    ],
)
def test_a_size_out_of_bounds_is_malformed(node_a: Node, size: int, message: str) -> None:
    dispatcher = Dispatcher(node_a.containers, node_a.uuid, node_a.full.append)
    answer = echo(dispatcher, size)
    assert answer.result == pb.MALFORMED_REQUEST and answer.message.startswith(message), answer.message
    assert not answer.echo.payload
