"""WitnessedContainers: every container this datanode ever had and has not deleted, in a RocksDB next to
datanode.id (Ozone's witnessed_container.db, table ContainerCreateInfoTable).

A container's own files live on its data volume, so a disk that fails, or is swapped for an empty one,
takes with it the evidence that the container was ever here. This record lives apart from the data
volumes: at start-up, a container it names that no volume holds is missing (Ozone's
missingContainerSet), and a later write must not create it again empty.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pyozone.hdds.store.rocksdb import RocksDBBackend, StoreError

DB_NAME = "witnessed_container.db"
TABLE = "ContainerCreateInfoTable"
COMPLETE = b"#complete"
"""pyozone's marker in the default column family: the table names every container on the volumes (set
after a start on which every volume was read), so a failed volume's containers are all in it."""


@dataclass(frozen=True, slots=True)
class ContainerCreateInfo:
    """What is recorded when a replica arrives: its state (kept up to date as it changes), its EC replica
    index (0 for Ratis) and the pipeline that created the container, so a restarted pipeline member can
    tell whether it lost containers that pipeline still writes to."""

    state: str
    replica_index: int
    pipeline_id: str

    @property
    def still_written(self) -> bool:
        """OPEN or CLOSING: its pipeline may still put entries into it (a closed one takes none)."""
        return self.state in ("OPEN", "CLOSING")


def _key(container_id: int) -> bytes:
    return container_id.to_bytes(8, "big")  # Ozone's ContainerID codec: a big-endian long


class WitnessedContainers:
    def __init__(self, directory: Path) -> None:
        """Opens (or creates) DIRECTORY/witnessed_container.db; a StoreError names the path if it cannot."""
        self.path = directory / DB_NAME
        self._db = RocksDBBackend(self.path, tables=(TABLE,), owner="a datanode")

    def all(self) -> dict[int, ContainerCreateInfo]:
        found: dict[int, ContainerCreateInfo] = {}
        for key, value in self._db.items(TABLE):
            try:
                doc = json.loads(value)
                info = ContainerCreateInfo(str(doc["state"]), int(doc["replicaIndex"]), str(doc["pipeline"]))
            except (ValueError, KeyError, TypeError) as e:
                cid = int.from_bytes(key, "big")
                raise StoreError(f"{self.path}: corrupt record for container {cid}: {e!r}") from None
            found[int.from_bytes(key, "big")] = info
        return found

    def record(self, container_id: int, info: ContainerCreateInfo) -> None:
        doc = {"state": info.state, "replicaIndex": info.replica_index, "pipeline": info.pipeline_id}
        self._db.write([(TABLE, _key(container_id), json.dumps(doc).encode())])

    def forget(self, container_id: int) -> None:
        """The replica was deleted on purpose: nothing of it is missing any more."""
        self._db.write([(TABLE, _key(container_id), None)])

    @property
    def complete(self) -> bool:
        return self._db.get("default", COMPLETE) is not None

    def mark_complete(self) -> None:
        self._db.write([("default", COMPLETE, b"1")])

    def close(self) -> None:
        self._db.close()
