"""The real SCM core with datanodes on racks, out of safe mode, for EC allocation tests on virtual time."""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping

from pyozone.config import OzoneConfiguration
from pyozone.hdds.block import NO_EXCLUSIONS, AllocatedBlock, ExcludeList
from pyozone.hdds.clock import ManualClock
from pyozone.hdds.commands import SCMCommand
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.messages import ContainerReplicaReport, Heartbeat
from pyozone.hdds.pipeline import Pipeline
from pyozone.hdds.states import PipelineState, SCMCommandType
from pyozone.hdds.topology import NetworkTopology
from pyozone.scm.scm import StorageContainerManager
from pyozone.scm.settings import ScmSettings
from pyozone.scm.store import SCMMetadataStore
from tests.builders import dn_id, node_report
from tests.unit.scm.container.scm_fakes import report_written

RS_3_2 = ReplicationConfig.parse("rs-3-2-1024k")
BLOCK = 256 << 20
STEP_MS = 3_000


class EcScm:
    def __init__(
        self,
        datanodes: int = 10,
        racks: int = 1,
        volumes: int = 1,
        overrides: Mapping[str, str] | None = None,
        seed: int = 5,
        out_of_safe_mode: bool = True,
        store: SCMMetadataStore | None = None,
        register: bool = True,
    ) -> None:
        """`store` restarts an SCM over a previous one's scm.db; `register=False` leaves the datanodes
        to register later (with their container reports)."""
        self.clock = ManualClock()
        self.conf = OzoneConfiguration(dict(overrides or {}))
        self.settings = ScmSettings.from_conf(self.conf)
        self.dns = [dn_id(i) for i in range(datanodes)]
        topology = NetworkTopology({dn: f"/rack{i % racks}" for i, dn in enumerate(self.dns)})
        self.store = store or SCMMetadataStore.in_memory()
        self.scm = StorageContainerManager(
            self.settings, self.clock, self.store, topology=topology, rng=random.Random(seed)
        )
        self.details = {
            dn: DatanodeDetails(dn, f"dn{i}.test", f"10.0.0.{i + 1}") for i, dn in enumerate(self.dns)
        }
        self.volumes = volumes
        if register:
            for dn in self.dns:
                self.register(dn)
        if out_of_safe_mode:
            self.scm.safe_mode.force_exit()

    def register(self, dn: str, *replicas: ContainerReplicaReport) -> None:
        self.scm.register(self.details[dn], node_report(self.volumes), replicas)

    def allocate(
        self, config: ReplicationConfig = RS_3_2, size: int = BLOCK, excluded: ExcludeList = NO_EXCLUSIONS
    ) -> AllocatedBlock:
        return self.scm.blocks.allocate_block(size, config, "om", excluded)

    def write(self, size: int = BLOCK, config: ReplicationConfig = RS_3_2) -> AllocatedBlock:
        """A block group allocated and written whole: its replicas report the bytes."""
        block = self.allocate(config, size)
        report_written(self.scm.containers, block.container_id, size)
        return block

    def open_pipelines(self, config: ReplicationConfig = RS_3_2) -> list[Pipeline]:
        return self.scm.pipelines.pipelines(config, PipelineState.OPEN)

    def run(self, ms: int, silent: Iterable[str] = ()) -> None:
        """Virtual time passes; every node but `silent` heartbeats, and SCM ticks."""
        silent = set(silent)
        for _ in range(ms // STEP_MS):
            self.clock.advance(STEP_MS)
            for dn in self.dns:
                if dn not in silent and self.scm.nodes.is_registered(dn):
                    self.scm.nodes.process_heartbeat(dn)
            self.scm.tick()

    def report(self, dn: str, *replicas: ContainerReplicaReport) -> None:
        self.scm.heartbeat(Heartbeat(self.details[dn], incremental_container_reports=tuple(replicas)))

    def close_pipeline_commands(self) -> set[str]:
        """Pipelines any datanode is told to close (the background creator makes Ratis ones too)."""
        return {
            c.pipeline_id for dn in self.dns for c in self.queued(dn, SCMCommandType.closePipelineCommand)
        }

    def queued(self, dn: str, kind: SCMCommandType) -> list[SCMCommand]:
        return [c for c in self.scm.nodes.commands.peek(dn) if c.type is kind]
