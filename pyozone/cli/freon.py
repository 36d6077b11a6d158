"""`pyozone freon ockg|ockv`: generate keys through OM and the datanodes, then verify them (Ozone's freon)."""

from __future__ import annotations

import argparse
import secrets
import sys

from pyozone.client import OzoneClient
from pyozone.client.progress import ProgressBar
from pyozone.common.cli_options import CLIError, load_configuration
from pyozone.config.units import parse_size_bytes
from pyozone.freon import FreonOptions, generate_keys, verify_keys


def _size(text: str) -> int:
    try:
        size = parse_size_bytes(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    if size < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is negative")
    return size


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive whole number")
    return int(text)


def register(subparsers: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    freon = subparsers.add_parser("freon", parents=[parent], help="load generators (Ozone's `ozone freon`)")
    tools = freon.add_subparsers(dest="freon_tool", metavar="TOOL")
    tools.required = True
    for name, help_text, func in (
        ("ockg", "OzoneClient key generator: write N keys", run_ockg),
        ("ockv", "OzoneClient key validator: read the keys ockg wrote and check every byte", run_ockv),
    ):
        parser = tools.add_parser(name, parents=[parent], help=help_text)
        parser.add_argument("-n", "--number-of-tests", dest="number", type=_positive, default=1000)
        parser.add_argument("-t", "--threads", type=_positive, default=10)
        parser.add_argument("-v", "--volume", default="vol1")
        parser.add_argument("-b", "--bucket", default="bucket1")
        parser.add_argument("-p", "--prefix", default=None, help="key name prefix (ockg default: random)")
        parser.add_argument("-s", "--size", type=_size, default=None, help="key size, e.g. 10KB (ockg: 10KB)")
        parser.add_argument("-r", "--replication", default=None, help="e.g. RATIS/THREE (ockg)")
        parser.add_argument("--om", metavar="HOST:PORT", help="OM address (default: ozone.om.address)")
        shown = parser.add_mutually_exclusive_group()
        shown.add_argument("--progress", action="store_true", help="show a progress bar even if not a TTY")
        shown.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
        parser.set_defaults(func=func)


def _options(args: argparse.Namespace, prefix: str) -> FreonOptions:
    return FreonOptions(
        volume=args.volume,
        bucket=args.bucket,
        prefix=prefix,
        number=args.number,
        size=10 * 1024 if args.size is None else args.size,
        threads=args.threads,
        replication=args.replication,
    )


def _finish(report) -> int:  # type: ignore[no-untyped-def]
    for failure in report.failures[:20]:
        print(f"FAILED {failure}", file=sys.stderr)
    if len(report.failures) > 20:
        print(f"... and {len(report.failures) - 20} more failures", file=sys.stderr)
    print(report.table())
    return 0 if report.ok else 1


def run_ockg(args: argparse.Namespace) -> int:
    prefix = args.prefix or secrets.token_hex(4)
    options = _options(args, prefix)
    print(f"prefix: {prefix}", file=sys.stderr)
    shown = not args.quiet and (args.progress or sys.stderr.isatty())
    with (
        OzoneClient(load_configuration(args), args.om) as client,
        ProgressBar(options.number, "ockg", unit="keys", enabled=shown) as bar,
    ):
        report = generate_keys(client, options, bar)
    return _finish(report)


def run_ockv(args: argparse.Namespace) -> int:
    if not args.prefix:
        raise CLIError("ockv needs -p/--prefix: the prefix ockg printed")
    options = _options(args, args.prefix)
    shown = not args.quiet and (args.progress or sys.stderr.isatty())
    with (
        OzoneClient(load_configuration(args), args.om) as client,
        ProgressBar(options.number, "ockv", unit="keys", enabled=shown) as bar,
    ):
        report = verify_keys(client, options, bar, check_size=args.size is not None)
    return _finish(report)
