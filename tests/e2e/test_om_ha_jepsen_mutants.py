"""The Jepsen test of OM HA, itself tested (issue 30): each bug planted in tests/jepsen/mutants/ (a diff whose
first line says what it breaks) is applied to a copy of the working tree, and the default Jepsen test
(tests/e2e/test_om_ha_jepsen.py), run there in a subprocess, must fail (tests/e2e/jepsen_mutants.py). A
plant that no longer applies fails here with a message saying to re-make it against the code. `-m slow`:
about a minute a plant."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.jepsen_mutants import MUTANTS, RUN_S, assert_caught
from tests.e2e.netns_hosts import available

WHY_NOT = available()
pytestmark = pytest.mark.skipif(WHY_NOT is not None, reason=f"network namespaces: {WHY_NOT}")


@pytest.mark.slow
@pytest.mark.timeout(RUN_S + 120)
@pytest.mark.parametrize("plant", sorted(MUTANTS.glob("*.diff")), ids=lambda p: p.stem)
def test_the_jepsen_test_fails_with_a_planted_bug(plant: Path) -> None:
    assert_caught(plant, "tests/e2e/test_om_ha_jepsen.py", "leader_kills")
