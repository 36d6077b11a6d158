"""`pyozone admin container list|info|close|report`."""

from __future__ import annotations

import argparse
import sys

from pyozone.cli.admin.connect import add_connection_options, connect
from pyozone.common.cli_options import CLIError
from pyozone.common.output import human_size, print_json, print_table
from pyozone.hdds.replication_report import report_lines
from pyozone.hdds.states import LifeCycleState
from pyozone.protocol.json_views import container_dict, view_dict


def register(groups, parent: argparse.ArgumentParser) -> None:
    container = groups.add_parser("container", parents=[parent], help="containers: list, info, close, report")
    commands = container.add_subparsers(dest="container_command", metavar="COMMAND")
    commands.required = True
    listing = commands.add_parser("list", parents=[parent], help="containers from an id on")
    listing.add_argument("-s", "--start", type=int, default=0, metavar="ID", help="first container id")
    listing.add_argument("-c", "--count", type=int, default=100, help="how many (default 100)")
    listing.add_argument("--state", choices=[s.name for s in LifeCycleState], help="only this state")
    add_connection_options(listing)
    listing.set_defaults(func=run_list)
    info = commands.add_parser("info", parents=[parent], help="one container with its replicas")
    info.add_argument("container_id", type=int, metavar="ID")
    add_connection_options(info)
    info.set_defaults(func=run_info)
    close = commands.add_parser("close", parents=[parent], help="close a container (allowed in safe mode)")
    close.add_argument("container_id", type=int, metavar="ID")
    add_connection_options(close)
    close.set_defaults(func=run_close)
    report = commands.add_parser(
        "report", parents=[parent], help="the Replication Manager's container summary report"
    )
    add_connection_options(report)
    report.set_defaults(func=run_report)


MAX_ID = (1 << 63) - 1  # container ids are Java longs (int64 on the wire)


def check_range(option: str, value: int, low: int, high: int = MAX_ID) -> int:
    if not low <= value <= high:
        raise CLIError(f"{option} {value}: out of range; must be from {low} to {high}")
    return value


def run_list(args: argparse.Namespace) -> int:
    check_range("--start", args.start, 0)
    check_range("--count", args.count, 1, (1 << 31) - 1)
    state = LifeCycleState[args.state] if args.state else None
    with connect(args) as scm:
        containers, total = scm.containers(args.start, args.count, state)
    if args.json:
        print_json([container_dict(c) for c in containers])
        return 0
    rows = [
        (
            c.container_id,
            c.state.name,
            c.replication_config,
            human_size(c.used_bytes),
            c.number_of_keys,
            c.sequence_id,
            c.pipeline_id or "-",
        )
        for c in containers
    ]
    print_table(("CONTAINER ID", "STATE", "REPLICATION", "USED", "KEYS", "BCSID", "PIPELINE"), rows)
    print(f"\n{len(containers)} of {total} container(s)")
    return 0


def run_info(args: argparse.Namespace) -> int:
    check_range("container ID", args.container_id, 1)
    with connect(args) as scm:
        view = scm.container(args.container_id)
    if args.json:
        print_json(view_dict(view))
        return 0
    info = view.info
    print(f"Container id: {info.container_id}")
    print(f"Pipeline id: {info.pipeline_id or '-'}")
    if view.pipeline is not None:
        print(f"Write Pipeline State: {view.pipeline.pipeline.state.name}")
    print(f"Container State: {info.state.name}")
    print(f"Replication: {info.replication_config}")
    print(f"Used: {human_size(info.used_bytes)}; keys: {info.number_of_keys}; BCSID: {info.sequence_id}")
    print(f"Datanodes: [{', '.join(r.datanode for r in view.replicas)}]")
    print("Replicas:")
    for r in view.replicas:
        print(
            f"  State: {r.state.name}; ReplicaIndex: {r.replica_index}; Origin: {r.origin_node_id}; "
            f"Location: {r.datanode}; BCSID: {r.sequence_id}; Empty: {str(r.is_empty).lower()}"
        )
    return 0


def run_close(args: argparse.Namespace) -> int:
    check_range("container ID", args.container_id, 1)
    with connect(args) as scm:
        scm.close_container(args.container_id)
    print(f"Container {args.container_id} is being closed")
    return 0


def not_yet_available(in_safe_mode: bool) -> str:
    """Ozone's notice for a report before the RM's first run, and why the wait, so a new cluster's zeros
    do not look like a broken one."""
    why = (
        "SCM is still in safe mode (`pyozone admin safemode status`)."
        if in_safe_mode
        else "SCM has left safe mode; Replication Manager starts "
        "hdds.scm.wait.time.after.safemode.exit later (5m by default, 10s in `pyozone cluster up`)."
    )
    return (
        "The Container Report is not available until Replication Manager completes its first run "
        f"after startup or fail over. All values will be zero until that time. {why}\n"
    )


def run_report(args: argparse.Namespace) -> int:
    """Ozone's `ozone admin container report` layout: state summary, health summary, samples."""
    with connect(args) as scm:
        report = scm.replication_manager_report()
        in_safe_mode = report.timestamp_ms == 0 and scm.in_safe_mode()
    if report.timestamp_ms == 0:
        print(not_yet_available(in_safe_mode), file=sys.stderr)
    if args.json:
        print_json(report.to_dict())
        return 0
    print("\n".join(report_lines(report)))
    return 0
