"""`pyozone debug ldb --db PATH ls|scan`: read a RocksDB such as scm.db, as Ozone's `ozone debug ldb`.

The DB is opened read-only, so this works on the scm.db of a running SCM.

`pyozone debug ratislogparser generic|om|scm -s SEGMENT`: print a Raft log segment's entries, as Ozone's
`ozone debug ratislogparser`; `om` also decodes each OM entry (its om.db ops and the calls it
answered), `scm` each SCM entry (its scm.db ops, keys read as `ldb scan` reads them).

`pyozone debug rm-scenario FILE.json|DIR ...`: run Replication Manager scenario files (the JSON format of
Ozone's TestReplicationManagerScenarios) through a real Replication Manager; PASS/FAIL per
scenario with the differences; exit 1 if any fails, 2 if a file is malformed.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
from pathlib import Path
from typing import Any

from pyozone.common.cli_options import CLIError, given_path
from pyozone.hdds.store.rocksdb import RocksDBBackend, StoreError, list_column_families
from pyozone.protocol.om_ratis import describe as describe_om_entry
from pyozone.protocol.scm_ratis import describe as describe_scm_entry
from pyozone.ratis_server.segment_file import dump_segment
from pyozone.scm.store.metadata_store import INT_KEY_TABLES


def register(subparsers: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    debug = subparsers.add_parser(
        "debug", parents=[parent], help="inspect on-disk state", description="Tools to inspect on-disk state."
    )
    tools = debug.add_subparsers(dest="debug_command", metavar="TOOL", required=True)
    ldb = tools.add_parser(
        "ldb",
        allow_abbrev=False,
        help="read a RocksDB (such as scm.db) read-only",
        description="Read a RocksDB such as scm.db, read-only.",
    )
    ldb.add_argument("--db", required=True, metavar="PATH", help="the DB directory, e.g. <dir>/scm.db")
    actions = ldb.add_subparsers(dest="ldb_command", metavar="ACTION", required=True)
    actions.add_parser("ls", help="list the column families").set_defaults(func=run_ls)
    scan = actions.add_parser(
        "scan",
        allow_abbrev=False,
        help="print the records of one column family",
        description='Print one JSON object per record: {"key": ..., "value": ...}.',
    )
    scan.add_argument(
        "--column-family", "--column_family", "--cf", dest="column_family", required=True, metavar="NAME"
    )
    scan.add_argument("-l", "--limit", type=_positive_int, metavar="N", help="print at most N records")
    scan.set_defaults(func=run_scan)
    scenario = tools.add_parser(
        "rm-scenario",
        allow_abbrev=False,
        help="run Replication Manager scenario files",
        description="Run Replication Manager scenarios (Ozone's TestReplicationManagerScenarios JSON) "
        "through a real Replication Manager and compare with what they expect.",
    )
    scenario.add_argument(
        "paths", nargs="+", type=Path, metavar="FILE.json", help="scenario files, or directories of them"
    )
    scenario.set_defaults(func=run_rm_scenario)
    parser = tools.add_parser(
        "ratislogparser",
        allow_abbrev=False,
        help="print the entries of a Raft log segment",
        description="Print the entries of a Raft log segment file (log_inprogress_N or log_N-M).",
    )
    kinds = parser.add_subparsers(dest="ratislog_kind", metavar="KIND", required=True)
    generic = kinds.add_parser(
        "generic", allow_abbrev=False, help="any group's log: entries without their state machine's meaning"
    )
    generic.add_argument(
        "-s", "--segment-path", "--segmentPath", dest="segment", required=True, metavar="SEGMENT",
        help="the segment file, e.g. <ratis dir>/<group id>/current/log_inprogress_1",
    )  # fmt: skip
    generic.set_defaults(func=run_ratislogparser)
    om = kinds.add_parser(
        "om", allow_abbrev=False, help="an OM service's log: each entry with its om.db ops and calls"
    )
    om.add_argument(
        "-s", "--segment-path", "--segmentPath", dest="segment", required=True, metavar="SEGMENT",
        help="the segment file, e.g. <ozone.om.ratis.storage.dir>/<group id>/current/log_inprogress_1",
    )  # fmt: skip
    om.set_defaults(func=run_ratislogparser, describe=describe_om_entry)
    scm = kinds.add_parser(
        "scm", allow_abbrev=False, help="an SCM service's log: each entry with its scm.db ops"
    )
    scm.add_argument(
        "-s", "--segment-path", "--segmentPath", dest="segment", required=True, metavar="SEGMENT",
        help="the segment file, e.g. <ozone.scm.ha.ratis.storage.dir>/<group id>/current/log_inprogress_1",
    )  # fmt: skip
    scm.set_defaults(
        func=run_ratislogparser, describe=functools.partial(describe_scm_entry, key_text=decode_key)
    )


def run_ratislogparser(args: argparse.Namespace) -> int:
    path = Path(str(given_path(args.segment, "--segment-path")))
    if not path.is_file():
        raise CLIError(f"{path}: no such segment file")
    try:
        for line in dump_segment(path, getattr(args, "describe", None)):
            print(line)
    except OSError as e:
        raise CLIError(f"{path}: {e}") from None
    return 0


def _positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive integer")
    return int(text)


def _db(args: argparse.Namespace) -> Path:
    return Path(str(given_path(args.db, "--db")))


def run_ls(args: argparse.Namespace) -> int:
    try:
        names = list_column_families(_db(args))
    except StoreError as e:
        raise CLIError(str(e)) from None
    for name in sorted(names):  # the manifest keeps creation order, which rocksdict leaves random
        print(name)
    return 0


def run_scan(args: argparse.Namespace) -> int:
    try:
        backend = RocksDBBackend(_db(args), read_only=True)
    except StoreError as e:
        raise CLIError(str(e)) from None
    try:
        if args.column_family not in backend.column_families:
            raise CLIError(
                f"no column family {args.column_family!r} in {args.db}; "
                f"valid: {', '.join(backend.column_families)}"
            )
        for count, (key, value) in enumerate(backend.items(args.column_family), start=1):
            record = {"key": decode_key(args.column_family, key), "value": decode_value(value)}
            print(json.dumps(record))
            if count == args.limit:
                break
    except BrokenPipeError:
        # The reader (`| head`) left; point stdout at /dev/null so the exit-time flush stays quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    finally:
        backend.close()
    return 0


def decode_key(column_family: str, key: bytes) -> int | str:
    if column_family in INT_KEY_TABLES:
        return int.from_bytes(key, "big") if len(key) == 8 else "0x" + key.hex()
    try:
        return key.decode()
    except UnicodeDecodeError:
        return "0x" + key.hex()


def decode_value(value: bytes) -> Any:
    try:
        return json.loads(value)
    except ValueError:
        return {"hex": value.hex()}


def run_rm_scenario(args: argparse.Namespace) -> int:
    """Malformed files are reported and skipped, the others still run: one typo should not hide the
    results of every other file. Exit 2 if any file was malformed, else 1 if any scenario failed."""
    from pyozone.scm.replication.scenario.model import ScenarioError, load_file
    from pyozone.scm.replication.scenario.runner import run_scenario
    from pyozone.scm.settings import ScmSettings

    files = scenario_files(args.paths)
    malformed = passed = failed = 0
    for path in files:
        try:
            scenarios = load_file(path)
        except ScenarioError as e:
            print(f"error: {e}", file=sys.stderr)
            malformed += 1
            continue
        for scenario in scenarios:
            result = run_scenario(scenario, ScmSettings())
            print(f"{'PASS' if result.passed else 'FAIL'}  {scenario.name}")
            for difference in result.differences:
                print(f"      {difference}")
            passed += result.passed
            failed += not result.passed
    summary = (
        f"{passed + failed} scenario(s) in {len(files) - malformed} file(s): {passed} passed, {failed} failed"
    )
    print(f"\n{summary}" + (f"; {malformed} malformed file(s)" if malformed else ""))
    return 2 if malformed else 1 if failed else 0


def scenario_files(paths: list[Path]) -> list[Path]:
    """Files as given; a directory stands for its *.json files in name order."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(path.glob("*.json"))
            if not found:
                raise CLIError(f"{path}: no *.json scenario files")
            files += found
        else:
            files.append(path)
    return files
