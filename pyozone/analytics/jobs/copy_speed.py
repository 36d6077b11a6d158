"""`--copy-mb-s`, the speed of one container copy stream, for the jobs that estimate how long copies take
(decommission, balance): one option, one parser."""

from __future__ import annotations

import argparse
import math


def _speed(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of MB/s")
    return value


def add_copy_speed(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--copy-mb-s",
        type=_speed,
        default=100.0,
        metavar="MB/S",
        help="speed of one container copy stream in MB/s (1 MB = 2^20 bytes; default 100)",
    )
