"""How the OM's gRPC service turns failures into statuses, so no request can take the server down.

An OMException travels as the status its result code names, with details "RESULT_CODE: message"; a
malformed request is INVALID_ARGUMENT "INVALID_REQUEST: <field> ..."; anything else is a server bug:
logged with its traceback and answered INTERNAL.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import grpc

from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.protocol import ProtocolError

log = logging.getLogger(__name__)

R = TypeVar("R")

Handler = Callable[[Any, Any, grpc.aio.ServicerContext], Awaitable[Any]]


def parse(convert: Callable[..., R], *args: Any) -> R:
    """Runs a request converter; its ProtocolError becomes INVALID_REQUEST."""
    try:
        return convert(*args)
    except ProtocolError as e:
        raise OMException(OMResultCode.INVALID_REQUEST, str(e)) from None


def rpc(handler: Handler) -> Handler:
    name = handler.__name__

    @functools.wraps(handler)
    async def wrapper(self: Any, request: Any, context: grpc.aio.ServicerContext) -> Any:
        try:
            return await handler(self, request, context)
        except grpc.aio.AbortError:
            raise
        except OMException as e:
            if e.code in (OMResultCode.SCM_UNAVAILABLE,):
                log.warning("%s from %s: %s", name, context.peer(), e)
            await context.abort(grpc.StatusCode[e.status_name], str(e))
        except Exception as e:
            log.error("%s from %s failed", name, context.peer(), exc_info=e)
            await context.abort(grpc.StatusCode.INTERNAL, f"{name}: internal error in OM (see its log)")

    return wrapper
