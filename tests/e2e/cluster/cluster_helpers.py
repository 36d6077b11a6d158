"""Live local clusters for the end-to-end acceptance tests: `pyozone cluster up --background` in a temporary
data dir, driven through the real CLI (`pyozone cluster ...`, `pyozone admin ...`) and the real protocols.

Every module starts its own cluster (module-scoped fixture) and always stops it: `cluster down` in a
finalizer, then SIGKILL for any daemon still running. Every wait is bounded.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import pyozone
from pyozone.cli.main import main
from pyozone.cluster import supervisor
from pyozone.cluster.layout import HOST, ClusterState
from pyozone.common.net import HostPort
from pyozone.framework.scm_block import ScmBlockClient
from pyozone.framework.scm_errors import ScmClientError
from pyozone.hdds.ids import ReplicationConfig
from pyozone.proto import DatanodeClientProtocol_pb2 as dn_pb
from pyozone.protocol.block import BlockLocation
from tests.e2e.cluster.xceiver_client import XceiverClient, XceiverError
from tests.polling import wait_for

REPO = Path(pyozone.__file__).parents[1]

# The short intervals the acceptance items are measured against.
STALE_S = 6
DEAD_S = 12
FAST = {
    "hdds.heartbeat.interval": "1s",
    "ozone.scm.heartbeat.thread.interval": "1s",
    "ozone.scm.stale.node.interval": f"{STALE_S}s",
    "ozone.scm.dead.node.interval": f"{DEAD_S}s",
    "hdds.scm.wait.time.after.safemode.exit": "5s",
    "ozone.scm.pipeline.creation.interval": "5s",
    "hdds.scm.safemode.rule.refresh.interval": "1s",
    "hdds.ratis.leader.election.minimum.timeout.duration": "1s",  # a pipeline's elections
}


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "OZONE_CONF_DIR"}
    env["PYTHONPATH"] = str(REPO)
    env["PYOZONE_LOG_LEVEL"] = "INFO"
    return env


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


class LiveCluster:
    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.conf_dir = data_dir / "conf"
        self.extra: list[subprocess.Popen[bytes]] = []

    # ------------------------------------------------------------------ processes
    def pyozone(self, *args: str, timeout_s: float = 60) -> Result:
        """`python -m pyozone ARGS` as a real process."""
        done = subprocess.run(
            [sys.executable, "-m", "pyozone", *args],
            env=environment(),
            capture_output=True,
            text=True,
            timeout=timeout_s,
            stdin=subprocess.DEVNULL,
        )
        return Result(done.returncode, done.stdout, done.stderr)

    def cluster(self, *args: str, timeout_s: float = 60) -> Result:
        return self.pyozone("cluster", *args, "--data-dir", str(self.data_dir), timeout_s=timeout_s)

    def up(
        self, datanodes: int, racks: int = 1, overrides: dict[str, str] | None = None, *options: str
    ) -> Result:
        """`options`: more of `cluster up`'s flags (`--om-ha`)."""
        defines = [arg for k, v in {**FAST, **(overrides or {})}.items() for arg in ("-D", f"{k}={v}")]
        for attempt in (1, 2):
            result = self.cluster(
                "up", "--datanodes", str(datanodes), "--racks", str(racks), "--background", "--timeout", "90",
                *options, *defines, timeout_s=150,
            )  # fmt: skip
            if result.code == 0 and "Cluster is ready." in result.out:
                return result
            if attempt == 2:
                break
            # `cluster up` picks free ports, then the daemons bind them a moment later; another process
            # (a client's ephemeral port, another cluster) may take one in between. Plan anew. Any other
            # failure to start is retried once too, but never silently: its logs (exit statuses, thread
            # stacks of daemons that hung) are kept and named in a warning of the test run's summary.
            self.start_over(None if self.port_taken() else result.err.strip())
        raise AssertionError(f"cluster up failed: {result}\n{self.logs()}")

    def start_over(self, failure: str | None) -> None:
        """Stops what a failed `cluster up` left and empties the data dir. A `failure` is not silent: the
        logs are kept beside the data dir and a warning in the run's summary names them."""
        if failure is not None:
            kept = self.data_dir.with_name(f"{self.data_dir.name}-failed-start")
            if (self.data_dir / "logs").is_dir():
                shutil.copytree(self.data_dir / "logs", kept, dirs_exist_ok=True)
            warnings.warn(f"cluster up failed once, retried: {failure} (logs: {kept})", stacklevel=3)
        self.stop()
        shutil.rmtree(self.data_dir)
        self.data_dir.mkdir()

    def port_taken(self) -> bool:
        logs = self.data_dir / "logs"
        texts = [p.read_text(errors="replace") for p in logs.glob("*.log")] if logs.is_dir() else []
        return any(
            marker in text for text in texts for marker in ("cannot bind", "cannot listen", "already in use")
        )

    @property
    def state(self) -> ClusterState:
        return ClusterState.load(self.data_dir)

    def running(self) -> dict[str, bool]:
        state = self.state
        return {d.name: supervisor.is_running(state.pids.get(d.name)) for d in state.daemons}

    def kill(self, name: str) -> None:
        result = self.cluster("kill", name)
        assert result.code == 0, result

    def start(self, name: str) -> None:
        result = self.cluster("start", name)
        assert result.code == 0, result

    def stop(self) -> None:
        """`cluster down`, then SIGKILL whatever of ours is still running (daemons and extra processes)."""
        try:
            if (self.data_dir / "cluster.json").exists():
                self.cluster("down", timeout_s=90)
        except subprocess.TimeoutExpired:
            pass
        finally:
            if (self.data_dir / "cluster.json").exists():
                state = self.state
                for pid in state.pids.values():
                    if supervisor.is_running(pid):
                        with contextlib.suppress(ProcessLookupError):
                            os.kill(pid, signal.SIGKILL)
            for process in self.extra:
                if process.poll() is None:
                    process.kill()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(10)

    def spawn(self, *args: str, log: Path) -> subprocess.Popen[bytes]:
        """An extra `python -m pyozone ARGS` process the cluster's finalizer also stops."""
        with open(log, "ab") as out:
            process = subprocess.Popen(
                [sys.executable, "-m", "pyozone", *args],
                env=environment(),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        self.extra.append(process)
        return process

    # ------------------------------------------------------------------ admin
    def admin(self, *args: str, timeout_s: float = 60) -> Result:
        """`pyozone admin ARGS --conf DIR/conf` as a real process."""
        return self.pyozone("admin", *args, "--conf", str(self.conf_dir), timeout_s=timeout_s)

    def admin_json(self, *args: str) -> Any:
        result = self.admin(*args, "--json")
        assert result.code == 0, result
        return result.json()

    def poll_json(self, *args: str) -> Any:
        """`pyozone admin ARGS --json` run in this process: the same command, fast enough to poll every
        200 ms (a new interpreter takes ~0.4 s). None when it fails (e.g. SCM is down)."""
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["admin", *args, "--conf", str(self.conf_dir), "--json"])
        return json.loads(out.getvalue()) if code == 0 else None

    def datanodes(self) -> dict[str, dict[str, Any]]:
        """`admin datanode list --json` by hostname (dn1, dn2, ...)."""
        return {n["hostname"]: n for n in self.poll_json("datanode", "list") or []}

    def health(self, name: str) -> str | None:
        """The datanode's healthState, or None while SCM cannot say (a poll that failed counts as not yet)."""
        return self.datanodes().get(name, {}).get("healthState")

    def pipelines(self) -> list[dict[str, Any]]:
        return self.poll_json("pipeline", "list") or []

    def container(self, container_id: int) -> dict[str, Any] | None:
        return self.poll_json("container", "info", str(container_id))

    # ------------------------------------------------------------------ addresses and files
    def scm_port(self, kind: str) -> int:
        return self.state.daemon("scm").ports[kind]

    def block_client(self) -> ScmBlockClient:
        return ScmBlockClient(HostPort(HOST, self.scm_port("block")), timeout_s=10)

    def port(self, name: str, kind: str) -> int:
        return self.state.daemon(name).ports[kind]

    def log(self, name: str) -> str:
        path = self.data_dir / "logs" / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def logs(self, tail: int = 30) -> str:
        parts = []
        for path in sorted((self.data_dir / "logs").glob("*.log")):
            lines = path.read_text(errors="replace").splitlines()[-tail:]
            parts.append(f"--- {path.name}\n" + "\n".join(lines))
        return "\n".join(parts)

    def wait_healthy(self, count: int, timeout_s: float = 30) -> dict[str, dict[str, Any]]:
        return wait_for(
            lambda: (
                (nodes := self.datanodes())
                and sum(n["healthState"] == "HEALTHY" for n in nodes.values()) >= count
                and nodes
            ),
            timeout_s,
            f"{count} HEALTHY datanodes",
        )


@contextlib.contextmanager
def live_cluster(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    datanodes: int,
    racks: int = 1,
    overrides: dict[str, str] | None = None,
) -> Iterator[LiveCluster]:
    cluster = LiveCluster(tmp_path_factory.mktemp(name))
    request.addfinalizer(cluster.stop)
    cluster.up(datanodes, racks, overrides)
    yield cluster


def all_running(cluster: LiveCluster) -> None:
    """No daemon crashed: `cluster status` names every daemon running."""
    status = cluster.cluster("status")
    assert status.code == 0, status
    lines = [line.split() for line in status.out.splitlines()]
    daemons = {words[0]: words[1] for words in lines if len(words) == 4 and words[2] == "pid"}
    assert daemons and set(daemons.values()) == {"running"}, (status.out, cluster.logs())


def member_client(location: BlockLocation, dn: str) -> XceiverClient:
    """A data client to one member of the block's pipeline, at the address SCM gave for it."""
    details = location.members[dn]
    return XceiverClient(details.ip_address, dict(details.ports)["STANDALONE"], location.pipeline.id)


_NAMED_LEADER = re.compile(r"the leader is (\S+)")


def write_to_pipeline(location: BlockLocation, data: bytes) -> None:
    """Writes the block (chunks + putBlock) through its pipeline's leader, waits until every member
    committed it (watch ALL_COMMITTED) and reads it back from each member once that member applied it (a
    watch counts the members' commit indexes, as Ratis's: a follower applies after)."""
    leader = location.pipeline.leader or location.pipeline.suggested_leader or location.pipeline.nodes[0]
    for _ in range(len(location.pipeline.nodes)):  # SCM's leader may be an election old: follow NOT_LEADER
        try:
            with member_client(location, leader) as client:
                client.write_block(location.block_id, data)
            break
        except XceiverError as e:
            named = _NAMED_LEADER.search(str(e)) if e.result == dn_pb.NOT_LEADER else None
            if named is None:
                raise
            leader = named.group(1)
    else:
        raise AssertionError(f"no member of {location.pipeline.id} took block {location.block_id}")
    for dn in location.pipeline.nodes:
        with member_client(location, dn) as client:

            def applied(client: XceiverClient = client) -> bytes | None:
                try:
                    return client.read_block(location.block_id)
                except XceiverError as e:
                    if e.result != dn_pb.NO_SUCH_BLOCK:
                        raise
                    return None

            assert wait_for(applied, 15, f"{dn} applied block {location.block_id}") == data


def allocate(cluster: LiveCluster, config: ReplicationConfig, size: int = 1 << 20) -> BlockLocation:
    """One block through the block protocol; retried while SCM has no OPEN pipeline for it yet."""

    def attempt() -> BlockLocation | None:
        try:
            with cluster.block_client() as client:
                return client.allocate_block(size, config, "e2e")
        except ScmClientError as e:
            if e.retryable:
                return None
            raise

    return wait_for(attempt, 30, f"a {config} block", interval_s=0.5)


# ------------------------------------------------------------------ the Ozone Manager
@contextlib.contextmanager
def om_stub(cluster: LiveCluster) -> Iterator[Any]:
    """A raw OzoneManagerService stub on the cluster's OM (ports from cluster.json)."""
    from pyozone import rpc
    from pyozone.framework.om import OM_SERVICE
    from pyozone.hdds.limits import MAX_OM_MESSAGE_BYTES

    target = f"{HOST}:{cluster.port('om', 'rpc')}"
    with rpc.SyncChannel(target, rpc.ChannelSettings(max_message_bytes=MAX_OM_MESSAGE_BYTES)) as channel:
        yield rpc.Stub(channel, OM_SERVICE)


# ------------------------------------------------------------------ keys (the client and `pyozone sh`)
MiB = 1 << 20


def sh(cluster: LiveCluster, *args: str, timeout_s: float = 120) -> Result:
    """`pyozone sh ARGS --conf DIR/conf` as a real process."""
    return cluster.pyozone("sh", *args, "--conf", str(cluster.conf_dir), timeout_s=timeout_s)


def sh_here(cluster: LiveCluster, *args: str) -> Result:
    """`pyozone sh ARGS --conf DIR/conf` run in this process (the same command line, without the ~0.4 s
    of a new interpreter): its exit code, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["sh", *args, "--conf", str(cluster.conf_dir)])
    return Result(code, out.getvalue(), err.getvalue())


def sh_to_file(cluster: LiveCluster, out: Path, *args: str, timeout_s: float = 300) -> int:
    """`pyozone sh ARGS` with its stdout going to `out` (for `key cat` of keys too big for a pipe buffer
    held in memory); its exit code."""
    with open(out, "wb") as f:
        done = subprocess.run(
            [sys.executable, "-m", "pyozone", "sh", *args, "--conf", str(cluster.conf_dir)],
            env=environment(),
            stdout=f,
            stderr=subprocess.PIPE,
            timeout=timeout_s,
            stdin=subprocess.DEVNULL,
        )
    if done.returncode != 0:
        print(done.stderr.decode(errors="replace"))
    return done.returncode


def ozone_client(cluster: LiveCluster, **overrides: str) -> Any:
    """A synchronous OzoneClient on the cluster's conf dir (plus -D style overrides)."""
    from pyozone.client import OzoneClient
    from pyozone.config.site import load_configuration

    return OzoneClient(load_configuration(cluster.conf_dir, overrides))


def random_file(path: Path, size: int, piece: int = 8 * MiB) -> str:
    """`size` random bytes into `path`, a piece at a time; their sha256."""
    import hashlib

    digest = hashlib.sha256()
    with open(path, "wb") as f:
        left = size
        while left:
            data = os.urandom(min(piece, left))
            digest.update(data)
            f.write(data)
            left -= len(data)
    return digest.hexdigest()


def file_sha256(path: Path) -> str:
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while data := f.read(8 * MiB):
            digest.update(data)
    return digest.hexdigest()


def block_files(cluster: LiveCluster, container_id: int, local_id: int) -> dict[str, Path]:
    """Datanode name -> the block's file on its disk, for every datanode that has one."""
    found: dict[str, Path] = {}
    for dn in cluster.state.datanodes():
        for path in (cluster.data_dir / dn.name / "data" / "hdds").glob(
            f"*/current/containerDir*/{container_id}/chunks/{local_id}.block"
        ):
            found[dn.name] = path
    return found


def all_block_files(cluster: LiveCluster) -> set[tuple[str, int, int]]:
    """(datanode name, container id, local id) of every block file on the datanodes' disks."""
    found: set[tuple[str, int, int]] = set()
    for dn in cluster.state.datanodes():
        for path in (cluster.data_dir / dn.name / "data" / "hdds").glob(
            "*/current/containerDir*/*/chunks/*.block"
        ):
            found.add((dn.name, int(path.parent.parent.name), int(path.name.split(".")[0])))
    return found


def container_replica_states(cluster: LiveCluster, container_id: int) -> tuple[str, list[str]]:
    """SCM's state of a container and its replicas' states (sorted)."""
    info = cluster.container(container_id) or {}
    return info.get("state", ""), sorted(r["state"] for r in info.get("replicas", []))


def wait_container_closed(
    cluster: LiveCluster, container_id: int, timeout_s: float = 30, replicas: int = 3
) -> None:
    wait_for(
        lambda: container_replica_states(cluster, container_id) == ("CLOSED", ["CLOSED"] * replicas),
        timeout_s,
        f"container {container_id} and its {replicas} replicas CLOSED",
        interval_s=0.5,
    )


def close_open_containers(cluster: LiveCluster) -> list[int]:
    """`admin container close` for every OPEN container; their ids."""
    ids = [c["containerID"] for c in cluster.admin_json("container", "list") if c["state"] == "OPEN"]
    for cid in ids:
        closed = cluster.admin("container", "close", str(cid))
        assert closed.code == 0 or "INVALID_CONTAINER_STATE" in closed.err, closed  # closing already
    return ids


def one_line_error(result: Result, code: str) -> None:
    """`pyozone sh` failed with exit 1 and one line naming `code`."""
    assert result.code == 1, result
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and code in lines[0], result


def om_code(call: Callable[[], object]) -> str:
    """The OMException result code `call` raises."""
    from pyozone.client import OMException

    with pytest.raises(OMException) as error:
        call()
    return error.value.result
