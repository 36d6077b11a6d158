"""`pyozone admin om roles [-id SERVICE] [--json]`: each OM of an HA service and its Raft role, printed as
Ozone's `ozone admin om roles` prints them (`om1 : LEADER (host1)`), read from each OM's web endpoint
(ratis_roles.py, shared with `admin scm roles`). An OM that does not answer is UNREACHABLE.

`pyozone admin om transfer [-id SERVICE] -n NODE | -r`: hands the service's leadership to NODE (or to another
OM the leader picks), as Ozone's `ozone admin om transfer`, through OM's OzoneManagerAdminService; a
follower names the leader and the call goes there.

`pyozone admin om decommission -id SERVICE -nodeid NODE [-hostname HOST] [--force]`: removes an OM from the
service's Raft group, as Ozone's `ozone admin om decommission` (DecommissionOMSubcommand): the node must be
listed in ozone.om.decommissioned.nodes.SERVICE here and, unless --force, in every other OM's configuration;
then the leader removes it. Without the leader's answer, the outcome is read back from the other OMs'
members in force (the removal may have been made). `roles` shows an OM the group does not count (yet, or any
more) as NOT_A_MEMBER.

`pyozone admin om rotate-s3-master-key [--om HOST:PORT]`: a new version of a lone OM's SSE-S3 master key
(om/master_keys.py), which wraps every new object's data key; older objects keep theirs. Administrators
only."""

from __future__ import annotations

import argparse
import socket
import sys

from pyozone import rpc
from pyozone.cli.admin.ratis_roles import member_roles
from pyozone.client import OzoneClient
from pyozone.common.cli_options import CLIError, load_configuration
from pyozone.common.om_ha import OmAddresses
from pyozone.common.output import print_json
from pyozone.common.tls_mode import client_tls
from pyozone.config import OzoneConfiguration
from pyozone.config.keys import suffixed
from pyozone.framework.om_admin import OmAdminClient, OmAdminError
from pyozone.protocol.om_admin import decommission_request, transfer_request


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
    decommission = commands.add_parser(
        "decommission",
        parents=[parent],
        help="remove an OM from the service's Raft group",
        description=(
            "Decommission an OzoneManager. Ensure that the node being decommissioned is shut down first. Add "
            "it to ozone.om.decommissioned.nodes.SERVICE in ozone-site.xml of all OzoneManagers (and restart "
            "them) before proceeding. Decommissioning an OM might make the service lose high availability: "
            "add another OM first."
        ),
    )
    decommission.add_argument(
        "-id", "--service-id", dest="service_id", required=True, metavar="SERVICE", help="the OM service"
    )  # fmt: skip
    decommission.add_argument(
        "-nodeid", "--nodeid", dest="node", required=True, metavar="NODE", help="the OM to decommission"
    )  # fmt: skip
    decommission.add_argument(
        "-hostname", "--node-host-address", dest="hostname", metavar="HOST",
        help="the OM's host name or address (checked against its ozone.om.address.SERVICE.NODE)",
    )  # fmt: skip
    decommission.add_argument(
        "--force", action="store_true",
        help="skip checking that every OM's configuration lists the node in ozone.om.decommissioned.nodes",
    )  # fmt: skip
    decommission.set_defaults(func=run_decommission)
    rotate = commands.add_parser(
        "rotate-s3-master-key", parents=[parent],
        help="add a version to a lone OM's SSE-S3 master keystore (administrators only)",
    )  # fmt: skip
    rotate.add_argument("--om", metavar="HOST:PORT", help="OM address (default: ozone.om.address)")
    rotate.set_defaults(func=run_rotate_s3_master_key)


def _service(conf: OzoneConfiguration, args: argparse.Namespace) -> OmAddresses:
    """The OMs of the service `-id` names, else of the configured one."""
    oms = OmAddresses.of_service(conf, args.service_id) if args.service_id else OmAddresses.from_conf(conf)
    if oms.service_id is None:
        raise CLIError("no OM service: ozone.om.service.ids is not set (a lone OM has no roles)")
    return oms


def run_transfer(args: argparse.Namespace) -> int:
    conf = load_configuration(args)
    nodes = {n.node_id: n for n in _service(conf, args).nodes}
    if args.random and len(nodes) < 2:
        raise CLIError(f"-r: the service has one OM ({', '.join(nodes)}): there is no other OM to lead")
    request = transfer_request(None if args.random else args.node)
    try:  # one round over the OMs, following the leader each follower names
        _, answer = OmAdminClient(nodes, client_tls(conf)).call_leader(
            "transferLeadership", request, timeout_s=0, call_timeout_s=60
        )
    except OmAdminError as e:
        raise CLIError(f"{e.code.name}: {e}") from None
    print(f"Transfer leadership successfully to {answer.newLeaderId}.")
    return 0


def run_rotate_s3_master_key(args: argparse.Namespace) -> int:
    """New SSE-S3 objects are wrapped under the new version; older ones keep theirs (om/master_keys.py)."""
    with OzoneClient(load_configuration(args), args.om) as client:
        version = client.run(client.async_client.om.rotate_s3_master_key())
    print(f"S3 master key rotated: version {version} wraps new data keys.")
    return 0


def run_roles(args: argparse.Namespace) -> int:
    conf = load_configuration(args)
    nodes = _service(conf, args).nodes
    roles = member_roles({node.node_id: node.http_address for node in nodes}, conf)
    hosts = {node.node_id: node.rpc_address.host for node in nodes}
    if args.json:
        print_json(
            [
                {
                    "nodeId": r.node_id,
                    "role": r.role,
                    "host": hosts[r.node_id],
                    "term": r.term,
                    "commitIndex": r.commit_index,
                    "appliedIndex": r.applied_index,
                }
                for r in roles
            ]
        )
        return 0
    for r in roles:
        print(f"{r.node_id} : {r.role} ({hosts[r.node_id]})")
    return 0


def _same_host(a: str, b: str) -> bool:
    try:
        return a == b or socket.gethostbyname(a) == socket.gethostbyname(b)
    except OSError:
        return False


def run_decommission(args: argparse.Namespace) -> int:
    conf = load_configuration(args)
    oms, gone = OmAddresses.of_service(conf, args.service_id), args.node
    nodes = {n.node_id: n for n in oms.nodes}
    if gone not in nodes:
        raise CLIError(f"There is no OM corresponding to {gone} in the configuration ({', '.join(nodes)})")
    host = nodes[gone].rpc_address.host
    if args.hostname is not None and not _same_host(args.hostname, host):
        raise CLIError(
            f"OM {gone}'s host address in config - {host} does not match the provided host address "
            f"{args.hostname}"
        )
    client = OmAdminClient(nodes, client_tls(conf))
    if not args.force:
        _check_decommission_configs(oms, client, gone, host)
    try:
        leader, answer = client.call_leader("decommission", decommission_request(gone, host), timeout_s=60)
    except OmAdminError as e:
        if e.code in (rpc.StatusCode.UNAVAILABLE, rpc.StatusCode.DEADLINE_EXCEEDED):
            return _decommission_outcome(client, gone, e)
        print(f"Failed to decommission OM {gone}")
        raise CLIError(str(e)) from None
    print(f"Successfully decommissioned OM {gone} (configuration entry {answer.configurationIndex})")
    try:
        left = [n.nodeID for n in client.configuration(leader).nodesInMemory]
    except rpc.RpcError:
        return 0
    _warn_without_ha(left)
    return 0


def _warn_without_ha(members: list[str]) -> None:
    """One member left: the service no longer survives the loss of an OM."""
    if len(members) == 1:
        print(
            f"WARNING: the OM service now has one member ({members[0]}): it runs without high "
            "availability; bootstrap another OM to restore it",
            file=sys.stderr,
        )


def _decommission_outcome(client: OmAdminClient, gone: str, lost: OmAdminError) -> int:
    """No answer from a leader (lost, or none took the call in time): the removal may still have been made,
    so the outcome is read back from the other OMs' members in force, not taken for a failure."""
    counting, not_counting = [], []
    members: list[str] = []
    for node in client.nodes:
        if node == gone:
            continue
        try:
            answer = client.configuration(node)
        except rpc.RpcError:
            continue
        members = [n.nodeID for n in answer.nodesInMemory]
        (counting if gone in members else not_counting).append(node)
    if not_counting and not counting:
        print(
            f"Decommissioned OM {gone}: no answer from the leader ({lost}), but OM(s) "
            f"{', '.join(not_counting)} no longer count it as a member"
        )
        _warn_without_ha(members)
        return 0
    print(f"Failed to decommission OM {gone}")
    if not_counting:
        raise CLIError(
            f"outcome unknown: {lost}; OM(s) {', '.join(not_counting)} no longer count {gone} as a member, "
            f"OM(s) {', '.join(counting)} still do (look again with `pyozone admin om roles`)"
        )
    seen = f"OM(s) {', '.join(counting)} still count it as a member" if counting else "no OM answered"
    raise CLIError(f"{lost}; {seen}")


def _check_decommission_configs(oms: OmAddresses, client: OmAdminClient, gone: str, host: str) -> None:
    """Ozone's verifyConfigUpdatedOnAllOMs: the node is decommissioned in this configuration and in every
    remaining OM's."""
    key = suffixed("ozone.om.decommissioned.nodes", oms.service_id or "")
    if gone not in oms.decommissioned:
        raise CLIError(
            f"Please add the to be decommissioned OM {gone} to the {key} config in ozone-site.xml of all "
            "nodes."
        )
    active = [n.node_id for n in oms.active]
    if not active:
        raise CLIError(f"Cannot decommission OM {gone} as it is the only node in the ring.")
    stale = []
    for node in active:
        try:
            answer = client.configuration(node)
        except rpc.RpcError as e:
            stale.append(f"{node} ({e.code().name})")
            continue
        listed = next((n for n in answer.nodesInNewConf if n.nodeID == gone), None)
        if listed is None or not listed.decommissioned or not _same_host(listed.hostAddress, host):
            stale.append(node)
    if stale:
        raise CLIError(
            f"OM(s) {', '.join(stale)} have not been updated with decommissioned nodes list ({key}) or their "
            "address for the decommissioning node does not match (--force skips this check)"
        )
