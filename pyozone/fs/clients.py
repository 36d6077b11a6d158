"""One OzoneClient per configuration and process, shared by every filesystem instance that names it.

fsspec caches filesystem instances per thread (pyarrow's I/O threads each get one) and re-creates them from
their storage options when they are unpickled on a Dask or Spark worker. A client is an event-loop thread
plus RPC connections, so instances do not own one: they look it up here by their `ClientSpec`.

- At exit the clients are closed (atexit runs before daemon threads are torn down), so no "Task was
  destroyed but it is pending" noise and no open datanode streams.
- Before a fork the clients, and the readers open through them, are closed: a child forked while its
  parent had connections open shares their sockets, and has no copy of the client's event-loop thread
  (its calls would wait forever or interleave with the parent's frames). Each side then
  makes a fresh client on its next call, and a file open for reading reopens its key at the same position,
  so a worker forked by multiprocessing, Spark or Dask with a filesystem (or a file open for reading) from
  before the fork just works. What cannot survive the fork: a call another thread of the parent has in
  flight (it is cancelled) and a file open for writing (its key is abandoned, nothing committed). Fork from
  a quiet moment, or start workers with "spawn" or "forkserver". An OzoneClient made outside these
  filesystems is not closed: a process that forks must close it first.
"""

from __future__ import annotations

import atexit
import gc
import os
import threading
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pyozone.client import OzoneClient
from pyozone.client.key_reader import KeyReader
from pyozone.config.site import load_configuration


@dataclass(frozen=True, slots=True)
class ClientSpec:
    """What makes two filesystems talk to the same OM with the same settings."""

    om_address: str | None  # None: ozone.om.address from the configuration
    conf_dir: str | None  # directory of ozone-site.xml; None: $OZONE_CONF_DIR, else the defaults
    conf: tuple[tuple[str, str], ...]  # ozone-site keys on top, sorted

    @classmethod
    def of(
        cls, om_address: str | None, conf_dir: str | None, conf: Mapping[str, object] | None
    ) -> ClientSpec:
        items = tuple(sorted((str(k), str(v)) for k, v in (conf or {}).items()))
        return cls(om_address or None, conf_dir or os.environ.get("OZONE_CONF_DIR") or None, items)

    def connect(self) -> OzoneClient:
        conf = load_configuration(Path(self.conf_dir) if self.conf_dir else None, dict(self.conf))
        return OzoneClient(conf, om_address=self.om_address)


_lock = threading.Lock()
_clients: dict[ClientSpec, OzoneClient] = {}
_readers: weakref.WeakSet[KeyReader] = weakref.WeakSet()  # open through a filesystem; closed with the clients


def shared_client(spec: ClientSpec) -> OzoneClient:
    with _lock:
        client = _clients.get(spec)
        if client is None:
            client = _clients[spec] = spec.connect()
        return client


def open_key_reader(spec: ClientSpec, volume: str, bucket: str, key: str) -> KeyReader:
    reader = shared_client(spec).open_key_reader(volume, bucket, key)
    with _lock:
        _readers.add(reader)
    return reader


def close_all() -> None:
    """Closes every shared client and the readers opened through them (at exit, before a fork; tests)."""
    with _lock:
        _close_locked()


def _close_locked() -> None:
    readers, clients = list(_readers), list(_clients.values())
    _readers.clear()
    _clients.clear()
    for reader in readers:
        reader.close()
    for client in clients:
        client.close()
    if clients:
        gc.collect()  # asyncio's transports and tasks leave reference cycles


def _before_fork() -> None:
    """A child forked while the parent had connections open shares their sockets and lacks the loop
    thread that serves them: close them, holding the lock until the fork is done so that no thread opens
    one in between."""
    _lock.acquire()
    _close_locked()


def _after_fork_in_parent() -> None:
    _lock.release()


def _after_fork_in_child() -> None:
    global _lock
    _lock = threading.Lock()  # the parent's, held across the fork


atexit.register(close_all)
os.register_at_fork(
    before=_before_fork, after_in_parent=_after_fork_in_parent, after_in_child=_after_fork_in_child
)
