"""What every command shares: -D overrides, --conf, and one-line errors with a non-zero exit."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

from pyozone.config import ConfigError, OzoneConfiguration


class CLIError(Exception):
    """A problem the user can fix; printed as one line, exit code 1."""


def common_options() -> argparse.ArgumentParser:
    """A parent parser so `-D key=value` and `--conf DIR` work before or after any subcommand.

    The options default to SUPPRESS so a subcommand's parser does not overwrite what the top-level
    parser already read; `load_configuration` supplies the real defaults.
    """
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "-D",
        dest="overrides",
        action="append",
        default=argparse.SUPPRESS,
        metavar="KEY=VALUE",
        help="override a configuration key (repeatable)",
    )
    parent.add_argument(
        "--conf",
        dest="conf_dir",
        default=argparse.SUPPRESS,
        metavar="DIR",
        help="directory holding ozone-site.xml (default: $OZONE_CONF_DIR)",
    )
    return parent


def given_path(value: str | None, option: str) -> str | None:
    """A path option's value (None: not given). An empty or blank one is refused: Path("") is the working
    directory, so `--data-dir ""` would otherwise put a whole cluster there."""
    if value is not None and not value.strip():
        raise CLIError(f"{option} {value!r}: an empty path; name a directory")
    return value


def parse_overrides(items: list[str]) -> dict[str, str]:
    overrides: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise CLIError(f"-D {item!r}: expected KEY=VALUE")
        overrides[key.strip()] = value.strip()
    return overrides


def load_configuration(args: argparse.Namespace) -> OzoneConfiguration:
    from pyozone.config.site import load_configuration as load

    conf_dir = getattr(args, "conf_dir", None) or os.environ.get("OZONE_CONF_DIR")
    try:
        return load(Path(conf_dir) if conf_dir else None, parse_overrides(getattr(args, "overrides", [])))
    except ConfigError as e:
        raise CLIError(str(e)) from None


def run_command(
    func: Callable[[argparse.Namespace], object],
    args: argparse.Namespace,
    prog: str,
    errors: tuple[type[Exception], ...],
) -> int:
    """Runs a parsed command as every pyozone entry point does: `errors` become one line on stderr and
    exit 1, Ctrl-C exits 130, and a reader that went away (`... | head`) exits 141 quietly."""
    try:
        return int(func(args) or 0)
    except errors as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
