"""Running the CLI in tests and photographing directory trees (bad input must leave them unchanged)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from pyozone.cli.main import main


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def last_line(self) -> str:
        return self.out.rstrip("\n").rsplit("\n", 1)[-1]


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> Result:
    """`pyozone ARGS...` in-process: its exit code, stdout and stderr."""
    capsys.readouterr()
    code = main(list(args))
    captured = capsys.readouterr()
    return Result(code, captured.out, captured.err)


def tree(root: Path) -> dict[str, bytes | None]:
    """Every path under a root with its bytes (None for a directory): equal trees mean nothing changed."""
    if not root.exists():
        return {}
    return {str(p.relative_to(root)): None if p.is_dir() else p.read_bytes() for p in sorted(root.rglob("*"))}
