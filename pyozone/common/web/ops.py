"""The operator endpoints every daemon serves, as Hadoop's HttpServer2 does: /prom, /jmx, /conf, /stacks
and /logLevel.

- `/prom`: the daemon's MetricsSystem in Prometheus text format.
- `/jmx`: the same metrics as Hadoop's JMX JSON (`?qry=Hadoop:service=OzoneManager,name=*`).
- `/conf`: the running configuration, Hadoop's XML by default, JSON with `?format=json` (or an
  `Accept: application/json`); each property with the resource it came from. Secrets are redacted as
  Hadoop's `hadoop.security.sensitive-config-keys` does.
- `/stacks`: every thread's stack, then every asyncio task's, as text.
- `/logLevel?log=NAME[&level=LEVEL]`: a logger's effective level, set at run time when `level` is given
  (`&format=json` for JSON). Setting needs `may_change(request)`: on a secure cluster only
  administrators may (the daemon decides; reading is open like every other page).

`administrators_only` and `readers_only` are the kernel's AdminRule (hdds/security/users.py) for a request:
who may change a log level, and who may read the web API pages that show where data lives (SCM's and the
datanodes' datanodes, pipelines, containers, volumes and commands).
"""

from __future__ import annotations

import asyncio
import io
import logging
import re
import ssl
import sys
import threading
import traceback
from collections.abc import Callable
from typing import Any
from xml.sax.saxutils import escape

from aiohttp import web

from pyozone.common.tls import ssl_peer_identity
from pyozone.common.web.metrics import MetricsSystem
from pyozone.config import OzoneConfiguration
from pyozone.hdds.security.users import AdminRight, AdminRule

PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
LEVELS = ("CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG", "NOTSET")
_LEVEL_ALIASES = {
    "FATAL": "CRITICAL",
    "WARN": "WARNING",
    "TRACE": "DEBUG",
    "ALL": "NOTSET",
    "OFF": "CRITICAL",
}
"""log4j's level names, as `ozone daemonlog` users type them."""
_SENSITIVE = re.compile(
    r"(secret|password|credential|keystore\.pass|secret[._-]?key|private[._-]?key)$|oauth.*(secret|password|token)",
    re.IGNORECASE,
)
"""Hadoop's hadoop.security.sensitive-config-keys, matched at the end of a name: a secret's value is hidden,
while settings about secrets (hdds.secret.key.expiry.duration, a key file's name) stay readable."""
REDACTED = "<redacted>"
_LOGGER_NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,200}$")

ChangeCheck = Callable[[web.Request], bool]
ReadCheck = Callable[[web.Request], bool]


def ops_routes(
    metrics: MetricsSystem, conf: OzoneConfiguration, may_change: ChangeCheck | None = None
) -> list[web.RouteDef]:
    """The five endpoints as aiohttp routes (GET; HEAD comes with GET)."""
    allowed = may_change or (lambda _request: True)

    async def prom(_: web.Request) -> web.Response:
        return web.Response(body=metrics.prometheus_text(), headers={"Content-Type": PROMETHEUS_CONTENT_TYPE})

    async def jmx(request: web.Request) -> web.Response:
        return web.json_response(metrics.jmx(request.query.get("qry")))

    async def conf_page(request: web.Request) -> web.Response:
        properties = configuration_properties(conf)
        if _wants_json(request):
            return web.json_response({"properties": properties})
        return web.Response(text=_conf_xml(properties), content_type="text/xml")

    async def stacks(_: web.Request) -> web.Response:
        return web.Response(text=stack_dump())

    async def log_level(request: web.Request) -> web.Response:
        return _log_level(request, allowed)

    return [
        web.get("/prom", prom),
        web.get("/jmx", jmx),
        web.get("/conf", conf_page),
        web.get("/stacks", stacks),
        web.get("/logLevel", log_level),
    ]


def _wants_json(request: web.Request) -> bool:
    return request.query.get("format") == "json" or "application/json" in request.headers.get("Accept", "")


def configuration_properties(conf: OzoneConfiguration) -> list[dict[str, Any]]:
    """Every key with a value: name, value (secrets redacted), where it came from, and Hadoop's isFinal."""
    rows = []
    for name in sorted(conf.names()):
        raw = conf.get_raw(name)
        if raw is None:
            continue
        value = REDACTED if _SENSITIVE.search(name) and raw else raw
        rows.append({"key": name, "value": value, "isFinal": False, "resource": conf.source(name)})
    return rows


def _conf_xml(properties: list[dict[str, Any]]) -> str:
    out = ['<?xml version="1.0" encoding="UTF-8" standalone="no"?>', "<configuration>"]
    for p in properties:
        out.append(
            f"<property><name>{escape(p['key'])}</name><value>{escape(p['value'])}</value>"
            f"<final>false</final><source>{escape(p['resource'])}</source></property>"
        )
    out.append("</configuration>")
    return "\n".join(out) + "\n"


def stack_dump() -> str:
    """Every thread's current stack, then every asyncio task's (run on the loop, so it sees them all)."""
    out = io.StringIO()
    threads = {t.ident: t for t in threading.enumerate()}
    frames = sys._current_frames()
    out.write(f"Process Thread Dump:\n{len(frames)} active threads\n")
    for ident, frame in frames.items():
        thread = threads.get(ident)
        name = thread.name if thread else "?"
        daemon = " daemon" if thread is not None and thread.daemon else ""
        out.write(f'\nThread "{name}" id={ident}{daemon}\n')
        out.write("".join(traceback.format_stack(frame)))
    try:
        tasks = sorted(asyncio.all_tasks(), key=lambda t: t.get_name())
    except RuntimeError:  # no running loop
        tasks = []
    out.write(f"\nAsyncio Task Dump:\n{len(tasks)} tasks\n")
    for task in tasks:
        out.write(f'\nTask "{task.get_name()}" {"done" if task.done() else "pending"}\n')
        # not task.print_stack: it fails on a frame without a line number (grpc.aio's coroutines)
        stack = traceback.StackSummary.extract((f, f.f_lineno) for f in task.get_stack())
        out.write("".join(stack.format()))
    return out.getvalue()


def _log_level(request: web.Request, may_change: ChangeCheck) -> web.Response:
    name = request.query.get("log")
    as_json = request.query.get("format") == "json"
    if name is None:
        return _answer(400, {"error": "missing parameter: log (a logger name, e.g. pyozone.scm)"}, as_json)
    if not _LOGGER_NAME.match(name):
        return _answer(400, {"error": f"log {name[:80]!r}: not a logger name"}, as_json)
    requested = request.query.get("level")
    logger = logging.getLogger(name) if requested is not None else _existing_logger(name)
    answer: dict[str, Any] = {"log": name, "logClass": type(logger).__name__}
    if requested is not None:
        level = _LEVEL_ALIASES.get(requested.upper(), requested.upper())
        if level not in LEVELS:
            choices = ", ".join(LEVELS)
            return _answer(400, {"error": f"level {requested[:40]!r}: must be one of {choices}"}, as_json)
        if not may_change(request):
            return _answer(403, {"error": "only administrators may change a log level"}, as_json)
        logger.setLevel(level)
        answer["setLevel"] = level
    answer["effectiveLevel"] = logging.getLevelName(logger.getEffectiveLevel())
    return _answer(200, answer, as_json)


def _existing_logger(name: str) -> logging.Logger:
    """The logger a name resolves to without creating one (a read must not grow logging's registry): the
    named logger, else its nearest existing ancestor, else the root."""
    loggers = logging.Logger.manager.loggerDict
    while name:
        found = loggers.get(name)
        if isinstance(found, logging.Logger):
            return found
        name = name.rpartition(".")[0]
    return logging.getLogger()


def _answer(status: int, body: dict[str, Any], as_json: bool) -> web.Response:
    if as_json:
        return web.json_response(body, status=status)
    if "error" in body:
        return web.Response(status=status, text=f"Error: {body['error']}\n")
    lines = [f"Submitted Log Name: {body['log']}", f"Log Class: {body['logClass']}"]
    if "setLevel" in body:
        lines.append(f"Setting Level to {body['setLevel']} ...")
    lines.append(f"Effective Level: {body['effectiveLevel']}")
    return web.Response(status=status, text="\n".join(lines) + "\n")


def administrators_only(conf: OzoneConfiguration) -> ChangeCheck:
    """On an https (mutual TLS) server: whether the peer's certificate names an administrator
    (`ozone.administrators`, `ozone.administrators.groups`; a service's only when named). A plaintext
    request (no security) may; a request whose connection is gone may not (its transport no longer says
    whether it was TLS)."""
    return _peer_check(AdminRule.from_conf(conf), AdminRight.WRITE)


def readers_only(conf: OzoneConfiguration) -> ReadCheck:
    """As `administrators_only`, for reading where data lives: also read-only administrators
    (`ozone.readonly.administrators`) and OM's and the datanodes' certificates, as SCM's admin protocol
    reads (scm/server/admin_access.py)."""
    return _peer_check(AdminRule.from_conf(conf), AdminRight.READ)


def _peer_check(rule: AdminRule, right: AdminRight) -> Callable[[web.Request], bool]:
    def permits(_request: web.Request, ssl_object: ssl.SSLObject) -> bool:
        identity = ssl_peer_identity(ssl_object)
        return rule.permits(identity.principal, right, identity.role)

    return tls_peer_check(permits)


def tls_peer_check(
    accepts: Callable[[web.Request, ssl.SSLObject], bool],
) -> Callable[[web.Request], bool]:
    """A page's guard: anyone over plaintext (no security), as every page; over mutual TLS whom `accepts`
    takes, and nobody whose certificate cannot be read (refused, not an error page)."""

    def check(request: web.Request) -> bool:
        if request.transport is None:
            return False
        ssl_object = request.transport.get_extra_info("ssl_object")
        if ssl_object is None:
            return True
        try:
            return accepts(request, ssl_object)
        except (ValueError, ssl.SSLError):
            return False

    return check
