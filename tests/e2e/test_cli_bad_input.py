"""Bad input to every command: one line on stderr naming the problem, a non-zero exit, nothing on stdout,
and nothing written (the whole tree under the working directory is byte-for-byte unchanged).

Each case runs twice: in-process through `main()` and as a real `python -m pyozone` process, so the
exit code and stderr are the real process's too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from pyozone.cli.main import main

Run = Callable[..., Any]
Snapshot = Callable[[Path], dict[str, bytes | None]]

SITE = '<?xml version="1.0"?>\n<configuration>\n{}\n</configuration>\n'
VERSION = "scm/current/VERSION"


def prop(name: str, value: str) -> str:
    return f"  <property><name>{name}</name><value>{value}</value></property>"


def initialised(root: Path, name: str = "meta") -> Path:
    """`pyozone scm --init` on root/name (in-process, before the snapshot)."""
    assert main(["scm", "--init", "-D", f"ozone.metadata.dirs={root / name}"]) == 0
    return root / name


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def corrupt_version(text: str) -> Callable[[Path], None]:
    def setup(root: Path) -> None:
        write(initialised(root) / VERSION, text)

    return setup


def missing_cluster_id(root: Path) -> None:
    version = initialised(root) / VERSION
    lines = [ln for ln in version.read_text().splitlines() if not ln.startswith("clusterID=")]
    version.write_text("\n".join(lines) + "\n")


def replace_in_version(old: str, new: str) -> Callable[[Path], None]:
    def setup(root: Path) -> None:
        version = initialised(root) / VERSION
        text = version.read_text()
        assert old in text
        version.write_text(text.replace(old, new))

    return setup


def site(*props: str) -> Callable[[Path], None]:
    def setup(root: Path) -> None:
        write(root / "conf" / "ozone-site.xml", SITE.format("\n".join(props)))

    return setup


def raw_site(text: str) -> Callable[[Path], None]:
    def setup(root: Path) -> None:
        write(root / "conf" / "ozone-site.xml", text)

    return setup


def nothing(root: Path) -> None:
    pass


@dataclass(frozen=True)
class Case:
    args: tuple[str, ...]
    fragments: tuple[str, ...]
    setup: Callable[[Path], None] = nothing
    command: str = field(default="")

    @property
    def prefix(self) -> str:
        return f"pyozone {self.command or self.args[0]}: error: "


STALE = "ozone.scm.stale.node.interval"
GARBAGE = "\x00\x01 this is not a properties file \xff\n=\n:::\n"

CASES: dict[str, Case] = {
    # ---- configuration
    "getconf unknown -D key": Case(
        ("getconf", "-confKey", STALE, "-D", "ozone.scm.stale.node.intervl=1m"),
        ("-D ozone.scm.stale.node.intervl", "not a configuration key", f"did you mean {STALE}?"),
    ),
    "getconf unknown -confKey": Case(
        ("getconf", "-confKey", "no.such.key"), ("no.such.key", "not a configuration key")
    ),
    "getconf -D without =": Case(("getconf", "--all", "-D", STALE), (STALE, "KEY=VALUE")),
    "ill-typed -D duration": Case(
        ("getconf", "-confKey", STALE, "-D", f"{STALE}=soon"), (STALE, "'soon'", "duration")
    ),
    "ill-typed -D size": Case(
        ("getconf", "--all", "-D", "ozone.scm.container.size=big"),
        ("ozone.scm.container.size", "'big'", "size"),
    ),
    "ill-typed -D bool": Case(
        ("getconf", "--all", "-D", "ozone.scm.pipeline.creation.auto.factor.one=maybe"),
        ("ozone.scm.pipeline.creation.auto.factor.one", "'maybe'", "bool"),
    ),
    "ill-typed -D for sim": Case(
        ("sim", "-D", "hdds.scm.safemode.min.datanode=three"), ("hdds.scm.safemode.min.datanode", "'three'")
    ),
    "-D breaking a cross-key rule": Case(
        ("getconf", "--all", "-D", f"{STALE}=20m"), (STALE, "ozone.scm.dead.node.interval", "less than")
    ),
    "site file with a bad value": Case(
        ("getconf", "-confKey", STALE, "--conf", "conf"),
        (STALE, "'soon'", "ozone-site.xml"),
        site(prop(STALE, "soon")),
    ),
    "site file with a bad value, for sim": Case(
        ("sim", "--conf", "conf"),
        ("ozone.scm.block.size", "ozone-site.xml"),
        site(prop("ozone.scm.block.size", "-1MB")),
    ),
    "site file that is malformed XML": Case(
        ("getconf", "--all", "--conf", "conf"),
        ("ozone-site.xml", "malformed XML"),
        raw_site("<configuration><property><name>x</name></configuration>"),
    ),
    "site file that is not XML at all": Case(
        ("getconf", "--all", "--conf", "conf"), ("ozone-site.xml", "malformed XML"), raw_site("key=value\n")
    ),
    "site file with a DTD": Case(
        ("getconf", "--all", "--conf", "conf"),
        ("ozone-site.xml", "DOCTYPE"),
        raw_site('<!DOCTYPE x [<!ENTITY a "b">]>\n<configuration/>'),
    ),
    "site file with another root": Case(
        ("getconf", "--all", "--conf", "conf"), ("ozone-site.xml", "<properties>"), raw_site("<properties/>")
    ),
    "--conf directory missing": Case(
        ("getconf", "--all", "--conf", "nowhere"), ("nowhere", "does not exist")
    ),
    "-D duration beyond any timeout": Case(
        (
            "getconf",
            "-confKey",
            "hdds.heartbeat.interval",
            "-D",
            "hdds.heartbeat.interval=99999999999999999999d",
        ),
        ("hdds.heartbeat.interval", "out of range", "at most 36500d"),
    ),
    "-D size beyond 64 bits": Case(
        ("getconf", "--all", "-D", "ozone.scm.container.size=99999999999999999999999PB"),
        ("ozone.scm.container.size", "out of range"),
    ),
    "-D whole number beyond 64 bits": Case(
        ("getconf", "--all", "-D", "hdds.scm.safemode.min.datanode=99999999999999999999"),
        ("hdds.scm.safemode.min.datanode", "out of range"),
    ),
    "site file that is a directory": Case(
        ("getconf", "--all", "--conf", "conf"),
        ("ozone-site.xml", "is a directory"),
        lambda r: (r / "conf" / "ozone-site.xml").mkdir(parents=True),
    ),
    # ---- sh and admin: refused before any daemon is asked
    "sh volume create with a negative quota": Case(
        ("sh", "volume", "create", "/vol1", "--space-quota", "-1"), ("--space-quota '-1'", "must be positive")
    ),
    "sh volume create with a quota beyond 64 bits": Case(
        ("sh", "volume", "create", "/vol1", "--space-quota", "99999999999999999999999PB"),
        ("--space-quota '99999999999999999999999PB'", "out of range"),
    ),
    "sh key put -r FIVE": Case(
        ("sh", "key", "put", "/vol1/bucket1/k", "f", "-r", "FIVE"),
        ("-r FIVE", "'FIVE'", "ONE, THREE"),
        lambda r: write(r / "f", "x"),
    ),
    "sh key put of a directory": Case(
        ("sh", "key", "put", "/vol1/bucket1/k", "dir"),
        ("dir", "is a directory"),
        lambda r: (r / "dir").mkdir(),
    ),
    "sh key put with a non-UTF-8 key name": Case(
        ("sh", "key", "put", "/vol1/bucket1/\udcff", "f"),
        ("INVALID_KEY_NAME", "b'\\xff'", "not valid UTF-8"),
        lambda r: write(r / "f", "x"),
    ),
    "sh key get into a missing directory": Case(
        ("sh", "key", "get", "/vol1/bucket1/k", "no/dir/f"), ("no/dir/f", "no/dir does not exist")
    ),
    "sh key get of x/.. into a directory": Case(
        ("sh", "key", "get", "/vol1/bucket1/x/..", "."), ("'x/..'", "'..'", "not a local file name")
    ),
    "admin container info beyond 64 bits": Case(
        ("admin", "container", "info", "999999999999999999999999"),
        ("container ID 999999999999999999999999", "out of range", "9223372036854775807"),
    ),
    # ---- cluster (issue 28 defect 19c): a data dir that cannot be made or read is one line, not a traceback
    "cluster up on a --data-dir that cannot be made": Case(
        ("cluster", "up", "--data-dir", "/proc/nope"),
        ("--data-dir /proc/nope", "cannot create", "/proc/nope"),
    ),
    "cluster up on a --data-dir under a file": Case(
        ("cluster", "up", "--data-dir", "f/cluster"),
        ("--data-dir f/cluster", "cannot create", "Not a directory"),
        lambda r: write(r / "f", "x"),
    ),
    "cluster up with a corrupt cluster.json": Case(
        ("cluster", "up", "--data-dir", "c"),
        ("cluster.json", "not a cluster's state"),
        lambda r: write(r / "c" / "cluster.json", "{garbage"),
    ),
    "cluster status with a corrupt cluster.json": Case(
        ("cluster", "status", "--data-dir", "c"),
        ("cluster.json", "not a cluster's state"),
        lambda r: write(r / "c" / "cluster.json", '{"pids": {}}'),
    ),
    "cluster down with a cluster.json that is a directory": Case(
        ("cluster", "down", "--data-dir", "c"),
        ("cluster.json", "not a cluster's state"),
        lambda r: (r / "c" / "cluster.json").mkdir(parents=True),
    ),
    "cluster kill with a corrupt cluster.json": Case(
        ("cluster", "kill", "om", "--data-dir", "c"),
        ("cluster.json", "not a cluster's state"),
        lambda r: write(r / "c" / "cluster.json", "[]"),
    ),
    # ---- an empty or blank path names the working directory: refused (issue 28 defect 19c, review)
    "cluster up with an empty --data-dir": Case(
        ("cluster", "up", "--data-dir", ""), ("--data-dir ''", "empty")
    ),
    "cluster up with a blank --data-dir": Case(
        ("cluster", "up", "--data-dir", "  "), ("--data-dir '  '", "empty path")
    ),
    "cluster status with an empty --data-dir": Case(
        ("cluster", "status", "--data-dir", ""), ("--data-dir ''", "empty")
    ),
    "cluster down with an empty --data-dir": Case(
        ("cluster", "down", "--data-dir", ""), ("--data-dir ''", "empty")
    ),
    "cluster kill with an empty --data-dir": Case(
        ("cluster", "kill", "om", "--data-dir", ""), ("--data-dir ''", "empty")
    ),
    "cluster start with an empty --data-dir": Case(
        ("cluster", "start", "om", "--data-dir", ""), ("--data-dir ''", "empty")
    ),
    "admin snapshot with an empty --out": Case(("admin", "snapshot", "--out", ""), ("--out ''", "empty")),
    "admin cert issue-user with an empty --out": Case(
        ("admin", "cert", "issue-user", "alice", "--out", ""), ("--out ''", "empty")
    ),
    "repair with an empty --db": Case(("repair", "db", "--db", ""), ("--db ''", "empty")),
    "ldb ls with an empty --db": Case(("debug", "ldb", "--db", "", "ls"), ("--db ''", "empty")),
    "sim with an empty --data-dir": Case(
        ("sim", "--data-dir", "", "--minutes", "1"), ("--data-dir ''", "empty")
    ),
    "cluster up with a non-positive --timeout": Case(
        ("cluster", "up", "--data-dir", "c", "--timeout", "0"), ("--timeout", "positive")
    ),
    "admin snapshot --out under a file": Case(
        ("admin", "snapshot", "--out", "f/snap"),
        ("--out f/snap", "f is not a directory"),
        lambda r: write(r / "f", "x"),
    ),
    # ---- scm
    "scm on a dir without VERSION": Case(
        ("scm", "-D", "ozone.metadata.dirs=meta"),
        ("not initialized", "no VERSION", "--init"),
        lambda root: (root / "meta").mkdir(),
    ),
    "scm on a missing dir": Case(("scm", "-D", "ozone.metadata.dirs=meta"), ("no VERSION", "--init")),
    "scm with a garbage VERSION": Case(
        ("scm", "-D", "ozone.metadata.dirs=meta"), ("corrupt VERSION", VERSION), corrupt_version(GARBAGE)
    ),
    "scm with an empty VERSION": Case(
        ("scm", "-D", "ozone.metadata.dirs=meta"), ("corrupt VERSION", "missing field"), corrupt_version("")
    ),
    "scm with a VERSION missing clusterID": Case(
        ("scm", "-D", "ozone.metadata.dirs=meta"),
        ("corrupt VERSION", "missing field clusterID"),
        missing_cluster_id,
    ),
    "scm with a bad clusterID": Case(
        ("scm", "-D", "ozone.metadata.dirs=meta"),
        ("corrupt VERSION", "clusterID='prod'"),
        replace_in_version("clusterID=CID-", "clusterID=prod\n#"),
    ),
    "scm with a VERSION of another node type": Case(
        ("scm", "-D", "ozone.metadata.dirs=meta"),
        ("corrupt VERSION", "nodeType='OM'"),
        replace_in_version("nodeType=SCM", "nodeType=OM"),
    ),
    "scm with a newer layout": Case(
        ("scm", "-D", "ozone.metadata.dirs=meta"),
        ("layout version 99", "newer"),
        replace_in_version("layoutVersion=1", "layoutVersion=99"),
    ),
    "scm --init without ozone.metadata.dirs": Case(("scm", "--init"), ("ozone.metadata.dirs is not set",)),
    "scm --init with two metadata dirs": Case(
        ("scm", "--init", "-D", "ozone.metadata.dirs=a,b"), ("ozone.metadata.dirs", "exactly one directory")
    ),
    "scm --init with a bad cluster id": Case(
        ("scm", "--init", "--clusterid", "prod", "-D", "ozone.metadata.dirs=meta"), ("invalid cluster id",)
    ),
    "scm --clusterid without --init": Case(
        ("scm", "--clusterid", "CID-x", "-D", "ozone.metadata.dirs=meta"), ("--clusterid", "--init")
    ),
    # ---- sim
    "sim --data-dir with a garbage VERSION": Case(
        ("sim", "--data-dir", "meta", "--minutes", "1"), ("corrupt VERSION",), corrupt_version(GARBAGE)
    ),
    "sim --data-dir with a VERSION missing clusterID": Case(
        ("sim", "--data-dir", "meta", "--minutes", "1"),
        ("corrupt VERSION", "missing field clusterID"),
        missing_cluster_id,
    ),
    "sim --data-dir not initialised": Case(
        ("sim", "--data-dir", "meta", "--minutes", "1"),
        ("no VERSION", "--init"),
        lambda r: (r / "meta").mkdir(),
    ),
    "sim --data-dir missing": Case(("sim", "--data-dir", "meta", "--minutes", "1"), ("no VERSION", "--init")),
    "sim --data-dir is a file": Case(
        ("sim", "--data-dir", "meta", "--minutes", "1"),
        ("meta", "not a directory"),
        lambda r: (r / "meta").write_text("x"),
    ),
    "sim --kill out of range": Case(
        ("sim", "--kill", "9@1", "--datanodes", "3"), ("--kill", "'9@1'", "between 1 and 3")
    ),
    "sim --restart node 0": Case(("sim", "--restart", "0@1"), ("--restart", "'0@1'", "between 1 and 5")),
    "sim --kill not NODE@MINUTE": Case(("sim", "--kill", "abc"), ("--kill", "'abc'", "NODE@MINUTE")),
    "sim --partition with a negative minute": Case(("sim", "--partition", "1@-2"), ("--partition", "'1@-2'")),
    "sim zero datanodes": Case(("sim", "--datanodes", "0"), ("--datanodes", "at least 1")),
    "sim non-positive minutes": Case(("sim", "--minutes", "0"), ("--minutes", "positive")),
    # ---- debug ldb
    "ldb ls on an empty dir": Case(
        ("debug", "ldb", "--db", "notadb", "ls"),
        ("notadb", "not a RocksDB"),
        lambda r: (r / "notadb").mkdir(),
    ),
    "ldb ls on a missing path": Case(
        ("debug", "ldb", "--db", "missing", "ls"), ("missing", "no such RocksDB")
    ),
    "ldb ls on a file": Case(
        ("debug", "ldb", "--db", "file", "ls"),
        ("file", "not a RocksDB"),
        lambda r: (r / "file").write_text("x"),
    ),
    "ldb ls on a metadata dir, not its scm.db": Case(
        ("debug", "ldb", "--db", "meta", "ls"), ("meta", "not a RocksDB"), lambda r: initialised(r) and None
    ),
    "ldb scan on an empty dir": Case(
        ("debug", "ldb", "--db", "notadb", "scan", "--column-family", "pipelines"),
        ("notadb", "not a RocksDB"),
        lambda r: (r / "notadb").mkdir(),
    ),
    "ldb scan of an unknown column family": Case(
        ("debug", "ldb", "--db", "meta/scm.db", "scan", "--cf", "nope"),
        ("'nope'", "valid:", "pipelines"),
        lambda r: initialised(r) and None,
    ),
    "ldb on a fake DB with a CURRENT file": Case(
        ("debug", "ldb", "--db", "fake", "ls"),
        ("fake", "cannot read the column families"),
        lambda r: write(r / "fake" / "CURRENT", "MANIFEST-1\n"),
    ),
}


def assert_one_line_error(result: Any, case: Case) -> None:
    assert result.code == 1, result
    assert result.out == "", result
    assert result.err.endswith("\n") and result.err.count("\n") == 1, result.err
    assert result.err.startswith(case.prefix), result.err
    for fragment in case.fragments:
        assert fragment in result.err, (fragment, result.err)


@pytest.mark.parametrize("name", list(CASES))
def test_in_process(
    name: str, cli: Run, snapshot: Snapshot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = CASES[name]
    monkeypatch.chdir(tmp_path)
    case.setup(tmp_path)
    before = snapshot(tmp_path)
    assert_one_line_error(cli(*case.args), case)
    assert snapshot(tmp_path) == before


# The real process for one or more cases of every command and kind of problem.
REAL_PROCESS = (
    "getconf unknown -D key",
    "ill-typed -D duration",
    "ill-typed -D for sim",
    "site file with a bad value",
    "site file that is malformed XML",
    "scm on a dir without VERSION",
    "scm on a missing dir",
    "scm with a garbage VERSION",
    "scm with a VERSION missing clusterID",
    "scm --init without ozone.metadata.dirs",
    "sim --data-dir with a garbage VERSION",
    "sim --data-dir with a VERSION missing clusterID",
    "sim --kill out of range",
    "sim --kill not NODE@MINUTE",
    "ldb ls on an empty dir",
    "ldb ls on a missing path",
    "ldb scan on an empty dir",
    "-D duration beyond any timeout",
    "site file that is a directory",
    "sh volume create with a quota beyond 64 bits",
    "sh key put -r FIVE",
    "sh key put with a non-UTF-8 key name",
    "admin container info beyond 64 bits",
    "cluster up on a --data-dir that cannot be made",
    "cluster status with a corrupt cluster.json",
    "cluster up with an empty --data-dir",
)


@pytest.mark.parametrize("name", REAL_PROCESS)
def test_real_process(name: str, proc: Run, snapshot: Snapshot, tmp_path: Path) -> None:
    case = CASES[name]
    case.setup(tmp_path)
    before = snapshot(tmp_path)
    assert_one_line_error(proc(tmp_path, *case.args), case)
    assert snapshot(tmp_path) == before


def test_ozone_conf_dir_from_the_environment(proc: Run, snapshot: Snapshot, tmp_path: Path) -> None:
    """$OZONE_CONF_DIR is --conf's default: a bad site file found through it is reported the same way."""
    site(prop(STALE, "soon"))(tmp_path)
    before = snapshot(tmp_path)
    result = proc(tmp_path, "getconf", "-confKey", STALE, env={"OZONE_CONF_DIR": str(tmp_path / "conf")})
    assert_one_line_error(result, Case(("getconf",), (STALE, "'soon'", "ozone-site.xml")))
    assert snapshot(tmp_path) == before


def test_a_malformed_port_range_is_one_line(
    cli: Run, proc: Run, snapshot: Snapshot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PYOZONE_PORT_RANGE=abc printed a traceback (issue 28 defect 19c, review); nothing is written."""
    case = Case(("cluster", "up", "--data-dir", "c"), ("PYOZONE_PORT_RANGE='abc'", "LOW-HIGH"))
    monkeypatch.chdir(tmp_path)
    before = snapshot(tmp_path)
    for bad in ("abc", "30000-20000", "1-99999"):
        monkeypatch.setenv("PYOZONE_PORT_RANGE", bad)
        assert_one_line_error(cli(*case.args), replace(case, fragments=(f"PYOZONE_PORT_RANGE={bad!r}",)))
    assert_one_line_error(proc(tmp_path, *case.args, env={"PYOZONE_PORT_RANGE": "abc"}), case)
    assert snapshot(tmp_path) == before
