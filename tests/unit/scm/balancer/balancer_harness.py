"""The balancer over a real SCM core on virtual time (RMHarness), with datanode usage set by node report:
datanodes of 100 GB, containers of 1 GB, and the balancer's limits loose enough for a handful of nodes."""

from __future__ import annotations

from collections.abc import Mapping

from pyozone.config import OzoneConfiguration
from pyozone.config.keys import CB
from pyozone.hdds.clock import ManualClock
from pyozone.hdds.commands import DeleteContainerCommand, ReplicateContainerCommand
from pyozone.hdds.container import ContainerReplica
from pyozone.hdds.datanode import DatanodeDetails, NodeReport, StorageReport
from pyozone.hdds.ids import ContainerID
from pyozone.hdds.states import ReplicaState
from pyozone.hdds.topology import NetworkTopology
from pyozone.scm.ha.context import ScmContext
from pyozone.scm.ha.replication import ScmReplication
from pyozone.scm.scm import StorageContainerManager
from pyozone.scm.settings import ScmSettings
from pyozone.scm.store import SCMMetadataStore
from tests.builders import GB, dn_id, node_report
from tests.unit.scm.replication.rm_harness import SEQ, RMHarness

CAPACITY = 100 * GB
LOOSE = {
    CB + "datanodes.involved.max.percentage.per.iteration": "100",
    CB + "balancing.iteration.interval": "10m",
    "ozone.scm.container.size": "1GB",
    CB + "size.entering.target.max": "10GB",
    CB + "size.leaving.source.max": "10GB",
    CB + "size.moved.max.per.iteration": "100GB",
}


class BalancerHarness(RMHarness):
    def __init__(
        self,
        datanodes: int = 6,
        racks: int = 1,
        overrides: Mapping[str, str] | None = None,
        context: ScmContext | None = None,
        store: SCMMetadataStore | None = None,
    ) -> None:
        """RMHarness's core, of an HA service when given a `context`, over `store` when given."""
        self.clock = ManualClock()
        self.dns = [dn_id(i) for i in range(datanodes)]
        topology = NetworkTopology({dn: f"/rack{i % racks + 1}" for i, dn in enumerate(self.dns)})
        self.conf = OzoneConfiguration({**LOOSE, **(overrides or {})})
        self.settings = ScmSettings.from_conf(self.conf)
        self.store = store or SCMMetadataStore.in_memory()
        self.scm = StorageContainerManager(
            self.settings, self.clock, self.store, topology=topology, context=context
        )
        self.replication = ScmReplication(self.scm) if context is not None else None
        for i, dn in enumerate(self.dns):
            self.scm.register(DatanodeDetails(dn, f"dn{i}.test", f"10.0.0.{i + 1}"), node_report())
        self.rm = self.scm.replication
        self.scm.safe_mode.force_exit()
        self.wait_for_services()
        self._next_id = 1
        self.balancer = self.scm.balancer
        self.moves = self.balancer.moves
        self.results: list[tuple[ContainerID, str]] = []
        self.moves.listener = self._record(self.moves.listener)

    def _record(self, inner):
        def listener(cid, pair, result) -> None:
            self.results.append((cid, result.name))
            if inner is not None:
                inner(cid, pair, result)

        return listener

    def set_used(self, dn_index: int, used_gb: int) -> None:
        """The datanode's node report: `used_gb` of its 100 GB used."""
        used = used_gb * GB
        volume = StorageReport("d0", "/data/d0", CAPACITY, used, CAPACITY - used)
        report = NodeReport((volume,), node_report().metadata_storage)
        self.scm.nodes.process_node_report(self.dns[dn_index], report)

    def replicates(self) -> list[tuple[str, ReplicateContainerCommand]]:
        return [(dn, c) for dn, c in self.queued() if isinstance(c, ReplicateContainerCommand)]

    def deletes(self) -> list[tuple[str, DeleteContainerCommand]]:
        return [(dn, c) for dn, c in self.queued() if isinstance(c, DeleteContainerCommand)]

    def report_copy(self, cid: ContainerID, dn: str, index: int = 0) -> None:
        """The target reports the replica the move's replicate made (as its ICR would)."""
        self.scm.containers.update_replica(
            ContainerReplica(cid, dn, ReplicaState.CLOSED, dn, SEQ, 5, GB, index)
        )
        self.scm.nodes.add_container(dn, cid)

    def wait_for_services(self) -> None:
        """hdds.scm.wait.time.after.safemode.exit passes, heartbeats keeping the datanodes HEALTHY."""
        self.clock.advance(self.conf.get("hdds.scm.wait.time.after.safemode.exit"))
        for dn in self.dns:
            self.scm.nodes.process_heartbeat(dn)
        assert self.rm.should_run() or not self.scm.context.is_leader()

    def commit(self) -> None:
        """HA: the leader's staged writes so far committed, as their log entry applied."""
        assert self.replication is not None
        sealed = self.replication.seal()
        if sealed:
            self.replication.own_applied(sealed[-1].epoch, self.scm.context.known_term, sealed[-1].epoch)
