"""`pyozone scm [--init [--clusterid CID-...] [--join-token ROLE[:HOST][:SERVICE/NODE]=FILE ...]]`,
`pyozone scm --bootstrap`: initialise or start the Storage Container Manager.

In an HA service (`ozone.scm.service.ids`), as Ozone's: `--init` initialises the primordial SCM
(`ozone.scm.primordial.node.id`) and does nothing on the others; `--bootstrap` initialises one of the
others with the cluster id the running SCMs answer (getScmInfo), its own scmUuid and an empty scm.db.

With ozone.security.enabled, --init also makes SCM's certificate authority and the certificates it starts
with (scm/server/ca_files.py), mints one JOIN credential per --join-token (one daemon each; `scm:NODE=FILE`
for another SCM of the service), and prints where they are; --bootstrap obtains this SCM's sub-CA from the
primordial SCM's root with such a credential and copies the primordial's scm.db
(scm/server/ca_bootstrap.py)."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from pyozone.common.banner import configured, daemon_logging
from pyozone.common.cli_options import CLIError, load_configuration
from pyozone.common.scm_ha import ScmAddresses, ScmNodeDetails, local_scm_node, primordial_scm_node
from pyozone.config import ConfigError, OzoneConfiguration
from pyozone.config.dirs import daemon_umask
from pyozone.hdds.store import StoreError
from pyozone.scm.store.layout import scm_db_dir, scm_metadata_dir, version_file
from pyozone.scm.store.version import (
    SCMStorageConfig,
    StorageError,
    init_scm,
    open_scm_store,
    read_scm_storage,
)
from pyozone.security.config import SecurityConfig

if TYPE_CHECKING:
    from pyozone.protocol.snapshot import SnapshotChunk
    from pyozone.scm.scm import StorageContainerManager
    from pyozone.scm.settings import ScmSettings


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
    parser.add_argument(
        "--bootstrap",
        action="store_true",
        help="in an HA service: initialise this SCM with the cluster id of the running SCMs (with security: "
        "its sub-CA from the primordial SCM, presenting ozone.security.join.credentials.file, and a copy "
        "of the primordial's scm.db), then exit",
    )
    parser.add_argument("--clusterid", metavar="CID-...", help="with --init: the cluster id to use")
    parser.add_argument(
        "--join-token",
        action="append",
        default=[],
        metavar="ROLE[:HOST][:SERVICE/NODE]=FILE",
        help="with --init on a secure cluster: write a JOIN credential for one new daemon (ROLE om, dn or "
        "s3g; HOST binds it to that host, SERVICE/NODE to that HA OM node; scm:NODE for another SCM of the "
        "service, which --bootstrap presents) to FILE (repeatable)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.clusterid is not None and not args.init:
        raise CLIError("--clusterid only applies to --init")
    if args.join_token and not args.init:
        raise CLIError("--join-token only applies to --init")
    if args.bootstrap and args.init:
        raise CLIError(
            "--init and --bootstrap exclude each other: --init on the primordial SCM, --bootstrap on the "
            "others"
        )
    conf = load_configuration(args)
    from pyozone.scm.settings import ScmSettings  # the SCM core's groups load for `pyozone scm` alone

    try:
        # refused before anything is written or logged, by --init and --bootstrap too: SCM would refuse them
        settings = ScmSettings.from_conf(conf)
        with daemon_umask(conf):
            if args.bootstrap:
                return _bootstrap(conf)
            if args.init:
                return _init(conf, args.clusterid, tuple(args.join_token))
            return _start(conf, settings)
    except (StorageError, StoreError, ConfigError) as e:
        raise CLIError(str(e)) from None


def _primordial_elsewhere(conf: OzoneConfiguration) -> str | None:
    """In an HA service whose primordial SCM (`ozone.scm.primordial.node.id`) is another node: why this
    SCM's `--init` does nothing (Ozone's SCMHAUtils.isPrimordialSCM); None otherwise."""
    node = local_scm_node(conf)
    if node is None:
        return None
    primordial = primordial_scm_node(conf, node.service_id)
    if primordial is None or primordial.node_id == node.node_id:
        return None
    return (
        f"SCM {node.node_id} of service {node.service_id} is not the primordial SCM "
        f"(ozone.scm.primordial.node.id: {primordial.node_id})"
    )


def _bootstrap(conf: OzoneConfiguration) -> int:
    """`scm --bootstrap` (Ozone's StorageContainerManager.scmBootstrap): the cluster id of the running SCMs,
    then VERSION with this SCM's own scmUuid and an empty scm.db."""
    node = local_scm_node(conf)
    if node is None:
        raise CLIError("--bootstrap is for an SCM of an HA service: set ozone.scm.service.ids")
    primordial = primordial_scm_node(conf, node.service_id)
    if primordial is not None and primordial.node_id == node.node_id:
        print(f"SCM {node.node_id} is the primordial SCM: bootstrap skipped (run scm --init on it)")
        return 0
    secure = SecurityConfig.from_conf(conf).enabled
    storage_dir = version_file(scm_metadata_dir(conf)).parent.parent
    cluster_id = _service_cluster_id(conf, node, secure)
    if version_file(scm_metadata_dir(conf)).exists():
        storage = read_scm_storage(scm_metadata_dir(conf))
        if storage.cluster_id != cluster_id:
            raise CLIError(
                f"SCM {node.node_id} cannot bootstrap: it is already initialized with cluster id "
                f"{storage.cluster_id} (sd={storage_dir}) but the running SCMs of service {node.service_id} "
                f"have {cluster_id}"
            )
        print(f"SCM already initialized with cluster id {cluster_id} (sd={storage_dir})")
    else:
        storage, _ = init_scm(conf, cluster_id)
        print(
            f"SCM bootstrap succeeded. Current cluster id for sd={storage_dir}; cid={storage.cluster_id}; "
            f"layoutVersion={storage.layout_version}"
        )
        print(f"scmUuid={storage.scm_uuid}")
    if secure:  # each step skipped when done: a bootstrap cut short is run again
        _bootstrap_security(conf, storage, node, primordial)
    return 0


def _bootstrap_security(
    conf: OzoneConfiguration,
    storage: SCMStorageConfig,
    node: ScmNodeDetails,
    primordial: ScmNodeDetails | None,
) -> None:
    # Loaded only for a secure SCM: it brings the CA and TLS code with it.
    from pyozone.scm.server.ca_bootstrap import bootstrap_security
    from pyozone.scm.server.ca_files import SecuritySetupError

    if primordial is None:
        raise CLIError(
            f"SCM {node.node_id} cannot bootstrap securely: ozone.scm.primordial.node.id names no SCM of "
            f"service {node.service_id}, and the primordial SCM holds the root CA that signs this one's"
        )
    try:
        report = bootstrap_security(conf, storage, node, primordial)
    except SecuritySetupError as e:
        raise CLIError(str(e)) from None
    for line in report.lines:
        print(line)


def _service_cluster_id(conf: OzoneConfiguration, node: ScmNodeDetails, secure: bool) -> str:
    """The cluster id the first other SCM of the service that answers getScmInfo gives (over mutual TLS
    with this SCM's JOIN credential when the ports take nothing else)."""
    from contextlib import nullcontext

    from pyozone.framework.scm_admin import ScmAdminClient
    from pyozone.framework.scm_errors import ScmClientError

    refusals = []
    if secure:
        from pyozone.scm.server.ca_bootstrap import bootstrap_tls
        from pyozone.scm.server.ca_files import SecuritySetupError

        try:
            presented = bootstrap_tls(conf)
        except SecuritySetupError as e:
            raise CLIError(str(e)) from None
    else:
        presented = nullcontext(None)
    with presented as tls:
        for other in ScmAddresses.from_conf(conf, node.service_id).nodes:
            if other.node_id == node.node_id:
                continue
            try:
                with ScmAdminClient(other.client_address, timeout_s=10.0, tls=tls) as client:
                    return client.scm_info().cluster_id
            except ScmClientError as e:
                refusals.append(f"{other.node_id} at {other.client_address}: {e}")
    raise CLIError(
        f"SCM {node.node_id} cannot bootstrap: no other SCM of service {node.service_id} answered its "
        f"cluster id ({'; '.join(refusals) or 'the service names no other SCM'}); start the primordial "
        "SCM first"
    )


def _init(conf: OzoneConfiguration, cluster_id: str | None, joins: tuple[str, ...] = ()) -> int:
    elsewhere = _primordial_elsewhere(conf)
    if elsewhere is not None:
        print(f"{elsewhere}: init skipped (run scm --bootstrap on it)")
        return 0
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


def _start(conf: OzoneConfiguration, settings: ScmSettings) -> int:
    storage, store = open_scm_store(conf)
    server = importlib.import_module("pyozone.scm.server")  # the RPC servers load only for the daemon

    details = {
        **configured(conf, *SCM_BANNER_KEYS),
        "scm.db": scm_db_dir(conf),
        "clusterID": storage.cluster_id,
    }
    try:
        with daemon_logging("StorageContainerManager", conf, details):
            return int(server.start_scm(conf, storage, store, snapshot_chunks, settings) or 0)
    except server.ServerStartError as e:
        raise CLIError(str(e)) from None
