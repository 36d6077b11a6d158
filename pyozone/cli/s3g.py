"""`pyozone s3g`: run the S3 gateway."""

from __future__ import annotations

import argparse
import importlib

from pyozone.common.banner import configured, daemon_logging
from pyozone.common.cli_options import CLIError, load_configuration
from pyozone.config import ConfigError
from pyozone.config.dirs import daemon_umask


def register(subparsers: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "s3g",
        parents=[parent],
        allow_abbrev=False,
        help="start the S3 gateway (Amazon S3's REST API over Ozone)",
        description=(
            "Start the S3 gateway on ozone.s3g.http-address (default 0.0.0.0:9878). S3 buckets are the "
            "buckets of the volume ozone.s3g.volume.name (default s3v), created if missing. Requests must be "
            "signed with AWS Signature V4 using a secret from `pyozone s3 getsecret`."
        ),
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    conf = load_configuration(args)
    daemon = importlib.import_module("pyozone.s3g.daemon")  # aiohttp loads only for the daemon
    details = configured(
        conf,
        "ozone.s3g.http-address",
        "ozone.s3g.webadmin.http-address",
        "ozone.s3g.volume.name",
        "ozone.s3g.domain.name",
        "ozone.om.address",
    )
    try:
        with daemon_umask(conf), daemon_logging("S3Gateway", conf, details):
            return int(daemon.start_s3g(conf) or 0)
    except (ConfigError, OSError) as e:
        raise CLIError(str(e)) from None
