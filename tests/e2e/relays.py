"""A relay between the test process's clients and a daemon in a network namespace (tests/e2e/netns_hosts.py),
for the Jepsen-style tests of OM HA and SCM HA: each client group opens its connections from its own
address on the bridge, so the nemesis can cut one group from one daemon, or have the relay refuse it."""

from __future__ import annotations

import contextlib
import socket
import struct
import threading


class Relay:
    """Forwards every connection to 127.0.0.1:`port` to `target`, opened from `source` (an address this
    machine holds on the bridge), so the nemesis can cut a group of clients from one daemon by that address.
    While it `refuses`, the relay resets every connection at once, as a firewall that rejects: the clients
    fail over at once, and reach a new leader as soon as it is elected, not a call timeout later."""

    def __init__(self, target: tuple[str, int], source: str) -> None:
        self.target, self.source = target, source
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._closed = False
        self._refusing = False
        threading.Thread(target=self._accept, name=f"relay-{self.port}", daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                downstream, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._connect, args=(downstream,), daemon=True).start()

    def _connect(self, downstream: socket.socket) -> None:
        if self._refusing:
            _reset(downstream)
            return
        try:  # a cut link does not answer: the client sees its connection reset after a while
            upstream = socket.create_connection(self.target, timeout=5, source_address=(self.source, 0))
        except OSError:
            downstream.close()
            return
        upstream.settimeout(None)
        with self._lock:
            if self._closed or self._refusing:  # closed or refusing while it connected
                _reset(upstream)
                _reset(downstream)
                return
            self._open |= {upstream, downstream}
        for a, b in ((downstream, upstream), (upstream, downstream)):
            threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def refuse(self, refusing: bool) -> None:
        """Resets every connection from now on (and those open) while `refusing`."""
        with self._lock:
            self._refusing = refusing
            if refusing:
                for s in self._open:
                    _reset(s)
                self._open.clear()

    def close(self) -> None:
        self._listener.close()
        with self._lock:
            self._closed = True
            for s in self._open:
                with contextlib.suppress(OSError):
                    s.close()


def _reset(s: socket.socket) -> None:
    """Closes `s` with a reset (RST), not an orderly end."""
    with contextlib.suppress(OSError):
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()
