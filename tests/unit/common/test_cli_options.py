"""run_command: how every pyozone entry point (the CLI, spark-submit's analytics entry) ends a command."""

from __future__ import annotations

import argparse
import io

import pytest

from pyozone.common import cli_options
from pyozone.common.cli_options import CLIError, run_command

ARGS = argparse.Namespace()


def raising(error: BaseException):
    def func(_: argparse.Namespace) -> int:
        raise error

    return func


def test_a_known_error_is_one_line_and_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_command(raising(CLIError("no such key")), ARGS, "pyozone sh", (CLIError,)) == 1
    assert capsys.readouterr().err == "pyozone sh: error: no such key\n"


def test_ctrl_c_exits_130_and_a_reader_gone_exits_141_quietly(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run_command(raising(KeyboardInterrupt()), ARGS, "pyozone x", (CLIError,)) == 130
    redirected: list[int] = []  # stdout goes to /dev/null, so the interpreter's exit flush cannot fail
    monkeypatch.setattr(cli_options.sys, "stdout", io.TextIOWrapper(io.BytesIO()))
    monkeypatch.setattr(cli_options.sys.stdout, "fileno", lambda: 99, raising=False)
    monkeypatch.setattr(cli_options.os, "dup2", lambda src, dst: redirected.append(dst))
    assert run_command(raising(BrokenPipeError()), ARGS, "pyozone x", (CLIError,)) == 141
    assert redirected == [99] and capsys.readouterr().err == ""


def test_an_unexpected_error_is_not_swallowed() -> None:
    with pytest.raises(ValueError):
        run_command(raising(ValueError("bug")), ARGS, "pyozone x", (CLIError,))


def test_the_result_is_the_commands_exit_code() -> None:
    assert run_command(lambda _: 3, ARGS, "pyozone x", ()) == 3
    assert run_command(lambda _: None, ARGS, "pyozone x", ()) == 0
