"""Finding SCM for an admin command: --scm, else the configuration: the SCMs of the service `-id` names (or
the one ozone.scm.service.ids names), failing over between them (framework/scm_failover.py), else the lone
SCM (ozone.scm.client.address, names); with hdds.grpc.tls.enabled the command presents the user's client
certificate."""

from __future__ import annotations

import argparse

from pyozone.common.cli_options import load_configuration
from pyozone.common.net import parse_host_port
from pyozone.common.scm_ha import ScmProtocol
from pyozone.common.tls_mode import client_tls
from pyozone.framework.scm_admin import ScmAdminClient
from pyozone.framework.scm_failover import ScmNodes


def add_connection_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--scm", metavar="HOST:PORT", help="SCM client address (default: from the configuration)"
    )
    parser.add_argument(
        "-id", "--service-id", dest="scm_service_id", default=None, metavar="SERVICE",
        help="the SCM service (default: the one ozone.scm.service.ids names)",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def connect(args: argparse.Namespace) -> ScmAdminClient:
    conf = load_configuration(args)
    if args.scm:
        nodes = ScmNodes.lone(parse_host_port(args.scm, conf.get("ozone.scm.client.port"), "--scm"))
    else:
        nodes = ScmNodes.configured(conf, ScmProtocol.CLIENT, getattr(args, "scm_service_id", None))
    return ScmAdminClient(nodes, tls=client_tls(conf))
