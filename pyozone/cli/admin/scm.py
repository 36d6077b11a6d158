"""`pyozone admin scm roles [-id SERVICE] [--json]`: each SCM of an HA service and its Raft role, printed as
Ozone's `ozone admin scm roles` (GetScmRatisRolesSubcommand) prints them, one line per SCM:
`HOST:RATIS_PORT:ROLE:NODE_ID:IP`, read from each SCM's web endpoint (ratis_roles.py, shared with `admin om
roles`); an SCM that does not answer is UNREACHABLE. `--json` prints Ozone's fields (`address`,
`raftPeerRole`, `ID`, `InetAddress`) per SCM, keyed by node id. A lone SCM (no ozone.scm.service.ids) has no
Raft group: the line is its `HOST:RATIS_PORT` alone, as Ozone prints a standalone SCM's, and a note on
stderr says it is not an HA service (exit 0, as Ozone's).

`pyozone admin scm transfer [-id SERVICE] -n NODE | -o HOST[:PORT] | -r` (also `transferleadership`): hands
the service's leadership to SCM NODE, to the SCM whose Ratis address is HOST[:PORT], or to another SCM the
leader picks, as Ozone's `ozone admin scm transfer` (TransferScmLeaderSubCommand), through SCM's admin
protocol (transferLeadership); a follower names the leader and the call goes there (scm_failover.py)."""

from __future__ import annotations

import argparse
import socket
import sys

from pyozone.cli.admin.connect import connect
from pyozone.cli.admin.ratis_roles import member_roles
from pyozone.common.cli_options import CLIError, load_configuration
from pyozone.common.output import print_json
from pyozone.common.scm_ha import ScmAddresses, ScmNodeDetails, ScmProtocol
from pyozone.config import OzoneConfiguration


def register(groups, parent: argparse.ArgumentParser) -> None:
    scm = groups.add_parser("scm", parents=[parent], help="an SCM HA service (ozone.scm.service.ids): roles")
    commands = scm.add_subparsers(dest="scm_command", metavar="COMMAND")
    commands.required = True
    roles = commands.add_parser(
        "roles", parents=[parent], help="list all SCMs, their Ratis server roles and RaftPeerIds"
    )
    _service_option(roles)
    roles.add_argument("--json", action="store_true", help="format output as JSON")
    roles.set_defaults(func=run_roles)
    transfer = commands.add_parser(
        "transfer",
        aliases=["transferleadership"],
        parents=[parent],
        help="manually transfer the Raft leadership to the target SCM",
    )
    _service_option(transfer)
    who = transfer.add_mutually_exclusive_group(required=True)
    who.add_argument("-n", "--nodeId", dest="node", metavar="NODE", help="the SCM to lead next, by node id")
    who.add_argument(
        "-o", "--host", dest="host", metavar="HOST[:PORT]",
        help="the SCM to lead next, by its Ratis address (port: its ozone.scm.ratis.port)",
    )  # fmt: skip
    who.add_argument("-r", "--random", action="store_true", help="another SCM, picked by the leader")
    transfer.set_defaults(func=run_transfer, scm=None)


def _service_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-id", "--service-id", dest="scm_service_id", default=None, metavar="SERVICE",
        help="the SCM service (default: the one ozone.scm.service.ids names)",
    )  # fmt: skip


def _scms(conf: OzoneConfiguration, args: argparse.Namespace) -> ScmAddresses:
    """The SCMs of the service `-id` names (else the configuration's), or the lone SCM."""
    return ScmAddresses.from_conf(conf, args.scm_service_id)


def _ip(host: str) -> str:
    """The host's address, as Ozone's roles line ends (the host itself when it does not resolve)."""
    try:
        return socket.gethostbyname(host)
    except OSError:
        return host


def run_roles(args: argparse.Namespace) -> int:
    conf = load_configuration(args)
    scms = _scms(conf, args)
    if scms.service_id is None:
        host = scms.lone_address(ScmProtocol.CLIENT).host
        address = f"{host}:{conf.get('ozone.scm.ratis.port')}"
        print(
            f"SCM {host} is not an HA service (ozone.scm.service.ids is not set): it runs without Ratis, "
            "so it has no Raft roles",
            file=sys.stderr,
        )
        if args.json:
            print_json({host: {"address": address}})
        else:
            print(address)
        return 0
    nodes = scms.nodes
    by_id = {node.node_id: node for node in nodes}
    roles = member_roles({node.node_id: node.http_address for node in nodes}, conf)
    if args.json:
        shown = {}
        for r in roles:
            ratis = by_id[r.node_id].ratis_address
            shown[r.node_id] = {
                "address": f"{ratis.host}:{ratis.port}",
                "raftPeerRole": r.role,
                "ID": r.node_id,
                "InetAddress": _ip(ratis.host),
                "term": r.term,
                "commitIndex": r.commit_index,
                "appliedIndex": r.applied_index,
            }
        print_json(shown)
        return 0
    for r in roles:
        ratis = by_id[r.node_id].ratis_address
        print(f"{ratis.host}:{ratis.port}:{r.role}:{r.node_id}:{_ip(ratis.host)}")
    return 0


def _target(nodes: tuple[ScmNodeDetails, ...], args: argparse.Namespace) -> str | None:
    """The node id `-n` or `-o` names, checked against the service's configuration (Ozone's
    convertToHost); None for `-r`."""
    if args.random:
        if len(nodes) < 2:
            raise CLIError(f"-r: the service has one SCM ({nodes[0].node_id}): there is no other SCM to lead")
        return None
    if args.node is not None:
        if args.node not in {n.node_id for n in nodes}:
            named = ", ".join(n.node_id for n in nodes)
            raise CLIError(f"-n: {args.node!r} is no SCM of service {nodes[0].service_id} ({named})")
        return args.node
    host, _, port = args.host.rpartition(":") if ":" in args.host else (args.host, "", "")
    found = [
        n for n in nodes if n.ratis_address.host == host and (not port or str(n.ratis_address.port) == port)
    ]
    if len(found) != 1:
        named = ", ".join(f"{n.node_id} ({n.ratis_address})" for n in nodes)
        which = "no SCM" if not found else "more than one SCM (add its Ratis port)"
        raise CLIError(f"-o: {args.host!r} is the Ratis address of {which} of the service: {named}")
    return found[0].node_id


def run_transfer(args: argparse.Namespace) -> int:
    conf = load_configuration(args)
    scms = _scms(conf, args)
    if scms.service_id is None:
        raise CLIError(
            "this SCM runs alone (ozone.scm.service.ids is not set): there is no leadership to transfer"
        )
    target = _target(scms.nodes, args)
    client = connect(args)
    try:
        client.transfer_leadership(target)
    finally:
        client.close()
    print("Transfer leadership success")
    return 0
