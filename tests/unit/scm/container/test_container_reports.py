"""Full and incremental container report processing (Ozone's AbstractContainerReportHandler)."""

from __future__ import annotations

import pytest

from pyozone.hdds.ids import RATIS_THREE, ReplicationConfig
from pyozone.hdds.messages import ContainerReplicaReport
from pyozone.hdds.states import LifeCycleEvent, LifeCycleState, ReplicaState, SCMCommandType
from pyozone.scm.container.report_handler import ContainerReportHandler
from pyozone.scm.events import SCMEvent
from tests.unit.scm.container.scm_fakes import Harness, make_harness

S, E, R = LifeCycleState, LifeCycleEvent, ReplicaState
EC_3_2 = ReplicationConfig.parse("EC/RS-3-2-1024k")
PATHS = {
    S.OPEN: [],
    S.CLOSING: [E.FINALIZE],
    S.QUASI_CLOSED: [E.FINALIZE, E.QUASI_CLOSE],
    S.CLOSED: [E.FINALIZE, E.CLOSE],
    S.DELETING: [E.FINALIZE, E.CLOSE, E.DELETE],
    S.DELETED: [E.FINALIZE, E.CLOSE, E.DELETE, E.CLEANUP],
}


class Cluster:
    """One container in a chosen state on a pipeline of registered datanodes, and a report handler."""

    def __init__(self, state: S = S.OPEN, seq: int = 0, config: ReplicationConfig = RATIS_THREE, **conf: str):
        self.h: Harness = make_harness(conf)
        self.dns = self.h.register(config.required_nodes)
        self.pipeline = self.h.pipelines.add(tuple(self.dns), config=config)
        self.cid = self.h.containers.allocate_container(self.pipeline, "om").container_id
        for event in PATHS[state]:
            self.h.containers.update_state(self.cid, event)
        self.h.containers.update_stats(self.cid, seq, 0, 0)
        self.handler = ContainerReportHandler(
            self.h.settings.container, self.h.events, self.h.nodes, self.h.containers
        )

    @property
    def info(self):
        return self.h.containers.get(self.cid)

    def icr(self, dn_index: int, state: R, seq: int = 0, cid: int | None = None, **fields) -> None:
        report = ContainerReplicaReport(
            self.cid if cid is None else cid, state, seq, self.dns[dn_index], **fields
        )
        self.handler.process_incremental_report(self.dns[dn_index], [report])

    def recorded(self) -> dict[str, R]:
        return {r.datanode: r.state for r in self.h.containers.replicas(self.cid)}

    def delete_commands(self) -> list[tuple[str, tuple[int, bool, int]]]:
        """(datanode, (container id, force, replica index)) for every deleteContainer command."""
        return [
            (dn, (c.container_id, c.force, c.replica_index))
            for dn in self.dns
            for c in self.h.commands(dn)
            if c.type is SCMCommandType.deleteContainerCommand
        ]


# ---------------------------------------------------------------------- stats
def test_open_container_stats_are_the_minimum_over_replicas() -> None:
    c = Cluster(S.OPEN)
    c.icr(0, R.OPEN, seq=5, used_bytes=100, key_count=10)
    assert (c.info.used_bytes, c.info.number_of_keys, c.info.sequence_id) == (100, 10, 5)
    c.icr(1, R.OPEN, seq=3, used_bytes=50, key_count=20)
    assert (c.info.used_bytes, c.info.number_of_keys, c.info.sequence_id) == (50, 10, 5)


def test_closed_container_stats_are_the_maximum_over_replicas() -> None:
    c = Cluster(S.CLOSED, seq=5)
    c.icr(0, R.CLOSED, seq=5, used_bytes=100, key_count=10)
    c.icr(1, R.CLOSED, seq=5, used_bytes=50, key_count=20)
    assert (c.info.used_bytes, c.info.number_of_keys) == (100, 20)


def test_a_reported_replica_marks_the_container_created_on_a_datanode_at_once_in_the_store() -> None:
    """A creation's incremental report carries no key and no sequence id (those come with the full report,
    hdds.container.report.interval): that a replica was reported is what tells a container whose every
    replica is lost (MISSING) from one never created (EMPTY, closing.never_written), even after a restart."""
    c = Cluster(S.OPEN)
    assert not c.info.replicas_reported
    c.icr(0, R.OPEN)
    assert c.info.replicas_reported and (c.info.number_of_keys, c.info.sequence_id) == (0, 0)
    assert c.h.new_container_manager().get(c.cid).replicas_reported


@pytest.mark.parametrize("state", [R.UNHEALTHY, R.INVALID])
def test_unhealthy_replicas_do_not_count_in_stats_but_are_recorded(state: R) -> None:
    c = Cluster(S.CLOSED, seq=5)
    c.icr(0, state, seq=99, used_bytes=999, key_count=99)
    assert (c.info.sequence_id, c.info.used_bytes) == (5, 0)
    assert c.recorded() == {c.dns[0]: state}


def test_ec_stats_use_only_index_one_and_parity() -> None:
    c = Cluster(S.CLOSED, seq=1, config=EC_3_2)
    c.icr(1, R.CLOSED, seq=1, used_bytes=500, key_count=50, replica_index=2)  # data index: ignored
    assert c.info.used_bytes == 0
    c.icr(0, R.CLOSED, seq=1, used_bytes=100, key_count=10, replica_index=1)
    c.icr(3, R.CLOSED, seq=1, used_bytes=120, key_count=12, replica_index=4)
    assert (c.info.used_bytes, c.info.number_of_keys) == (120, 12)


# ---------------------------------------------------------------------- state changes
def test_open_container_finalizes_when_a_replica_is_not_open() -> None:
    c = Cluster(S.OPEN)
    c.icr(0, R.OPEN)
    assert c.info.state is S.OPEN
    c.icr(1, R.CLOSING)
    assert c.info.state is S.CLOSING
    assert c.h.pipelines.containers(c.pipeline.id) == frozenset()


def test_closing_with_quasi_closed_replica_becomes_quasi_closed() -> None:
    c = Cluster(S.CLOSING)
    c.icr(0, R.QUASI_CLOSED, seq=4)
    assert c.info.state is S.QUASI_CLOSED and c.recorded() == {c.dns[0]: R.QUASI_CLOSED}


@pytest.mark.parametrize(("container_seq", "replica_seq"), [(7, 7), (7, 9), (0, 3)])
def test_closing_with_closed_replica_of_matching_or_higher_bcsid_closes(
    container_seq: int, replica_seq: int
) -> None:
    c = Cluster(S.CLOSING, seq=container_seq)
    c.icr(0, R.CLOSED, seq=replica_seq)
    assert c.info.state is S.CLOSED and c.info.sequence_id == replica_seq
    assert c.recorded() == {c.dns[0]: R.CLOSED}


def test_closing_with_closed_replica_of_lower_bcsid_is_not_recorded() -> None:
    c = Cluster(S.CLOSING, seq=7)
    c.icr(0, R.CLOSED, seq=6)
    assert c.info.state is S.CLOSING and c.recorded() == {}


def test_quasi_closed_with_closed_replica_force_closes() -> None:
    c = Cluster(S.QUASI_CLOSED, seq=7)
    c.icr(0, R.CLOSED, seq=5)
    assert c.info.state is S.QUASI_CLOSED and c.recorded() == {}
    c.icr(1, R.CLOSED, seq=7)
    assert c.info.state is S.CLOSED and c.recorded() == {c.dns[1]: R.CLOSED}


def test_closed_container_ignores_replica_states() -> None:
    c = Cluster(S.CLOSED, seq=7)
    for i, state in enumerate([R.OPEN, R.QUASI_CLOSED, R.UNHEALTHY]):
        c.icr(i, state, seq=7)
    assert c.info.state is S.CLOSED and len(c.recorded()) == 3


def test_ec_only_index_one_or_parity_closes_a_closing_container() -> None:
    c = Cluster(S.CLOSING, seq=3, config=EC_3_2)
    c.icr(1, R.CLOSED, seq=3, replica_index=2)
    assert c.info.state is S.CLOSING and c.recorded() == {c.dns[1]: R.CLOSED}
    c.icr(4, R.CLOSED, seq=3, replica_index=5)
    assert c.info.state is S.CLOSED


@pytest.mark.parametrize("index", [0, 6])
def test_ec_replica_with_an_index_out_of_range_is_ignored(index: int) -> None:
    c = Cluster(S.OPEN, config=EC_3_2)
    c.icr(0, R.CLOSED, seq=3, replica_index=index, used_bytes=10)
    assert c.info.state is S.OPEN and c.info.used_bytes == 0 and c.recorded() == {}
    assert c.h.nodes.containers(c.dns[0]) == {c.cid}  # the node map is updated before validation


# ---------------------------------------------------------------------- deleting / deleted
def test_deleted_container_empty_replica_gets_a_plain_delete() -> None:
    c = Cluster(S.DELETED, seq=5)
    c.icr(0, R.CLOSED, seq=5, is_empty=True)
    assert c.delete_commands() == [(c.dns[0], (c.cid, False, 0))]
    assert c.info.state is S.DELETED and c.recorded() == {c.dns[0]: R.CLOSED}


@pytest.mark.parametrize("state", [S.DELETING, S.DELETED])
@pytest.mark.parametrize("replica_state", [R.CLOSED, R.QUASI_CLOSED])
@pytest.mark.parametrize("replica_seq", [3, 5, 8])
def test_ratis_closed_or_quasi_closed_non_empty_replica_is_force_deleted(
    state: S, replica_state: R, replica_seq: int
):
    """Stats run first and lift the container BCSID to the replica's, so even a higher BCSID ends up <=."""
    c = Cluster(state, seq=5)
    c.icr(0, replica_state, seq=replica_seq, key_count=3)
    assert c.delete_commands() == [(c.dns[0], (c.cid, True, 0))]
    assert c.info.state is state


@pytest.mark.parametrize("state", [S.DELETING, S.DELETED])
@pytest.mark.parametrize("replica_state", [R.OPEN, R.CLOSING, R.UNHEALTHY])
def test_ratis_non_empty_live_replica_resurrects_to_quasi_closed(state: S, replica_state: R) -> None:
    c = Cluster(state, seq=5)
    c.icr(0, replica_state, seq=2, key_count=3)
    assert c.info.state is S.QUASI_CLOSED
    assert c.delete_commands() == [] and c.recorded() == {c.dns[0]: replica_state}


@pytest.mark.parametrize("replica_state", [R.OPEN, R.CLOSING, R.INVALID])
def test_deleting_container_with_empty_or_invalid_replica_is_left_alone(replica_state: R) -> None:
    c = Cluster(S.DELETING, seq=5)
    c.icr(0, replica_state, seq=2, is_empty=replica_state is not R.INVALID, key_count=1)
    assert c.info.state is S.DELETING and c.delete_commands() == []


@pytest.mark.parametrize("state", [S.DELETING, S.DELETED])
def test_ec_non_empty_replica_of_deleting_or_deleted_container_is_force_deleted(state: S) -> None:
    c = Cluster(state, seq=5, config=EC_3_2)
    c.icr(2, R.OPEN, seq=9, key_count=4, replica_index=3)
    assert c.delete_commands() == [(c.dns[2], (c.cid, True, 3))]
    assert c.info.state is state


def test_replica_reported_deleted_is_removed() -> None:
    c = Cluster(S.CLOSED, seq=5)
    c.icr(0, R.CLOSED, seq=5)
    c.icr(0, R.DELETED, seq=5)
    assert c.recorded() == {} and c.h.nodes.containers(c.dns[0]) == frozenset()


# ---------------------------------------------------------------------- full reports
def fcr(c: Cluster, dn_index: int, reports: list[ContainerReplicaReport], registration: bool = False) -> None:
    c.handler.process_full_report(c.dns[dn_index], reports, from_registration=registration)


def test_full_report_adds_new_and_removes_absent_replicas() -> None:
    c = Cluster(S.CLOSED, seq=5)
    other = c.h.containers.allocate_container(c.pipeline, "om").container_id
    fcr(c, 0, [ContainerReplicaReport(c.cid, R.CLOSED, 5), ContainerReplicaReport(other, R.OPEN)])
    assert c.h.nodes.containers(c.dns[0]) == {c.cid, other}
    assert c.recorded() == {c.dns[0]: R.CLOSED}
    fcr(c, 0, [ContainerReplicaReport(other, R.OPEN)])
    assert c.h.nodes.containers(c.dns[0]) == {other}
    assert c.recorded() == {}
    assert [r.datanode for r in c.h.containers.replicas(other)] == [c.dns[0]]


def test_unknown_container_in_full_report_is_only_logged_by_default(caplog: pytest.LogCaptureFixture) -> None:
    c = Cluster(S.CLOSED, seq=5)
    fcr(c, 0, [ContainerReplicaReport(404, R.CLOSED, 1)])
    assert c.delete_commands() == [] and "CONTAINER_NOT_FOUND" in caplog.text
    assert c.h.nodes.containers(c.dns[0]) == {404}


def test_unknown_container_in_full_report_is_force_deleted_when_configured() -> None:
    c = Cluster(S.CLOSED, seq=5, **{"hdds.scm.unknown-container.action": "DELETE"})
    fcr(c, 0, [ContainerReplicaReport(404, R.CLOSED, 1, replica_index=2)])
    assert c.delete_commands() == [(c.dns[0], (404, True, 2))]


def test_incremental_report_never_deletes_unknown_containers() -> None:
    c = Cluster(S.CLOSED, seq=5, **{"hdds.scm.unknown-container.action": "DELETE"})
    c.icr(0, R.CLOSED, seq=1, cid=404)
    assert c.delete_commands() == []
    assert c.h.nodes.containers(c.dns[0]) == {404}


def test_registration_report_fires_container_registration_report() -> None:
    c = Cluster(S.CLOSED, seq=5)
    fcr(c, 1, [ContainerReplicaReport(c.cid, R.CLOSED, 5), ContainerReplicaReport(404, R.CLOSED, 1)], True)
    fcr(c, 2, [ContainerReplicaReport(c.cid, R.CLOSED, 5)])
    assert c.h.fired_of(SCMEvent.CONTAINER_REGISTRATION_REPORT) == [(c.dns[1], [c.cid, 404])]


def test_reports_from_unregistered_datanodes_are_ignored() -> None:
    c = Cluster(S.OPEN)
    report = ContainerReplicaReport(c.cid, R.CLOSING)
    c.handler.process_full_report("stranger", [report])
    c.handler.process_incremental_report("stranger", [report])
    assert c.info.state is S.OPEN and c.recorded() == {}


def test_replica_fields_are_recorded() -> None:
    c = Cluster(S.OPEN)
    c.icr(0, R.OPEN, seq=4, key_count=3, used_bytes=30, is_empty=False, data_checksum=77)
    (replica,) = c.h.containers.replicas(c.cid)
    assert (replica.datanode, replica.origin_node_id, replica.sequence_id) == (c.dns[0], c.dns[0], 4)
    assert (replica.key_count, replica.bytes_used, replica.data_checksum) == (3, 30, 77)
