"""The Jepsen-style tests, themselves tested (issues 30 and 31): a bug planted in a copy of the working tree
(a diff whose first line says what it breaks) must make a Jepsen test, run there in a subprocess, fail. A
plant that no longer applies fails with a message saying to re-make it against the code."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MUTANTS = ROOT / "tests" / "jepsen" / "mutants"
NOT_COPIED = shutil.ignore_patterns(
    ".git", ".venv", "__pycache__", ".pytest_cache", ".ruff_cache", ".mypy_cache", ".hypothesis"
)
RUN_S = 900  # one run of the default test, with a generous bound on a loaded machine


def assert_caught(plant: Path, test: str, selector: str) -> None:
    """Applies `plant` to a copy of the tree and runs the short Jepsen test `test` (`-k selector`, slow runs
    included) there:
    it must fail. Not under pytest's base temp dir: pytest removes older ones (another run's too) while
    this runs."""
    what = plant.read_text().splitlines()[0]
    work = Path(tempfile.mkdtemp(prefix=f"pyozone-jepsen-{plant.stem}-"))
    tree = work / "tree"
    shutil.copytree(ROOT, tree, ignore=NOT_COPIED)
    applied = subprocess.run(["git", "apply", str(plant)], cwd=tree, capture_output=True, text=True)
    if applied.returncode != 0:
        shutil.rmtree(work)
    assert applied.returncode == 0, (
        f"{plant.name} no longer applies to the code: re-make it (the same bug, against the code as it is "
        f"now) and store it again. It plants: {what}\n{applied.stderr}"
    )
    env = {**os.environ, "PYTHONPATH": str(tree)}
    env.pop("PYOZONE_JEPSEN_FAULTS", None)  # the short run, with its own faults
    run = subprocess.run(
        [
            sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", "-s", "-q",
            f"--basetemp={work / 'run'}", "-m", "not chaos", test, "-k", selector,
        ],
        cwd=tree, env=env, capture_output=True, text=True, timeout=RUN_S,
    )  # fmt: skip
    output = run.stdout + run.stderr
    lines = output.splitlines()
    print(f"{plant.stem}: {what}")
    print("\n".join(line for line in lines if line.startswith(("jepsen:", "nemesis:", "linear", "not lin"))))
    caught = "1 failed" in lines[-1] and "AssertionError" in output
    if caught:
        shutil.rmtree(work)
    assert caught, f"the Jepsen test missed {plant.name} ({what}); its run is in {work}:\n{output[-6000:]}"
