"""`pyozone scm [--init [--clusterid CID-...] [--join-token ROLE[:HOST][:SERVICE/NODE]=FILE ...]]`:
initialise or start the Storage Container Manager.

With ozone.security.enabled, --init also makes SCM's certificate authority and the certificates it starts
with (scm/server/ca_files.py), mints one JOIN credential per --join-token (one daemon each), and prints
where they are."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from pyozone.common.banner import configured, daemon_logging
from pyozone.common.cli_options import CLIError, load_configuration
from pyozone.config import OzoneConfiguration
from pyozone.config.dirs import daemon_umask
from pyozone.hdds.store import StoreError
from pyozone.scm.store.layout import scm_db_dir, scm_metadata_dir, version_file
from pyozone.scm.store.version import SCMStorageConfig, StorageError, init_scm, open_scm_store
from pyozone.security.config import SecurityConfig

if TYPE_CHECKING:
    from pyozone.protocol.snapshot import SnapshotChunk
    from pyozone.scm.scm import StorageContainerManager


SCM_BANNER_KEYS = (
    "ozone.scm.client.address",
    "ozone.scm.datanode.address",
    "ozone.scm.block.client.address",
    "ozone.scm.http-address",
    "ozone.metadata.dirs",
)


def register(subparsers: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "scm",
        parents=[parent],
        allow_abbrev=False,
        help="initialise or start the Storage Container Manager",
        description="Start the SCM, or with --init create its cluster identity and an empty scm.db.",
    )
    parser.add_argument(
        "--init", action="store_true", help="create the cluster identity (VERSION) and scm.db, then exit"
    )
    parser.add_argument("--clusterid", metavar="CID-...", help="with --init: the cluster id to use")
    parser.add_argument(
        "--join-token",
        action="append",
        default=[],
        metavar="ROLE[:HOST][:SERVICE/NODE]=FILE",
        help="with --init on a secure cluster: write a JOIN credential for one new daemon (ROLE om, dn or "
        "s3g; HOST binds it to that host, SERVICE/NODE to that HA OM node) to FILE (repeatable)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.clusterid is not None and not args.init:
        raise CLIError("--clusterid only applies to --init")
    if args.join_token and not args.init:
        raise CLIError("--join-token only applies to --init")
    conf = load_configuration(args)
    try:
        with daemon_umask(conf):
            return _init(conf, args.clusterid, tuple(args.join_token)) if args.init else _start(conf)
    except (StorageError, StoreError) as e:
        raise CLIError(str(e)) from None


def _init(conf: OzoneConfiguration, cluster_id: str | None, joins: tuple[str, ...] = ()) -> int:
    secure = SecurityConfig.from_conf(conf).enabled
    if joins and not secure:
        raise CLIError("--join-token needs ozone.security.enabled=true: there is no CA to mint it")
    storage, created = init_scm(conf, cluster_id)
    storage_dir = version_file(scm_metadata_dir(conf)).parent.parent
    if created:
        print(
            f"SCM initialization succeeded. Current cluster id for sd={storage_dir}; "
            f"cid={storage.cluster_id}; layoutVersion={storage.layout_version}"
        )
        print(f"scmUuid={storage.scm_uuid}")
    else:
        if cluster_id is not None and cluster_id != storage.cluster_id:
            print(
                f"pyozone scm: warning: ignoring --clusterid {cluster_id}: the SCM keeps its cluster id",
                file=sys.stderr,
            )
        print(
            f"SCM already initialized. Reusing existing cluster id for sd={storage_dir}; "
            f"cid={storage.cluster_id}; layoutVersion={storage.layout_version}"
        )
    if secure:
        _init_security(conf, storage, joins)
    return 0


def _init_security(conf: OzoneConfiguration, storage: SCMStorageConfig, joins: tuple[str, ...]) -> None:
    # Loaded only for a secure SCM: it brings the CA and TLS code with it.
    from pyozone.hdds.security.errors import SecurityError
    from pyozone.scm.server.ca_files import JoinRequest, SecuritySetupError, init_security

    try:
        report = init_security(conf, storage, tuple(JoinRequest.parse(j) for j in joins))
    except (SecuritySetupError, SecurityError, ValueError) as e:
        raise CLIError(str(e)) from None
    for line in report.lines:
        print(line)


async def snapshot_chunks(core: StorageContainerManager, batch_rows: int) -> AsyncIterator[SnapshotChunk]:
    """The daemon's SnapshotSource: analytics (and pyarrow) load with the first snapshot asked for."""
    from pyozone.analytics.snapshot_stream import snapshot_chunks as stream

    async for chunk in stream(core, batch_rows):
        yield chunk


def _start(conf: OzoneConfiguration) -> int:
    storage, store = open_scm_store(conf)
    server = importlib.import_module("pyozone.scm.server")  # the RPC servers load only for the daemon

    details = {
        **configured(conf, *SCM_BANNER_KEYS),
        "scm.db": scm_db_dir(conf),
        "clusterID": storage.cluster_id,
    }
    try:
        with daemon_logging("StorageContainerManager", conf, details):
            return int(server.start_scm(conf, storage, store, snapshot_chunks) or 0)
    except server.ServerStartError as e:
        raise CLIError(str(e)) from None
