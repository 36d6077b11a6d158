"""Entry point: `pyozone [COMMAND] ...`."""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys

from pyozone import __version__
from pyozone.client.errors import OzoneClientError
from pyozone.common.cli_options import CLIError, common_options, run_command
from pyozone.config import ConfigError
from pyozone.framework.scm_errors import ScmClientError
from pyozone.hdds.exceptions import SCMException
from pyozone.hdds.security.errors import SecurityError

COMMAND_MODULES = (
    "getconf",
    "scm",
    "om",
    "s3g",
    "datanode",
    "admin",
    "cluster",
    "debug",
    "repair",
    "plan",
    "sim",
    "analytics",
    "sh",
    "s3",
    "freon",
)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Every command's parser, or only `command`'s (one of COMMAND_MODULES): a daemon or an `sh` call then
    imports its own command's module, not the other fourteen (with theirs, every process paid a second or
    more of CPU before its work)."""
    parent = common_options()
    parser = argparse.ArgumentParser(
        prog="pyozone", parents=[parent], description="pyozone: Apache Ozone's storage-container architecture"
    )
    parser.add_argument("--version", action="version", version=f"pyozone {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in (command,) if command in COMMAND_MODULES else COMMAND_MODULES:
        importlib.import_module(f"pyozone.cli.{name}").register(sub, parent)
    return parser


def command_of(argv: list[str]) -> str | None:
    """The command word of `argv`, past any -D KEY=VALUE and --conf DIR before it; None when there is none
    or another option comes first (the full parser then answers, with its help or its error)."""
    words = iter(argv)
    for word in words:
        if word in ("-D", "--conf"):
            next(words, None)
        elif not (word.startswith("-D") or word.startswith("--conf=")):
            return word if word in COMMAND_MODULES else None
    return None


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(
        level=os.environ.get("PYOZONE_LOG_LEVEL", "WARNING").upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(command_of(argv))
    args, extra = parser.parse_known_args(argv)
    if extra:
        # Only a pass-through command (analytics) takes arguments its stub parser does not know.
        if not hasattr(args, "rest"):
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        args.rest = [*extra, *args.rest]
    errors = (CLIError, ConfigError, SCMException, ScmClientError, OzoneClientError, SecurityError)
    return run_command(args.func, args, f"pyozone {args.command}", errors)
