"""How the SCM's services turn failures into call statuses, so no request can take the server down.

A malformed request is the caller's fault (INVALID_ARGUMENT, naming the field); an SCM refusal is
FAILED_PRECONDITION or NOT_FOUND with Ozone's "RESULT_CODE: message"; anything else is a server bug:
logged with its traceback and answered INTERNAL.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, NoReturn, TypeVar

from pyozone import rpc as _rpc
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


Handler = Callable[[Any, Any, _rpc.CallContext], Awaitable[Any]]
StreamHandler = Callable[[Any, Any, _rpc.CallContext], AsyncIterator[Any]]


def rpc(handler: Handler) -> Handler:
    """Wraps a servicer method: maps exceptions to statuses (see the module docstring)."""
    name = handler.__name__

    @functools.wraps(handler)
    async def wrapper(self: Any, request: Any, context: _rpc.CallContext) -> Any:
        try:
            return await handler(self, request, context)
        except Exception as e:
            await _abort(name, e, context)

    return wrapper


def rpc_stream(handler: StreamHandler) -> StreamHandler:
    """`rpc` for a server-streaming method: a failure after some messages ends the stream with a status."""
    name = handler.__name__

    @functools.wraps(handler)
    async def wrapper(self: Any, request: Any, context: _rpc.CallContext) -> AsyncIterator[Any]:
        try:
            async for message in handler(self, request, context):
                yield message
        except Exception as e:
            await _abort(name, e, context)

    return wrapper


async def _abort(name: str, error: Exception, context: _rpc.CallContext) -> NoReturn:
    if isinstance(error, _rpc.AbortError):
        raise error  # the handler chose the status itself
    if isinstance(error, InvalidRequest):
        log.warning("%s from %s: invalid request: %s", name, context.peer(), error)
        await context.abort(_rpc.StatusCode.INVALID_ARGUMENT, str(error))
    if isinstance(error, SCMException):
        code = _rpc.StatusCode.NOT_FOUND if error.code in _NOT_FOUND else _rpc.StatusCode.FAILED_PRECONDITION
        await context.abort(code, str(error))
    log.error("%s from %s failed", name, context.peer(), exc_info=error)
    await context.abort(_rpc.StatusCode.INTERNAL, f"{name}: internal error in SCM (see its log)")
