"""The summary table every freon tool prints: ockg's rows, with the count and rate named by the unit."""

from __future__ import annotations

from pyozone.freon.report import FreonReport

ROWS = ["operation", "keys", "failed", "bytes", "seconds", "keys/s", "MB/s"]
LATENCY = ["latency p50 ms", "latency p90 ms", "latency p99 ms", "latency max ms"]


def test_key_tools_keep_ockgs_rows() -> None:
    report = FreonReport("ockg", 4, 4 << 20, 2.0, (1.0, 2.0, 3.0, 40.0))
    rows = dict(report.rows())
    assert list(rows) == ROWS + LATENCY
    assert (rows["keys"], rows["keys/s"], rows["MB/s"]) == ("4", "2.0", "2.00")
    assert (rows["latency p50 ms"], rows["latency p99 ms"], rows["latency max ms"]) == ("2.0", "40.0", "40.0")


def test_echo_tools_count_ops() -> None:
    report = FreonReport("ome", 300, 0, 0.5, tuple(float(i) for i in range(1, 301)), unit="ops")
    rows = dict(report.rows())
    assert list(rows) == ["operation", "ops", "failed", "bytes", "seconds", "ops/s", "MB/s", *LATENCY]
    assert (rows["ops"], rows["ops/s"]) == ("300", "600.0")
    assert (report.rate, report.latency_ms(50), report.latency_ms(90), report.latency_ms(99)) == (
        600.0, 150.0, 270.0, 297.0,
    )  # fmt: skip
    assert report.table().splitlines()[5] == "ops/s           600.0"


def test_an_empty_run_reports_zeros() -> None:
    rows = dict(FreonReport("dne", 0, 0, 0.0, unit="ops").rows())
    assert (rows["ops/s"], rows["latency p99 ms"], rows["latency max ms"]) == ("0.0", "0.0", "0.0")
