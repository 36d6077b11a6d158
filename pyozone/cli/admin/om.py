"""`pyozone admin om roles [-id SERVICE] [--json]`: each OM of an HA service and its Raft role, printed as
Ozone's `ozone admin om roles` prints them (`om1 : LEADER (host1)`), read from each OM's web endpoint
(/api/v1/ratis; https with the user's certificate when hdds.grpc.tls.enabled). An OM that does not answer is
UNREACHABLE."""

from __future__ import annotations

import argparse
import json
import ssl
import urllib.error
import urllib.request
from typing import Any

from pyozone.common.cli_options import CLIError, load_configuration
from pyozone.common.om_ha import client_om_service, om_service_nodes
from pyozone.common.output import print_json
from pyozone.common.tls_mode import client_tls


def register(groups, parent: argparse.ArgumentParser) -> None:
    om = groups.add_parser("om", parents=[parent], help="an OM HA service (ozone.om.service.ids): roles")
    commands = om.add_subparsers(dest="om_command", metavar="COMMAND")
    commands.required = True
    roles = commands.add_parser("roles", parents=[parent], help="each OM of the service and its Raft role")
    roles.add_argument(
        "-id", "--service-id", dest="service_id", default=None, metavar="SERVICE",
        help="the OM service (default: the one ozone.om.service.ids names)",
    )  # fmt: skip
    roles.add_argument("--json", action="store_true", help="print JSON instead of lines")
    roles.set_defaults(func=run_roles)


def _view(host: str, port: int, context: ssl.SSLContext | None) -> dict[str, Any] | None:
    scheme = "https" if context is not None else "http"
    try:
        with urllib.request.urlopen(
            f"{scheme}://{host}:{port}/api/v1/ratis", timeout=5, context=context
        ) as r:
            return json.loads(r.read())
    except (OSError, urllib.error.URLError, ValueError):
        return None


def run_roles(args: argparse.Namespace) -> int:
    conf = load_configuration(args)
    service = args.service_id or client_om_service(conf)
    if service is None:
        raise CLIError("no OM service: ozone.om.service.ids is not set (a lone OM has no roles)")
    tls = client_tls(conf)
    context = tls.client_context() if tls is not None else None
    rows = []
    for node in om_service_nodes(conf, service):
        view = _view(node.http_address.host, node.http_address.port, context)
        role = view.get("role", "UNKNOWN") if view and view.get("ha") else "UNREACHABLE"
        rows.append(
            {
                "nodeId": node.node_id,
                "role": role,
                "host": node.rpc_address.host,
                "term": view.get("term") if view else None,
                "commitIndex": view.get("commitIndex") if view else None,
                "appliedIndex": view.get("appliedIndex") if view else None,
            }
        )
    if args.json:
        print_json(rows)
        return 0
    for row in rows:
        print(f"{row['nodeId']} : {row['role']} ({row['host']})")
    return 0
