"""`pyozone plan pipelines --inventory FILE`: the pipeline count SCM will keep, from the real code."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from pyozone.common.cli_options import CLIError, load_configuration
from pyozone.plan.inventory import InventoryError, load_inventory
from pyozone.scm.pipeline.planner import plan_pipelines
from pyozone.scm.settings import ScmSettings


def register(subparsers, parent: argparse.ArgumentParser) -> None:
    plan = subparsers.add_parser("plan", parents=[parent], help="what-if planners on the real SCM code")
    kinds = plan.add_subparsers(dest="plan_kind", metavar="KIND")
    kinds.required = True
    pipelines = kinds.add_parser(
        "pipelines",
        parents=[parent],
        help="open RATIS/THREE pipelines SCM keeps for an inventory of datanodes",
    )
    pipelines.add_argument(
        "--inventory",
        required=True,
        type=Path,
        metavar="FILE",
        help="CSV with header id,rack,data_disks,metadata_disks, or a JSON list",
    )
    pipelines.add_argument("--json", action="store_true", help="print the whole result as JSON")
    pipelines.add_argument("--seed", type=int, default=0, help="seed for placement tie-breaks")
    pipelines.set_defaults(func=run_pipelines)


def run_pipelines(args: argparse.Namespace) -> int:
    conf = load_configuration(args)
    try:
        inventory = load_inventory(args.inventory)
    except InventoryError as e:
        raise CLIError(str(e)) from None
    plan = plan_pipelines(ScmSettings.from_conf(conf), inventory, seed=args.seed)
    if args.json:
        print(json.dumps(plan.to_dict(), indent=2))
        return 0
    print(f"Datanodes: {plan.datanodes} healthy on {plan.racks} rack(s)")
    print(
        f"Settings: ozone.scm.datanode.pipeline.limit={plan.datanode_pipeline_limit}, "
        f"ozone.scm.pipeline.per.metadata.disk={plan.per_metadata_disk}, "
        f"ozone.scm.ratis.pipeline.limit={plan.ratis_pipeline_limit}, "
        f"ozone.scm.pipeline.creation.auto.factor.one={str(plan.auto_factor_one).lower()}"
    )
    for number, step in enumerate(plan.steps, 1):
        print(f"  {number}. {step}")
    print(plan.ratis_three)
    return 0
