"""`pyozone admin containerbalancer start|stop|status`: Ozone's `ozone admin containerbalancer`.

`start` takes Ozone's options (each overriding SCM's hdds.container.balancer.* for this run) and prints
Ozone's lines; a run SCM refuses (not the ready leader, in safe mode, already running, an inconsistent
or unsupported option such as --move-network-topology-enable true) prints Ozone's failure lines with
SCM's reason and exits 1. `status` says whether it runs and, once a run stopped, why; `-v` shows the run's
configuration and its current (or last) iteration, `-H` its other finished iterations too (sizes moved,
datanodes involved, moves completed, failed and timed out): current Ozone's ContainerBalancerStatusSubcommand.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import time

from pyozone.cli.admin.connect import add_connection_options, connect
from pyozone.common.balancer_options import add_start_options, out_of_range, start_options
from pyozone.common.output import print_json
from pyozone.hdds.balancer import BalancerStatusInfo, IterationStatus

_GB = 1 << 30
_BINARY = ("B", "KB", "MB", "GB", "TB", "PB", "EB")


def register(groups, parent: argparse.ArgumentParser) -> None:
    cb = groups.add_parser(
        "containerbalancer", parents=[parent], help="the Container Balancer: start, stop, status"
    )
    commands = cb.add_subparsers(dest="containerbalancer_command", metavar="COMMAND")
    commands.required = True
    start = commands.add_parser("start", parents=[parent], help="start ContainerBalancer")
    add_start_options(start)
    stop = commands.add_parser("stop", parents=[parent], help="stop ContainerBalancer")
    status = commands.add_parser("status", parents=[parent], help="check if ContainerBalancer is running")
    status.add_argument("-v", "--verbose", action="store_true", help="show the current or last iteration")
    status.add_argument("-H", "--history", action="store_true", help="with -v: the finished iterations too")
    for command, func in ((start, run_start), (stop, run_stop), (status, run_status)):
        add_connection_options(command)
        command.set_defaults(func=func)


def run_start(args: argparse.Namespace) -> int:
    problem = out_of_range(args)
    if problem is not None:
        print(problem, file=sys.stderr)
        return 1
    with connect(args) as scm:
        result = scm.start_container_balancer(start_options(args))
    if args.json:
        print_json({"start": result.started, "message": result.message or None})
    elif result.started:
        print("Container Balancer started successfully.")
    else:  # Ozone prints these to System.err
        print("Failed to start Container Balancer.", file=sys.stderr)
        if result.message:
            print(f"Failure reason: {result.message}", file=sys.stderr)
    return 0 if result.started else 1


def run_stop(args: argparse.Namespace) -> int:
    if not args.json:
        print("Sending stop command. Waiting for Container Balancer to stop...")
    with connect(args) as scm:
        scm.stop_container_balancer()
    if args.json:
        print_json({"running": False})
    else:
        print("Container Balancer stopped.")
    return 0


def run_status(args: argparse.Namespace) -> int:
    if args.history and not args.verbose:
        print("Warning: -H/--history has no effect without -v/--verbose.", file=sys.stderr)
    with connect(args) as scm:
        info = scm.container_balancer_status_info()
    if args.json:
        print_json(
            {
                "running": info.running,
                "startedAt": info.started_at_s or None,
                "stoppedAt": info.stopped_at_s,
                "stopReason": info.stop_reason,
                "configuration": info.configuration or None,
                "iterations": [s.to_dict() for s in info.iterations],
            }
        )
    else:
        print(status_text(info, args.verbose, args.history, time.time()))
    return 0


# ------------------------------------------------------------------ Ozone's text
def status_text(info: BalancerStatusInfo, verbose: bool, history: bool, now_s: float) -> str:
    """ContainerBalancerStatusSubcommand's output."""
    lines = ["ContainerBalancer is Running." if info.running else "ContainerBalancer is Not Running."]
    if not info.running and info.stop_reason:
        lines.append(f"Stop reason: {info.stop_reason}")
    if not (verbose and info.has_run):
        return "\n".join(lines)
    lines.append(f"Started at: {_local(info.started_at_s)}")
    end_s = int(now_s) if info.stopped_at_s is None else info.stopped_at_s
    if info.stopped_at_s is not None:
        lines.append(f"Stopped at: {_local(info.stopped_at_s)}")
    lines.append(f"Balancing duration: {pretty_duration(end_s - info.started_at_s)}\n")
    lines.append(configuration_text(info.configuration))
    finished = [s for s in info.iterations if s.result is not None]
    if info.running:
        lines.append("Current iteration info:")
        shown = next((s for s in info.iterations if s.result is None), None)
    else:
        lines.append("Last iteration info:")
        shown = finished[-1] if finished else None
    lines.append("-\n" if shown is None else iteration_text(shown))
    if history:
        lines.append("Completed iteration history:")
        rest = [s for s in finished if info.running or s is not shown]
        lines.append("\n".join(iteration_text(s) for s in rest) or "-")
        lines.append("")
    return "\n".join(lines)


def _local(epoch_s: int) -> str:
    """ISO local date and time, as Ozone's DateTimeFormatter.ISO_LOCAL_DATE / ISO_LOCAL_TIME print them."""
    at = dt.datetime.fromtimestamp(epoch_s)
    return f"{at.date().isoformat()} {at.time().isoformat()}"


def configuration_text(c: dict) -> str:
    rows = [
        ("Key", "Value"),
        ("Threshold", c["utilizationThreshold"]),
        ("Max Datanodes to Involve per Iteration(percent)", c["datanodesInvolvedMaxPercentagePerIteration"]),
        ("Max Size to Move per Iteration", f"{c['sizeMovedMaxPerIteration'] // _GB}GB"),
        ("Max Size Entering Target per Iteration", f"{c['sizeEnteringTargetMax'] // _GB}GB"),
        ("Max Size Leaving Source per Iteration", f"{c['sizeLeavingSourceMax'] // _GB}GB"),
        ("Number of Iterations", c["iterations"]),
        ("Time Limit for Single Container's Movement", f"{c['moveTimeout'] // 60_000}min"),
        ("Time Limit for Single Container's Replication", f"{c['moveReplicationTimeout'] // 60_000}min"),
        ("Interval between each Iteration", f"{c['balancingIterationInterval'] // 60_000}min"),
        ("Whether to Enable Network Topology", str(c["moveNetworkTopologyEnable"]).lower()),
        ("Whether to Trigger Refresh Datanode Usage Info", str(c["triggerDuBeforeMoveEnable"]).lower()),
        ("Container IDs to Exclude from Balancing", c["excludeContainers"] or "None"),
        ("Datanodes Specified to be Balanced", c["includeDatanodes"] or "None"),
        ("Datanodes Excluded from Balancing", c["excludeDatanodes"] or "None"),
    ]
    return "Container Balancer Configuration values:\n" + "".join(f"{k:<50} {v}\n" for k, v in rows)


def iteration_text(s: IterationStatus) -> str:
    entering = "".join(f"{dn} <- {byte_desc(n)}\n" for dn, n in sorted(s.size_entering.items())) or " -\n"
    leaving = "".join(f"{dn} -> {byte_desc(n)}\n" for dn, n in sorted(s.size_leaving.items())) or " -\n"
    rows = [
        ("Key", "Value"),
        ("Iteration number", s.number or "-"),
        ("Iteration duration", pretty_duration(s.duration_s)),
        ("Iteration result", "-" if s.result is None else s.result.value),
        ("Size scheduled to move", byte_desc(s.size_scheduled)),
        ("Moved data size", byte_desc(s.size_moved)),
        ("Scheduled to move containers", s.moves_scheduled),
        ("Already moved containers", s.moves_completed),
        ("Failed to move containers", s.moves_failed),
        ("Failed to move containers by timeout", s.moves_timed_out),
        ("Datanodes involved", s.datanodes_involved),
    ]
    return (
        "".join(f"{k:<50} {v}\n" for k, v in rows)
        + f"{'Entered data to nodes':<50} \n{entering}"
        + f"{'Exited data from nodes':<50} \n{leaving}"
    )


def byte_desc(n: int) -> str:
    """Hadoop's StringUtils.byteDesc: a whole number of the largest binary unit, else two decimals."""
    unit = 0
    while unit < len(_BINARY) - 1 and n >= 1 << (10 * (unit + 1)):
        unit += 1
    scale = 1 << (10 * unit)
    if n % scale == 0:
        return f"{n // scale} {_BINARY[unit]}"
    return f"{n / scale:.2f} {_BINARY[unit]}"


def pretty_duration(seconds: int) -> str:
    seconds = max(0, seconds)
    return f"{seconds // 3600}h {seconds % 3600 // 60}m {seconds % 60}s"
