"""Network topology: a two-level tree (/rack/node), with racks from a Hadoop table-mapping file."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from pyozone.config import ConfigError
from pyozone.hdds.ids import DatanodeID

DEFAULT_RACK = "/default-rack"


def load_rack_mapping(path: Path) -> dict[str, str]:
    """Reads 'NAME /rack' lines (NAME is a host name, IP or datanode UUID); '#' starts a comment."""
    mapping: dict[str, str] = {}
    try:
        lines = path.read_text().splitlines()
    except OSError as e:
        key = "net.topology.node.switch.mapping.file"
        raise ConfigError(f"{key}: cannot read {path}: {e.strerror}") from None
    for number, line in enumerate(lines, 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        parts = text.split()
        if len(parts) != 2 or not parts[1].startswith("/"):
            raise ConfigError(f"{path}:{number}: expected 'NAME /rack', got {line.strip()!r}")
        mapping[parts[0]] = parts[1].rstrip("/") or DEFAULT_RACK
    return mapping


class NetworkTopology:
    def __init__(self, mapping: dict[str, str] | None = None) -> None:
        self._mapping = mapping or {}
        self._rack_of: dict[DatanodeID, str] = {}
        self._members: dict[str, set[DatanodeID]] = defaultdict(set)

    def map_name(self, name: str, rack: str) -> None:
        """Adds a mapping entry, as an operator adds a line to the mapping file."""
        self._mapping[name] = rack

    def resolve(self, uuid: DatanodeID, hostname: str, ip: str) -> str:
        for name in (uuid, hostname, ip):
            rack = self._mapping.get(name)
            if rack:
                return rack
        return DEFAULT_RACK

    def add(self, uuid: DatanodeID, rack: str) -> None:
        self.remove(uuid)
        self._rack_of[uuid] = rack
        self._members[rack].add(uuid)

    def remove(self, uuid: DatanodeID) -> None:
        rack = self._rack_of.pop(uuid, None)
        if rack is not None:
            members = self._members[rack]
            members.discard(uuid)
            if not members:
                del self._members[rack]

    def contains(self, uuid: DatanodeID) -> bool:
        return uuid in self._rack_of

    def rack_of(self, uuid: DatanodeID) -> str | None:
        return self._rack_of.get(uuid)

    def rack_count(self) -> int:
        """Nodes at the level just above the leaves: the number of racks with a member."""
        return len(self._members)

    def racks(self) -> dict[str, frozenset[DatanodeID]]:
        return {rack: frozenset(m) for rack, m in self._members.items()}
