"""Erasure coding beside RATIS/THREE written by pipeline V2, on one 7-datanode cluster on this machine.

Starts `pyozone cluster up` (SCM, OM and 7 datanodes, each its own OS process on 127.0.0.1; on /dev/shm by
default: --on) with short heartbeat and Replication Manager intervals, and measures in one run, in this
process, one key at a time:
- write MB/s of --count keys of --size: rs-3-2-1024k (the bucket's default) beside RATIS/THREE by V2
  (put_key(datastream=True)), the two taking turns key by key;
- normal read MB/s of the same keys (every byte checked by sha256);
- bytes stored per byte written: the block files of each key on every datanode's disk over its length
  (rs-3-2: 5/3 = 1.67; RATIS/THREE: 3);
- degraded read MB/s: the EC keys' containers are closed, the datanodes holding data indexes 1 and 2 of
  the first EC key's block group are killed (SIGKILL), and that key is read again (cells of indexes 1
  and 2 rebuilt from the others on the fly);
- reconstruction MB/s per coordinator: as SCM declares the two DEAD, the Replication Manager sends
  reconstructECContainers (one per container and loss: the two die a moment apart, so indexes 1 and 2 may
  go to two coordinators). Each coordinator logs its bytes and time per command; those are printed, with
  their median. Beside them, end to end: from the first victim DEAD until every index of the container is
  CLOSED on a live datanode, the bytes of the rebuilt indexes (block files on the new holders) over that
  time, which adds the RM's intervals (1 s), command delivery by heartbeat (1 s) and the ICR.
Ratios: EC/Ratis for writes and reads (target: EC write >= Ratis V2), degraded/normal for the EC read
(target >= 0.50).

    python -m benchmarks.ec [--size 128MB] [--count 2] [--keep DIR] [--on DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import re
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.common import SHARED_DISK_DEFINES
from benchmarks.key_io import _pyozone
from pyozone.cli.main import main as cli_main
from pyozone.client import OzoneClient
from pyozone.config.site import load_configuration
from pyozone.config.units import parse_size_bytes
from pyozone.hdds.ids import ReplicationConfig

VOLUME, EC_BUCKET, RATIS_BUCKET = "bench", "rs32", "ratis"
EC = ReplicationConfig.parse("rs-3-2-1024k")
DATANODES = 7  # five for a block group, two spares to reconstruct onto
MiB = 1 << 20
WRITE_TARGET = 1.0
DEGRADED_TARGET = 0.50
OVERRIDES = {
    "hdds.heartbeat.interval": "1s",
    "ozone.scm.heartbeat.thread.interval": "1s",
    "ozone.scm.stale.node.interval": "6s",
    "ozone.scm.dead.node.interval": "12s",
    "hdds.scm.wait.time.after.safemode.exit": "5s",
    "ozone.scm.pipeline.creation.interval": "5s",
    "hdds.scm.safemode.rule.refresh.interval": "1s",
    "ozone.scm.close.container.wait.duration": "2s",
    "hdds.scm.replication.thread.interval": "3s",
    "hdds.scm.replication.under.replicated.interval": "1s",
    "hdds.scm.replication.over.replicated.interval": "1s",
    "hdds.scm.replication.event.timeout": "120s",
    "hdds.scm.replication.event.timeout.datanode.offset": "30s",
}
DEAD_TIMEOUT_S = 60.0
REBUILD_TIMEOUT_S = 600.0


# ------------------------------------------------------------------ the cluster
@contextlib.contextmanager
def _cluster(data_dir: Path, remove: bool) -> Iterator[Path]:
    data_dir.mkdir(parents=True, exist_ok=True)
    defines = [a for k, v in OVERRIDES.items() for a in ("-D", f"{k}={v}")]
    up = _pyozone(
        "cluster", "up", "--background", "--datanodes", str(DATANODES), "--data-dir", str(data_dir), *defines,
        *SHARED_DISK_DEFINES,
    )  # fmt: skip
    if up.returncode != 0:
        raise SystemExit(f"cluster up failed:\n{up.stdout}\n{up.stderr}")
    try:
        yield data_dir / "conf"
    finally:
        _pyozone("cluster", "down", "--data-dir", str(data_dir))
        if remove:
            shutil.rmtree(data_dir, ignore_errors=True)


def _admin(conf_dir: Path, *args: str, as_json: bool = True) -> Any:
    """`pyozone admin ARGS [--json]` in this process (no interpreter start per poll): its JSON (its text
    without `as_json`), None on failure."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli_main(["admin", *args, "--conf", str(conf_dir), *(["--json"] if as_json else [])])
    if code != 0:
        return None
    return json.loads(out.getvalue()) if as_json else out.getvalue()


def _wait(condition: Callable[[], Any], timeout_s: float, what: str) -> Any:
    deadline = time.monotonic() + timeout_s
    while not (found := condition()):
        if time.monotonic() > deadline:
            raise SystemExit(f"{what}: not reached in {timeout_s:.0f} s")
        time.sleep(0.2)
    return found


def _datanodes(conf_dir: Path) -> dict[str, dict[str, Any]]:
    return {n["uuid"]: n for n in _admin(conf_dir, "datanode", "list") or []}


def _replicas(conf_dir: Path, container_id: int) -> list[dict[str, Any]]:
    return (_admin(conf_dir, "container", "info", str(container_id)) or {}).get("replicas", [])


def _block_files(data_dir: Path, container_id: int, local_id: int) -> dict[str, Path]:
    """Datanode name -> the block's file on its disk."""
    return {
        path.parts[len(data_dir.parts)]: path
        for path in data_dir.glob(
            f"dn*/data/hdds/*/current/containerDir*/{container_id}/chunks/{local_id}.block"
        )
    }


# ------------------------------------------------------------------ measurements
@dataclass(frozen=True, slots=True)
class Written:
    key: str
    bucket: str
    digest: str
    locations: tuple[Any, ...]


def _timed_put(client: OzoneClient, bucket: str, key: str, data: bytes, datastream: bool | None) -> float:
    started = time.perf_counter()
    client.put_key(VOLUME, bucket, key, data, datastream=datastream)
    return time.perf_counter() - started


def _timed_read(client: OzoneClient, w: Written, size: int) -> float:
    digest = hashlib.sha256()
    started = time.perf_counter()
    with client.read_key(VOLUME, w.bucket, w.key) as reader:
        while piece := reader.read(8 * MiB):
            digest.update(piece)
    elapsed = time.perf_counter() - started
    if digest.hexdigest() != w.digest:
        raise SystemExit(f"{w.bucket}/{w.key}: read back differs from what was written")
    return elapsed


def _stored(data_dir: Path, w: Written) -> int:
    return sum(
        path.stat().st_size
        for loc in w.locations
        for path in _block_files(data_dir, loc.container_id, loc.local_id).values()
    )


def _close_and_wait(conf_dir: Path, container_ids: set[int]) -> None:
    for cid in sorted(container_ids):
        _admin(conf_dir, "container", "close", str(cid), as_json=False)
    for cid in sorted(container_ids):
        _wait(
            lambda c=cid: (
                (r := _replicas(conf_dir, c))
                and len(r) >= EC.required_nodes
                and all(x["state"] == "CLOSED" for x in r)
            ),
            120,
            f"container {cid} and its replicas CLOSED",
        )


@dataclass(frozen=True, slots=True)
class Rebuild:
    """One reconstructECContainers a coordinator finished, from its log line."""

    coordinator: str
    container_id: int
    indexes: str
    bytes: int
    seconds: float


_REBUILT = re.compile(
    r"^(?P<at>\S+ \S+) .*reconstructed container (?P<cid>\d+) .*indexes \[(?P<indexes>[^\]]*)\].*: "
    r"\d+ block groups, (?P<bytes>\d+) bytes, (?P<seconds>[\d.]+)s"
)
"""The coordinator's line (datanode/commands/reconstruct_ec.py) for a finished reconstruction."""


def _rebuilds(data_dir: Path, since: str) -> list[Rebuild]:
    """The reconstructions the datanodes logged after `since` (a log timestamp, local time)."""
    found = []
    for log in sorted((data_dir / "logs").glob("dn*.log")):
        for line in log.read_text(errors="replace").splitlines():
            match = _REBUILT.search(line)
            if match and match["at"] >= since:
                found.append(
                    Rebuild(
                        log.stem,
                        int(match["cid"]),
                        match["indexes"],
                        int(match["bytes"]),
                        float(match["seconds"]),
                    )
                )
    return found


def _mb_s(size: int, seconds: float) -> float:
    return size / seconds / 1e6 if seconds > 0 else float("nan")


def _row(label: str, ec: float, base: float, base_name: str, target: float | None) -> str:
    ratio = ec / base if base else float("nan")
    verdict = (
        "" if target is None else f"   (target >= {target:.2f}: {'met' if ratio >= target else 'MISSED'})"
    )
    return f"{label:<22} EC {ec:8.1f} MB/s   {base_name} {base:8.1f} MB/s   ratio {ratio:.3f}{verdict}"


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} cores"


def run(data_dir: Path, conf_dir: Path, size: int, count: int) -> None:
    timings: dict[str, list[float]] = {"ec-write": [], "ratis-write": [], "ec-read": [], "ratis-read": []}
    written: dict[str, list[Written]] = {"ec": [], "ratis": []}
    with OzoneClient(load_configuration(conf_dir, {})) as client:
        client.create_volume(VOLUME)
        client.create_bucket(VOLUME, EC_BUCKET, EC.ec_name)
        client.create_bucket(VOLUME, RATIS_BUCKET, "RATIS/THREE")
        for bucket, datastream in ((EC_BUCKET, None), (RATIS_BUCKET, True)):  # pipelines and containers made
            client.put_key(VOLUME, bucket, "warm-up", os.urandom(8 * MiB), datastream=datastream)
        for i in range(count):
            data = os.urandom(size)
            digest = hashlib.sha256(data).hexdigest()
            order = (("ec", EC_BUCKET, None), ("ratis", RATIS_BUCKET, True))
            for kind, bucket, datastream in order if i % 2 == 0 else order[::-1]:
                key = f"key-{i}"
                timings[f"{kind}-write"].append(_timed_put(client, bucket, key, data, datastream))
                info = client.key_info(VOLUME, bucket, key)
                written[kind].append(Written(key, bucket, digest, info.locations))
            del data
        print(f"  writes done ({_load()})", flush=True)
        for i in range(count):
            for kind in ("ec", "ratis") if i % 2 == 0 else ("ratis", "ec"):
                timings[f"{kind}-read"].append(_timed_read(client, written[kind][i], size))
        print(f"  reads done ({_load()})", flush=True)
        stored = {
            kind: sum(_stored(data_dir, w) for w in ws) / (size * count) for kind, ws in written.items()
        }

        # degraded read: the first EC key's group loses data indexes 1 and 2
        first = written["ec"][0]
        _close_and_wait(conf_dir, {loc.container_id for w in written["ec"] for loc in w.locations})
        group = first.locations[0]
        nodes = _datanodes(conf_dir)
        by_index = {r["replicaIndex"]: r["datanode"] for r in _replicas(conf_dir, group.container_id)}
        victims = [by_index[1], by_index[2]]
        since = time.strftime("%Y-%m-%d %H:%M:%S")
        for uuid in victims:
            _pyozone("cluster", "kill", nodes[uuid]["hostname"], "--data-dir", str(data_dir))
        degraded = [_timed_read(client, first, size) for _ in range(count)]
        print(f"  degraded reads done ({_load()})", flush=True)

    # reconstruction: from the first victim DEAD until every index is CLOSED on a live datanode
    def dead() -> int:
        return sum((_datanodes(conf_dir).get(u) or {}).get("healthState") == "DEAD" for u in victims)

    _wait(dead, DEAD_TIMEOUT_S, "a killed datanode DEAD")
    dead_at = time.monotonic()
    _wait(lambda: dead() == len(victims), DEAD_TIMEOUT_S, "both killed datanodes DEAD")
    live = {u for u, n in _datanodes(conf_dir).items() if n["healthState"] == "HEALTHY"}
    containers = sorted({loc.container_id for loc in written["ec"][0].locations})

    def rebuilt() -> bool:
        for cid in containers:
            indexes = {
                r["replicaIndex"]
                for r in _replicas(conf_dir, cid)
                if r["state"] == "CLOSED" and r["datanode"] in live
            }
            if indexes != set(range(1, EC.required_nodes + 1)):
                return False
        return True

    _wait(rebuilt, REBUILD_TIMEOUT_S, f"containers {containers} reconstructed")
    rebuild_s = time.monotonic() - dead_at
    names = {u: n["hostname"] for u, n in _datanodes(conf_dir).items()}
    rebuilt_bytes = 0
    for loc in first.locations:
        files = _block_files(data_dir, loc.container_id, loc.local_id)
        for r in _replicas(conf_dir, loc.container_id):
            if r["replicaIndex"] in (1, 2) and r["datanode"] in live and names[r["datanode"]] in files:
                rebuilt_bytes += files[names[r["datanode"]]].stat().st_size
    rebuilds = _rebuilds(data_dir, since)

    median = {name: statistics.median(values) for name, values in timings.items()}
    print()
    title = (
        f"EC ({EC.ec_name}) beside RATIS/THREE by V2, {DATANODES} datanodes on 127.0.0.1, "
        f"{count} key(s) of {size / MiB:.0f} MiB each (medians)"
    )
    print(title)
    print("-" * len(title))
    print(
        _row(
            "write",
            _mb_s(size, median["ec-write"]),
            _mb_s(size, median["ratis-write"]),
            "Ratis V2",
            WRITE_TARGET,
        )
    )
    print(
        _row("normal read", _mb_s(size, median["ec-read"]), _mb_s(size, median["ratis-read"]), "Ratis", None)
    )
    degraded_mb = _mb_s(size, statistics.median(degraded))
    normal_mb = _mb_s(size, median["ec-read"])
    ratio = degraded_mb / normal_mb if normal_mb else float("nan")
    verdict = "met" if ratio >= DEGRADED_TARGET else "MISSED"
    print(
        f"{'degraded read':<22} EC {degraded_mb:8.1f} MB/s   normal EC read {normal_mb:8.1f} MB/s   "
        f"ratio {ratio:.3f}   (target >= {DEGRADED_TARGET:.2f}: {verdict})"
    )
    print(
        f"{'bytes stored / written':<22} EC {stored['ec']:.3f}   Ratis {stored['ratis']:.3f}   "
        f"(expected {EC.required_nodes / EC.ec_data:.3f} and 3.000)"
    )
    print(
        f"{'reconstruction':<22} {rebuilt_bytes / MiB:.1f} MiB of indexes 1, 2 rebuilt, end to end, in "
        f"{rebuild_s:.1f} s after the first was DEAD: {_mb_s(rebuilt_bytes, rebuild_s):.1f} MB/s "
        f"(includes RM scan, command delivery, ICR)"
    )
    if rebuilds:
        print("\nreconstructions the coordinators logged (bytes of the new indexes over the command's time):")
        for r in rebuilds:
            print(
                f"  {r.coordinator}: container {r.container_id} indexes [{r.indexes}]: "
                f"{r.bytes / MiB:.1f} MiB in {r.seconds:.2f} s = {_mb_s(r.bytes, r.seconds):.1f} MB/s"
            )
        per_command = statistics.median(_mb_s(r.bytes, r.seconds) for r in rebuilds)
        containers = len({r.container_id for r in rebuilds})
        print(
            f"  median per coordinator command: {per_command:.1f} MB/s ({len(rebuilds)} command(s) over "
            f"{containers} container(s); several may run at once)"
        )
    else:
        print("\n(no reconstruction lines in the datanodes' logs)")
    print(f"\n{_load()} at the end")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", default="128MB", help="bytes per key (default 128MB)")
    parser.add_argument("--count", type=int, default=2, help="keys of each kind (default 2)")
    parser.add_argument("--keep", metavar="DIR", help="use and keep this data dir instead of a temp one")
    parser.add_argument(
        "--on",
        default="/dev/shm" if Path("/dev/shm").is_dir() else None,
        help="where the temp data dir goes (default /dev/shm: memory; this machine's one disk caps any "
        "path at ~90 MB/s)",
    )
    args = parser.parse_args()
    size = parse_size_bytes(args.size)
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="pyozone-ec-", dir=args.on))
    print(f"datanode volumes under {root}; {_load()} at the start")
    try:
        with _cluster(root, args.keep is None) as conf_dir:
            run(root, conf_dir, size, args.count)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
