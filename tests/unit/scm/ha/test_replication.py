"""SCM HA's replication, sans-IO (issue 31, scm/ha/replication.py): a leader core and a follower core wired by
hand, the leader's sealed transactions applied to both as a Raft log would, under a seeded random
workload of block allocations, datanode reports, administrators' closes, decommissions, deleteScmKeyBlocks
and their ACKs.

After each apply the two SCMs hold equal tables and equal in-memory views; a step-down brings the
deposed leader's views back to the follower's (its uncommitted tail undone); no command leaves before
the epoch of the writes it depends on applied; and after undos and new leaders no container, local or
delete-transaction id is acknowledged twice.
"""

from __future__ import annotations

import datetime as dt
import functools
import random
from dataclasses import dataclass, field, replace

import pytest

from pyozone.config import OzoneConfiguration
from pyozone.hdds.block import AllocatedBlock
from pyozone.hdds.clock import ManualClock
from pyozone.hdds.commands import (
    CloseContainerCommand,
    ClosePipelineCommand,
    CreatePipelineCommand,
    DeleteBlocksCommand,
    SCMCommand,
    SetNodeOperationalStateCommand,
)
from pyozone.hdds.container import ContainerInfo
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.exceptions import SCMException
from pyozone.hdds.ids import RATIS_THREE, BlockID, ContainerID, DatanodeID, PipelineID
from pyozone.hdds.messages import (
    CommandStatusReport,
    ContainerReplicaReport,
    DeleteBlockTransactionResult,
    Heartbeat,
    PipelineReport,
)
from pyozone.hdds.pipeline import Pipeline
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.x509 import CertRole, Identity
from pyozone.hdds.states import (
    CommandStatus,
    LifeCycleState,
    NodeOperationalState,
    NodeState,
    PipelineState,
    ReplicaState,
    SCMCommandType,
)
from pyozone.scm.events import SCMEvent
from pyozone.scm.ha.context import ScmContext
from pyozone.scm.ha.replication import ScmReplication
from pyozone.scm.scm import StorageContainerManager
from pyozone.scm.security.authority import CaMaterial, CertificateAuthority
from pyozone.scm.security.certificates import CertificateStore, RevocationReason, RevokedRecord
from pyozone.scm.settings import ScmSettings
from pyozone.scm.store import TABLE_NAMES, JsonCodec, MemoryBackend, SCMMetadataStore, StrKeyCodec
from tests.builders import dn_id, node_report

DATANODES = 9
HOUR_MS = 3_600_000
OWNERS = ("om-a", "om-b")
BLOCK = 256 << 20
CONF = {
    "ozone.scm.sequence.id.batch.size": "7",  # many reservations, some in every uncommitted tail
    "ozone.scm.close.container.wait.duration": "20s",
    "hdds.scm.wait.time.after.safemode.exit": "0s",
    "hdds.scm.block.deleting.service.interval": "20s",
    "ozone.scm.pipeline.creation.interval": "20s",
    "ozone.scm.datanode.admin.monitor.interval": "20s",
    "ozone.scm.stale.node.interval": "60s",
    "ozone.scm.dead.node.interval": "120s",
}


# ------------------------------------------------------------------------------------------ the datanodes
@dataclass
class FakeDatanode:
    """What a datanode does with the leader's commands, and what it reports to every SCM."""

    index: int
    pipelines: dict[PipelineID, bool] = field(default_factory=dict)  # -> is its Ratis leader
    replicas: dict[ContainerID, ReplicaState] = field(default_factory=dict)
    icrs: list[ContainerReplicaReport] = field(default_factory=list)
    statuses: list[CommandStatusReport] = field(default_factory=list)
    op_state: NodeOperationalState = NodeOperationalState.IN_SERVICE
    silent_until_ms: int = 0  # no heartbeat before (a network cut: STALE, then DEAD)
    full_report: bool = False  # its next heartbeat carries a full container report

    @property
    def uuid(self) -> DatanodeID:
        return dn_id(self.index)

    def details(self) -> DatanodeDetails:
        return DatanodeDetails(self.uuid, f"dn{self.index}.test", f"10.0.0.{self.index + 1}")

    def replica(self, cid: ContainerID) -> ContainerReplicaReport:
        return ContainerReplicaReport(cid, self.replicas[cid], 1, key_count=1, used_bytes=BLOCK)

    def write(self, cid: ContainerID) -> None:
        if cid not in self.replicas:
            self.replicas[cid] = ReplicaState.OPEN
            self.icrs.append(self.replica(cid))

    def execute(self, command: SCMCommand) -> None:
        if isinstance(command, CreatePipelineCommand):
            self.pipelines[command.pipeline_id] = command.suggested_leader == self.uuid
        elif isinstance(command, ClosePipelineCommand):
            self.pipelines.pop(command.pipeline_id, None)
        elif isinstance(command, CloseContainerCommand):
            if self.replicas.get(command.container_id) in (ReplicaState.OPEN, ReplicaState.CLOSING):
                self.replicas[command.container_id] = ReplicaState.CLOSED
                self.icrs.append(self.replica(command.container_id))
        elif isinstance(command, DeleteBlocksCommand):
            results = tuple(
                DeleteBlockTransactionResult(t.tx_id, t.container_id, True) for t in command.transactions
            )
            self.statuses.append(
                CommandStatusReport(
                    command.id, SCMCommandType.deleteBlocksCommand, CommandStatus.EXECUTED, results
                )
            )
        elif isinstance(command, SetNodeOperationalStateCommand):
            self.op_state = command.state

    def heartbeat(self, dead: bool = False) -> Heartbeat:
        """`dead`: the SCMs still count it DEAD; it keeps its reports for its next heartbeat. (A
        follower re-fires DEAD_NODE when it adopts the operational state the leader just commanded, one
        heartbeat after the leader: replicas a dead node reported in between would go on one SCM only.)"""
        if dead:
            return Heartbeat(self.details(), node_report=node_report(), persisted_op_state=self.op_state)
        hb = Heartbeat(
            self.details(),
            node_report=node_report(),
            incremental_container_reports=tuple(self.icrs),
            command_status_reports=tuple(self.statuses),
            pipeline_reports=tuple(PipelineReport(pid, leader) for pid, leader in self.pipelines.items()),
            persisted_op_state=self.op_state,
            container_report=tuple(self.replica(cid) for cid in self.replicas) if self.full_report else None,
        )
        self.icrs, self.statuses, self.full_report = [], [], False
        return hb


# ------------------------------------------------------------------------------------------ the service
@dataclass
class Scm:
    name: str
    core: StorageContainerManager
    replication: ScmReplication
    ca: CertificateAuthority  # its records in the same scm.db (serials: a sequence of its own)


@dataclass
class Service:
    """Two SCMs of one service and a log: the leader's sealed transactions, applied in order to both."""

    rng: random.Random
    clock: ManualClock
    leader: Scm
    follower: Scm
    datanodes: list[FakeDatanode]
    term: int = 1
    index: int = 0
    last_entry: str | None = None  # "term#index" of the last entry applied
    # datanodes heard since the last step-down: a pipeline the undone tail had removed comes back with
    # its committed record, and learns who reports it and who leads it from their next reports
    heard: set[DatanodeID] | None = None
    waiting: list[tuple[int, str, object]] = field(default_factory=list)  # (epoch, kind, id) not yet answered
    acked_local: set[int] = field(default_factory=set)
    acked_blocks: list[BlockID] = field(default_factory=list)
    acked_tx: set[int] = field(default_factory=set)
    acked_serials: set[int] = field(default_factory=set)
    acked_revoked: set[int] = field(default_factory=set)
    containers_seen: dict[ContainerID, tuple] = field(default_factory=dict)
    tx_seen: dict[int, tuple] = field(default_factory=dict)
    pipelines_seen: set[PipelineID] = field(default_factory=set)
    step_downs: int = 0
    undone: int = 0

    @classmethod
    def start(cls, seed: int) -> Service:
        rng = random.Random(seed)
        clock = ManualClock()
        conf = OzoneConfiguration(CONF)

        def scm(name: str, context: ScmContext) -> Scm:
            core = StorageContainerManager(
                ScmSettings.from_conf(conf),
                clock,
                SCMMetadataStore(MemoryBackend(TABLE_NAMES)),
                context=context,
                rng=random.Random(f"{seed}-{name}"),
            )
            material, _ = ca_material()
            ca = CertificateAuthority(material, CertificateStore(core.store), clock, "CID-1", name, HOUR_MS)
            return Scm(name, core, ScmReplication(core), ca)

        service = cls(
            rng,
            clock,
            scm("scm1", ScmContext.ha_leader(1)),
            scm("scm2", ScmContext.ha_follower(1, "scm1")),
            [FakeDatanode(i) for i in range(DATANODES)],
        )
        for scm_ in service.scms():
            for dn in service.datanodes:
                scm_.core.register(dn.details(), node_report())
            scm_.core.safe_mode.force_exit()
        return service

    def scms(self) -> tuple[Scm, Scm]:
        return self.leader, self.follower

    # -------------------------------------------------------------------- the log
    def commit(self) -> None:
        """Every sealed transaction becomes an entry, applied on the follower and then on the leader."""
        assert self.follower.replication.seal() == ()
        for transaction in self.leader.replication.seal():
            self.index += 1
            self.follower.replication.apply(transaction.ops, self.term, self.index)
            self.leader.replication.own_applied(transaction.epoch, self.term, self.index)
            self.last_entry = f"{self.term}#{self.index}"
        self._answer()
        self.check_committed_records()

    def _answer(self) -> None:
        """Calls whose epoch applied get their answer: their ids are acknowledged."""
        still: list[tuple[int, str, object]] = []
        for epoch, kind, value in self.waiting:
            if not self.leader.replication.released(epoch):
                still.append((epoch, kind, value))
            elif kind == "block":
                block = value
                assert isinstance(block, AllocatedBlock)
                local = block.block_id.local_id
                assert local not in self.acked_local, f"local id {local} acknowledged twice"
                self.acked_local.add(local)
                self.acked_blocks.append(block.block_id)
                for dn in self.datanodes:
                    if dn.uuid in block.pipeline.nodes:
                        dn.write(block.container_id)
            elif kind == "serial":
                assert value not in self.acked_serials, f"certificate serial {value} acknowledged twice"
                self.acked_serials.add(value)
            elif kind == "revoked":
                assert isinstance(value, RevokedRecord)
                assert value.cutoff not in self.acked_serials, f"serial {value.cutoff} acknowledged twice"
                self.acked_serials.add(value.cutoff)
                self.acked_revoked.add(value.cert.serial)
            else:
                assert value not in self.acked_tx, f"delete transaction {value} acknowledged twice"
                self.acked_tx.add(value)
        self.waiting = still

    def check_committed_records(self) -> None:
        """A committed container (or delete transaction) id names one record for ever: an id handed out
        twice would rewrite it with another pipeline, owner or blocks, or bring it back to OPEN."""
        store = self.follower.core.store
        for info in store.int_table("containers", _container_codec()).values():
            identity = (info.pipeline_id, info.owner, info.replication_config)
            seen = self.containers_seen.setdefault(info.container_id, identity)
            assert seen == identity, f"container {info.container_id} reused"
        self.pipelines_seen.update(p.id for p in self.follower.core.pipelines.pipelines())
        for tx in self.follower.core.deleted_blocks.transaction_ids():
            record = self.follower.core.deleted_blocks.get(tx)
            identity = (record.container_id, record.local_ids)
            assert self.tx_seen.setdefault(tx, identity) == identity, f"delete transaction {tx} reused"
        certs = self.follower.ca.certs
        for serial in self.acked_revoked:
            assert certs.revoked(serial) is not None and certs.get(serial) is None

    # -------------------------------------------------------------------- inputs
    def allocate(self) -> None:
        core = self.leader.core
        try:
            block = core.blocks.allocate_block(BLOCK, RATIS_THREE, self.rng.choice(OWNERS))
        except SCMException:
            return
        self.waiting.append((self.leader.replication.epoch, "block", block))

    def live(self) -> list[FakeDatanode]:
        return [dn for dn in self.datanodes if dn.silent_until_ms <= self.clock.now_ms()]

    def dead(self, dn: FakeDatanode) -> bool:
        return self.follower.core.nodes.node(dn.uuid).status.health is NodeState.DEAD

    def heartbeats(self) -> None:
        for dn in self.live():
            if self.heard is not None and not self.dead(dn):
                self.heard.add(dn.uuid)
            hb = dn.heartbeat(self.dead(dn))
            assert _ignoring_reregister(self.follower.core.heartbeat(hb)) == []
            for command in self.leader.core.heartbeat(hb):
                self.check_released(dn, command)
                dn.execute(command)

    def check_released(self, dn: FakeDatanode, command: SCMCommand) -> None:
        """The barrier: what a command acts on was committed (the follower held it)."""
        follower = self.follower.core
        assert command.term == self.term
        if isinstance(command, CreatePipelineCommand):
            assert command.pipeline_id in self.pipelines_seen
        elif isinstance(command, CloseContainerCommand):
            assert follower.containers.get(command.container_id).state is not LifeCycleState.OPEN
        elif isinstance(command, DeleteBlocksCommand):
            for tx in command.transactions:
                assert tx.tx_id in self.tx_seen

    def admin_close_container(self) -> None:
        core = self.leader.core
        open_ids = core.containers.container_ids(LifeCycleState.OPEN)
        if open_ids:
            core.events.fire(SCMEvent.CLOSE_CONTAINER, self.rng.choice(open_ids))

    def admin_close_pipeline(self) -> None:
        core = self.leader.core
        pipelines = core.pipelines.pipelines(RATIS_THREE, PipelineState.OPEN)
        if pipelines:
            core.pipelines.close_pipeline(self.rng.choice(pipelines).id)

    def decommission(self) -> None:
        core = self.leader.core
        in_service = [dn for dn in self.datanodes if core.nodes.node(dn.uuid).status.is_in_service()]
        if len(in_service) > 6:
            dn = self.rng.choice(in_service)
            core.nodes.set_operational_state(dn.uuid, NodeOperationalState.DECOMMISSIONING)

    def delete_blocks(self) -> None:
        if not self.acked_blocks:
            return
        chosen = self.rng.sample(self.acked_blocks, min(len(self.acked_blocks), self.rng.randint(1, 4)))
        for block in chosen:
            self.acked_blocks.remove(block)
        try:
            tx_ids = self.leader.core.blocks.delete_blocks(chosen)
        except SCMException:
            return
        self.waiting += [(self.leader.replication.epoch, "tx", tx) for tx in tx_ids]

    def cut_off_datanode(self) -> None:
        """A datanode heard by no SCM for 30 s to 4 min (STALE past 60 s, DEAD past 120 s); back, it
        sends a full container report."""
        if len(self.live()) > 7:
            dn = self.rng.choice(self.live())
            dn.silent_until_ms = self.clock.now_ms() + self.rng.randint(30_000, 240_000)
            dn.full_report = True

    def issue_certificate(self) -> None:
        """getCert: a serial (CertificateId, batches of one) and the validCerts record."""
        cert = self.leader.ca.issue(ca_material()[1])
        self.waiting.append((self.leader.replication.epoch, "serial", cert.serial_number))

    def revoke_certificate(self) -> None:
        """An administrator's revocation: validCerts -> revokedCerts, and a cut-off serial."""
        valid = sorted(self.acked_serials - self.acked_revoked)
        if not valid:
            return
        revoked = self.leader.ca.certs.revoke(self.rng.choice(valid), RevocationReason.KEY_COMPROMISE, 0)
        if revoked is not None:
            self.waiting.append((self.leader.replication.epoch, "revoked", revoked))

    def tick(self) -> None:
        self.clock.advance(self.rng.randint(1_000, 15_000))
        for scm in self.scms():
            scm.core.tick()

    def step(self) -> None:
        action = self.rng.choices(
            (
                self.allocate,
                self.heartbeats,
                self.admin_close_container,
                self.admin_close_pipeline,
                self.decommission,
                self.delete_blocks,
                self.issue_certificate,
                self.revoke_certificate,
                self.cut_off_datanode,
                self.tick,
            ),
            weights=(30, 25, 6, 2, 1, 6, 3, 2, 1, 20),
        )[0]
        action()

    # -------------------------------------------------------------------- failover
    def step_down_and_elect(self) -> None:
        """The leader loses its term with an uncommitted tail: undone, its views are the follower's;
        then one of the two leads the next term."""
        self.undone += self.leader.core.store.staged_keys()
        self.term += 1
        winner = self.rng.choice(self.scms())
        self.leader.replication.step_down(self.term, winner.name, self.index, why="a newer term")
        self.waiting = []  # their callers hear SCM_NOT_LEADER
        assert digest(self.leader, set()) == digest(self.follower, set())
        self.heard = {dn.uuid for dn in self.live() if not self.dead(dn)}
        for dn in self.live():
            hb = dn.heartbeat(self.dead(dn))
            for scm in self.scms():
                assert _ignoring_reregister(scm.core.heartbeat(hb)) == []
        assert digest(self.leader, self.heard) == digest(self.follower, self.heard)
        # both followers now: each holds the operational state its datanode last reported persisted
        reported = {info.uuid: info.details.persisted_op_state for info in self.follower.core.nodes.nodes()}
        assert op_states(self.leader) == op_states(self.follower) == reported
        self.step_downs += 1
        if winner is self.follower:
            self.leader, self.follower = self.follower, self.leader
        else:
            self.follower.core.context.follow(self.term, winner.name, self.index)
        self.leader.replication.step_up(self.term)
        # the new leader's are the records its predecessors wrote (the datanodes are told so next)
        records = self.leader.core.store.table("datanodeOpStates", StrKeyCodec(), JsonCodec())
        current = op_states(self.leader)
        for dn, record in records.items():
            assert current[dn] is NodeOperationalState[record["state"]]


@functools.cache
def ca_material() -> tuple[CaMaterial, X.CertificateSigningRequest]:
    """One root CA shared by the SCMs of the test (an SCM HA service gives each its sub-CA) and one user's
    CSR."""
    key = X.generate_private_key()
    start = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)
    root = X.self_signed_root(key, "CID-1", "SCM-1", "scm.test", dt.timedelta(days=3650), 1, start)
    csr = X.build_csr(X.generate_private_key(), Identity(CertRole.USER, "bob"))
    return CaMaterial(key, root), csr


def _container_codec():
    from pyozone.hdds.store.codec import RecordCodec

    return RecordCodec(ContainerInfo)


def _ignoring_reregister(commands: list[SCMCommand]) -> list[SCMCommand]:
    return [c for c in commands if c.type is not SCMCommandType.reregisterCommand]


def _reported(p: Pipeline, heard: set[DatanodeID] | None) -> tuple[Pipeline, frozenset[DatanodeID]]:
    if heard is None:
        return p, p.reported
    leader = p.leader if p.leader in heard else None
    return replace(p, leader=leader), p.reported & heard


def op_states(scm: Scm) -> dict[DatanodeID, NodeOperationalState]:
    return {info.uuid: info.status.operational_state for info in scm.core.nodes.nodes()}


def digest(scm: Scm, heard: set[DatanodeID] | None) -> dict[str, object]:
    """The tables as the core reads them, and every in-memory view a follower must share; of who reported
    a pipeline and who leads it, only what the datanodes `heard` since the last step-down told (all of
    it when None)."""
    core = scm.core
    store = core.store
    containers, pipelines, nodes = core.containers, core.pipelines, core.nodes
    known_pipelines = {p.id for p in pipelines.pipelines()}
    return {
        "tables": {cf: list(store.items(cf)) for cf in TABLE_NAMES if cf != "scmTransactionInfos"},
        "containers": {info.container_id: info for info in containers.containers()},
        "by_state": {state: tuple(containers.container_ids(state)) for state in LifeCycleState},
        "by_pipeline": {
            pid: [i.container_id for i in containers.pipeline_containers(pid)] for pid in known_pipelines
        },
        "replicas": {cid: containers.replicas(cid) for cid in containers.container_ids()},
        "pipelines": {
            p.id: _reported(p, heard) for p in pipelines.pipelines() for p in pipelines.pipelines()
        },
        "pipeline_sets": {pid: pipelines.containers(pid) for pid in known_pipelines},
        "pipeline_counts": {k: v for k, v in pipelines.state_counts().items() if v},
        "node_pipelines": {dn.uuid: nodes.pipelines(dn.uuid) for dn in nodes.nodes()},
        "node_containers": {dn.uuid: nodes.containers(dn.uuid) for dn in nodes.nodes()},
        "pending_containers": {
            dn.uuid: nodes.pending_containers.pending_count(dn.uuid) for dn in nodes.nodes()
        },
        "delete_transactions": core.deleted_blocks.transaction_ids(),
    }


# ------------------------------------------------------------------------------------------ the tests
@pytest.mark.parametrize("seed", range(30))
def test_a_follower_keeps_the_leaders_tables_and_views_through_step_downs(seed: int) -> None:
    service = Service.start(seed)
    rng = service.rng
    for _ in range(300):
        service.step()
        if rng.random() < 0.06:
            for _ in range(rng.randint(1, 6)):  # an uncommitted tail
                service.step()
            service.step_down_and_elect()
        else:
            service.commit()
            assert service.leader.core.store.staged_keys() == 0
            assert digest(service.leader, service.heard) == digest(service.follower, service.heard)
    assert service.step_downs > 0
    # each scm.db knows the last entry it applied (Ozone's scmTransactionInfos)
    applied = {scm.core.store.transaction_infos.get("#TRANSACTIONINFO") for scm in service.scms()}
    assert applied == {service.last_entry}


def test_the_seeded_workload_exercises_every_path() -> None:
    """Many seeds together reach pipelines opened and closed, containers closed, delete transactions
    ACKed away and uncommitted tails with records in them (else the digests above prove little)."""
    closed = deleted = undone = created = 0
    for seed in range(6):
        service = Service.start(seed)
        for _ in range(300):
            service.step()
            if service.rng.random() < 0.06:
                for _ in range(service.rng.randint(1, 6)):
                    service.step()
                service.step_down_and_elect()
            else:
                service.commit()
        core = service.leader.core
        closed += core.containers.count(LifeCycleState.CLOSED)
        created += len(core.pipelines.pipelines())
        deleted += len(service.acked_tx) - len(core.deleted_blocks)
        undone += service.undone
    assert closed and deleted and undone and created


def test_a_command_waits_for_the_epoch_of_its_write() -> None:
    """CreatePipeline for a pipeline whose record has not applied stays queued; it leaves with the first
    heartbeat after the apply."""
    service = Service.start(7)
    leader = service.leader.core
    pipeline = leader.pipelines.create_pipeline(RATIS_THREE)
    members = [dn for dn in service.datanodes if dn.uuid in pipeline.nodes]
    for dn in members:
        assert leader.nodes.commands.held(dn.uuid) >= 1
        assert not [c for c in leader.heartbeat(dn.heartbeat()) if isinstance(c, CreatePipelineCommand)]
    service.commit()
    for dn in members:
        assert leader.nodes.commands.held(dn.uuid) == 0
        created = [c for c in leader.heartbeat(dn.heartbeat()) if isinstance(c, CreatePipelineCommand)]
        assert [c.pipeline_id for c in created].count(pipeline.id) == 1


def test_an_answer_waits_for_the_reservation_of_its_ids() -> None:
    service = Service.start(3)
    for _ in range(40):
        service.heartbeats()
        service.tick()
        service.commit()
    leader = service.leader
    block = leader.core.blocks.allocate_block(BLOCK, RATIS_THREE, "om-a")
    epoch = leader.replication.epoch
    if not leader.replication.released(epoch):
        service.commit()
    assert leader.replication.released(epoch)
    assert leader.core.store.sequence_id.get("localId") >= block.block_id.local_id
    assert service.follower.core.store.sequence_id.get("localId") >= block.block_id.local_id


def test_after_an_undo_the_next_leader_hands_out_no_acknowledged_id() -> None:
    """The deposed leader handed out ids from an uncommitted batch: nobody saw them. Ids it answered
    (committed batches) are never handed out again, by it or the next leader."""
    service = Service.start(11)
    for _ in range(40):
        service.heartbeats()
        service.tick()
        service.commit()
    for _ in range(10):
        service.allocate()
    service.commit()
    acknowledged = set(service.acked_local)
    assert acknowledged
    for _ in range(12):  # past the batch of 7: a reservation in the tail
        service.allocate()
    assert service.leader.core.store.staged_keys()
    service.step_down_and_elect()
    for _ in range(12):
        service.allocate()
    service.commit()
    fresh = service.acked_local - acknowledged
    assert fresh and min(fresh) > max(acknowledged)


def test_a_follower_refuses_what_only_a_leader_writes() -> None:
    service = Service.start(5)
    follower = service.follower.core
    with pytest.raises(SCMException):
        follower.blocks.delete_blocks([BlockID(1, 1)])
    assert follower.store.staged_keys() == 0 and service.follower.replication.seal() == ()


def test_a_follower_that_installs_the_leaders_tables_reloads_its_views() -> None:
    """A follower far behind installs a checkpoint (the daemon's `/dbCheckpoint`): `reload_all` brings every
    view to the new tables, records it never applied and records it holds that are gone alike."""
    service = Service.start(13)
    for _ in range(60):
        service.step()
        service.commit()
    behind = service.follower
    lost: list[tuple[str, bytes, bytes | None]] = []
    service.check_released = lambda dn, command: None  # type: ignore[method-assign]  # judged by a laggard
    for _ in range(120):  # the follower misses these entries
        service.step()
        for transaction in service.leader.replication.seal():
            service.index += 1
            lost += transaction.ops
            service.leader.replication.own_applied(transaction.epoch, service.term, service.index)
    assert lost and digest(behind, set()) != digest(service.leader, set())
    backend = behind.core.store.backend
    backend.write([(cf, key, None) for cf in TABLE_NAMES for key, _ in list(backend.items(cf))])
    backend.write(
        [(cf, key, value) for cf in TABLE_NAMES for key, value in service.leader.core.store.backend.items(cf)]
    )
    behind.replication.reload_all()
    reloaded, leader = digest(behind, set()), digest(service.leader, set())
    # not the allocation window of PendingContainerTracker: a reload counts the OPEN containers it
    # learns as pending from now, the leader counted each from its allocation
    del reloaded["pending_containers"], leader["pending_containers"]
    assert reloaded == leader


def test_a_decommission_answered_before_a_failover_reaches_the_datanode_from_the_next_leader() -> None:
    """The administrator's answer left once the record committed; the datanode had not heard of it when
    the leader fell. The next leader's state is the record, and it tells the datanode."""
    service = Service.start(17)
    for _ in range(20):
        service.heartbeats()
        service.tick()
        service.commit()
    target = service.datanodes[4]
    service.leader.core.nodes.set_operational_state(target.uuid, NodeOperationalState.DECOMMISSIONING)
    service.commit()
    assert service.follower.core.nodes.node(target.uuid).status.is_in_service()  # it adopts the datanode's
    service.term += 1
    old, new = service.leader, service.follower
    old.replication.step_down(service.term, new.name, service.index, why="the leader fell")
    assert old.core.nodes.node(target.uuid).status.is_in_service()  # a follower's view: the datanode's
    new.replication.step_up(service.term)
    assert new.core.nodes.node(target.uuid).status.operational_state is NodeOperationalState.DECOMMISSIONING
    [told] = [
        c for c in new.core.heartbeat(target.heartbeat()) if isinstance(c, SetNodeOperationalStateCommand)
    ]
    assert (told.state, told.term) == (NodeOperationalState.DECOMMISSIONING, service.term)


def test_a_lone_scm_keeps_no_operational_state_records() -> None:
    core = StorageContainerManager(
        ScmSettings.from_conf(OzoneConfiguration(CONF)), ManualClock(), SCMMetadataStore.in_memory()
    )
    dn = FakeDatanode(0)
    core.register(dn.details(), node_report())
    core.nodes.set_operational_state(dn.uuid, NodeOperationalState.DECOMMISSIONING)
    assert list(core.store.backend.items("datanodeOpStates")) == []


def test_a_new_leader_tells_the_members_of_an_allocated_pipeline_whose_create_command_never_left() -> None:
    """The deposed leader's command queue went with its leadership before the members heard it: the
    pipeline would stay ALLOCATED until the scrubber's timeout. The next leader sends the command again,
    with its term (`ScmReplication.step_up`)."""
    service = Service.start(19)
    pipeline = service.leader.core.pipelines.create_pipeline(RATIS_THREE)
    service.commit()
    service.term += 1
    old, new = service.leader, service.follower
    old.replication.step_down(service.term, new.name, service.index, why="the leader fell")
    new.replication.step_up(service.term)
    members = [dn for dn in service.datanodes if dn.uuid in pipeline.nodes]
    for dn in members:
        created = [c for c in new.core.heartbeat(dn.heartbeat()) if isinstance(c, CreatePipelineCommand)]
        assert [(c.pipeline_id, c.term) for c in created] == [(pipeline.id, service.term)]


def test_a_new_leader_closes_a_closing_container_whose_replicas_reported_closed_while_it_followed() -> None:
    """The deposed leader committed CLOSING; the replicas' CLOSED reports reached the next leader while it
    followed, which moves no container. At step-up it replays the report rules over those replicas
    (`ScmReplication.step_up`) instead of waiting for the next full report (an hour by default)."""
    service = Service.start(23)
    for _ in range(12):
        service.allocate()
        service.commit()
        service.heartbeats()
        service.tick()
        service.commit()
    leader = service.leader.core
    cid = next(
        c for c in leader.containers.container_ids(LifeCycleState.OPEN) if leader.containers.replicas(c)
    )
    leader.events.fire(SCMEvent.CLOSE_CONTAINER, cid)
    service.commit()
    service.term += 1
    old, new = service.leader, service.follower
    old.replication.step_down(service.term, new.name, service.index, why="the leader fell")
    for dn in service.datanodes:
        if cid in dn.replicas:
            dn.replicas[cid] = ReplicaState.CLOSED
            dn.icrs.append(dn.replica(cid))
    for dn in service.datanodes:
        hb = dn.heartbeat()
        for scm in (old, new):
            scm.core.heartbeat(hb)
    assert new.core.containers.get(cid).state is LifeCycleState.CLOSING
    new.replication.step_up(service.term)
    assert new.core.containers.get(cid).state is LifeCycleState.CLOSED
