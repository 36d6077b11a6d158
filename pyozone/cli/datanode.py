"""`pyozone datanode`: run a datanode until SIGTERM or SIGINT."""

from __future__ import annotations

import argparse

from pyozone.common.banner import configured, daemon_logging
from pyozone.common.cli_options import CLIError, load_configuration
from pyozone.config.dirs import daemon_umask


def register(subparsers: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "datanode",
        parents=[parent],
        allow_abbrev=False,
        help="start a datanode",
        description=(
            "Start a datanode: it finds SCM through ozone.scm.datanode.address or ozone.scm.names, keeps "
            "its data in hdds.datanode.dir and its identity in ozone.metadata.dirs, and runs until "
            "SIGTERM or Ctrl-C. Its servers bind to 127.0.0.1 when every configured SCM address is a "
            "loopback address, else to 0.0.0.0. Exit code 1: a configuration or cluster error."
        ),
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    conf = load_configuration(args)
    # Imported here: the daemon pulls in RPC servers and storage that other commands do not need.
    from pyozone.datanode.daemon import run_datanode
    from pyozone.datanode.errors import DatanodeError
    from pyozone.datanode.settings import DatanodeSettings

    settings = DatanodeSettings.from_conf(conf)  # refused before anything is logged or written
    details = {
        **configured(
            conf,
            "ozone.scm.names",
            "ozone.scm.datanode.address",
            "hdds.datanode.dir",
            "ozone.metadata.dirs",
            "hdds.container.ipc.port",
            "hdds.container.ratis.ipc.port",
            "hdds.container.ratis.datastream.port",
            "hdds.datanode.replication.port",
            "hdds.datanode.http-address",
        ),
        "datanode.id dir": settings.storage.identity_dir(),
        "hdds.container.ratis.datanode.storage.dir": settings.storage.ratis_storage_dir(),
    }
    try:
        with daemon_umask(conf), daemon_logging("HddsDatanodeService", conf, details):
            return run_datanode(conf, settings)
    except DatanodeError as e:
        raise CLIError(str(e)) from None
