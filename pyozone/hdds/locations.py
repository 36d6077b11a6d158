"""Where a key's blocks live, as a reader or writer needs it: the datanodes, the pipeline and each block's
byte range (Ozone's OmKeyLocationInfo with its Pipeline, in ozone-common's om.helpers, shared by OM's
clients). The messages they come from are read in protocol/locations.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyozone.hdds.ids import ReplicationConfig


@dataclass(frozen=True, slots=True)
class DatanodeRef:
    """A datanode as the data path needs it: who (uuid) and where its data port listens."""

    uuid: str
    host: str
    ip: str
    port: int | None  # the STANDALONE port; None when OM did not know it
    datastream_port: int | None = None  # RATIS_DATASTREAM; None: the datanode serves no datastream
    rack: str = ""  # its network location, as SCM resolved it

    @property
    def address(self) -> str:
        return f"{self.ip or self.host}:{self.port}"


@dataclass(frozen=True, slots=True)
class PipelineRef:
    id: str
    members: tuple[DatanodeRef, ...]
    leader_id: str  # leaderID, else suggestedLeaderID, else "" (see leader())
    replica_indexes: tuple[int, ...] = ()
    """EC: members[i] holds replica index replica_indexes[i] (1..data+parity); empty when replicated."""
    ec: ReplicationConfig | None = None
    """The EC config of an EC pipeline (a block group's), else None."""

    def leader(self) -> DatanodeRef | None:
        """Where writes go: the leader, else the suggested leader, else the only (or first) member."""
        for member in self.members:
            if member.uuid == self.leader_id:
                return member
        return self.members[0] if self.members else None

    def leader_first(self) -> tuple[DatanodeRef, ...]:
        leader = self.leader()
        return (leader, *[m for m in self.members if m is not leader]) if leader else self.members

    def by_index(self) -> dict[int, tuple[DatanodeRef, ...]]:
        """EC: the members holding each replica index, in the pipeline's order (nearest first for reads)."""
        found: dict[int, list[DatanodeRef]] = {}
        for member, index in zip(self.members, self.replica_indexes, strict=True):
            found.setdefault(index, []).append(member)
        return {index: tuple(members) for index, members in found.items()}


@dataclass(frozen=True, slots=True)
class KeyLocation:
    """One block of a key: the bytes [offset, offset + length) of the key, and where to read them."""

    container_id: int
    local_id: int
    bcsid: int
    offset: int
    length: int
    pipeline: PipelineRef
    container_state: str = ""
    token: str = ""
    """OM's block token for the block (encodedToken), sent with every request for it; "" without
    hdds.block.token.enabled."""

    @property
    def block_name(self) -> str:
        return f"conID: {self.container_id} locID: {self.local_id}"

    def read_order(self) -> tuple[DatanodeRef, ...]:
        """An OPEN container is read from its pipeline's leader first (it has every applied write);
        other containers' replicas come nearest first from OM, so their order is kept."""
        if self.container_state in ("", "OPEN"):
            return self.pipeline.leader_first()
        return self.pipeline.members
