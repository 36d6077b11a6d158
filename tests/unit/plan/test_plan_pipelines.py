"""`pyozone plan pipelines`: the number of RATIS/THREE pipelines SCM keeps, from the real code
(RatisPipelineProvider).

Ozone's "Calculating Ratis Pipeline Limits" page: 10 healthy datanodes, 8 with 4 metadata
disks and 2 with 2, per.metadata.disk=2, datanode.pipeline.limit=0, ratis.pipeline.limit=30 -> 24.
With Ozone's default auto.factor.one=true the background creator also makes one RATIS/ONE pipeline per
datanode and the global cap counts them: 30 - 10 = 20.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pyozone.config import load_configuration
from pyozone.plan.inventory import InventoryNode, load_inventory
from pyozone.scm.pipeline.planner import PipelinePlan, plan_pipelines
from pyozone.scm.settings import ScmSettings

Cli = Callable[..., Any]

DYNAMIC = ("-D", "ozone.scm.datanode.pipeline.limit=0", "-D", "ozone.scm.ratis.pipeline.limit=30")
NO_FACTOR_ONE = ("-D", "ozone.scm.pipeline.creation.auto.factor.one=false")
REPO = Path(__file__).resolve().parents[3]
SEED000 = REPO / "examples" / "seed000-inventory.csv"
SEED000_JSON = REPO / "examples" / "seed000-inventory.json"


def conf(**overrides: object):
    return load_configuration(None, {k.replace("_", "."): str(v).lower() for k, v in overrides.items()})


def seed000_conf(factor_one: bool):
    return load_configuration(
        None,
        {
            "ozone.scm.datanode.pipeline.limit": "0",
            "ozone.scm.ratis.pipeline.limit": "30",
            "ozone.scm.pipeline.creation.auto.factor.one": str(factor_one).lower(),
        },
    )


def one_rack(nodes: list[InventoryNode]) -> list[InventoryNode]:
    return [replace(n, rack="/default-rack") for n in nodes]


def uniform(count: int, racks: int = 2, data_disks: int = 1, metadata_disks: int = 1) -> list[InventoryNode]:
    return [
        InventoryNode(f"dn{i}", f"/rack{i % racks + 1}", data_disks, metadata_disks)
        for i in range(1, count + 1)
    ]


def write_csv(path: Path, nodes: list[InventoryNode]) -> Path:
    rows = [f"{n.id},{n.rack},{n.data_disks},{n.metadata_disks}" for n in nodes]
    path.write_text("\n".join(["id,rack,data_disks,metadata_disks", *rows]) + "\n")
    return path


# ------------------------------------------------------------ Calculating Ratis Pipeline Limits via the CLI
def test_seed000_without_factor_one_is_24(cli: Cli) -> None:
    result = cli("plan", "pipelines", "--inventory", str(SEED000), *DYNAMIC, *NO_FACTOR_ONE)
    assert result.code == 0 and result.err == ""
    assert result.last_line == "24"
    # The documented calculation steps are there too.
    assert "8 datanodes * (2 pipelines/disk * 4 disks/datanode) = 64" in result.out
    assert "2 datanodes * (2 pipelines/disk * 2 disks/datanode) = 8" in result.out
    assert "72 / 3 = 24" in result.out
    assert "min(24, 30) = 24" in result.out


@pytest.mark.parametrize("explicit", [False, True], ids=["default", "explicit-true"])
def test_seed000_with_ozone_default_factor_one_is_20_and_says_why(cli: Cli, explicit: bool) -> None:
    extra = ("-D", "ozone.scm.pipeline.creation.auto.factor.one=true") if explicit else ()
    result = cli("plan", "pipelines", "--inventory", str(SEED000), *DYNAMIC, *extra)
    assert result.code == 0 and result.err == ""
    assert result.last_line == "20"
    assert "RATIS/ONE" in result.out
    assert "30 - 10 = 20" in result.out
    assert "ozone.scm.pipeline.creation.auto.factor.one=true" in result.out


@pytest.mark.parametrize("factor_one, expected", [(False, 24), (True, 20)])
def test_seed000_on_one_rack_gives_the_same_numbers(
    cli: Cli, tmp_path: Path, factor_one: bool, expected: int
) -> None:
    nodes = one_rack(load_inventory(SEED000))
    plan = plan_pipelines(ScmSettings.from_conf(seed000_conf(factor_one)), nodes)
    assert (plan.racks, plan.ratis_three, plan.ratis_one) == (1, expected, 10 if factor_one else 0)

    flag = ("-D", f"ozone.scm.pipeline.creation.auto.factor.one={str(factor_one).lower()}")
    inventory = write_csv(tmp_path / "one-rack.csv", nodes)
    result = cli("plan", "pipelines", "--inventory", str(inventory), *DYNAMIC, *flag)
    assert result.code == 0 and result.last_line == str(expected)
    assert "on 1 rack(s)" in result.out


@pytest.mark.parametrize("factor_one, expected", [(False, 24), (True, 20)])
@pytest.mark.parametrize("racks", ["two-racks", "one-rack"])
def test_seed000_never_changes_with_the_seed(factor_one: bool, expected: int, racks: str) -> None:
    nodes = load_inventory(SEED000)
    if racks == "one-rack":
        nodes = one_rack(nodes)
    results = {
        (p.ratis_three, p.ratis_one, p.node_slots)
        for p in (
            plan_pipelines(ScmSettings.from_conf(seed000_conf(factor_one)), nodes, seed=s) for s in range(21)
        )
    }
    assert results == {(expected, 10 if factor_one else 0, 72)}


@pytest.mark.parametrize("seed", [0, 7, 20])
def test_seed_option_of_the_cli_leaves_the_answer_alone(cli: Cli, seed: int) -> None:
    off = cli("plan", "pipelines", "--inventory", str(SEED000), "--seed", str(seed), *DYNAMIC, *NO_FACTOR_ONE)
    on = cli("plan", "pipelines", "--inventory", str(SEED000), "--seed", str(seed), *DYNAMIC)
    assert (off.last_line, on.last_line) == ("24", "20")


def test_seed000_plan_fields() -> None:
    plan = plan_pipelines(ScmSettings.from_conf(seed000_conf(False)), load_inventory(SEED000))
    assert plan.datanodes == 10 and plan.racks == 2
    assert [(g.count, g.metadata_disks, g.per_node_limit, g.slots) for g in plan.groups] == [
        (8, 4, 8, 64),
        (2, 2, 4, 8),
    ]
    assert (plan.node_slots, plan.node_target, plan.cluster_branch) == (72, 24, "global")
    assert plan.ratis_three == 24 and plan.ratis_one == 0
    assert plan.three_refusal  # the creator stopped because SCM refused, not for another reason


# ------------------------------------------------------------ fixed limit (L > 0)
@pytest.mark.parametrize("limit, expected", [(1, 3), (2, 6)])
@pytest.mark.parametrize("factor_one", [False, True])
def test_fixed_limit_ten_nodes(cli: Cli, tmp_path: Path, limit: int, expected: int, factor_one: bool) -> None:
    settings = {
        "ozone.scm.datanode.pipeline.limit": str(limit),
        "ozone.scm.pipeline.creation.auto.factor.one": str(factor_one).lower(),
    }
    plan = plan_pipelines(ScmSettings.from_conf(load_configuration(None, settings)), uniform(10))
    assert plan.ratis_three == expected
    assert plan.cluster_branch == "datanode"
    assert plan.ratis_one == (10 if factor_one else 0)
    assert str(limit) in plan.three_refusal

    inventory = write_csv(tmp_path / "ten.csv", uniform(10))
    flags = [a for key, value in settings.items() for a in ("-D", f"{key}={value}")]
    result = cli("plan", "pipelines", "--inventory", str(inventory), *flags)
    assert result.code == 0 and result.last_line == str(expected)
    assert f"floor({limit} * healthy datanodes / 3) = {expected}" in result.out


@pytest.mark.parametrize("factor_one", [False, True])
def test_fixed_limit_ignores_the_global_cap(factor_one: bool) -> None:
    """RatisPipelineProvider.exceedPipelineNumberLimit: with L > 0 ozone.scm.ratis.pipeline.limit is not
    consulted, even when it is smaller."""
    settings = {
        "ozone.scm.datanode.pipeline.limit": "2",
        "ozone.scm.ratis.pipeline.limit": "1",
        "ozone.scm.pipeline.creation.auto.factor.one": str(factor_one).lower(),
    }
    assert (
        plan_pipelines(ScmSettings.from_conf(load_configuration(None, settings)), uniform(10)).ratis_three
        == 6
    )


@pytest.mark.parametrize("healthy", [3, 4, 5, 7, 10, 11, 16])
@pytest.mark.parametrize("racks", [1, 2, 3])
def test_default_limit_is_floor_of_two_thirds_of_the_nodes(healthy: int, racks: int) -> None:
    plan = plan_pipelines(ScmSettings.from_conf(load_configuration(None, {})), uniform(healthy, racks))
    assert plan.datanode_pipeline_limit == 2
    assert plan.ratis_three == 2 * healthy // 3


# ------------------------------------------------------------ output and inputs
@pytest.mark.parametrize("factor_one, expected", [(False, 24), (True, 20)])
def test_json_output_matches_the_text_answer(cli: Cli, factor_one: bool, expected: int) -> None:
    flag = ("-D", f"ozone.scm.pipeline.creation.auto.factor.one={str(factor_one).lower()}")
    text = cli("plan", "pipelines", "--inventory", str(SEED000), *DYNAMIC, *flag)
    result = cli("plan", "pipelines", "--inventory", str(SEED000), "--json", *DYNAMIC, *flag)
    assert result.code == 0 and result.err == ""
    data = json.loads(result.out)
    assert isinstance(data, dict)
    assert data["ratis_three"] == expected == int(text.last_line)
    assert data["ratis_one"] == (10 if factor_one else 0)
    assert data["auto_factor_one"] is factor_one
    assert data["node_slots"] == 72 and data["cluster_branch"] == "global"
    assert [g["slots"] for g in data["groups"]] == [64, 8]
    assert data["steps"][-1] == f"SCM keeps {expected} open RATIS/THREE pipelines"


def test_json_inventory_is_equivalent_to_csv(cli: Cli, tmp_path: Path) -> None:
    assert load_inventory(SEED000_JSON) == load_inventory(SEED000)
    # Also without the .json suffix: a file that starts with '[' is JSON.
    bare = tmp_path / "inventory"
    bare.write_text(SEED000_JSON.read_text())
    assert load_inventory(bare) == load_inventory(SEED000)
    for flags in (DYNAMIC, DYNAMIC + NO_FACTOR_ONE):
        from_csv = cli("plan", "pipelines", "--inventory", str(SEED000), "--json", *flags)
        from_json = cli("plan", "pipelines", "--inventory", str(SEED000_JSON), "--json", *flags)
        assert from_csv.code == from_json.code == 0
        assert json.loads(from_json.out) == json.loads(from_csv.out)


def test_racks_without_a_leading_slash_are_the_same_racks(tmp_path: Path) -> None:
    path = tmp_path / "inv.csv"
    path.write_text("id,rack,data_disks,metadata_disks\n a , rack1 ,1,2\nb,/rack1,1,2\n")
    assert load_inventory(path) == [InventoryNode("a", "/rack1", 1, 2), InventoryNode("b", "/rack1", 1, 2)]


def test_a_node_without_data_disks_contributes_no_slots(cli: Cli, tmp_path: Path) -> None:
    nodes = [*uniform(3, racks=1), InventoryNode("empty", "/rack1", 0, 4)]
    plan: PipelinePlan = plan_pipelines(
        ScmSettings.from_conf(conf(ozone_scm_datanode_pipeline_limit=0)), nodes
    )
    by_data = {g.data_disks: g for g in plan.groups}
    assert by_data[0].count == 1 and by_data[0].per_node_limit == 0 and by_data[0].slots == 0
    assert plan.node_slots == 6 and plan.ratis_three == 2

    inventory = write_csv(tmp_path / "inv.csv", nodes)
    result = cli(
        "plan", "pipelines", "--inventory", str(inventory), "-D", "ozone.scm.datanode.pipeline.limit=0"
    )
    assert result.code == 0 and result.last_line == "2"
    assert "no healthy data disk, so no pipelines" in result.out


def test_only_zero_disk_nodes_make_no_pipelines() -> None:
    nodes = [InventoryNode(f"dn{i}", "/rack1", 0, 2) for i in range(5)]
    plan = plan_pipelines(ScmSettings.from_conf(conf(ozone_scm_datanode_pipeline_limit=0)), nodes)
    assert plan.node_slots == 0 and plan.ratis_three == 0


def test_no_global_cap_uses_the_node_slots_only() -> None:
    plan = plan_pipelines(
        ScmSettings.from_conf(load_configuration(None, {"ozone.scm.datanode.pipeline.limit": "0"})),
        load_inventory(SEED000),
    )
    assert plan.cluster_branch == "none"
    assert plan.ratis_three == 24 and plan.ratis_one == 10


def test_fewer_than_three_nodes_make_no_ratis_three(cli: Cli, tmp_path: Path) -> None:
    inventory = write_csv(tmp_path / "two.csv", uniform(2))
    result = cli("plan", "pipelines", "--inventory", str(inventory))
    assert result.code == 0 and result.last_line == "0"
