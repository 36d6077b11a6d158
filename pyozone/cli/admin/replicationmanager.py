"""`pyozone admin replicationmanager start|stop|status`: pause and resume SCM's Replication Manager.

Stopping it halts the periodic check and all repairs (useful while an operator works on the cluster by
hand); replica reports keep completing the operations already sent. Nothing is lost while it is
stopped: the next check after `start` finds whatever still needs repair.
"""

from __future__ import annotations

import argparse

from pyozone.cli.admin.connect import add_connection_options, connect
from pyozone.common.output import print_json


def register(groups, parent: argparse.ArgumentParser) -> None:
    rm = groups.add_parser(
        "replicationmanager", parents=[parent], help="the Replication Manager: start, stop, status"
    )
    commands = rm.add_subparsers(dest="replicationmanager_command", metavar="COMMAND")
    commands.required = True
    for name, help_text, func in (
        ("start", "resume checking and repairing containers", run_start),
        ("stop", "pause checking and repairing containers", run_stop),
        ("status", "is the Replication Manager running", run_status),
    ):
        command = commands.add_parser(name, parents=[parent], help=help_text)
        add_connection_options(command)
        command.set_defaults(func=func)


def run_start(args: argparse.Namespace) -> int:
    with connect(args) as scm:
        scm.start_replication_manager()
        running = scm.replication_manager_running()
    return _print(args, running, "Starting ReplicationManager...")


def run_stop(args: argparse.Namespace) -> int:
    with connect(args) as scm:
        scm.stop_replication_manager()
        running = scm.replication_manager_running()
    return _print(args, running, "Stopping ReplicationManager...")


def run_status(args: argparse.Namespace) -> int:
    with connect(args) as scm:
        running = scm.replication_manager_running()
    return _print(args, running, f"ReplicationManager is {'Running' if running else 'Not Running'}.")


def _print(args: argparse.Namespace, running: bool, text: str) -> int:
    if args.json:
        print_json({"running": running})
    else:
        print(text)
    return 0
