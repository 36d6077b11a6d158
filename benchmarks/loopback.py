"""What this machine carries through three plain socket hops on loopback: the baseline for write pipeline V1.

A V1 write moves every byte three times (client -> leader, leader -> each of two followers). Here the same
bytes go sender -> relay 1 -> relay 2 -> sink, each hop a plain TCP connection and each relay its own OS
process (as each datanode is), copying with recv_into/sendall in 1 MiB pieces and doing nothing else: no
framing, no checksums, no disk. The sink answers with the byte count once the sender's stream ends, so a
transfer's time covers every byte arriving at the end of the chain.

    python -m benchmarks.loopback --size 128MB --streams 1 3
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import socket
import struct
import threading
import time
from dataclasses import dataclass

from pyozone.config.units import parse_size_bytes

HOST = "127.0.0.1"
PIECE = 1 << 20
_COUNT = struct.Struct(">Q")


def _listener() -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((HOST, 0))
    s.listen(64)
    return s


def _serve(listener: socket.socket, handle: object) -> None:
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=handle, args=(conn,), daemon=True).start()  # type: ignore[arg-type]


def _sink_main(listener: socket.socket) -> None:
    def handle(conn: socket.socket) -> None:
        buf, total = bytearray(PIECE), 0
        with conn:
            while n := conn.recv_into(buf):
                total += n
            conn.sendall(_COUNT.pack(total))

    _serve(listener, handle)


def _relay_main(listener: socket.socket, downstream: tuple[str, int]) -> None:
    def handle(conn: socket.socket) -> None:
        buf = bytearray(PIECE)
        view = memoryview(buf)
        with conn, socket.create_connection(downstream) as out:
            while n := conn.recv_into(buf):
                out.sendall(view[:n])
            out.shutdown(socket.SHUT_WR)
            conn.sendall(_recv_exact(out, _COUNT.size))

    _serve(listener, handle)


def _recv_exact(conn: socket.socket, n: int) -> bytes:
    parts = b""
    while len(parts) < n:
        part = conn.recv(n - len(parts))
        if not part:
            raise ConnectionError("the chain closed before it answered")
        parts += part
    return parts


@dataclass
class Chain:
    """Relay processes in a chain; `entry` is where a sender connects."""

    entry: tuple[str, int]
    processes: list[mp.Process]

    def close(self) -> None:
        for p in self.processes:
            p.terminate()
        for p in self.processes:
            p.join(5)


def start_chain(hops: int = 3) -> Chain:
    """`hops` connections: hops - 1 relays and a sink, each in its own process."""
    ctx = mp.get_context("fork")
    sink = _listener()
    processes = [ctx.Process(target=_sink_main, args=(sink,), daemon=True)]
    downstream = sink.getsockname()
    for _ in range(hops - 1):
        relay = _listener()
        processes.append(ctx.Process(target=_relay_main, args=(relay, downstream), daemon=True))
        downstream = relay.getsockname()
    for p in processes:
        p.start()
    return Chain(downstream, processes)


def push(entry: tuple[str, int], size: int) -> None:
    """Sends `size` bytes into the chain and waits until its end has all of them."""
    data = memoryview(bytes(PIECE))
    with socket.create_connection(entry) as conn:
        left = size
        while left:
            n = min(left, PIECE)
            conn.sendall(data[:n])
            left -= n
        conn.shutdown(socket.SHUT_WR)
        (got,) = _COUNT.unpack(_recv_exact(conn, _COUNT.size))
    if got != size:
        raise AssertionError(f"the chain delivered {got} of {size} bytes")


def measure(chain: Chain, size: int, streams: int) -> float:
    """MB/s (total bytes over wall time) of `streams` concurrent transfers of `size` bytes each."""
    threads = [threading.Thread(target=push, args=(chain.entry, size)) for _ in range(streams)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return streams * size / (time.perf_counter() - start) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", default="128MB", help="bytes per stream (default 128MB)")
    parser.add_argument("--streams", type=int, nargs="+", default=[1, 3])
    args = parser.parse_args()
    size = parse_size_bytes(args.size)
    chain = start_chain()
    try:
        measure(chain, 8 << 20, 1)  # warm-up
        for streams in args.streams:
            print(
                f"{streams} stream(s) x {args.size} through 3 hops: {measure(chain, size, streams):,.0f} MB/s"
            )
    finally:
        chain.close()


if __name__ == "__main__":
    main()
