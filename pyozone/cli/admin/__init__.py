"""`pyozone admin`: Ozone's `ozone admin` commands against a running SCM (and `admin om`, `admin scm`
against an OM or SCM HA service)."""

from __future__ import annotations

import argparse

from pyozone.cli.admin import (
    cert,
    container,
    containerbalancer,
    datanode,
    om,
    pipeline,
    replicationmanager,
    safemode,
    scm,
    snapshot,
)


def register(subparsers, parent: argparse.ArgumentParser) -> None:
    admin = subparsers.add_parser("admin", parents=[parent], help="administer a running cluster (SCM)")
    groups = admin.add_subparsers(dest="admin_group", metavar="GROUP")
    groups.required = True
    for module in (
        datanode,
        pipeline,
        container,
        safemode,
        replicationmanager,
        containerbalancer,
        snapshot,
        cert,
        om,
        scm,
    ):
        module.register(groups, parent)
