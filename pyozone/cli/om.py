"""`pyozone om`: run the Ozone Manager (the namespace daemon)."""

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
            "ozone.metadata.dirs; om.db lives in ozone.om.db.dirs (default: ozone.metadata.dirs)."
        ),
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
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
    try:
        with daemon_umask(conf), daemon_logging("OzoneManager", conf, details):
            return int(server.start_om(conf) or 0)
    except (server.ServerStartError, OMStorageError, OMStoreError) as e:
        raise CLIError(str(e)) from None
