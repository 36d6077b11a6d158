"""`pyozone om [--init | --bootstrap [--force]]`: run the Ozone Manager (the namespace daemon), initialize its
storage (Ozone's `ozone om --init`), or start a new OM of an HA service that asks the leader to add it
(Ozone's `ozone om --bootstrap`, OzoneManagerStarter)."""

from __future__ import annotations

import argparse
import importlib

from pyozone.common.banner import configured, daemon_logging
from pyozone.common.cli_options import CLIError, load_configuration
from pyozone.config.dirs import daemon_umask


def register(subparsers: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "om",
        parents=[parent],
        allow_abbrev=False,
        help="start the Ozone Manager (volumes, buckets, keys)",
        description=(
            "Start the Ozone Manager on ozone.om.address. On its first start it takes the cluster id from "
            "SCM (ozone.scm.block.client.address or ozone.scm.names) and writes om/current/VERSION under "
            "ozone.metadata.dirs; om.db lives in ozone.om.db.dirs (default: ozone.metadata.dirs). --init "
            "does that and exits. --bootstrap starts a new OM of an HA service (named in "
            "ozone.om.nodes.SERVICE of every OM) and asks the service's leader to add it to the Raft group."
        ),
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--init", action="store_true",
        help="initialize the OM if not already initialized (cluster id from SCM, VERSION, om.db), then exit",
    )  # fmt: skip
    mode.add_argument(
        "--bootstrap", action="store_true",
        help="initialize and bootstrap the OM: the leader adds it to the service's Raft group; it serves on",
    )  # fmt: skip
    parser.add_argument(
        "--force", action="store_true",
        help="with --bootstrap: skip checking that every other OM's configuration has this OM (use only when "
        "an OM is down, after checking its ozone-site.xml by hand)",
    )  # fmt: skip
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.force and not args.bootstrap:
        raise CLIError("--force only applies to --bootstrap")
    conf = load_configuration(args)
    server = importlib.import_module("pyozone.om.server")  # the RPC server loads only for the daemon
    from pyozone.om.metadata import OMStoreError
    from pyozone.om.storage import OMStorageError

    details = configured(
        conf,
        "ozone.om.address",
        "ozone.om.http-address",
        "ozone.metadata.dirs",
        "ozone.om.db.dirs",
        "ozone.scm.block.client.address",
        "ozone.scm.names",
    )
    if args.bootstrap and conf.get("ozone.om.service.ids") is None:
        raise CLIError("--bootstrap adds an OM to an HA service: ozone.om.service.ids is not set")
    try:
        if args.init:
            with daemon_umask(conf):
                storage, created, where = server.init_om(conf)
            done = "initialization succeeded" if created else "already initialized. Reusing existing"
            print(f"OM {done}. Current cluster id for sd={where}; cid={storage.cluster_id}")
            print(f"omUuid={storage.om_uuid}")
            return 0
        with daemon_umask(conf), daemon_logging("OzoneManager", conf, details):
            return int(server.start_om(conf, args.bootstrap, args.force) or 0)
    except (server.ServerStartError, OMStorageError, OMStoreError) as e:
        raise CLIError(str(e)) from None
