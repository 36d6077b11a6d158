"""Finding SCM for an admin command: --scm, else the configuration (ozone.scm.client.address, names); with
hdds.grpc.tls.enabled the command presents the user's client certificate."""

from __future__ import annotations

import argparse

from pyozone.common.cli_options import load_configuration
from pyozone.common.net import parse_host_port, scm_client_address
from pyozone.common.tls_mode import client_tls
from pyozone.framework.scm_admin import ScmAdminClient


def add_connection_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--scm", metavar="HOST:PORT", help="SCM client address (default: from the configuration)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def connect(args: argparse.Namespace) -> ScmAdminClient:
    conf = load_configuration(args)
    if args.scm:
        address = parse_host_port(args.scm, conf.get("ozone.scm.client.port"), "--scm")
    else:
        address = scm_client_address(conf)
    return ScmAdminClient(address, tls=client_tls(conf))
