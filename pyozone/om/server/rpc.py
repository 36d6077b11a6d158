"""How the OM's RPC service turns failures into statuses, so no request can take the server down, and
where every request is counted and timed.

An OMException travels as the status its result code names, with details "RESULT_CODE: message"; a
malformed request is INVALID_ARGUMENT "INVALID_REQUEST: <field> ..."; anything else is a server bug:
logged with its traceback and answered INTERNAL.

With OM HA (ozone.om.service.ids) every request also passes its service's `ha` there (om/server/ha.py):
only the leader executes it, and its answer waits for its Raft entry; a refusal (OMNotLeaderException,
OMLeaderNotReadyException) or a replayed error is answered with its status (`AnsweredStatus`).

Every request passes `rpc` once, so that is where it is observed: its type (Ozone's name for it, the
`Type` of OzoneManagerProtocol's OMRequest: openKey is CreateKey), how long it took and whether it failed.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, NoReturn, Protocol, TypeVar

from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.server.retry_cache import AnsweredStatus
from pyozone.protocol import ProtocolError
from pyozone.rpc import AbortError, CallContext, StatusCode

log = logging.getLogger(__name__)

R = TypeVar("R")

Handler = Callable[[Any, Any, CallContext], Awaitable[Any]]
Finish = Callable[[Any, Any], Any]
"""(service, answer) -> what the caller is sent: the answer executed or replayed (a message or bytes)."""

REQUEST_TYPES = {
    "listVolumes": "ListVolume",
    "openKey": "CreateKey",
    "initiateMultipartUpload": "InitiateMultiPartUpload",
    "commitMultipartUploadPart": "CommitMultiPartUpload",
    "completeMultipartUpload": "CompleteMultiPartUpload",
    "abortMultipartUpload": "AbortMultiPartUpload",
    "listParts": "ListMultiPartUploadParts",
    "getServiceInfo": "ServiceList",
}
"""Ozone's request type where it is not the rpc's name capitalized (createVolume is CreateVolume)."""


def request_type(rpc_name: str) -> str:
    return REQUEST_TYPES.get(rpc_name) or rpc_name[:1].upper() + rpc_name[1:]


class RequestObserver(Protocol):
    def __call__(self, request_type: str, seconds: float, failed: bool) -> None: ...


def ignore(request_type: str, seconds: float, failed: bool) -> None:
    """The observer of a service nobody measures."""


def parse(convert: Callable[..., R], *args: Any) -> R:
    """Runs a request converter; its ProtocolError becomes INVALID_REQUEST."""
    try:
        return convert(*args)
    except ProtocolError as e:
        raise OMException(OMResultCode.INVALID_REQUEST, str(e)) from None


def rpc(handler: Handler, finish: Finish | None = None) -> Handler:
    """The handler, observed by its service's `observe` (a RequestObserver): every request once, failed
    when it ends in any error status. `finish` completes its answer after execution, outside what OM HA
    logs and keeps in its retry cache (a replayed answer is finished again): what must never be stored,
    as an SSE-S3 data key, is added there."""
    name = handler.__name__
    kind = request_type(name)

    @functools.wraps(handler)
    async def wrapper(self: Any, request: Any, context: CallContext) -> Any:
        started = time.perf_counter()
        failed = True
        try:
            if self.ha is None:
                answer = await handler(self, request, context)
            else:
                caller = self.access.caller(context)
                answer = await self.ha.serve(
                    name,
                    functools.partial(handler, self, request, context),
                    context,
                    caller.user if caller is not None else "",
                )
            if finish is not None:
                answer = finish(self, answer)
            failed = False
            return answer
        except AbortError:
            raise
        except AnsweredStatus as e:
            await abort_with(context, e)
        except OMException as e:
            if e.code in (OMResultCode.SCM_UNAVAILABLE,):
                log.warning("%s from %s: %s", name, context.peer(), e)
            await abort_with(context, e)
        except Exception as e:
            log.error("%s from %s failed", name, context.peer(), exc_info=e)
            await context.abort(StatusCode.INTERNAL, f"{name}: internal error in OM (see its log)")
        finally:
            self.observe(kind, time.perf_counter() - started, failed)

    return wrapper


def rpc_finished(finish: Finish) -> Callable[[Handler], Handler]:
    """`rpc` with a `finish` step."""
    return functools.partial(rpc, finish=finish)


async def abort_with(context: CallContext, refusal: AnsweredStatus | OMException) -> NoReturn:
    """An OM refusal as the call's status: an AnsweredStatus by its status, an OMException by its result's."""
    if isinstance(refusal, AnsweredStatus):
        await context.abort(StatusCode[refusal.status], refusal.details)
    await context.abort(StatusCode[refusal.status_name], str(refusal))


@contextlib.asynccontextmanager
async def refusals_as_status(context: CallContext) -> AsyncIterator[None]:
    """A handler's OM refusals (AnsweredStatus, OMException) end its call with their status (`abort_with`)."""
    try:
        yield
    except (AnsweredStatus, OMException) as e:
        await abort_with(context, e)
