"""Full (FCR) and incremental (ICR) container report processing (Ozone's AbstractContainerReportHandler).

Each reported replica first refreshes the container's stats, then may move the container's state,
then is stored (or removed, if the datanode reports it DELETED). A full report is the datanode's
whole truth: containers SCM thought it held but it no longer reports lose that replica.

Every SCM of an HA service processes every report; only the leader moves a container's state, marks
it reported or sends a delete (a follower learns those from the leader's records), while replicas and
stats update everywhere. A follower may hear of a replica before it applied the container's record (it
lags the leader, the datanode does not): it holds the report and records it when the record arrives, or
its replica map would lack that copy until the datanode's next full report, and, leading by then, it would
replicate a container a lone SCM counts as whole (issue 31's replication storm; Ozone's follower drops such
a report with a warning).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from enum import Enum
from typing import TYPE_CHECKING

from pyozone.hdds.commands import DeleteContainerCommand
from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.exceptions import SCMException
from pyozone.hdds.ids import ContainerID, DatanodeID
from pyozone.hdds.messages import ContainerReplicaReport
from pyozone.hdds.states import LifeCycleEvent, LifeCycleState, ReplicaState, ReplicationType
from pyozone.scm.events import EventQueue, SCMEvent

if TYPE_CHECKING:
    from pyozone.scm.container.manager import ContainerManager
    from pyozone.scm.node.node_manager import NodeManager
    from pyozone.scm.settings import ContainerSettings

log = logging.getLogger(__name__)

_UNHEALTHY = (ReplicaState.UNHEALTHY, ReplicaState.INVALID, ReplicaState.DELETED)


class UnknownContainerAction(Enum):
    WARN = "WARN"
    DELETE = "DELETE"

    @classmethod
    def parse(cls, text: str) -> UnknownContainerAction:
        """As Ozone: exactly "DELETE" deletes, anything else only warns."""
        return cls.DELETE if text == "DELETE" else cls.WARN


class ContainerReportHandler:
    def __init__(
        self,
        settings: ContainerSettings,
        events: EventQueue,
        node_manager: NodeManager,
        container_manager: ContainerManager,
    ) -> None:
        self.events = events
        self._nodes = node_manager
        self._containers = container_manager
        self.unknown_container_action = settings.unknown_container_action
        # a follower's replicas reported before their container's record arrived: id -> datanode -> report
        self._early: dict[ContainerID, dict[DatanodeID, ContainerReplicaReport]] = {}
        container_manager.add_arrival_listener(self._record_arrived)

    # ------------------------------------------------------------------ entry points
    def process_full_report(
        self, dn: DatanodeID, reports: Sequence[ContainerReplicaReport], from_registration: bool = False
    ) -> None:
        if self._nodes.get(dn) is None:
            log.warning("Container report from unregistered datanode %s ignored", dn)
            return
        known = self._nodes.containers(dn)
        # what the node's container set or the replica map hold for it: a stale ICR may have put a replica
        # back into either after the datanode removed it (Ozone's missing-replica processing)
        expected = set(known | self._containers.containers_on(dn))
        for report in reports:
            expected.discard(report.container_id)
            if report.container_id not in known:
                self._nodes.add_container(dn, report.container_id)
            info = self._containers.find(report.container_id)
            if info is None:
                self._unknown_container(dn, report)
            elif _valid(info, report):
                self._process_safely(dn, info, report)
        for container_id in sorted(expected):
            self._nodes.remove_container(dn, container_id)
            if self._containers.find(container_id) is not None:
                self._containers.remove_replica(container_id, dn)
        reported = {r.container_id for r in reports}
        for container_id in [c for c, held in self._early.items() if dn in held and c not in reported]:
            self._forget_early(container_id, dn)
        if from_registration:
            self.events.fire(SCMEvent.CONTAINER_REGISTRATION_REPORT, (dn, [r.container_id for r in reports]))

    def process_incremental_report(self, dn: DatanodeID, reports: Sequence[ContainerReplicaReport]) -> None:
        """ICRs update the node's container set first and never delete unknown containers (only log)."""
        if self._nodes.get(dn) is None:
            log.warning("Incremental container report from unregistered datanode %s ignored", dn)
            return
        for report in reports:
            if report.state is ReplicaState.DELETED:
                self._nodes.remove_container(dn, report.container_id)
            else:
                self._nodes.add_container(dn, report.container_id)
            info = self._containers.find(report.container_id)
            if info is None:
                log.warning("Container %d reported by %s in an ICR not found", report.container_id, dn)
                self._hold_early(dn, report)
            elif _valid(info, report):
                self._process_safely(dn, info, report)

    def _unknown_container(self, dn: DatanodeID, report: ContainerReplicaReport) -> None:
        """A follower only logs: it may not have applied the container's record yet, and only the
        leader sends commands."""
        if self.unknown_container_action is UnknownContainerAction.DELETE and self._nodes.context.is_leader():
            self._delete_replica(dn, report, force=True, reason="CONTAINER_NOT_FOUND")
        else:
            log.error("CONTAINER_NOT_FOUND: container %d reported by %s", report.container_id, dn)
            self._hold_early(dn, report)

    # ------------------------------------------------------------------ a follower's early reports
    def _hold_early(self, dn: DatanodeID, report: ContainerReplicaReport) -> None:
        """A follower keeps the newest report of each datanode's replica until the record arrives."""
        if self._nodes.context.is_leader():
            return
        if report.state is ReplicaState.DELETED:
            self._forget_early(report.container_id, dn)
        else:
            self._early.setdefault(report.container_id, {})[dn] = report

    def _forget_early(self, container_id: ContainerID, dn: DatanodeID) -> None:
        held = self._early.get(container_id)
        if held is not None:
            held.pop(dn, None)
            if not held:
                del self._early[container_id]

    def _record_arrived(self, container_id: ContainerID) -> None:
        """The record of a container whose replicas were reported early: they are processed now, each
        from a datanode still registered and still holding it (as far as SCM heard since)."""
        held = self._early.pop(container_id, {})
        info = self._containers.find(container_id)
        for dn, report in held.items():
            if info is not None and container_id in self._nodes.containers(dn) and _valid(info, report):
                self._process_safely(dn, info, report)

    def drop_early_replicas(self) -> int:
        """A new leader has applied every committed record: what is still held names containers the
        service never created (the unknown-container action judges their next report). Returns how many."""
        dropped = sum(len(held) for held in self._early.values())
        self._early.clear()
        return dropped

    def _process_safely(self, dn: DatanodeID, info: ContainerInfo, report: ContainerReplicaReport) -> None:
        """A replica that cannot be processed is logged and skipped; the rest of the report still counts."""
        try:
            if self._nodes.context.is_leader():
                self._containers.replica_reported(info.container_id)
            self._update_stats(dn, info, report)
            if not self._update_state(dn, report):
                self._store_replica(dn, report)
        except SCMException as e:
            log.error("Failed to process replica of container %d from %s: %s", report.container_id, dn, e)

    # ------------------------------------------------------------------ stats
    def _update_stats(self, dn: DatanodeID, info: ContainerInfo, report: ContainerReplicaReport) -> None:
        """BCSID is the max seen; bytes/keys the min over replicas while OPEN (growing), else the max."""
        if report.state in _UNHEALTHY:
            return
        sequence_id = max(info.sequence_id, report.sequence_id)
        used, keys = info.used_bytes, info.number_of_keys
        config = info.replication_config
        is_ec = config.type is ReplicationType.EC
        if not is_ec or report.replica_index == 1 or report.replica_index > config.ec_data:
            pick = min if info.state is LifeCycleState.OPEN else max
            used, keys = report.used_bytes, report.key_count
            for other in self._containers.replicas(info.container_id):
                if other.datanode == dn or (is_ec and 1 < other.replica_index <= config.ec_data):
                    continue
                used, keys = pick(used, other.bytes_used), pick(keys, other.key_count)
        self._containers.update_stats(info.container_id, sequence_id, used, keys)

    # ------------------------------------------------------------------ state
    def _update_state(self, dn: DatanodeID, report: ContainerReplicaReport) -> bool:
        """Moves the container as the replica implies; True when the replica must not be recorded (on a
        follower too, so that its replica map is the leader's)."""
        info = self._containers.get(report.container_id)
        cid, state, replica = info.container_id, info.state, report.state
        if state is LifeCycleState.OPEN:
            if replica is not ReplicaState.OPEN:
                self._transition(cid, LifeCycleEvent.FINALIZE)
        elif state is LifeCycleState.CLOSING:
            if replica is ReplicaState.QUASI_CLOSED:
                self._transition(cid, LifeCycleEvent.QUASI_CLOSE)
            elif replica is ReplicaState.CLOSED and _counts_for_close(info, report):
                if _bcsid_mismatch(info, report, dn):
                    return True
                self._transition(cid, LifeCycleEvent.CLOSE)
        elif state is LifeCycleState.QUASI_CLOSED:
            if replica is ReplicaState.CLOSED:
                if _bcsid_mismatch(info, report, dn):
                    return True
                self._transition(cid, LifeCycleEvent.FORCE_CLOSE)
        elif state in (LifeCycleState.DELETING, LifeCycleState.DELETED) and self._nodes.context.is_leader():
            self._deleting_or_deleted(dn, info, report)
        return False

    def reconcile(self) -> int:
        """A new leader (`ScmReplication.step_up`) replays the state rules over the replicas it recorded while
        it followed, whose reports moved no container then (a CLOSING container whose replicas all reported
        CLOSED would wait for the next full report, an hour away by default). Returns how many
        containers moved. (It runs at once, not SCAN_STEP containers a tick as the Replication Manager's
        scan.)"""
        moved = 0
        unsettled = (LifeCycleState.OPEN, LifeCycleState.CLOSING, LifeCycleState.QUASI_CLOSED)
        for state in unsettled:
            for container_id in list(self._containers.container_ids(state)):
                for replica in self._containers.replicas(container_id):
                    if self._containers.get(container_id).state not in unsettled:
                        break
                    try:
                        self._update_state(replica.datanode, _as_report(replica))
                    except SCMException as e:
                        log.error("Failed to reconcile container %d with %s: %s", container_id, replica, e)
                if self._containers.get(container_id).state is not state:
                    moved += 1
        return moved

    def _transition(self, container_id: ContainerID, event: LifeCycleEvent) -> None:
        """The leader moves the container (as AbstractContainerReportHandler); a follower gets the
        new state from the leader's record."""
        if self._nodes.context.is_leader():
            self._containers.update_state(container_id, event)

    def _deleting_or_deleted(
        self, dn: DatanodeID, info: ContainerInfo, report: ContainerReplicaReport
    ) -> None:
        """Deletes what should be gone; a non-empty Ratis replica not provably stale revives the container."""
        if info.state is LifeCycleState.DELETED and report.is_empty:
            self._delete_replica(dn, report, force=False, reason="DELETED")
            return
        if info.replication_config.type is ReplicationType.EC:
            if not report.is_empty:
                self._delete_replica(dn, report, force=True, reason=info.state.name)
            return
        closed_like = report.state in (ReplicaState.CLOSED, ReplicaState.QUASI_CLOSED)
        if closed_like and report.sequence_id <= info.sequence_id:
            self._delete_replica(dn, report, force=True, reason=info.state.name)
        elif not report.is_empty and report.state not in (ReplicaState.INVALID, ReplicaState.DELETED):
            target = (
                LifeCycleState.CLOSED if report.state is ReplicaState.CLOSED else LifeCycleState.QUASI_CLOSED
            )
            log.info(
                "Container %d %s has a non-empty %s replica on %s",
                info.container_id,
                info.state.name,
                report.state.name,
                dn,
            )
            self._containers.transition_deleting_or_deleted_to(info.container_id, target)

    # ------------------------------------------------------------------ replicas and commands
    def _store_replica(self, dn: DatanodeID, report: ContainerReplicaReport) -> None:
        if report.state is ReplicaState.DELETED:
            self._containers.remove_replica(report.container_id, dn)
            return
        self._containers.update_replica(
            ContainerReplica(
                container_id=report.container_id,
                datanode=dn,
                state=report.state,
                origin_node_id=report.origin_node_id,
                sequence_id=report.sequence_id,
                key_count=report.key_count,
                bytes_used=report.used_bytes,
                replica_index=report.replica_index,
                is_empty=report.is_empty,
                data_checksum=report.data_checksum,
            )
        )

    def _delete_replica(
        self, dn: DatanodeID, report: ContainerReplicaReport, force: bool, reason: str
    ) -> None:
        log.info(
            "Sending %sdeleteContainerCommand for %s container %d to %s",
            "force " if force else "",
            reason,
            report.container_id,
            dn,
        )
        command = DeleteContainerCommand(
            container_id=report.container_id,
            force=force,
            replica_index=report.replica_index,
            term=self._nodes.context.term_of_leader(),
        )
        self._nodes.add_datanode_command(dn, command)


def _valid(info: ContainerInfo, report: ContainerReplicaReport) -> bool:
    """ContainerReportValidator: an EC replica index must be 1..data+parity; Ratis replicas are not checked"""
    config = info.replication_config
    if config.type is not ReplicationType.EC or 1 <= report.replica_index <= config.required_nodes:
        return True
    log.warning("Ignoring replica of EC container %d with index %d", info.container_id, report.replica_index)
    return False


def _counts_for_close(info: ContainerInfo, report: ContainerReplicaReport) -> bool:
    """Only EC index 1 and the parity indexes surely hold every block, so only they close EC containers."""
    config = info.replication_config
    return (
        config.type is not ReplicationType.EC
        or report.replica_index == 1
        or report.replica_index > config.ec_data
    )


def _bcsid_mismatch(info: ContainerInfo, report: ContainerReplicaReport, dn: DatanodeID) -> bool:
    if report.sequence_id == info.sequence_id:
        return False
    log.warning(
        "Replica BCSID %d of container %d (BCSID %d) on %s mismatched; not recorded",
        report.sequence_id,
        info.container_id,
        info.sequence_id,
        dn,
    )
    return True


def _as_report(replica: ContainerReplica) -> ContainerReplicaReport:
    """The report a recorded replica came from."""
    return ContainerReplicaReport(
        replica.container_id,
        replica.state,
        replica.sequence_id,
        replica.origin_node_id,
        replica.key_count,
        replica.bytes_used,
        replica.replica_index,
        replica.is_empty,
        replica.data_checksum,
    )
