"""`pyozone repair db --db PATH [--skip-corrupted-records]`: salvage a RocksDB that will not open because
its write-ahead log is corrupt (Ozone's `ozone repair`).

`pyozone repair ratislog --dir GROUP_DIR`: cut a Raft member's log at its first damage, so the member
starts again (pyozone/ratis_server/segmented_log.py `repair_log`, which says what that risks).

Every daemon refuses a database whose log is damaged anywhere but its torn last record, since opening it
would silently drop acknowledged writes (pyozone/hdds/store/rocksdb.py). This is the operator's explicit
choice to accept that loss: the log is replayed up to its first damaged record (point-in-time recovery),
or with --skip-corrupted-records past every damaged record (more data, but the writes kept may not form
a consistent prefix), then everything is flushed to table files so the database opens normally again.
Stop the daemon that owns the database first; it holds the database's lock.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rocksdict import DBRecoveryMode

from pyozone.common.cli_options import CLIError, given_path
from pyozone.hdds.store.rocksdb import RocksDBBackend, StoreError, is_rocksdb
from pyozone.ratis_server.segmented_log import CURRENT_DIR, repair_log


def register(subparsers: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    repair = subparsers.add_parser(
        "repair", parents=[parent], help="salvage damaged on-disk state", description=__doc__
    )
    tools = repair.add_subparsers(dest="repair_command", metavar="TOOL", required=True)
    db = tools.add_parser(
        "db",
        allow_abbrev=False,
        help="open a RocksDB with a corrupt write-ahead log, keeping what is readable",
        description="Replay a corrupt write-ahead log as far as it can be read, then flush, so the "
        "database opens again. Writes after the damage are lost.",
    )
    db.add_argument("--db", required=True, metavar="PATH", help="the DB directory, e.g. om.db")
    db.add_argument(
        "--skip-corrupted-records",
        action="store_true",
        help="replay past every damaged record instead of stopping at the first one",
    )
    db.set_defaults(func=run_db)
    ratislog = tools.add_parser(
        "ratislog",
        allow_abbrev=False,
        help="cut a Raft member's damaged log at its first damage",
        description="Cut a Raft member's log at its first damaged record and delete the segments after "
        "it, so the member starts again. Stop the member first. The member gets the entries after the "
        "damage back from the leader, but it may have counted in a majority for them: deleting the "
        "member's log and letting the leader send a snapshot is the safe way out. A damaged raft-meta, "
        "and segments that do not fit together (a gap, an overlap), are refused: nothing is cut there.",
    )
    ratislog.add_argument(
        "--dir", required=True, metavar="GROUP_DIR", help="the member's group directory (holds current/)"
    )
    ratislog.set_defaults(func=run_ratislog)


def run_db(args: argparse.Namespace) -> int:
    path = Path(str(given_path(args.db, "--db")))
    if not is_rocksdb(path):
        raise CLIError(f"{path}: not a RocksDB database (no CURRENT file)")
    if args.skip_corrupted_records:
        mode, how = DBRecoveryMode.skip_any_corrupted_record(), "skipping every damaged record"
    else:
        mode, how = DBRecoveryMode.point_in_time(), "up to its first damaged record"
    try:
        backend = RocksDBBackend(path, owner="the daemon that owns it", recovery=mode)
    except StoreError as e:
        raise CLIError(str(e)) from None
    try:
        counts = {cf: sum(1 for _ in backend.items(cf)) for cf in backend.column_families}
        backend.flush()
    finally:
        backend.close()
    print(f"{path}: write-ahead log replayed {how}, and flushed; the database opens normally again.")
    for cf, n in counts.items():
        print(f"  {cf}: {n} keys")
    return 0


def run_ratislog(args: argparse.Namespace) -> int:
    group_dir = Path(str(given_path(args.dir, "--dir")))
    if not (group_dir / CURRENT_DIR).is_dir():
        raise CLIError(f"{group_dir}: not a Raft member's group directory (no {CURRENT_DIR}/ in it)")
    try:
        done = repair_log(group_dir)
    except (StoreError, OSError) as e:
        raise CLIError(str(e)) from None
    for line in done:
        print(line)
    return 0
