"""Requests a gRPC server cannot decode, or that are larger than their method allows, are the caller's
fault: an error status and one log line, no traceback, and nothing of the request echoed.

grpc.aio decodes a request with the handler's `request_deserializer` (the message's FromString) before any
servicer code runs, and answers a DecodeError with UNKNOWN and a logged traceback. `ServerInterceptor`
wraps every method handler so decoding never raises: an undecodable request becomes an `Undecodable`
marker, and the handler answers it with INVALID_ARGUMENT before the servicer sees it. For a streamed
request the stream ends with INVALID_ARGUMENT at the first bad message.

A server may also bound its methods' requests (`RequestLimits`): the raw bytes are checked before they are
parsed, so a 30 MB name is never turned into a message, a str or an error message (each another copy);
the request becomes an `Oversized` marker that the service's own refusal answers.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import grpc
from google.protobuf.message import DecodeError

log = logging.getLogger(__name__)


class Undecodable:
    """What a request that is not a valid message of the method's type decodes to."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


@dataclass(frozen=True)
class Oversized:
    """What a request above its method's bounds decodes to, unparsed. `field` is the top-level field
    that is too long, or None when the whole message is."""

    field: str | None
    size: int
    limit: int


@dataclass(frozen=True)
class RequestBounds:
    """One method's request limits: the whole message, and top-level length-delimited fields (strings,
    bytes, sub-messages) by field number as (name, limit)."""

    message_bytes: int
    fields: Mapping[int, tuple[str, int]]

    def oversized(self, raw: bytes) -> Oversized | None:
        """Walks the top-level fields of the wire format without copying any; a malformed message is left
        to the parser. The first field above its bound wins over the whole message's size."""
        end = len(raw)
        if self.fields and end > min(limit for _, limit in self.fields.values()):
            field = _long_field(raw, self.fields)
            if field is not None:
                return field
        if end > self.message_bytes:
            return Oversized(None, end, self.message_bytes)
        return None


def _long_field(raw: bytes, fields: Mapping[int, tuple[str, int]]) -> Oversized | None:
    pos, end = 0, len(raw)
    try:
        while pos < end:
            tag, pos = _varint(raw, pos)
            wire_type = tag & 7
            if wire_type == 0:
                _, pos = _varint(raw, pos)
            elif wire_type == 1:
                pos += 8
            elif wire_type == 5:
                pos += 4
            elif wire_type == 2:
                size, pos = _varint(raw, pos)
                bound = fields.get(tag >> 3)
                if bound is not None and size > bound[1] and pos + size <= end:
                    return Oversized(bound[0], size, bound[1])
                pos += size
            else:  # groups (long deprecated): the parser decides
                return None
    except IndexError:  # truncated: the parser says so
        return None
    return None


def _varint(raw: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while shift < 70:
        byte = raw[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7
    raise IndexError("varint longer than 10 bytes")


class RequestLimits(Protocol):
    """A service's request bounds by full method name ("/package.Service/method"), and how it words a
    refusal (the status and its details; never the oversized content)."""

    def bounds(self, method: str) -> RequestBounds | None: ...

    def refusal(self, method: str, oversized: Oversized) -> tuple[grpc.StatusCode, str]: ...


def lenient(
    deserializer: Callable[[bytes], Any] | None, bounds: RequestBounds | None = None
) -> Callable[[bytes], Any] | None:
    if deserializer is None:
        return None

    def decode(raw: bytes) -> Any:
        if bounds is not None:
            oversized = bounds.oversized(raw)
            if oversized is not None:
                return oversized
        try:
            return deserializer(raw)
        except (DecodeError, ValueError, TypeError) as e:  # ValueError: e.g. bad UTF-8 in a string field
            return Undecodable(str(e) or type(e).__name__)

    return decode


Refuse = Callable[[Any, grpc.aio.ServicerContext], Awaitable[None]]
"""Aborts the call if the request is a marker, else returns."""


def _refuser(method: str, limits: RequestLimits | None) -> Refuse:
    async def refuse(request: Any, context: grpc.aio.ServicerContext) -> None:
        if isinstance(request, Undecodable):
            log.warning("%s from %s: undecodable request: %s", method, context.peer(), request.reason)
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"INVALID_REQUEST: not a valid request message: {request.reason}",
            )
        if isinstance(request, Oversized) and limits is not None:
            what = "request" if request.field is None else request.field
            log.warning(
                "%s from %s: %s of %d bytes, above %d",
                method,
                context.peer(),
                what,
                request.size,
                request.limit,
            )
            await context.abort(*limits.refusal(method, request))

    return refuse


def _checked_stream(
    refuse: Refuse, requests: AsyncIterator[Any], context: grpc.aio.ServicerContext
) -> AsyncIterator[Any]:
    async def messages() -> AsyncIterator[Any]:
        async for request in requests:
            await refuse(request, context)
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


def _guard(
    method: str, handler: grpc.RpcMethodHandler, limits: RequestLimits | None
) -> grpc.RpcMethodHandler:
    deserialize = lenient(handler.request_deserializer, limits.bounds(method) if limits else None)
    refuse = _refuser(method, limits)
    serialize = handler.response_serializer
    if handler.unary_unary:
        unary_unary = handler.unary_unary

        async def uu(request: Any, context: grpc.aio.ServicerContext) -> Any:
            await refuse(request, context)
            return await _maybe_await(unary_unary(request, context))

        return grpc.unary_unary_rpc_method_handler(uu, deserialize, serialize)
    if handler.unary_stream:
        unary_stream = handler.unary_stream

        async def us(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            await refuse(request, context)
            async for response in _responses(unary_stream(request, context)):
                yield response

        return grpc.unary_stream_rpc_method_handler(us, deserialize, serialize)
    if handler.stream_unary:
        stream_unary = handler.stream_unary

        async def su(requests: AsyncIterator[Any], context: grpc.aio.ServicerContext) -> Any:
            return await _maybe_await(stream_unary(_checked_stream(refuse, requests, context), context))

        return grpc.stream_unary_rpc_method_handler(su, deserialize, serialize)
    stream_stream = handler.stream_stream

    async def ss(requests: AsyncIterator[Any], context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
        async for response in _responses(stream_stream(_checked_stream(refuse, requests, context), context)):
            yield response

    return grpc.stream_stream_rpc_method_handler(ss, deserialize, serialize)


class WrappingInterceptor(grpc.aio.ServerInterceptor):
    """A server interceptor that wraps each method's handler once, as `_wrap` says (kept per method, and
    made again when the server hands it another handler)."""

    def __init__(self) -> None:
        self._wrapped: dict[str, tuple[grpc.RpcMethodHandler, grpc.RpcMethodHandler]] = {}

    def _wrap(self, method: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        raise NotImplementedError

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler | None:
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        method = handler_call_details.method
        cached = self._wrapped.get(method)
        if cached is None or cached[0] is not handler:
            cached = self._wrapped[method] = (handler, self._wrap(method, handler))
        return cached[1]


class ServerInterceptor(WrappingInterceptor):
    """Install with grpc.aio.server(interceptors=[ServerInterceptor()])."""

    def __init__(self, limits: RequestLimits | None = None) -> None:
        super().__init__()
        self._limits = limits

    def _wrap(self, method: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        return _guard(method, handler, self._limits)


def interceptors(limits: RequestLimits | None = None) -> list[grpc.aio.ServerInterceptor]:
    return [ServerInterceptor(limits)]
