"""A real SCM core on virtual time, out of safe mode and past the wait, with containers and replicas put
straight into its managers: the Replication Manager and the admin monitor see exactly what reports
would have built, without the report path in every test."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from pyozone.config import OzoneConfiguration
from pyozone.hdds.clock import ManualClock
from pyozone.hdds.commands import SCMCommand
from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.ids import ContainerID, ReplicationConfig
from pyozone.hdds.states import LifeCycleState, NodeOperationalState, ReplicaState, SCMCommandType
from pyozone.hdds.topology import NetworkTopology
from pyozone.scm.scm import StorageContainerManager
from pyozone.scm.settings import ScmSettings
from pyozone.scm.store import SCMMetadataStore
from tests.builders import GB, dn_id, node_report

MINUTE = 60_000
SEQ = 10


class RMHarness:
    def __init__(
        self, datanodes: int = 6, racks: int = 1, overrides: Mapping[str, str] | None = None
    ) -> None:
        self.clock = ManualClock()
        self.dns = [dn_id(i) for i in range(datanodes)]
        topology = NetworkTopology({dn: f"/rack{i % racks + 1}" for i, dn in enumerate(self.dns)})
        conf = OzoneConfiguration(dict(overrides or {}))
        self.scm = StorageContainerManager(
            ScmSettings.from_conf(conf), self.clock, SCMMetadataStore.in_memory(), topology=topology
        )
        for i, dn in enumerate(self.dns):
            self.scm.register(DatanodeDetails(dn, f"dn{i}.test", f"10.0.0.{i + 1}"), node_report())
        self.rm = self.scm.replication
        self.scm.safe_mode.force_exit()
        self.clock.advance(conf.get("hdds.scm.wait.time.after.safemode.exit"))
        for dn in self.dns:  # heartbeats kept them HEALTHY meanwhile
            self.scm.nodes.process_heartbeat(dn)
        assert self.rm.should_run()
        self._next_id = 1

    def container(
        self,
        dns: list[str],
        state: str = "CLOSED",
        config: str = "RATIS/THREE",
        replica_state: str | None = None,
        keys: int = 5,
        empty: bool = False,
    ) -> ContainerID:
        """A container with one replica on each of `dns` (EC: index i + 1 on dns[i])."""
        cid = self._next_id
        self._next_id += 1
        replication = ReplicationConfig.parse(config)
        info = ContainerInfo(cid, LifeCycleState[state], 0, None, replication, "test", GB, keys, SEQ)
        self.scm.containers.bulk_load([info], [])
        ec = replication.required_nodes if config.startswith("EC") else 0
        for i, dn in enumerate(dns):
            self.add_replica(cid, dn, replica_state or state, index=i + 1 if ec else 0, empty=empty)
        return cid

    def add_replica(
        self, cid: ContainerID, dn: str, state: str = "CLOSED", index: int = 0, empty: bool = False
    ) -> None:
        replica = ContainerReplica(cid, dn, ReplicaState[state], dn, SEQ, 5, GB, index, empty)
        self.scm.containers.update_replica(replica)
        self.scm.nodes.add_container(dn, cid)

    def remove_replica(self, cid: ContainerID, dn: str) -> None:
        self.scm.containers.remove_replica(cid, dn)
        self.scm.nodes.remove_container(dn, cid)

    def set_op_state(
        self, dn: str, state: NodeOperationalState, persisted: bool = True, expiry: int = 0
    ) -> None:
        """As an admin command would, and (if `persisted`) as the datanode's next heartbeat confirms."""
        self.scm.nodes.set_operational_state(dn, state, expiry)
        if persisted:
            info = self.scm.nodes.node(dn)
            info.details = replace(info.details, persisted_op_state=state, persisted_op_state_expiry=expiry)

    def queued(self, command_type: SCMCommandType | None = None) -> list[tuple[str, SCMCommand]]:
        """Commands waiting at SCM for their datanode's next heartbeat."""
        return [
            (dn, c)
            for dn in self.dns
            for c in self.scm.nodes.commands.peek(dn)
            if command_type is None or c.type is command_type
        ]

    def drain(self) -> None:
        for dn in self.dns:
            self.scm.nodes.commands.drain(dn)
