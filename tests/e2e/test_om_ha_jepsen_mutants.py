"""The Jepsen test of OM HA, itself tested (issue 30): each bug planted in tests/jepsen/mutants/ (a diff whose
first line says what it breaks) is applied to a copy of the working tree, and the default Jepsen test
(tests/e2e/test_om_ha_jepsen.py), run there in a subprocess, must fail. A plant that no longer applies fails
here with a message saying to re-make it against the code. `-m slow`: about a minute a plant."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.e2e.netns_hosts import available

WHY_NOT = available()
pytestmark = pytest.mark.skipif(WHY_NOT is not None, reason=f"network namespaces: {WHY_NOT}")

ROOT = Path(__file__).resolve().parents[2]
MUTANTS = ROOT / "tests" / "jepsen" / "mutants"
NOT_COPIED = shutil.ignore_patterns(
    ".git", ".venv", "__pycache__", ".pytest_cache", ".ruff_cache", ".mypy_cache", ".hypothesis"
)
RUN_S = 900  # one run of the default test, with a generous bound on a loaded machine


@pytest.mark.slow
@pytest.mark.timeout(RUN_S + 120)
@pytest.mark.parametrize("plant", sorted(MUTANTS.glob("*.diff")), ids=lambda p: p.stem)
def test_the_jepsen_test_fails_with_a_planted_bug(plant: Path) -> None:
    """Not under pytest's base temp dir: pytest removes older ones (another run's too) while this runs."""
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
    env.pop("PYOZONE_JEPSEN_FAULTS", None)  # the default test, as the default suite runs it
    run = subprocess.run(
        [
            sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", "-s", "-q",
            f"--basetemp={work / 'run'}", "tests/e2e/test_om_ha_jepsen.py", "-k", "leader_kills",
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
