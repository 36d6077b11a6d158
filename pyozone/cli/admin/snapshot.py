"""`pyozone admin snapshot --out DIR`: a consistent snapshot of SCM's metadata as Parquet, for analytics.

Nodes, pipelines, containers, replicas, pending replica operations and deleted-block transactions, as of
one instant, in the format of pyozone/analytics/schema.py; written in row groups, so memory stays bounded
on both sides whatever the cluster's size. With --keys the keys table holds every key of OM
(ozone.om.address) with its blocks, read right after SCM's tables; without it the table is empty.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from pyozone.cli.admin.connect import add_connection_options, connect
from pyozone.common.cli_options import CLIError, given_path, load_configuration
from pyozone.common.output import print_json


def register(groups, parent: argparse.ArgumentParser) -> None:
    snapshot = groups.add_parser(
        "snapshot", parents=[parent], help="write a snapshot of SCM's metadata as Parquet (for analytics)"
    )
    snapshot.add_argument("--out", required=True, metavar="DIR", help="a new directory to write")
    snapshot.add_argument(
        "--batch-rows", type=int, default=0, metavar="N", help="rows per streamed batch (default: SCM's)"
    )
    snapshot.add_argument(
        "--keys",
        action="store_true",
        help="also write every key with its blocks, read from OM (ozone.om.address)",
    )
    add_connection_options(snapshot)
    snapshot.set_defaults(func=run_snapshot)


def _check_out_parent(out: Path) -> None:
    """--out is created with its parents: the nearest existing one must be a directory (checked before SCM
    is asked, so the mistake is reported first; what the filesystem refuses later is reported too)."""
    existing = out
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if existing != out and not existing.is_dir():
        raise CLIError(f"--out {out}: {existing} is not a directory")


def run_snapshot(args: argparse.Namespace) -> int:
    # pyarrow loads here, not when any `pyozone` command starts.
    from pyozone.admin.om_keys import snapshot_keys
    from pyozone.admin.snapshot import fetch_snapshot
    from pyozone.analytics.schema import SnapshotError

    if args.batch_rows < 0:
        raise CLIError(f"--batch-rows: must be at least 0, got {args.batch_rows}")
    args.out = Path(str(given_path(args.out, "--out")))
    _check_out_parent(args.out)
    start = time.perf_counter()
    try:
        with connect(args) as scm:
            keys = snapshot_keys(load_configuration(args)) if args.keys else None
            manifest = fetch_snapshot(scm, args.out, args.batch_rows, keys)
    except SnapshotError as e:
        raise CLIError(str(e)) from None
    except OSError as e:
        if e.filename is None:
            raise
        raise CLIError(f"--out {args.out}: cannot write {e.filename}: {e.strerror}") from None
    seconds = time.perf_counter() - start
    if args.json:
        print_json({"directory": str(args.out), **json.loads(manifest.to_json())})
        return 0
    total = sum(manifest.rows.values())
    print(
        f"Snapshot of cluster {manifest.cluster_id} in {args.out} (schema version {manifest.schema_version})"
    )
    for table, rows in manifest.rows.items():
        print(f"{table}: {rows}{' (not asked for: --keys)' if table == 'keys' and not args.keys else ''}")
    print(f"{total} rows in {seconds:.1f} s")
    return 0
