"""The "Ozone Write Pipeline V2 with Ratis Streaming" blog post's Pros3: datastreams to different disks of one
datanode do not wait for each other. One volume is slowed by the test-only fault hook (storage/faults.py); a
stream to a container on the other volume keeps at least 80 % of the rate it has alone."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from pathlib import Path

from pyozone.datanode.storage import KeyValueContainer, faults
from pyozone.hdds.checksum import ChecksumType, compute
from pyozone.protocol import datastream as ds
from tests.unit.datanode.dnd_helpers import FakeScm, async_test, dn_conf, running

MIB = 1 << 20
PACKETS = 128
TRIES = 3


def stream_block(port: int, container: KeyValueContainer, local_id: int, packets: int = PACKETS) -> float:
    """Writes `packets` packets of 1 MiB as one block on a one-member chain; returns MiB/s."""
    header = ds.WriteHeader(container.container_id, local_id, "p1", ChecksumType.CRC32C, 16 * 1024)
    data = bytes(range(256)) * (MIB // 256)
    sums = b"".join(compute(data, ChecksumType.CRC32C, 16 * 1024).checksums)
    acks: list[ds.Ack] = []
    with socket.create_connection(("127.0.0.1", port), timeout=60) as conn:
        reader = threading.Thread(target=_read_acks, args=(conn, packets + 1, acks))
        start = time.perf_counter()
        reader.start()
        conn.sendall(ds.encode_header(header))
        for i in range(packets):
            conn.sendall(ds.encode_packet(ds.PacketKind.DATA, i * MIB, MIB, len(sums)) + sums)
            conn.sendall(data)
        conn.sendall(ds.encode_packet(ds.PacketKind.END, packets * MIB, 0, 0))
        reader.join(120)
        seconds = time.perf_counter() - start
    assert len(acks) == packets + 1 and all(a.ok for a in acks), acks[-3:]
    return packets / seconds


def _read_acks(conn: socket.socket, n: int, acks: list[ds.Ack]) -> None:
    with conn.makefile("rb") as f:
        for _ in range(n):
            ack, length = ds.decode_ack_frame(f.read(ds.ACK.size))
            f.read(length)
            acks.append(ack)


@async_test
async def test_a_slow_volume_does_not_slow_streams_to_the_other(tmp_path: Path, scm: FakeScm) -> None:
    conf = dn_conf(tmp_path, scm.address, **{"ozone.scm.container.size": "1GB"})
    async with running(conf) as dn:
        made = [await asyncio.to_thread(dn.containers.create, cid, dn.uuid, "p1") for cid in (1, 2, 3)]
        fast = made[0]
        slow = next(c for c in made if c.volume.root != fast.volume.root)
        port, local_ids = dn.ports.datastream, iter(range(1, 100))
        # Each try measures alone then beside, back to back: a machine busy with other work slows both.
        for _ in range(TRIES):
            alone = await asyncio.to_thread(stream_block, port, fast, next(local_ids))
            faults.slow_volume(slow.volume.root, 0.1)  # 10 MiB/s
            try:
                slowed = asyncio.to_thread(stream_block, port, slow, next(local_ids), PACKETS // 8)
                beside = await asyncio.to_thread(stream_block, port, fast, next(local_ids))
                slow_rate = await slowed
            finally:
                faults.slow_volume(slow.volume.root, 0)
            assert slow_rate < 12, f"the hook did not slow the volume: {slow_rate:.0f} MiB/s"
            if beside >= 0.8 * alone:
                return
    raise AssertionError(f"{beside:.0f} MiB/s beside a slow volume, {alone:.0f} MiB/s alone")
