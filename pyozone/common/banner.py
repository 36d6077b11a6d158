"""Ozone's STARTUP_MSG / SHUTDOWN_MSG banners, and the INFO level a daemon logs at.

An operator reading a daemon's log first needs what it is, where it runs, which configuration it read and
where it keeps and serves things (Ozone's StringUtils.startupShutdownMessage); the daemon then logs the
ports it actually bound once they are known.
"""

from __future__ import annotations

import logging
import os
import platform
import socket
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

import pyozone
from pyozone.config import OzoneConfiguration

log = logging.getLogger("pyozone.daemon")

RULE = "*" * 60


def _host() -> str:
    name = socket.gethostname()
    try:
        return f"{name}/{socket.gethostbyname(name)}"
    except OSError:
        return name


def site_files(conf: OzoneConfiguration) -> list[str]:
    """The configuration files values came from, in the order they were first seen."""
    files: dict[str, None] = {}
    for name in conf.names():
        source = conf.source(name)
        if source.startswith("file:"):
            files[source.removeprefix("file:")] = None
    return list(files)


def startup_lines(daemon: str, conf: OzoneConfiguration, details: Mapping[str, object]) -> list[str]:
    fields: dict[str, object] = {
        "host": _host(),
        "args": sys.argv[1:],
        "version": pyozone.__version__,
        "python": platform.python_version(),
        "conf": ", ".join(site_files(conf)) or "(no ozone-site.xml: defaults and -D only)",
        **details,
    }
    return [
        "/" + RULE,
        f"STARTUP_MSG: Starting {daemon}",
        *(f"STARTUP_MSG:   {name} = {value}" for name, value in fields.items()),
        RULE + "/",
    ]


@contextmanager
def daemon_logging(daemon: str, conf: OzoneConfiguration, details: Mapping[str, object]) -> Iterator[None]:
    """Logs at INFO (unless PYOZONE_LOG_LEVEL says otherwise) between the start and shutdown banners."""
    root, level = logging.getLogger(), logging.getLogger().level
    if "PYOZONE_LOG_LEVEL" not in os.environ:
        root.setLevel(logging.INFO)
    log.info("\n".join(startup_lines(daemon, conf, details)))
    try:
        yield
    finally:
        log.info("\n".join(["/" + RULE, f"SHUTDOWN_MSG: Shutting down {daemon} at {_host()}", RULE + "/"]))
        root.setLevel(level)


def configured(conf: OzoneConfiguration, *keys: str) -> dict[str, object]:
    """Banner fields for configuration keys, as written (parsing errors are the daemon's to report)."""
    return {key: conf.get_raw(key) or "(unset)" for key in keys}
