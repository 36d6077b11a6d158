"""The Jepsen test of SCM HA, itself tested (issue 31): each bug planted in tests/jepsen/mutants/scm/ (a diff
whose first line says what it breaks) is applied to a copy of the working tree, and the default Jepsen test
(tests/e2e/test_scm_ha_jepsen.py), run there in a subprocess, must fail (tests/e2e/jepsen_mutants.py).
`-m slow`: about a minute and a half a plant."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.jepsen_mutants import MUTANTS, RUN_S, assert_caught
from tests.e2e.netns_hosts import available

WHY_NOT = available()
pytestmark = pytest.mark.skipif(WHY_NOT is not None, reason=f"network namespaces: {WHY_NOT}")


@pytest.mark.slow
@pytest.mark.timeout(RUN_S + 120)
@pytest.mark.parametrize("plant", sorted((MUTANTS / "scm").glob("*.diff")), ids=lambda p: p.stem)
def test_the_scm_jepsen_test_fails_with_a_planted_bug(plant: Path) -> None:
    assert_caught(plant, "tests/e2e/test_scm_ha_jepsen.py", "leader_kills")
