"""`pyozone analytics ...`: registered lightly, so other commands start without loading Spark.

The full parser (jobs and their options) lives in pyozone/analytics/cli.py and is built when an analytics
command runs; this stub passes it the rest of the command line, with any -D/--conf given before `analytics`.
"""

from __future__ import annotations

import argparse


def register(subparsers, parent: argparse.ArgumentParser) -> None:
    analytics = subparsers.add_parser(
        "analytics", help="cluster analytics on Spark over a metadata snapshot", add_help=False
    )
    analytics.add_argument("rest", nargs=argparse.REMAINDER)
    analytics.set_defaults(func=run, parent=parent)


def run(args: argparse.Namespace) -> int:
    from pyozone.analytics.cli import build_parser

    inner = build_parser(args.parent).parse_args(args.rest)
    inner.overrides = [*getattr(args, "overrides", []), *getattr(inner, "overrides", [])]
    if getattr(inner, "conf_dir", None) is None and getattr(args, "conf_dir", None):
        inner.conf_dir = args.conf_dir
    return int(inner.func(inner) or 0)
