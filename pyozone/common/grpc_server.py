"""Requests a gRPC server cannot decode are the caller's fault: INVALID_ARGUMENT, one log line, no traceback.

grpc.aio decodes a request with the handler's `request_deserializer` (the message's FromString) before any
servicer code runs, and answers a DecodeError with UNKNOWN and a logged traceback. `ServerInterceptor`
wraps every method handler so decoding never raises: an undecodable request becomes an `Undecodable`
marker, and the handler answers it with INVALID_ARGUMENT before the servicer sees it. For a streamed
request the stream ends with INVALID_ARGUMENT at the first bad message.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
from google.protobuf.message import DecodeError

log = logging.getLogger(__name__)


class Undecodable:
    """What a request that is not a valid message of the method's type decodes to."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


def lenient(deserializer: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    if deserializer is None:
        return None

    def decode(raw: bytes) -> Any:
        try:
            return deserializer(raw)
        except (DecodeError, ValueError, TypeError) as e:  # ValueError: e.g. bad UTF-8 in a string field
            return Undecodable(str(e) or type(e).__name__)

    return decode


async def _refuse(method: str, request: Undecodable, context: grpc.aio.ServicerContext) -> None:
    log.warning("%s from %s: undecodable request: %s", method, context.peer(), request.reason)
    await context.abort(
        grpc.StatusCode.INVALID_ARGUMENT, f"INVALID_REQUEST: not a valid request message: {request.reason}"
    )


def _checked_stream(
    method: str, requests: AsyncIterator[Any], context: grpc.aio.ServicerContext
) -> AsyncIterator[Any]:
    async def messages() -> AsyncIterator[Any]:
        async for request in requests:
            if isinstance(request, Undecodable):
                await _refuse(method, request, context)
            yield request

    return messages()


async def _maybe_await(result: Any) -> Any:
    return await result if inspect.isawaitable(result) else result


async def _responses(result: Any) -> AsyncIterator[Any]:
    """A streaming handler's responses: an async generator's, or none from one that wrote them itself."""
    if inspect.isawaitable(result):
        await result
        return
    if hasattr(result, "__aiter__"):
        async for response in result:
            yield response
    else:
        for response in result:
            yield response


def _guard(method: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
    deserialize = lenient(handler.request_deserializer)
    serialize = handler.response_serializer
    if handler.unary_unary:
        unary_unary = handler.unary_unary

        async def uu(request: Any, context: grpc.aio.ServicerContext) -> Any:
            if isinstance(request, Undecodable):
                await _refuse(method, request, context)
            return await _maybe_await(unary_unary(request, context))

        return grpc.unary_unary_rpc_method_handler(uu, deserialize, serialize)
    if handler.unary_stream:
        unary_stream = handler.unary_stream

        async def us(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            if isinstance(request, Undecodable):
                await _refuse(method, request, context)
            async for response in _responses(unary_stream(request, context)):
                yield response

        return grpc.unary_stream_rpc_method_handler(us, deserialize, serialize)
    if handler.stream_unary:
        stream_unary = handler.stream_unary

        async def su(requests: AsyncIterator[Any], context: grpc.aio.ServicerContext) -> Any:
            return await _maybe_await(stream_unary(_checked_stream(method, requests, context), context))

        return grpc.stream_unary_rpc_method_handler(su, deserialize, serialize)
    stream_stream = handler.stream_stream

    async def ss(requests: AsyncIterator[Any], context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
        async for response in _responses(stream_stream(_checked_stream(method, requests, context), context)):
            yield response

    return grpc.stream_stream_rpc_method_handler(ss, deserialize, serialize)


class ServerInterceptor(grpc.aio.ServerInterceptor):
    """Install with grpc.aio.server(interceptors=[ServerInterceptor()])."""

    def __init__(self) -> None:
        self._guarded: dict[str, tuple[grpc.RpcMethodHandler, grpc.RpcMethodHandler]] = {}

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler | None:
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        method = handler_call_details.method
        cached = self._guarded.get(method)
        if cached is None or cached[0] is not handler:
            cached = self._guarded[method] = (handler, _guard(method, handler))
        return cached[1]


def interceptors() -> list[grpc.aio.ServerInterceptor]:
    return [ServerInterceptor()]
