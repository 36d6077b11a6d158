"""The planning jobs' --copy-mb-s: a positive, finite number of MB/s, or a one-line refusal."""

from __future__ import annotations

import argparse

import pytest

from pyozone.analytics.jobs.copy_speed import add_copy_speed


class Refused(Exception):
    pass


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise Refused(message)


@pytest.mark.parametrize("speed", ["nan", "inf", "-inf", "1e309", "0", "-3", "fast"])
def test_a_speed_that_is_not_a_positive_finite_number_is_refused(speed: str) -> None:
    """R25 D7: NaN crashed the estimates after Spark's work; inf made every copy take no time."""
    parser = Parser()
    add_copy_speed(parser)
    with pytest.raises(Refused, match="is not a positive number of MB/s"):
        parser.parse_args([f"--copy-mb-s={speed}"])


def test_a_positive_speed_is_taken() -> None:
    parser = Parser()
    add_copy_speed(parser)
    assert parser.parse_args(["--copy-mb-s", "12.5"]).copy_mb_s == 12.5
    assert parser.parse_args([]).copy_mb_s == 100.0
