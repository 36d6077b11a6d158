"""kill -9 of a writing datanode loses no acknowledged block and leaves no torn one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pyozone
from tests.crash_support import acks, read_lines_then_kill
from tests.unit.datanode.storage.dn_crash_writer import container_of, sizes_of
from tests.unit.datanode.storage.dn_helpers import open_node, payload, read_block

WRITER = Path(__file__).with_name("dn_crash_writer.py")
ACKS_BEFORE_KILL = 150


def read_acks_then_kill(proc: subprocess.Popen[bytes], wanted: int, timeout: float) -> list[int]:
    return acks(read_lines_then_kill(proc, wanted, timeout))


def expected(local_id: int) -> bytes:
    return b"".join(payload(local_id * 1000 + n, size) for n, size in enumerate(sizes_of(local_id)))


def test_acknowledged_blocks_survive_sigkill(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(pyozone.__file__).parents[1])}
    argv = [sys.executable, str(WRITER), str(tmp_path)]
    with (
        open(tmp_path / "stderr", "wb") as stderr,
        subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=stderr, env=env) as proc,
    ):
        acks = read_acks_then_kill(proc, ACKS_BEFORE_KILL, timeout=60.0)
    assert proc.returncode == -signal.SIGKILL, (tmp_path / "stderr").read_text()
    assert len(acks) >= ACKS_BEFORE_KILL and acks == list(range(1, len(acks) + 1))

    node = open_node(tmp_path, disks=2, container_size="1GB")
    try:
        for local_id in acks:
            container = node.containers.require(container_of(local_id))
            [block] = container.list_blocks(local_id, 1)
            assert block.block_id.local_id == local_id and block.bcsid == local_id
            assert read_block(container, block) == expected(local_id)
        for container in node.containers:
            blocks = container.list_blocks(0, 10_000)
            # Blocks committed after the last ack we saw may exist, but only whole and readable.
            assert container.key_count == len(blocks)
            assert container.bcsid == max((b.bcsid for b in blocks), default=0)
            for block in blocks:
                assert read_block(container, block) == expected(block.block_id.local_id)
        assert max(c.bcsid for c in node.containers) >= acks[-1]
    finally:
        node.close()
