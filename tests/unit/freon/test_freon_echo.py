"""dne's choice of pipeline and member, and ome against a real OM daemon (fake SCM), in-process."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyozone.client import OzoneClient
from pyozone.freon import EchoOptions, om_echo, pipeline_datanode
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.ids import RATIS_ONE, RATIS_THREE, ReplicationConfig
from pyozone.hdds.pipeline import Pipeline
from pyozone.hdds.states import PipelineState
from pyozone.protocol.admin_records import PipelineView
from tests.unit.om.om_thread import om_on_thread


def view(
    pid: str, config: ReplicationConfig, state: PipelineState = PipelineState.OPEN, leader: str | None = None
) -> PipelineView:
    nodes = tuple(f"{pid}-dn{i}" for i in range(config.required_nodes))
    pipeline = Pipeline(pid, config, state, nodes, 0, 0, leader=leader)
    members = {
        dn: DatanodeDetails(dn, f"host{i}", f"10.0.0.{i}", (("STANDALONE", 9000 + i),))
        for i, dn in enumerate(nodes)
    }
    return PipelineView(pipeline, members)


def test_dne_takes_the_first_open_ratis_three_pipeline_and_its_leader() -> None:
    pipelines = [
        view("closed", RATIS_THREE, PipelineState.CLOSED),
        view("one", RATIS_ONE),
        view("three", RATIS_THREE, leader="three-dn2"),
    ]
    pipeline_id, datanode = pipeline_datanode(pipelines)
    assert (pipeline_id, datanode.uuid, datanode.address) == ("three", "three-dn2", "10.0.0.2:9002")


def test_dne_falls_back_to_any_open_pipeline_and_its_first_member() -> None:
    pipeline_id, datanode = pipeline_datanode([view("one", RATIS_ONE)])
    assert (pipeline_id, datanode.uuid, datanode.host) == ("one", "one-dn0", "host0")


def test_dne_takes_the_pipeline_named() -> None:
    pipelines = [view("a", RATIS_THREE), view("b", RATIS_THREE, PipelineState.DORMANT)]
    assert pipeline_datanode(pipelines, "b")[0] == "b"


@pytest.mark.parametrize(
    ("pipelines", "pipeline_id", "message"),
    [
        ([], None, "SCM has no OPEN pipeline yet"),
        ([view("a", RATIS_THREE, PipelineState.ALLOCATED)], None, "SCM has no OPEN pipeline yet"),
        ([view("a", RATIS_THREE)], "zzz", "SCM knows no pipeline zzz"),
        ([PipelineView(view("a", RATIS_ONE).pipeline, {})], None, "does not say where datanode a-dn0"),
    ],
)
def test_dne_without_a_datanode_to_call_says_why(
    pipelines: list[PipelineView], pipeline_id: str | None, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        pipeline_datanode(pipelines, pipeline_id)


def test_ome_counts_each_echo_and_its_bytes(tmp_path: Path) -> None:
    with om_on_thread(tmp_path) as address, OzoneClient(address) as client:
        report = om_echo(client, EchoOptions(payload_req=100, payload_resp=30, number=40, threads=4))
    assert (report.operation, report.unit, report.keys, report.bytes, report.ok) == (
        "ome",
        "ops",
        40,
        40 * 130,
        True,
    )
