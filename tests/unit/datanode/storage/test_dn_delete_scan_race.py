"""Issue 11 defect 6: a delete wins over a scan result for a replica that is going away.

The scanner found container damage just as an over-replication delete removed the replica; its UNHEALTHY
report reached SCM after (or instead of) the DELETED one and left a ghost replica there. The races are
made deterministic by running the delete inside the scanner's (or the delete's) critical moment.
"""

from __future__ import annotations

import pytest

from pyozone.datanode.storage import ContainerScanner, KeyValueContainer
from pyozone.hdds.messages import ContainerReplicaReport
from pyozone.hdds.states import ReplicaState
from tests.unit.datanode.storage.dn_helpers import Node
from tests.unit.datanode.storage.test_dn_scanner import closed_with_blocks, flip_byte


@pytest.fixture
def damaged(node: Node, container: KeyValueContainer) -> list[ContainerReplicaReport]:
    """Container 1, CLOSED with a corrupt chunk; the reports the ContainerSet sends from now on."""
    closed_with_blocks(container)
    flip_byte(container, 2, 100)
    reports: list[ContainerReplicaReport] = []
    node.containers.on_change(reports.append)
    return reports


def test_a_scan_result_after_the_delete_sends_no_unhealthy_report(
    node: Node, container: KeyValueContainer, damaged: list[ContainerReplicaReport],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    mark = container.mark_unhealthy

    def delete_first(reason: str) -> bool:  # the delete lands between the scanner's checks and its mark
        node.containers.delete(1, force=True)
        return mark(reason)

    monkeypatch.setattr(container, "mark_unhealthy", delete_first)
    [result] = ContainerScanner(node.containers).scan_all()
    assert not result.healthy
    assert [(r.container_id, r.state) for r in damaged] == [(1, ReplicaState.DELETED)]
    assert container.state is ReplicaState.DELETED and 1 not in node.containers


def test_a_scan_result_during_the_delete_does_not_turn_its_report_unhealthy(
    node: Node, container: KeyValueContainer, damaged: list[ContainerReplicaReport],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    delete = container.delete

    def then_scan_result(force: bool = False, only_if: ReplicaState | None = None) -> bool:
        deleted = delete(force, only_if)
        container.mark_unhealthy("scanner: late result")  # lands before ContainerSet reports
        return deleted

    monkeypatch.setattr(container, "delete", then_scan_result)
    node.containers.delete(1, force=True)
    assert [(r.container_id, r.state) for r in damaged] == [(1, ReplicaState.DELETED)]


def test_an_unhealthy_mark_before_the_delete_is_reported_before_it(
    node: Node, container: KeyValueContainer, damaged: list[ContainerReplicaReport]
) -> None:
    [result] = ContainerScanner(node.containers).scan_all()
    node.containers.delete(1, force=True)
    assert not result.healthy
    assert [r.state for r in damaged] == [ReplicaState.UNHEALTHY, ReplicaState.DELETED]
