"""`pyozone admin datanode list|decommission|maintenance|recommission`."""

from __future__ import annotations

import argparse

from pyozone.cli.admin.connect import add_connection_options, connect
from pyozone.common.cli_options import CLIError
from pyozone.common.output import age, human_size, print_json, print_table
from pyozone.protocol.admin_records import DatanodeListing
from pyozone.protocol.json_views import listing_dict


def register(groups, parent: argparse.ArgumentParser) -> None:
    datanode = groups.add_parser("datanode", parents=[parent], help="datanodes: list and admin state")
    commands = datanode.add_subparsers(dest="datanode_command", metavar="COMMAND")
    commands.required = True
    listing = commands.add_parser("list", parents=[parent], help="every datanode with health and usage")
    add_connection_options(listing)
    listing.set_defaults(func=run_list)
    for name, help_text in (
        ("decommission", "start decommissioning datanodes"),
        ("maintenance", "put datanodes into maintenance"),
        ("recommission", "return datanodes to service"),
    ):
        command = commands.add_parser(name, parents=[parent], help=help_text)
        command.add_argument("hosts", nargs="+", metavar="HOST", help="hostname, IP or datanode UUID")
        if name == "maintenance":
            command.add_argument(
                "--end",
                type=int,
                default=0,
                metavar="HOURS",
                help="hours until maintenance ends by itself (0: until recommissioned)",
            )
        add_connection_options(command)
        command.set_defaults(func=run_admin_state, action=name)


def _progress_cells(node: DatanodeListing) -> tuple[object, object, object]:
    """Containers left, under-replicated, unclosed; "-" for a node no workflow tracks."""
    progress = node.admin_progress
    if progress is None:
        return ("-", "-", "-")
    return (progress.containers_left, progress.under_replicated, progress.unclosed)


def run_list(args: argparse.Namespace) -> int:
    with connect(args) as scm:
        nodes = sorted(scm.datanodes(), key=lambda n: (n.details.network_location, n.details.hostname))
    if args.json:
        print_json([listing_dict(n) for n in nodes])
        return 0
    rows = [
        (
            n.details.uuid,
            n.details.hostname,
            n.details.ip_address,
            n.details.network_location,
            n.health.name,
            n.operational_state.name,
            age(n.last_heartbeat_wall_ms),
            n.pipeline_count,
            n.container_count,
            human_size(n.used),
            human_size(n.remaining),
            *_progress_cells(n),
        )
        for n in nodes
    ]
    print_table(
        (
            "UUID",
            "HOSTNAME",
            "IP",
            "RACK",
            "HEALTH",
            "OPERATIONAL STATE",
            "LAST HEARTBEAT",
            "PIPELINES",
            "CONTAINERS",
            "USED",
            "FREE",
            "CONTAINERS LEFT",
            "UNDER-REPLICATED",
            "UNCLOSED",
        ),
        rows,
    )
    print(f"\n{len(nodes)} datanode(s)")
    return 0


def run_admin_state(args: argparse.Namespace) -> int:
    with connect(args) as scm:
        if args.action == "decommission":
            failed, verb = scm.decommission(args.hosts), "Started decommissioning datanode(s)"
        elif args.action == "maintenance":
            if args.end < 0:
                raise CLIError("--end must be 0 or more hours")
            failed, verb = (
                scm.start_maintenance(args.hosts, args.end),
                "Entering maintenance mode on datanode(s)",
            )
        else:
            failed, verb = scm.recommission(args.hosts), "Started recommissioning datanode(s)"
    done = [h for h in args.hosts if h not in failed]
    if args.json:
        print_json({"succeeded": done, "failed": failed})
    else:
        if done:
            print(f"{verb}:\n" + "\n".join(done))
        for host, error in failed.items():
            print(f"Error: {host}: {error}")
    if failed:
        raise CLIError(f"{len(failed)} of {len(args.hosts)} datanode(s) failed")
    return 0
