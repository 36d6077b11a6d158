"""`python -m tests.unit.fs.fork_scenario`: ofs across fork, in processes of its own.

The fake cluster runs in a child process (`serve`), since gRPC cannot follow a fork of a process that is
serving it. The parent uses the filesystem and keeps a file open, then forks workers twice; each worker
reads through the filesystem and through the file it inherited, and the parent carries on after each fork.
The last line printed is a JSON verdict.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys

import fsspec

from tests.unit.client.fakes import BLOCK, FakeCluster
from tests.unit.fs.conftest import CONF

DATA = bytes(range(256)) * (BLOCK // 64)


def serve() -> None:
    cluster = FakeCluster(block_size=BLOCK)
    print(cluster.om.address, flush=True)
    sys.stdin.read()  # until the scenario closes our stdin
    cluster.stop()


def _worker(fs, f, queue) -> None:  # type: ignore[no-untyped-def]
    queue.put([fs.cat_file("vol/bucket/k", 0, 10) == DATA[:10], f.read(5) == DATA[BLOCK : BLOCK + 5]])


def scenario(address: str) -> list[bool]:
    fs = fsspec.filesystem("ofs", om_address=address, conf=CONF)
    fs.makedirs("vol/bucket")
    fs.pipe_file("vol/bucket/k", DATA)
    f = fs.open("vol/bucket/k", "rb", cache_type="none")
    f.seek(BLOCK)
    context = multiprocessing.get_context("fork")
    checks: list[bool] = []
    for _ in range(2):
        queue = context.Queue()
        worker = context.Process(target=_worker, args=(fs, f, queue))
        worker.start()
        worker.join(30)
        checks += [worker.exitcode == 0, *(queue.get(timeout=5) if worker.exitcode == 0 else [False])]
        checks.append(fs.ls("vol", detail=False) == ["vol/bucket"])  # the parent carries on
    checks.append(f.read(5) == DATA[BLOCK : BLOCK + 5])
    return checks


def main() -> None:
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.unit.fs.fork_scenario", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=os.environ,
    )
    try:
        assert server.stdout is not None
        checks = scenario(server.stdout.readline().strip())
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(30)
    print(json.dumps(checks))


if __name__ == "__main__":
    serve() if sys.argv[1:] == ["serve"] else main()
