"""`pyozone COMMAND ...` builds only that command's parser: a process imports its own command's module."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pyozone.cli.main import COMMAND_MODULES, build_parser, command_of

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["sh", "volume", "list"], "sh"),
        (["-D", "a=b", "--conf", "scm", "om", "--help"], "om"),  # an option's value is not the command
        (["-Da=b", "--conf=dir", "datanode"], "datanode"),
        (["--version"], None),
        (["--help", "sh"], None),
        (["nosuch", "sh"], None),
        ([], None),
    ],
)
def test_the_command_word_is_found_past_the_common_options(argv: list[str], command: str | None) -> None:
    assert command_of(argv) == command


def commands(parser) -> list[str]:
    (sub,) = [a for a in parser._actions if a.dest == "command"]
    return list(sub.choices)


def test_one_command_or_every_command_is_registered() -> None:
    assert commands(build_parser("sh")) == ["sh"]
    assert commands(build_parser(None)) == list(COMMAND_MODULES)


def test_a_command_imports_no_other_commands_module() -> None:
    """Through main(), as a process starts (reread: building the parser alone left main's wiring untested)."""
    probe = (
        "import contextlib, io, json, sys; from pyozone.cli.main import main\n"
        "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['sh', '--help'])\n"
        "print(json.dumps([m for m in sys.modules if m.startswith('pyozone.cli.') and m.count('.') == 2]))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    )
    loaded = {m.rsplit(".", 1)[1] for m in json.loads(result.stdout)}
    assert "sh" in loaded and not loaded & (set(COMMAND_MODULES) - {"sh"}), loaded
