"""`pyozone getconf`: the effective configuration, as Ozone's `ozone getconf -confKey`."""

from __future__ import annotations

import argparse
import json

from pyozone.common.cli_options import CLIError, load_configuration
from pyozone.config import ConfigError
from pyozone.config.keys import lookup, unknown_key_message
from pyozone.scm.settings import ScmSettings


def register(subparsers: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "getconf",
        parents=[parent],
        allow_abbrev=False,
        help="print effective configuration values",
        description="Print effective configuration values and where they come from.",
    )
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("-confKey", dest="conf_key", metavar="KEY", help="print the raw value of KEY")
    what.add_argument("--all", action="store_true", help="print every key as KEY=VALUE  [source]")
    parser.add_argument("--json", action="store_true", help="with --all: print a JSON object instead")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.json and not args.all:
        raise CLIError("--json only applies to --all")
    conf = load_configuration(args)
    try:
        ScmSettings.from_conf(conf)  # SCM's rules too, as `pyozone scm` would refuse the configuration
    except ConfigError as e:
        raise CLIError(str(e)) from None
    if args.conf_key is not None:
        raw = conf.get_raw(args.conf_key)
        if raw is None and lookup(args.conf_key) is None:
            raise CLIError(unknown_key_message(args.conf_key))
        print(raw or "")
        return 0
    entries = {name: (conf.get_raw(name), conf.source(name)) for name in conf.names()}
    if args.json:
        print(json.dumps({n: {"value": v, "source": s} for n, (v, s) in entries.items()}, indent=2))
    else:
        for name, (value, source) in entries.items():
            print(f"{name}={value or ''}  [{source}]")
    return 0
