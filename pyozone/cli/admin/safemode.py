"""`pyozone admin safemode status [--verbose]|exit|wait`."""

from __future__ import annotations

import argparse
import time

from pyozone.cli.admin.connect import add_connection_options, connect
from pyozone.common.cli_options import CLIError
from pyozone.common.output import print_json
from pyozone.protocol.json_views import safemode_dict


def register(groups, parent: argparse.ArgumentParser) -> None:
    safemode = groups.add_parser("safemode", parents=[parent], help="SCM safe mode: status, exit, wait")
    commands = safemode.add_subparsers(dest="safemode_command", metavar="COMMAND")
    commands.required = True
    status = commands.add_parser("status", parents=[parent], help="is SCM in safe mode")
    status.add_argument("--verbose", action="store_true", help="show every exit rule and its progress")
    add_connection_options(status)
    status.set_defaults(func=run_status)
    leave = commands.add_parser("exit", parents=[parent], help="force SCM out of safe mode")
    add_connection_options(leave)
    leave.set_defaults(func=run_exit)
    wait = commands.add_parser("wait", parents=[parent], help="wait until SCM is out of safe mode")
    wait.add_argument("-t", "--timeout", type=int, default=30, metavar="SECONDS", help="give up after this")
    add_connection_options(wait)
    wait.set_defaults(func=run_wait)


def _state_line(in_safe_mode: bool) -> str:
    return "SCM is in safe mode." if in_safe_mode else "SCM is out of safe mode."


def run_status(args: argparse.Namespace) -> int:
    with connect(args) as scm:
        in_safe_mode = scm.in_safe_mode()
        rules = scm.safe_mode_rules() if args.verbose else []
    if args.json:
        print_json(safemode_dict(in_safe_mode, rules))
        return 0
    print(_state_line(in_safe_mode))
    for rule in rules:
        print(f"validated:{str(rule.validated).lower()}, {rule.name}, {rule.status_text}")
    return 0


def run_exit(args: argparse.Namespace) -> int:
    with connect(args) as scm:
        scm.force_exit_safe_mode()
    print("SCM exit safe mode successfully.")
    return 0


def run_wait(args: argparse.Namespace) -> int:
    deadline = time.monotonic() + args.timeout
    with connect(args) as scm:
        while scm.in_safe_mode():
            if time.monotonic() >= deadline:
                raise CLIError(f"SCM is still in safe mode after {args.timeout} s")
            time.sleep(1)
    print(_state_line(False))
    return 0
