"""Identifiers and replication configs, as immutable values."""

from __future__ import annotations

from dataclasses import dataclass

from pyozone.hdds.states import ReplicationFactor, ReplicationType

DatanodeID = str
"""A datanode's UUID in its canonical string form."""

PipelineID = str
"""A pipeline's UUID in its canonical string form."""

ContainerID = int


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


class InvalidReplicationConfig(ValueError):
    """A config that breaks one of ReplicationConfig.validate's rules; `part` names the part it breaks
    by its field of Ozone's messages ("factor", "data", "parity", "codec", "ecChunkSize"), so a decoder
    can name the field it read."""

    def __init__(self, part: str, reason: str) -> None:
        super().__init__(reason)
        self.part = part


@dataclass(frozen=True, slots=True)
class ReplicationConfig:
    """RATIS/ONE, RATIS/THREE or EC/RS-d-p-chunk, written as Ozone writes them: the one value a
    replication config travels as above the wire (parse takes every spelling at the edges; protocol/
    common.py converts to and from Ozone's messages). Build one with parse or validate it."""

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

    def validate(self) -> ReplicationConfig:
        """This config, or InvalidReplicationConfig naming the rule it breaks: every rule of a valid
        config, for every reader (parse, the protocol decoders). A replicated config has ONE or THREE
        copies (Ozone's ReplicationFactor); an EC config (Ozone's ECReplicationConfig) has a known codec,
        positive data, parity and cell size, XOR exactly one parity, and at most MAX_EC_NODES nodes."""
        if self.type is not ReplicationType.EC:
            if self.factor not in (1, 3):
                raise InvalidReplicationConfig(
                    "factor", f"replication factor must be ONE or THREE, got {self.factor}"
                )
            return self
        if self.ec_codec not in EC_CODECS:
            raise InvalidReplicationConfig(
                "codec", f"EC codec {self.ec_codec.lower()!r} is not one of {', '.join(EC_CODECS)}"
            )
        for part, value in (
            ("data", self.ec_data),
            ("parity", self.ec_parity),
            ("ecChunkSize", self.ec_chunk_kb),
        ):
            if value <= 0:
                raise InvalidReplicationConfig(part, f"EC needs positive data, parity and chunk, got {value}")
        if self.ec_codec == "XOR" and self.ec_parity != 1:
            raise InvalidReplicationConfig("parity", f"XOR has exactly one parity, got {self.ec_parity}")
        if self.ec_data + self.ec_parity > MAX_EC_NODES:
            raise InvalidReplicationConfig(
                "data", f"EC needs more than {MAX_EC_NODES} datanodes ({self.ec_data} + {self.ec_parity})"
            )
        return self

    @classmethod
    def parse(cls, text: str) -> ReplicationConfig:
        """The one parser of every spelling: "RATIS/THREE", "RATIS:THREE", "RATIS/3", "EC/RS-3-2-1024k",
        "EC:RS-3-2-1024k" and Ozone's bare EC names ("rs-3-2-1024k", "xor-2-1-1024k", "rs-3-2-1048576": a
        chunk without k is in bytes). The config is validated; a bad one raises ValueError saying why."""
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
            config = cls._parse_ec(text, rest)
        else:
            factor_text = rest.upper()
            if factor_text.isdigit():
                config = cls(rtype, int(factor_text))
            elif factor_text in ReplicationFactor.__members__:
                config = cls(rtype, ReplicationFactor[factor_text].value)
            else:
                raise ValueError(f"unknown replication factor {rest!r} in {text!r}")
        try:
            return config.validate()
        except InvalidReplicationConfig as e:
            raise InvalidReplicationConfig(e.part, f"replication config {text!r}: {e}") from None

    @classmethod
    def _parse_ec(cls, text: str, rest: str) -> ReplicationConfig:
        """CODEC-DATA-PARITY-CHUNK, unvalidated (parse validates)."""
        parts = rest.split("-")
        if len(parts) != 4:
            raise ValueError(f"EC replication config {text!r} is not CODEC-DATA-PARITY-CHUNK")
        in_kb = parts[3].lower().endswith("k")  # as Ozone: "1024k" is in KB, "1048576" in bytes
        try:
            data, parity = int(parts[1]), int(parts[2])
            chunk = int(parts[3][:-1]) * 1024 if in_kb else int(parts[3])
        except ValueError:
            raise ValueError(f"EC replication config {text!r} has a non-numeric part") from None
        if chunk % 1024:
            raise ValueError(f"EC replication config {text!r}: the chunk size must be a multiple of 1024")
        return cls(ReplicationType.EC, 0, data, parity, parts[0].upper(), chunk // 1024)

    @classmethod
    def of(cls, named: ReplicationConfig | str | None) -> ReplicationConfig | None:
        """A config as an edge names it (the client API, fsspec's `replication=`, freon's -r): a
        ReplicationConfig as it is, a string by parse, None or "" (OM's default: the bucket's, or the
        server's for a bucket)."""
        if isinstance(named, str):
            return cls.parse(named) if named else None
        return named

    @staticmethod
    def resolve(
        requested: ReplicationConfig | None,
        bucket_default: ReplicationConfig | None,
        server_default: ReplicationConfig,
    ) -> ReplicationConfig:
        """The config a key or bucket is written with, as Ozone's ReplicationConfig.resolve: the one the
        client asked for, else its bucket's default, else the server's (ozone.server.default.replication
        and .type; a bucket has no bucket default)."""
        if requested is not None:
            return requested
        return bucket_default if bucket_default is not None else server_default


RATIS_ONE = ReplicationConfig(ReplicationType.RATIS, 1)
RATIS_THREE = ReplicationConfig(ReplicationType.RATIS, 3)
