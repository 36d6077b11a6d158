"""`pyozone admin containerbalancer`: Ozone's option names reach the start request, and status prints
Ozone's lines (ContainerBalancerStatusSubcommand), the current iteration with -v and the finished ones
with -H."""

from __future__ import annotations

import argparse

import pytest

from pyozone.cli.admin.containerbalancer import byte_desc, run_start, status_text
from pyozone.cli.main import build_parser
from pyozone.common.balancer_options import start_options
from pyozone.hdds.balancer import BalancerStartOptions, BalancerStatusInfo, IterationResult, IterationStatus
from pyozone.scm.balancer.config import ContainerBalancerConfiguration

GB = 1 << 30


def parse(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(["admin", "containerbalancer", *argv])


def test_start_options_take_ozones_names() -> None:
    args = parse(
        "start", "-t", "5", "-i", "-1", "-d", "50", "-s", "100", "-e", "30", "-l", "20",
        "--balancing-iteration-interval-minutes", "20", "--move-timeout-minutes", "60",
        "--move-replication-timeout-minutes", "40", "--move-network-topology-enable",
        "--include-datanodes", "dn1,dn2", "--exclude-datanodes", "dn3",
    )  # fmt: skip
    assert start_options(args) == BalancerStartOptions(
        5.0, -1, 50, 100, 30, 20, 20, 60, 40, True, "dn1,dn2", "dn3"
    )
    assert parse("start", "--maxSizeEnteringTargetInGB", "7").max_size_entering_target_gb == 7
    assert start_options(parse("start")) == BalancerStartOptions()


def test_status_not_running() -> None:
    assert status_text(BalancerStatusInfo(False), verbose=True, history=True, now_s=0) == (
        "ContainerBalancer is Not Running."
    )


def test_status_verbose_with_history() -> None:
    config = ContainerBalancerConfiguration().to_record(should_run=True, next_iteration_index=1)
    done = IterationStatus(1, IterationResult.ITERATION_COMPLETED, 3600, 4, 3, 0, 1, 8 * GB, 6 * GB, 2,
                           {"dn-b": 8 * GB}, {"dn-a": 8 * GB})  # fmt: skip
    current = IterationStatus(2, None, 65, 2, 0, 0, 0, 3 * GB // 2, 0, 2)
    info = BalancerStatusInfo(True, 1_000_000, config, (done, current))
    text = status_text(info, verbose=True, history=True, now_s=1_000_000 + 3725)
    lines = text.splitlines()
    assert lines[0] == "ContainerBalancer is Running."
    assert lines[2] == "Balancing duration: 1h 2m 5s"
    assert f"{'Threshold':<50} 10.0" in lines
    assert f"{'Max Size Entering Target per Iteration':<50} 26GB" in lines
    assert f"{'Time Limit for Single Container' + chr(39) + 's Movement':<50} 65min" in lines
    current_at = lines.index("Current iteration info:")
    history_at = lines.index("Completed iteration history:")
    current_block = lines[current_at:history_at]
    assert f"{'Iteration number':<50} 2" in current_block and f"{'Iteration result':<50} -" in current_block
    assert f"{'Size scheduled to move':<50} 1.50 GB" in current_block
    history = lines[history_at:]
    assert f"{'Iteration result':<50} ITERATION_COMPLETED" in history
    assert f"{'Already moved containers':<50} 3" in history
    assert f"{'Failed to move containers by timeout':<50} 1" in history
    assert f"{'Datanodes involved':<50} 2" in history
    assert "dn-b <- 8 GB" in history and "dn-a -> 8 GB" in history
    without = status_text(info, verbose=True, history=False, now_s=1_000_000)
    assert "Current iteration info:" in without and "Completed iteration history:" not in without
    assert status_text(info, verbose=False, history=False, now_s=0) == "ContainerBalancer is Running."


def test_status_of_a_stopped_run() -> None:
    """Current Ozone's lines once a run stopped: its reason; -v its last iteration, -H the others."""
    config = ContainerBalancerConfiguration().to_record(should_run=False, next_iteration_index=0)
    first = IterationStatus(1, IterationResult.ITERATION_COMPLETED, 60, 2, 2, 0, 0, 2 * GB, 2 * GB, 2)
    last = IterationStatus(2, IterationResult.ITERATION_INTERRUPTED, 30, 1, 0, 1, 0, GB, 0, 2)
    info = BalancerStatusInfo(False, 1_000_000, config, (first, last), 1_000_125, "Completed all iterations.")
    assert status_text(info, verbose=False, history=False, now_s=2_000_000) == (
        "ContainerBalancer is Not Running.\nStop reason: Completed all iterations."
    )
    lines = status_text(info, verbose=True, history=True, now_s=2_000_000).splitlines()
    assert lines[2].startswith("Started at: ") and lines[3].startswith("Stopped at: ")
    assert lines[4] == "Balancing duration: 0h 2m 5s"  # to the stop, not to now
    last_at, history_at = lines.index("Last iteration info:"), lines.index("Completed iteration history:")
    assert f"{'Iteration number':<50} 2" in lines[last_at:history_at]
    assert f"{'Iteration number':<50} 1" in lines[history_at:]
    assert f"{'Iteration number':<50} 2" not in lines[history_at:]
    alone = BalancerStatusInfo(False, 1_000_000, config, (last,), 1_000_125, "stopped by the operator")
    lines = status_text(alone, verbose=True, history=True, now_s=0).splitlines()
    assert lines[lines.index("Completed iteration history:") + 1] == "-"


def test_byte_desc() -> None:
    assert [byte_desc(n) for n in (0, 1023, 1024, 1536, 26 * GB, GB + 1)] == [
        "0 B",
        "1023 B",
        "1 KB",
        "1.50 KB",
        "26 GB",
        "1.00 GB",
    ]


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (("-i", "99999999999"), "--iterations"),
        (("-d", "9999999999"), "--max-datanodes-percentage-to-involve-per-iteration"),
        (("-s", "99999999999999999999"), "--max-size-to-move-per-iteration-in-gb"),
        (("--move-timeout-minutes", "2147483648"), "--move-timeout-minutes"),
    ],
)
def test_start_refuses_an_option_out_of_its_java_range_in_one_line(
    argv: tuple[str, ...], flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """R24 D2: refused before any call to SCM (no --scm is reachable here), one line on stderr, exit 1."""
    assert run_start(parse("start", *argv, "--scm", "127.0.0.1:1")) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.startswith(f"Invalid value for option '{flag}': {argv[1]} is out of")
