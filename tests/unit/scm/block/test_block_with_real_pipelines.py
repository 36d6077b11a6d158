"""Block allocation and the close flow against the real PipelineManager: proves the two fit together."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from pyozone.common.timers import Timers
from pyozone.config import OzoneConfiguration
from pyozone.hdds.block import AllocatedBlock, ExcludeList
from pyozone.hdds.clock import ManualClock
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.exceptions import ResultCode, SCMException
from pyozone.hdds.ids import RATIS_THREE
from pyozone.hdds.states import LifeCycleState, PipelineState, SCMCommandType
from pyozone.scm.block.manager import BlockManager
from pyozone.scm.block.sequence_id import SequenceIdGenerator
from pyozone.scm.container.close_handler import CloseContainerEventHandler
from pyozone.scm.container.manager import ContainerManager
from pyozone.scm.events import EventQueue, SCMEvent
from pyozone.scm.node.node_manager import NodeManager
from pyozone.scm.pipeline.manager import PipelineManager
from pyozone.scm.settings import ScmSettings
from pyozone.scm.store import SCMMetadataStore
from tests.unit.scm.container.scm_fakes import node_report, report_written

BLOCK = 256 << 20


class Scm:
    def __init__(self, store: SCMMetadataStore | None = None, nodes: NodeManager | None = None) -> None:
        self.conf = OzoneConfiguration()
        self.settings = ScmSettings.from_conf(self.conf)
        self.clock = ManualClock()
        self.events = EventQueue()
        self.timers = Timers()
        self.store = store or SCMMetadataStore.in_memory()
        self.nodes = nodes or NodeManager(self.settings, self.clock, self.events)
        self.pipelines = PipelineManager(
            self.settings, self.clock, self.events, self.store, self.nodes, rng=random.Random(3)
        )
        self.sequence_ids = SequenceIdGenerator(self.store)
        self.containers = ContainerManager(
            self.settings.container,
            self.clock,
            self.events,
            self.store,
            self.nodes,
            self.pipelines,
            self.sequence_ids,
        )
        self.close = CloseContainerEventHandler(
            self.settings.container, self.clock, self.timers, self.containers, self.pipelines, self.nodes
        )
        self.events.add_handler(SCMEvent.CLOSE_CONTAINER, self.close.on_close_container)
        self.blocks = BlockManager(
            self.settings, self.clock, self.events, self.store, self.containers, self.pipelines,
            self.sequence_ids, lambda: False, rng=random.Random(4),
        )  # fmt: skip

    def register(self, count: int) -> list[str]:
        dns = [f"dn-{i}" for i in range(count)]
        for dn in dns:
            self.nodes.register(DatanodeDetails(dn, f"host-{dn}", "10.0.0.1"), node_report(1))
        return dns

    def datanodes_report(self, pipeline_id: str) -> None:
        pipeline = self.pipelines.get(pipeline_id)
        for dn in pipeline.nodes:
            self.pipelines.process_pipeline_report(dn, pipeline_id, is_leader=dn == pipeline.nodes[0])


def write_block(scm: Scm) -> AllocatedBlock:
    """A block allocated and then written whole: its replicas report the bytes."""
    block = scm.blocks.allocate_block(BLOCK, RATIS_THREE, "om")
    report_written(scm.containers, block.container_id, BLOCK)
    return block


def test_first_write_creates_a_pipeline_and_succeeds_once_it_opens() -> None:
    scm = Scm()
    scm.register(3)
    with pytest.raises(SCMException) as err:
        scm.blocks.allocate_block(BLOCK, RATIS_THREE, "om")
    assert err.value.code is ResultCode.FAILED_TO_FIND_ACTIVE_PIPELINE
    (pipeline,) = scm.pipelines.pipelines(RATIS_THREE, PipelineState.ALLOCATED)
    scm.datanodes_report(pipeline.id)
    block = scm.blocks.allocate_block(BLOCK, RATIS_THREE, "om")
    assert block.pipeline.id == pipeline.id and block.pipeline.state is PipelineState.OPEN
    assert scm.pipelines.containers(pipeline.id) == {c.container_id for c in scm.containers.containers()}


def test_closing_a_pipeline_closes_its_containers_after_the_lease() -> None:
    scm = Scm()
    scm.register(3)
    pipeline = scm.pipelines.create_pipeline(RATIS_THREE)
    scm.datanodes_report(pipeline.id)
    cids = {scm.blocks.allocate_block(BLOCK, RATIS_THREE, "om").container_id for _ in range(4)}
    scm.pipelines.close_pipeline(pipeline.id)
    assert {scm.containers.get(c).state for c in cids} == {LifeCycleState.CLOSING}
    scm.clock.advance(150_000)
    scm.timers.run_due(scm.clock.now_ms())
    for dn in pipeline.nodes:
        closes = [c for c in scm.nodes.commands.peek(dn) if c.type is SCMCommandType.closeContainerCommand]
        assert {c.container_id for c in closes} == cids


def test_restart_puts_open_containers_back_in_their_pipelines() -> None:
    scm = Scm()
    scm.register(3)
    pipeline = scm.pipelines.create_pipeline(RATIS_THREE)
    scm.datanodes_report(pipeline.id)
    cids = {scm.blocks.allocate_block(BLOCK, RATIS_THREE, "om").container_id for _ in range(4)}
    restarted = Scm(scm.store, scm.nodes)
    assert restarted.pipelines.containers(pipeline.id) == cids
    assert {c.container_id for c in restarted.containers.containers(LifeCycleState.OPEN)} == cids


def test_with_every_open_pipeline_excluded_a_pipeline_forms_on_the_other_datanodes() -> None:
    """Issue 11 defect 5: the client left a pipeline whose leader died. SCM does not hand it back; it
    creates a pipeline away from the excluded datanodes, and the retry gets a block there once it opens."""
    scm = Scm()
    dns = scm.register(5)
    first = scm.pipelines.create_pipeline(RATIS_THREE, excluded_nodes=dns[3:])
    scm.datanodes_report(first.id)
    dead = first.nodes[0]
    excluded = ExcludeList(datanodes=frozenset({dead}), pipelines=frozenset({first.id}))
    with pytest.raises(SCMException) as err:
        scm.blocks.allocate_block(BLOCK, RATIS_THREE, "om", excluded)
    assert err.value.code is ResultCode.FAILED_TO_FIND_ACTIVE_PIPELINE
    (created,) = scm.pipelines.pipelines(RATIS_THREE, PipelineState.ALLOCATED)
    assert dead not in created.nodes
    scm.datanodes_report(created.id)
    assert scm.blocks.allocate_block(BLOCK, RATIS_THREE, "om", excluded).pipeline.id == created.id


def test_no_new_container_on_a_pipeline_whose_member_is_out_of_space() -> None:
    """Issue 28, defect 16 (Ozone's HDDS-12468): a pipeline member that reports no volume able to take a
    container (under its free-space floor here) gets no new container; the containers it holds keep their
    committed space and still take blocks, and SCM turns to another pipeline for a new one."""
    scm = Scm()
    dns = scm.register(6)
    full, roomy = (
        scm.pipelines.create_pipeline(RATIS_THREE, excluded_nodes=half) for half in (dns[3:], dns[:3])
    )
    scm.datanodes_report(full.id)
    scm.datanodes_report(roomy.id)
    held = {write_block(scm).container_id for _ in range(40)}
    before = {cid: scm.containers.get(cid).pipeline_id for cid in held}
    under_floor = replace(node_report(1).storage[0], free_space_to_spare=96 * 1024**3)  # 4 GB usable
    scm.nodes.process_node_report(full.nodes[0], replace(node_report(1), storage=(under_floor,)))

    blocks = [write_block(scm) for _ in range(200)]
    new = {b.container_id for b in blocks} - held
    assert new and all(scm.containers.get(cid).pipeline_id == roomy.id for cid in new)
    assert scm.containers.pipeline_containers(full.id) == [
        scm.containers.get(cid) for cid in sorted(c for c, p in before.items() if p == full.id)
    ]


def test_blocks_nobody_writes_never_stall_allocation() -> None:
    """Issue 29: freon omkg (openKey + commitKey of empty keys, a whole block reserved each) stopped after
    a few hundred keys with FAILED_TO_FIND_ACTIVE_PIPELINE. SCM counted each block against its container,
    closed the container it 'filled' and opened another, which no datanode ever reported; each counted a
    container size against its members (PendingContainerTracker) until none had room. Ozone compares the
    replicas' reported bytes (ContainerStateManagerImpl.getMatchingContainer): such blocks keep going to
    the pipeline's open containers."""
    scm = Scm()
    dns = scm.register(3)  # 100 GB usable each: room for 19 pending 5 GB containers
    scm.datanodes_report(scm.pipelines.create_pipeline(RATIS_THREE).id)
    blocks = [scm.blocks.allocate_block(BLOCK, RATIS_THREE, "om") for _ in range(2000)]
    assert len({b.container_id for b in blocks}) == scm.nodes.open_container_limit(dns) == 2
    assert scm.containers.count(LifeCycleState.OPEN) == scm.containers.count() == 2
    assert [scm.nodes.pending_containers.pending_count(dn) for dn in dns] == [2, 2, 2]
