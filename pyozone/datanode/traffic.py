"""Bytes this datanode sent to each peer, by write pipeline: what the cross-rack test and an operator
asking "where does my replication traffic go" read (`GET /traffic` on the datanode's web port).

Process-wide, as a metrics registry is: the pipeline log's appenders and the datastream's chain writers
count into it from the event loop and from their threads alike.
"""

from __future__ import annotations

import threading
from collections import defaultdict


class PeerTraffic:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sent: defaultdict[str, defaultdict[str, int]] = defaultdict(lambda: defaultdict(int))

    def sent(self, peer: str, path: str, n: int) -> None:
        """`path`: "V1" (pipeline log entries, data included) or "V2" (datastream packets)."""
        with self._lock:
            self._sent[peer][path] += n

    def snapshot(self) -> dict[str, dict[str, int]]:
        with self._lock:
            return {peer: dict(paths) for peer, paths in self._sent.items()}


TRAFFIC = PeerTraffic()
