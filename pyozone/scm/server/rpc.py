"""How the SCM's gRPC services turn failures into gRPC statuses, so no request can take the server down.

A malformed request is the caller's fault (INVALID_ARGUMENT, naming the field); an SCM refusal is
FAILED_PRECONDITION or NOT_FOUND with Ozone's "RESULT_CODE: message"; anything else is a server bug:
logged with its traceback and answered INTERNAL.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, NoReturn, TypeVar

import grpc

from pyozone.hdds.exceptions import ResultCode, SCMException
from pyozone.protocol import ProtocolError

log = logging.getLogger(__name__)

R = TypeVar("R")

_NOT_FOUND = frozenset(
    {ResultCode.PIPELINE_NOT_FOUND, ResultCode.CONTAINER_NOT_FOUND, ResultCode.NO_SUCH_DATANODE}
)


class InvalidRequest(Exception):
    """The request breaks the protocol; the message names the field."""


def parse(convert: Callable[..., R], *args: Any) -> R:
    """Runs a request converter; its ProtocolError becomes InvalidRequest. A ProtocolError raised while
    building a response is not the caller's fault, so only request parsing goes through here."""
    try:
        return convert(*args)
    except ProtocolError as e:
        raise InvalidRequest(str(e)) from None


Handler = Callable[[Any, Any, grpc.aio.ServicerContext], Awaitable[Any]]
StreamHandler = Callable[[Any, Any, grpc.aio.ServicerContext], AsyncIterator[Any]]


def rpc(handler: Handler) -> Handler:
    """Wraps a servicer method: maps exceptions to statuses (see the module docstring)."""
    name = handler.__name__

    @functools.wraps(handler)
    async def wrapper(self: Any, request: Any, context: grpc.aio.ServicerContext) -> Any:
        try:
            return await handler(self, request, context)
        except Exception as e:
            await _abort(name, e, context)

    return wrapper


def rpc_stream(handler: StreamHandler) -> StreamHandler:
    """`rpc` for a server-streaming method: a failure after some messages ends the stream with a status."""
    name = handler.__name__

    @functools.wraps(handler)
    async def wrapper(self: Any, request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
        try:
            async for message in handler(self, request, context):
                yield message
        except Exception as e:
            await _abort(name, e, context)

    return wrapper


async def _abort(name: str, error: Exception, context: grpc.aio.ServicerContext) -> NoReturn:
    if isinstance(error, grpc.aio.AbortError):
        raise error  # the handler chose the status itself
    if isinstance(error, InvalidRequest):
        log.warning("%s from %s: invalid request: %s", name, context.peer(), error)
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(error))
    if isinstance(error, SCMException):
        code = grpc.StatusCode.NOT_FOUND if error.code in _NOT_FOUND else grpc.StatusCode.FAILED_PRECONDITION
        await context.abort(code, str(error))
    log.error("%s from %s failed", name, context.peer(), exc_info=error)
    await context.abort(grpc.StatusCode.INTERNAL, f"{name}: internal error in SCM (see its log)")
