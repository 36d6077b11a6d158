"""`containerbalancer start`'s options, Ozone's names and short flags, for the two commands that take them:
`pyozone admin containerbalancer start` (sent to SCM) and `pyozone analytics balance` (a run planned
over a snapshot). Each left out is None: SCM's hdds.container.balancer.* configuration applies
(ContainerBalancerConfiguration.with_start_options)."""

from __future__ import annotations

import argparse

from pyozone.hdds.balancer import BalancerStartOptions


def add_start_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-t",
        "--threshold",
        type=float,
        help="percentage deviation from the average "
        "utilization after which a datanode is rebalanced, in [0, 100) (default 10)",
    )
    parser.add_argument("-i", "--iterations", type=int, help="iterations to run, > 0 or -1 (default 10)")
    parser.add_argument(
        "-d",
        "--max-datanodes-percentage-to-involve-per-iteration",
        "--maxDatanodesPercentageToInvolvePerIteration",
        dest="max_datanodes_percentage",
        type=int,
        help="percent of healthy in-service datanodes one iteration may involve",
    )
    parser.add_argument(
        "-s",
        "--max-size-to-move-per-iteration-in-gb",
        "--maxSizeToMovePerIterationInGB",
        dest="max_size_to_move_per_iteration_gb",
        type=int,
        help="GB one iteration moves",
    )
    parser.add_argument(
        "-e",
        "--max-size-entering-target-in-gb",
        "--maxSizeEnteringTargetInGB",
        dest="max_size_entering_target_gb",
        type=int,
        help="GB entering a target per iteration",
    )
    parser.add_argument(
        "-l",
        "--max-size-leaving-source-in-gb",
        "--maxSizeLeavingSourceInGB",
        dest="max_size_leaving_source_gb",
        type=int,
        help="GB leaving a source per iteration",
    )
    parser.add_argument(
        "--balancing-iteration-interval-minutes",
        dest="balancing_interval_minutes",
        type=int,
        help="minutes between iterations (default 70)",
    )
    parser.add_argument(
        "--move-timeout-minutes",
        dest="move_timeout_minutes",
        type=int,
        help="minutes a container's move may take (default 65)",
    )
    parser.add_argument(
        "--move-replication-timeout-minutes",
        dest="move_replication_timeout_minutes",
        type=int,
        help="of those, minutes its replication may take (default 50)",
    )
    parser.add_argument(
        "--move-network-topology-enable",
        dest="network_topology_enable",
        nargs="?",
        const=True,
        type=_boolean,
        metavar="true|false",
        help="not supported by pyozone: true is refused",
    )
    parser.add_argument(
        "--include-datanodes",
        dest="include_datanodes",
        metavar="HOSTS",
        help="only these datanodes (hostnames or IPs, comma separated)",
    )
    parser.add_argument("--exclude-datanodes", dest="exclude_datanodes", metavar="HOSTS",
                       help="never these datanodes (hostnames or IPs, comma separated)")  # fmt: skip


def _boolean(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered not in ("true", "false"):
        raise argparse.ArgumentTypeError(f"expected true or false, not {text!r}")
    return lowered == "true"


def start_options(args: argparse.Namespace) -> BalancerStartOptions:
    names = BalancerStartOptions.__dataclass_fields__
    return BalancerStartOptions(**{name: getattr(args, name) for name in names})


_INT32_MAX, _INT64_MAX = 2**31 - 1, 2**63 - 1
_RANGES = (
    ("iterations", "--iterations", _INT32_MAX),
    ("max_datanodes_percentage", "--max-datanodes-percentage-to-involve-per-iteration", _INT32_MAX),
    ("max_size_to_move_per_iteration_gb", "--max-size-to-move-per-iteration-in-gb", _INT64_MAX),
    ("max_size_entering_target_gb", "--max-size-entering-target-in-gb", _INT64_MAX),
    ("max_size_leaving_source_gb", "--max-size-leaving-source-in-gb", _INT64_MAX),
    ("balancing_interval_minutes", "--balancing-iteration-interval-minutes", _INT32_MAX),
    ("move_timeout_minutes", "--move-timeout-minutes", _INT32_MAX),
    ("move_replication_timeout_minutes", "--move-replication-timeout-minutes", _INT32_MAX),
)
"""The integer options with their Java types' bounds (ContainerBalancerStartSubcommand: Integer minutes,
counts and percentages, Long GB): what picocli would refuse before any call to SCM."""


def out_of_range(args: argparse.Namespace) -> str | None:
    """The first integer option beyond its Java type, as picocli's refusal; None when all fit."""
    for dest, flag, maximum in _RANGES:
        value = getattr(args, dest)
        if value is not None and not -maximum - 1 <= value <= maximum:
            return f"Invalid value for option '{flag}': {value} is out of range (at most {maximum})"
    return None
