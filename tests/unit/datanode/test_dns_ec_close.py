"""SCM's closeContainer for EC replicas (issue 14): no pipeline log orders them, so the command closes them
at once (OPEN/CLOSING -> CLOSED, each change reported); a RECOVERING replica is its coordinator's to close."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from pyozone.datanode.commands.close_container import CloseContainerHandler
from pyozone.datanode.commands.context import CommandContext
from pyozone.datanode.storage import KeyValueContainer
from pyozone.hdds.commands import CloseContainerCommand
from pyozone.hdds.states import ReplicaState
from tests.unit.datanode.dnd_helpers import async_test
from tests.unit.datanode.dns_helpers import Node

EC_PIPELINE = "ec-pipeline-1"


def _handler(node: Node, executor: ThreadPoolExecutor) -> CloseContainerHandler:
    none: Any = None  # what the close handler does not use
    groups: Any = {}  # no pipeline log here: EC pipelines have none
    return CloseContainerHandler(
        CommandContext(node.containers, none, none, none, executor, lambda state: None, groups)
    )


def _ec_replica(node: Node, state: ReplicaState = ReplicaState.OPEN) -> KeyValueContainer:
    pipeline = EC_PIPELINE if state is ReplicaState.OPEN else ""
    return node.containers.create(3, node.uuid, pipeline, replica_index=2, state=state)


def _close(force: bool) -> CloseContainerCommand:
    return CloseContainerCommand(container_id=3, pipeline_id=EC_PIPELINE, force=force)


@pytest.mark.parametrize("force", [True, False])
@async_test
async def test_scms_close_closes_an_open_ec_replica_at_once(
    node_a: Node, executor: ThreadPoolExecutor, force: bool
) -> None:
    container = _ec_replica(node_a)
    await _handler(node_a, executor).handle(_close(force))
    assert container.state is ReplicaState.CLOSED
    assert [(r.state, r.replica_index) for r in node_a.reports] == [
        (ReplicaState.OPEN, 2), (ReplicaState.CLOSING, 2), (ReplicaState.CLOSED, 2),
    ]  # fmt: skip


@async_test
async def test_scms_close_leaves_recovering_and_unhealthy_ec_replicas_alone(
    node_a: Node, executor: ThreadPoolExecutor
) -> None:
    recovering = _ec_replica(node_a, ReplicaState.RECOVERING)
    handler = _handler(node_a, executor)
    await handler.handle(_close(True))
    assert recovering.state is ReplicaState.RECOVERING and node_a.reports == []
    recovering.mark_unhealthy("test")
    await handler.handle(_close(True))
    assert recovering.state is ReplicaState.UNHEALTHY
