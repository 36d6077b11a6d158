"""`pyozone admin om roles [-id SERVICE] [--json]`: each OM of an HA service and its Raft role, printed as
Ozone's `ozone admin om roles` prints them (`om1 : LEADER (host1)`), read from each OM's web endpoint
(/api/v1/ratis; https with the user's certificate when hdds.grpc.tls.enabled). An OM that does not answer is
UNREACHABLE.

`pyozone admin om transfer [-id SERVICE] -n NODE | -r`: hands the service's leadership to NODE (or to another
OM the leader picks), as Ozone's `ozone admin om transfer`, through OM's OzoneManagerAdminService; a
follower names the leader and the call goes there."""

from __future__ import annotations

import argparse
import json
import ssl
import urllib.error
import urllib.request
from typing import Any

from pyozone import rpc
from pyozone.common.cli_options import CLIError, load_configuration
from pyozone.common.om_ha import client_om_service, om_service_nodes
from pyozone.common.output import print_json
from pyozone.common.tls_mode import client_tls
from pyozone.config import OzoneConfiguration
from pyozone.framework.om_errors import OMNotLeaderException
from pyozone.hdds.limits import MAX_OM_MESSAGE_BYTES
from pyozone.hdds.security.x509 import CertRole
from pyozone.protocol.om_admin import ADMIN_SERVICE, transfer_request

OM_ADMIN_SERVICE = rpc.ServiceSpec.of(ADMIN_SERVICE)


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
    transfer = commands.add_parser("transfer", parents=[parent], help="hand the leadership to another OM")
    transfer.add_argument(
        "-id", "--service-id", dest="service_id", default=None, metavar="SERVICE",
        help="the OM service (default: the one ozone.om.service.ids names)",
    )  # fmt: skip
    who = transfer.add_mutually_exclusive_group(required=True)
    who.add_argument("-n", "--newLeaderId", dest="node", metavar="NODE", help="the OM to lead next")
    who.add_argument("-r", "--random", action="store_true", help="another OM, picked by the leader")
    transfer.set_defaults(func=run_transfer)


def _view(host: str, port: int, context: ssl.SSLContext | None) -> dict[str, Any] | None:
    scheme = "https" if context is not None else "http"
    try:
        with urllib.request.urlopen(
            f"{scheme}://{host}:{port}/api/v1/ratis", timeout=5, context=context
        ) as r:
            return json.loads(r.read())
    except (OSError, urllib.error.URLError, ValueError):
        return None


def _service(conf: OzoneConfiguration, args: argparse.Namespace) -> str:
    service = args.service_id or client_om_service(conf)
    if service is None:
        raise CLIError("no OM service: ozone.om.service.ids is not set (a lone OM has no roles)")
    return service


def run_transfer(args: argparse.Namespace) -> int:
    conf = load_configuration(args)
    nodes = {n.node_id: n for n in om_service_nodes(conf, _service(conf, args))}
    tls = client_tls(conf)
    settings = rpc.ChannelSettings(max_message_bytes=MAX_OM_MESSAGE_BYTES)
    if args.random and len(nodes) < 2:
        raise CLIError(f"-r: the service has one OM ({', '.join(nodes)}): there is no other OM to lead")
    request = transfer_request(None if args.random else args.node)
    order = list(nodes)
    asked: list[str] = []
    reasons: dict[str, str] = {}
    while order and len(asked) < 2 * len(nodes):
        node = order.pop(0)
        asked.append(node)
        address = str(nodes[node].rpc_address)
        try:
            with rpc.SyncChannel(address, settings, tls, CertRole.OM if tls else None) as channel:
                answer = rpc.Stub(channel, OM_ADMIN_SERVICE).transferLeadership(request, timeout=60)
        except rpc.RpcError as e:
            if e.code() is rpc.StatusCode.UNAVAILABLE:  # not the leader (named, if known), or down
                refusal = OMNotLeaderException.parse(e.details() or "")
                if refusal is not None and refusal.leader_id in nodes:
                    order.insert(0, refusal.leader_id)
                reasons[node] = e.details() or "unavailable"
                continue
            raise CLIError(f"OM {node} at {address}: {e.code().name}: {e.details()}") from None
        print(f"Transfer leadership successfully to {answer.newLeaderId}.")
        return 0
    why = "; ".join(f"OM {node}: {reason}" for node, reason in reasons.items())
    raise CLIError(f"no OM of the service took the transfer (asked {', '.join(asked)}): {why}")


def run_roles(args: argparse.Namespace) -> int:
    conf = load_configuration(args)
    service = _service(conf, args)
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
