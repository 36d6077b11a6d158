"""`pyozone admin pipeline list|create|close|activate|deactivate`."""

from __future__ import annotations

import argparse

from pyozone.cli.admin.connect import add_connection_options, connect
from pyozone.common.cli_options import CLIError
from pyozone.common.output import print_json, print_table
from pyozone.framework.scm_admin import PipelineView
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.states import PipelineState
from pyozone.protocol.json_views import pipeline_dict


def register(groups, parent: argparse.ArgumentParser) -> None:
    pipeline = groups.add_parser("pipeline", parents=[parent], help="pipelines: list, create, close, ...")
    commands = pipeline.add_subparsers(dest="pipeline_command", metavar="COMMAND")
    commands.required = True
    listing = commands.add_parser("list", parents=[parent], help="every pipeline SCM knows")
    listing.add_argument("-s", "--state", choices=[s.name for s in PipelineState], help="only this state")
    listing.add_argument(
        "-r", "--replication", metavar="TYPE/FACTOR", help="only this config, e.g. RATIS/THREE"
    )
    add_connection_options(listing)
    listing.set_defaults(func=run_list)
    create = commands.add_parser("create", parents=[parent], help="create a pipeline now")
    create.add_argument("-t", "--replication-type", default="RATIS", choices=["RATIS"])
    create.add_argument("-f", "--replication-factor", default="THREE", choices=["ONE", "THREE"])
    add_connection_options(create)
    create.set_defaults(func=run_create)
    for name, help_text in (
        ("close", "close a pipeline (its containers close too)"),
        ("activate", "move a DORMANT pipeline back to OPEN"),
        ("deactivate", "move an OPEN pipeline to DORMANT: no new writes"),
    ):
        command = commands.add_parser(name, parents=[parent], help=help_text)
        command.add_argument("pipeline_id", metavar="PIPELINE_ID")
        add_connection_options(command)
        command.set_defaults(func=run_change, action=name)


def _name(view: PipelineView, dn: str | None) -> str:
    if dn is None:
        return "-"
    details = view.members.get(dn)
    return details.hostname if details else dn


def _members(view: PipelineView) -> str:
    """The members in order; an EC pipeline's as host#index (member i holds replica index i + 1)."""
    names = [_name(view, dn) for dn in view.pipeline.nodes]
    if view.is_ec:
        names = [f"{name}#{i + 1}" for i, name in enumerate(names)]
    return ",".join(names)


def run_list(args: argparse.Namespace) -> int:
    config = None
    if args.replication:
        try:
            config = ReplicationConfig.parse(args.replication)
        except ValueError as e:
            raise CLIError(f"--replication: {e}") from None
    with connect(args) as scm:
        views = [
            v
            for v in scm.pipelines()
            if (args.state is None or v.pipeline.state.name == args.state)
            and (config is None or v.pipeline.replication_config == config)
        ]
    views.sort(key=lambda v: (str(v.pipeline.replication_config), v.pipeline.state.value, v.pipeline.id))
    if args.json:
        print_json([pipeline_dict(v) for v in views])
        return 0
    rows = [
        (
            v.pipeline.id,
            v.pipeline.replication_config,
            v.pipeline.state.name,
            _name(v, v.pipeline.leader),
            _members(v),
        )
        for v in views
    ]
    print_table(("PIPELINE ID", "REPLICATION", "STATE", "LEADER", "NODES"), rows)
    print(f"\n{len(views)} pipeline(s)")
    return 0


def run_create(args: argparse.Namespace) -> int:
    config = ReplicationConfig.parse(f"{args.replication_type}/{args.replication_factor}")
    with connect(args) as scm:
        view = scm.create_pipeline(config)
    if args.json:
        print_json(pipeline_dict(view))
    else:
        print(
            f"Pipeline {view.pipeline.id} ({view.pipeline.replication_config}) created on "
            f"{_members(view)}; state {view.pipeline.state.name}"
        )
    return 0


def run_change(args: argparse.Namespace) -> int:
    with connect(args) as scm:
        getattr(scm, f"{args.action}_pipeline")(args.pipeline_id)
    past = {"close": "closed", "activate": "activated", "deactivate": "deactivated"}[args.action]
    if args.json:
        print_json({"pipelineId": args.pipeline_id, "result": past})
    else:
        print(f"Pipeline {args.pipeline_id} {past}")
    return 0
