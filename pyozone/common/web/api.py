"""The JSON APIs behind the web UIs: handlers that read a daemon's state and answer JSON, with typed query
parameters, pagination and the same error shape as every other endpoint (`{"error": ...}`).

A handler takes a `Query` and returns something JSON-serialisable (or an awaitable of it: OM's handlers
read RocksDB on an executor). It raises `BadQuery` for a bad parameter (400), `NotFound` for an unknown id
(404), `Forbidden` (403) or `Unavailable` (503, e.g. before the daemon has storage). Lists are paginated:
`?offset=&limit=` (limit at most MAX_LIMIT), answered as `{"total", "offset", "limit", "items"}`, so no
page ever carries a million containers.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aiohttp import web

DEFAULT_LIMIT = 100
MAX_LIMIT = 1000


class BadQuery(ValueError):
    """A query parameter the handler cannot use; the message names it (answered 400)."""


class NotFound(LookupError):
    """The path names something that does not exist (answered 404)."""


class Forbidden(PermissionError):
    """The caller may not read this (answered 403)."""


class Unavailable(RuntimeError):
    """The daemon cannot answer yet or just now, e.g. before it has storage (answered 503)."""


@dataclass(frozen=True, slots=True)
class Page:
    offset: int
    limit: int


class Query:
    """A request's query string and path parameters, read with types and bounds."""

    def __init__(self, request: web.Request) -> None:
        self.request = request
        self._query = request.query
        self._path = request.match_info

    def path(self, name: str) -> str:
        return self._path[name]

    def path_int(self, name: str, low: int = 0, high: int = (1 << 63) - 1) -> int:
        return _int(name, self._path[name], low, high)

    def str(self, name: str, default: str | None = None, choices: Sequence[str] | None = None) -> str | None:
        value = self._query.get(name, default)
        if value is not None and choices is not None and value not in choices:
            raise BadQuery(f"{name}={value[:80]!r}: must be one of {', '.join(choices)}")
        return value

    def int(self, name: str, default: int, low: int = 0, high: int = (1 << 63) - 1) -> int:
        raw = self._query.get(name)
        return default if raw is None else _int(name, raw, low, high)

    def page(self, default_limit: int = DEFAULT_LIMIT) -> Page:
        return Page(self.int("offset", 0), self.int("limit", default_limit, 1, MAX_LIMIT))


_INTEGER = re.compile(r"-?[0-9]{1,20}")
"""ASCII digits only: Python's int() also takes " 1", "+1", "1_0" and other scripts' digits."""


def _int(name: str, raw: str, low: int, high: int) -> int:
    if not _INTEGER.fullmatch(raw):
        raise BadQuery(f"{name}={raw[:40]!r}: not an integer")
    value = int(raw)
    if not low <= value <= high:
        raise BadQuery(f"{name}={value}: must be from {low} to {high}")
    return value


def paginate(items: Sequence[Any], page: Page, render: Callable[[Any], Any] = lambda x: x) -> dict[str, Any]:
    """One page of `items` (rendered item by item: only the page's items are rendered)."""
    chosen = items[page.offset : page.offset + page.limit]
    return {
        "total": len(items),
        "offset": page.offset,
        "limit": page.limit,
        "items": [render(i) for i in chosen],
    }


ApiHandler = Callable[[Query], Any | Awaitable[Any]]


def guarded(
    handlers: Mapping[str, ApiHandler], may_read: Callable[[web.Request], bool], refusal: str
) -> dict[str, ApiHandler]:
    """`handlers`, each answering 403 with `refusal` (before reading anything) unless `may_read` lets the
    request's caller read it (common/web/ops.py readers_only)."""

    def guard(handler: ApiHandler) -> ApiHandler:
        def checked(q: Query) -> Any:
            if not may_read(q.request):
                raise Forbidden(refusal)
            return handler(q)

        return checked

    return {path: guard(handler) for path, handler in handlers.items()}


def api_routes(handlers: Mapping[str, ApiHandler]) -> list[web.RouteDef]:
    """GET (and HEAD) routes for `handlers`, keyed by path (`/api/v1/containers/{id}`)."""
    return [web.get(path, _handler(handler)) for path, handler in handlers.items()]


def _handler(handler: ApiHandler) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def handle(request: web.Request) -> web.Response:
        try:
            answer = handler(Query(request))
            if inspect.isawaitable(answer):
                answer = await answer
        except BadQuery as e:
            return web.json_response({"error": str(e)}, status=400)
        except NotFound as e:
            return web.json_response({"error": str(e)}, status=404)
        except Forbidden as e:
            return web.json_response({"error": str(e)}, status=403)
        except Unavailable as e:
            return web.json_response({"error": str(e)}, status=503)
        return web.json_response(answer, dumps=_dumps)

    return handle


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), default=str)
