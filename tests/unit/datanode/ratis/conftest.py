"""The fixtures of the ContainerStateMachine tests (csm_helpers.py: the harness)."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.unit.datanode.ratis.csm_helpers import UUIDS, Member, make_member


@pytest.fixture
def executor() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(4, thread_name_prefix="csm-test") as pool:
        yield pool


@pytest.fixture
def members(tmp_path: Path, executor: ThreadPoolExecutor) -> Iterator[list[Member]]:
    made = [make_member(tmp_path / f"m{n}", uuid, executor) for n, uuid in enumerate(UUIDS)]
    yield made
    for member in made:
        member.node.close()
