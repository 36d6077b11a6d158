"""`pyozone freon ome|omkg|dne|ockg|ockv`: load on each layer of a running cluster (Ozone's freon).

Every tool takes -n/--number-of-tests, -t/--threads and --duration (Ozone's: 30s, 5m, 1h; a bare number
is seconds): with --duration the run ends then, or at -n when -n is given too. Each prints the summary
table (count, rate, latency percentiles) and exits 1 when any operation failed.
"""

from __future__ import annotations

import argparse
import secrets
import sys
from collections.abc import Callable

from pyozone.cli.admin.connect import connect
from pyozone.client import OzoneClient
from pyozone.client.progress import ProgressBar
from pyozone.common.cli_options import CLIError, load_configuration
from pyozone.config.units import parse_duration_ms, parse_size_bytes
from pyozone.freon import (
    EchoOptions,
    FreonOptions,
    FreonReport,
    datanode_echo,
    generate_keys,
    generate_om_keys,
    om_echo,
    pipeline_datanode,
    verify_keys,
)
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.limits import MAX_ECHO_PAYLOAD_BYTES

DEFAULT_NUMBER = 1000


def _size(text: str) -> int:
    try:
        size = parse_size_bytes(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    if size < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is negative")
    return size


def _replication(text: str) -> ReplicationConfig | None:
    """-r as ReplicationConfig.of takes it ("RATIS/THREE", "rs-3-2-1024k"; "": the bucket's default)."""
    try:
        return ReplicationConfig.of(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _payload(text: str) -> int:
    """An echo payload: KB as Ozone's freon takes it (a bare number), or a size with its unit (512B, 1MB)."""
    size = _size(f"{text}KB" if text.strip().isdigit() else text)
    if size > MAX_ECHO_PAYLOAD_BYTES:
        raise argparse.ArgumentTypeError(f"{text!r} is above the {MAX_ECHO_PAYLOAD_BYTES}-byte echo limit")
    return size


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive whole number")
    return int(text)


def _duration(text: str) -> float:
    """--duration in seconds: Ozone's format (10s, 5m, 1h; a bare number is seconds)."""
    try:
        ms = parse_duration_ms(text, default_unit="s")
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    if ms <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive duration")
    return ms / 1000


def register(subparsers: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    freon = subparsers.add_parser("freon", parents=[parent], help="load generators (Ozone's `ozone freon`)")
    tools = freon.add_subparsers(dest="freon_tool", metavar="TOOL")
    tools.required = True
    for name, help_text, func in (
        ("ome", "OM echo: echoRPC calls to OM, its RPC floor (Ozone's om-rpc-load)", run_ome),
        ("omkg", "OM key generator: create and commit N empty keys in OM, no datanode", run_omkg),
        ("dne", "datanode echo: Echo calls to one datanode of a pipeline (Ozone's dn-echo)", run_dne),
        ("ockg", "OzoneClient key generator: write N keys", run_ockg),
        ("ockv", "OzoneClient key validator: read the keys ockg wrote and check every byte", run_ockv),
    ):
        parser = tools.add_parser(name, parents=[parent], help=help_text)
        _add_load_options(parser)
        if name in ("ome", "dne"):
            _add_echo_options(parser)
        else:
            _add_key_options(parser, with_size=name != "omkg")
        if name == "dne":
            where = parser.add_mutually_exclusive_group()
            where.add_argument("--pipeline-id", default=None, help="default: the first OPEN RATIS/THREE one")
            where.add_argument("--container-id", type=_positive, default=None, help="echo to its pipeline")
            parser.add_argument(
                "--scm", metavar="HOST:PORT", help="SCM client address (default: configuration)"
            )
        parser.add_argument("--om", metavar="HOST:PORT", help="OM address (default: ozone.om.address)")
        shown = parser.add_mutually_exclusive_group()
        shown.add_argument("--progress", action="store_true", help="show a progress bar even if not a TTY")
        shown.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
        parser.set_defaults(func=func)


def _add_load_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-n", "--number-of-tests", dest="number", type=_positive, default=None,
        help=f"operations (default {DEFAULT_NUMBER}; with --duration: no cap)",
    )  # fmt: skip
    parser.add_argument("-t", "--threads", type=_positive, default=10)
    parser.add_argument("--duration", type=_duration, default=None, help="run this long: 30s, 5m, 1h")


def _add_echo_options(parser: argparse.ArgumentParser) -> None:
    for flag, way in (("--payload-req", "request"), ("--payload-resp", "response")):
        parser.add_argument(
            flag, type=_payload, default=0, metavar="SIZE",
            help=f"payload of each {way}: KB (Ozone's), or 512B, 1MB (default 0)",
        )  # fmt: skip


def _add_key_options(parser: argparse.ArgumentParser, with_size: bool) -> None:
    parser.add_argument("-v", "--volume", default="vol1")
    parser.add_argument("-b", "--bucket", default="bucket1")
    parser.add_argument("-p", "--prefix", default=None, help="key name prefix (ockg, omkg default: random)")
    parser.add_argument("-r", "--replication", type=_replication, default=None, help="e.g. RATIS/THREE")
    if with_size:
        parser.add_argument("-s", "--size", type=_size, default=None, help="key size, e.g. 10KB (ockg: 10KB)")


def _number(args: argparse.Namespace) -> int | None:
    """-n as given; else the default count, or none with --duration (the duration ends the run)."""
    if args.number is not None:
        return int(args.number)
    return None if args.duration is not None else DEFAULT_NUMBER


def _options(args: argparse.Namespace, prefix: str) -> FreonOptions:
    return FreonOptions(
        volume=args.volume,
        bucket=args.bucket,
        prefix=prefix,
        number=_number(args),
        size=10 * 1024 if getattr(args, "size", None) is None else args.size,
        threads=args.threads,
        replication=args.replication,
        duration_s=args.duration,
    )


def _echo_options(args: argparse.Namespace) -> EchoOptions:
    return EchoOptions(args.payload_req, args.payload_resp, _number(args), args.threads, args.duration)


def _bar(args: argparse.Namespace, tool: str, unit: str) -> ProgressBar:
    """A bar over the run's count; none for a run only a duration ends (it has no count to fill)."""
    number = _number(args)
    shown = not args.quiet and (args.progress or sys.stderr.isatty()) and number is not None
    return ProgressBar(number or 0, tool, unit=unit, enabled=bool(shown))


def _finish(report: FreonReport) -> int:
    for failure in report.failures[:20]:
        print(f"FAILED {failure}", file=sys.stderr)
    if len(report.failures) > 20:
        print(f"... and {len(report.failures) - 20} more failures", file=sys.stderr)
    print(report.table())
    return 0 if report.ok else 1


def _client(args: argparse.Namespace) -> OzoneClient:
    return OzoneClient(load_configuration(args), args.om)


def run_ome(args: argparse.Namespace) -> int:
    with _client(args) as client, _bar(args, "ome", "ops") as bar:
        report = om_echo(client, _echo_options(args), bar)
    return _finish(report)


def run_dne(args: argparse.Namespace) -> int:
    with connect(args) as scm:
        if args.container_id is not None:
            view = scm.container(args.container_id).pipeline
            if view is None:
                raise CLIError(f"container {args.container_id} has no pipeline (is it closed?)")
            pipelines, pipeline_id = [view], view.pipeline.id
        else:
            pipelines, pipeline_id = scm.pipelines(), args.pipeline_id
    try:
        pipeline_id, datanode = pipeline_datanode(pipelines, pipeline_id)
    except ValueError as e:
        raise CLIError(str(e)) from None
    print(f"pipeline: {pipeline_id}, datanode: {datanode.uuid} ({datanode.address})", file=sys.stderr)
    with _client(args) as client, _bar(args, "dne", "ops") as bar:
        report = datanode_echo(client, datanode, _echo_options(args), pipeline_id, bar)
    return _finish(report)


def _run_keys(args: argparse.Namespace, tool: str, prefix: str, generate: Callable[..., FreonReport]) -> int:
    options = _options(args, prefix)
    with _client(args) as client, _bar(args, tool, "keys") as bar:
        report = generate(client, options, bar)
    return _finish(report)


def run_omkg(args: argparse.Namespace) -> int:
    prefix = args.prefix or secrets.token_hex(4)
    print(f"prefix: {prefix}", file=sys.stderr)
    return _run_keys(args, "omkg", prefix, generate_om_keys)


def run_ockg(args: argparse.Namespace) -> int:
    prefix = args.prefix or secrets.token_hex(4)
    print(f"prefix: {prefix}", file=sys.stderr)
    return _run_keys(args, "ockg", prefix, generate_keys)


def run_ockv(args: argparse.Namespace) -> int:
    if not args.prefix:
        raise CLIError("ockv needs -p/--prefix: the prefix ockg printed")
    check_size = args.size is not None
    return _run_keys(
        args, "ockv", args.prefix, lambda client, options, bar: verify_keys(client, options, bar, check_size)
    )
