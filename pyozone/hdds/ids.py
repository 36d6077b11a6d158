"""Identifiers and replication configs, as immutable values."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from pyozone.hdds.states import ReplicationFactor, ReplicationType

DatanodeID = str
"""A datanode's UUID in its canonical string form."""

PipelineID = str
"""A pipeline's UUID in its canonical string form."""

ContainerID = int


def new_uuid() -> str:
    return str(uuid.uuid4())


@dataclass(frozen=True, order=True, slots=True)
class BlockID:
    """A block is addressed by its container and a local id unique within the cluster."""

    container_id: int
    local_id: int

    def __str__(self) -> str:
        return f"conID: {self.container_id} locID: {self.local_id}"


EC_CODECS = ("RS", "XOR")
"""Ozone's EC codecs: Reed-Solomon and XOR (one parity)."""
MAX_EC_NODES = 32
"""Data plus parity of one block group: far above any config Ozone ships (rs-10-4 is 14)."""


@dataclass(frozen=True, slots=True)
class ReplicationConfig:
    """RATIS/ONE, RATIS/THREE or EC/RS-d-p-chunk, written as Ozone writes them."""

    type: ReplicationType
    factor: int = 3
    ec_data: int = 0
    ec_parity: int = 0
    ec_codec: str = "RS"
    ec_chunk_kb: int = 1024

    @property
    def ec_name(self) -> str:
        """Ozone's name of an EC config, as `--replication` takes it: "rs-3-2-1024k"."""
        return f"{self.ec_codec.lower()}-{self.ec_data}-{self.ec_parity}-{self.ec_chunk_kb}k"

    @property
    def ec_chunk_size(self) -> int:
        """The cell size in bytes (Ozone's ecChunkSize)."""
        return self.ec_chunk_kb * 1024

    @property
    def required_nodes(self) -> int:
        if self.type is ReplicationType.EC:
            return self.ec_data + self.ec_parity
        return self.factor

    def __str__(self) -> str:
        if self.type is ReplicationType.EC:
            return f"EC/{self.ec_codec}-{self.ec_data}-{self.ec_parity}-{self.ec_chunk_kb}k"
        return f"{self.type.name}/{ReplicationFactor(self.factor).name}"

    @classmethod
    def parse(cls, text: str) -> ReplicationConfig:
        """Accepts "RATIS/THREE", "RATIS:THREE", "RATIS/3", "EC/RS-3-2-1024k", "EC:RS-3-2-1024k" and
        Ozone's bare EC names ("rs-3-2-1024k", "xor-2-1-1024k", "rs-3-2-1048576": a chunk without k is
        in bytes)."""
        kind, sep, rest = text.replace(":", "/").partition("/")
        if not sep and text.count("-") == 3:
            kind, rest = "EC", text
        elif not sep:
            raise ValueError(f"replication config {text!r} is not TYPE/FACTOR or EC/CODEC-DATA-PARITY-CHUNK")
        try:
            rtype = ReplicationType[kind.upper()]
        except KeyError:
            raise ValueError(f"unknown replication type {kind!r} in {text!r}") from None
        if rtype is ReplicationType.EC:
            parts = rest.split("-")
            if len(parts) != 4:
                raise ValueError(f"EC replication config {text!r} is not CODEC-DATA-PARITY-CHUNK")
            in_kb = parts[3].lower().endswith("k")  # as Ozone: "1024k" is in KB, "1048576" in bytes
            try:
                data, parity = int(parts[1]), int(parts[2])
                chunk = int(parts[3][:-1]) * 1024 if in_kb else int(parts[3])
            except ValueError:
                raise ValueError(f"EC replication config {text!r} has a non-numeric part") from None
            if data <= 0 or parity <= 0 or chunk <= 0:
                raise ValueError(f"EC replication config {text!r} needs positive data, parity and chunk")
            if chunk % 1024:
                raise ValueError(f"EC replication config {text!r}: the chunk size must be a multiple of 1024")
            codec = parts[0].upper()
            if codec not in EC_CODECS:
                raise ValueError(f"EC codec {parts[0]!r} in {text!r} is not one of {', '.join(EC_CODECS)}")
            if codec == "XOR" and parity != 1:
                raise ValueError(f"EC replication config {text!r}: XOR has exactly one parity")
            if data + parity > MAX_EC_NODES:
                raise ValueError(f"EC replication config {text!r} needs more than {MAX_EC_NODES} datanodes")
            return cls(ReplicationType.EC, 0, data, parity, codec, chunk // 1024)
        factor_text = rest.upper()
        if factor_text.isdigit():
            factor = int(factor_text)
        elif factor_text in ReplicationFactor.__members__:
            factor = ReplicationFactor[factor_text].value
        else:
            raise ValueError(f"unknown replication factor {rest!r} in {text!r}")
        if factor not in (1, 3):
            raise ValueError(f"replication factor must be ONE or THREE, got {rest!r}")
        return cls(rtype, factor)


RATIS_ONE = ReplicationConfig(ReplicationType.RATIS, 1)
RATIS_THREE = ReplicationConfig(ReplicationType.RATIS, 3)
