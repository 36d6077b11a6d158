"""README.md promises: the two top commands exist, every command in its table parses, its examples hold."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import pyozone
from pyozone.cli.main import COMMAND_MODULES, main

Run = Callable[..., Any]

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text()


def top_commands() -> list[str]:
    """The `bash ...` lines of the README's first bash block."""
    block = re.search(r"```bash\n(.*?)```", README, re.DOTALL)
    assert block is not None, "README has no ```bash block"
    return [line.strip() for line in block.group(1).splitlines() if line.strip().startswith("bash ")]


def table_commands() -> list[tuple[str, ...]]:
    """From each `| \\`pyozone ...\\` |` row: the command words before the first option or placeholder."""
    commands = []
    for cell in re.findall(r"^\|\s*`pyozone ([^`]*)`", README, re.MULTILINE):
        words = []
        for word in cell.split():
            if not re.fullmatch(r"[a-z][a-z0-9-]*", word):
                break
            words.append(word)
        commands.append(tuple(words))
    return commands


def test_the_two_top_commands_are_scripts_that_exist() -> None:
    commands = top_commands()
    assert commands == ["bash scripts/start.sh", "bash scripts/test.sh"]
    for command in commands:
        script = REPO / command.split()[1]
        assert script.is_file(), script
        assert script.read_text().startswith("#!"), script


def test_the_table_names_every_command() -> None:
    """Every top-level command the parser offers is in the README's table, and nothing else is."""
    assert {words[0] for words in table_commands()} == set(COMMAND_MODULES)


@pytest.mark.parametrize("words", table_commands(), ids=" ".join)
def test_each_command_in_the_table_is_accepted(
    words: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    for depth in range(1, len(words) + 1):  # `plan --help` and `plan pipelines --help`
        with pytest.raises(SystemExit) as exited:
            main([*words[:depth], "--help"])
        assert exited.value.code == 0
        out = capsys.readouterr().out
        assert out.startswith(f"usage: pyozone {' '.join(words[:depth])}"), out


def test_table_options_are_accepted(capsys: pytest.CaptureFixture[str]) -> None:
    """The options the table shows for each command appear in that command's --help."""
    shown = {
        ("getconf",): ["-confKey", "--all", "--json"],
        ("scm",): ["--init", "--clusterid"],
        ("sim",): ["--data-dir", "--kill", "--restart", "--partition", "--heal", "--containers", "--serve"],
        ("plan", "pipelines"): ["--inventory"],
        ("debug", "ldb"): ["--db"],
        ("debug", "ldb", "scan"): ["--column-family"],
    }
    for words, options in shown.items():
        with pytest.raises(SystemExit):
            main([*words, "--help"])
        out = capsys.readouterr().out
        for option in options:
            assert option in out, (words, option)


# ------------------------------------------------------------ the examples
def test_getconf_example(cli: Run) -> None:
    assert cli("getconf", "-confKey", "ozone.scm.stale.node.interval").out == "5m\n"


def test_planner_example_numbers(cli: Run) -> None:
    args = (
        "plan",
        "pipelines",
        "--inventory",
        str(REPO / "examples" / "seed000-inventory.csv"),
        "-D",
        "ozone.scm.datanode.pipeline.limit=0",
        "-D",
        "ozone.scm.ratis.pipeline.limit=30",
    )
    assert "it prints 24 with" in README and "and 20 with Ozone's default" in README
    assert cli(*args, "-D", "ozone.scm.pipeline.creation.auto.factor.one=false").out.splitlines()[-1] == "24"
    assert cli(*args).out.splitlines()[-1] == "20"


SIM_EXAMPLE = ["--datanodes", "5", "--kill", "2@1", "--restart", "2@12", "--minutes", "14"]
SIM_EXAMPLE += ["-D", "ozone.scm.pipeline.creation.interval=30s"]


def sim_example(cli: Run) -> dict[float, dict[str, Any]]:
    assert " ".join(SIM_EXAMPLE[:8]) in README.replace("\\\n    ", "")
    result = cli("sim", "--json", *SIM_EXAMPLE)
    assert result.code == 0
    return {row["minute"]: row for row in map(json.loads, result.out.splitlines())}


def test_sim_example_stale_at_6_dead_at_11(cli: Run) -> None:
    assert "STALE at 6, DEAD at 11" in README
    rows = sim_example(cli)
    assert min(m for m, r in rows.items() if r["stale"]) == 6.0
    assert min(m for m, r in rows.items() if r["dead"]) == 11.0
    assert rows[14.0]["healthy"] == 5


def test_sim_example_healthy_by_13(cli: Run) -> None:
    """A node restarted at 12 re-registers; its first heartbeat 30 s later starts its way back."""
    assert "HEALTHY by 13" in README
    rows = sim_example(cli)
    assert (rows[13.0]["healthy"], rows[13.0]["dead"]) == (5, 0)


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"pyozone {pyozone.__version__}"
