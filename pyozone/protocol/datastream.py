"""The datastream protocol: write pipeline V2's chain and zero-copy reads, framed on plain TCP.

Sans-IO: encoders return bytes, decoders take the bytes a caller already read and raise
StreamProtocolError naming what is wrong, so the datanode and the client share one definition of the wire.
Nothing here copies chunk data: a packet's data follows its frame and is read straight into the
receiver's buffer.

A connection starts with a preamble (magic, version, op, header length) and a JSON header; with block
tokens required (hdds.block.token.enabled) a header carries the block's token as "token", the same
URL-safe encodedToken an xceiver request carries (absent when there is none: the insecure wire is
unchanged):
- WRITE: one block. The header names the block, the pipeline, the checksum settings and `chain`, the
  members still to reach *after* the receiver, in order (Ozone's RatisHelper.getRoutingTable). Packets follow,
  each a frame, its checksums and its data; END closes the block. Every member answers each packet with an
  ack once it and every member after it wrote the packet, so acks flow back up the chain pipelined.
- READ: a range of a committed block. The answer is a reply frame and then exactly the range's bytes,
  sent from the block file with sendfile. A connection may carry any number of reads in turn.

Acks and read replies carry DatanodeClientProtocol's Result numbers. The block's putBlock is no part of the
stream: the writer sends it as a container-protocol request (put_block_request), as V1 does.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from pyozone.hdds.checksum import ChecksumType, checksum_size
from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.limits import MAX_CHUNK_BYTES
from pyozone.hdds.locations import KeyLocation
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.protocol.tokens import MAX_ENCODED_TOKEN

MAGIC = b"OZDS"
VERSION = 1
PREAMBLE = struct.Struct(">4sBBH")
"""magic, version, op, header length."""
MAX_HEADER_BYTES = 4096
MAX_CHAIN = 8
MAX_PACKET_BYTES = MAX_CHUNK_BYTES
PACKET = struct.Struct(">BQII")
"""kind, offset of the data in the block, data length, checksum bytes that follow the frame."""
ACK = struct.Struct(">HQBH")
"""result (DatanodeClientProtocol's Result number), bytes acknowledged from the block's start, the member
that failed counted from the sender (0 itself, 1 the next, ...; each member passing a failure on adds 1),
message length (the message follows)."""
READ_REPLY = struct.Struct(">HQH")
"""result, data length that follows the message, message length."""
MAX_MESSAGE_BYTES = 1024

# DatanodeClientProtocol's Result numbers the datastream port answers with of its own accord (the storage
# layer's refusals go by name: result_number).
SUCCESS: int = pb.SUCCESS
MALFORMED_REQUEST: int = pb.MALFORMED_REQUEST
IO_EXCEPTION: int = pb.IO_EXCEPTION
CONTAINER_INTERNAL_ERROR: int = pb.CONTAINER_INTERNAL_ERROR
UNABLE_TO_FIND_CHUNK: int = pb.UNABLE_TO_FIND_CHUNK
BLOCK_TOKEN_VERIFICATION_FAILED: int = pb.BLOCK_TOKEN_VERIFICATION_FAILED


class Op(IntEnum):
    WRITE = 1
    READ = 2


class PacketKind(IntEnum):
    DATA = 1
    END = 2


class StreamProtocolError(ProtocolError):
    """A frame that breaks the protocol; the connection cannot go on after it."""

    def __init__(self, problem: str) -> None:
        super().__init__("datastream", problem)


@dataclass(frozen=True, slots=True)
class Hop:
    """One member of the chain: where its datastream port listens."""

    uuid: str
    host: str
    port: int

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass(frozen=True, slots=True)
class WriteHeader:
    container_id: int
    local_id: int
    pipeline_id: str
    checksum_type: ChecksumType
    bytes_per_checksum: int
    chain: tuple[Hop, ...] = ()
    replica_index: int = 0
    """An EC block's replica index (1..data+parity); 0 for a replicated block."""
    token: str = ""
    """The client's block token (encodedToken, WRITE); every member checks it for itself."""

    def forwarded(self) -> WriteHeader:
        """The header the receiver sends on to chain[0]: the rest of the chain, the client's token."""
        return WriteHeader(
            self.container_id, self.local_id, self.pipeline_id, self.checksum_type,
            self.bytes_per_checksum, self.chain[1:], self.replica_index, self.token,
        )  # fmt: skip

    def checksum_bytes(self, length: int) -> int:
        """How many checksum bytes a packet of `length` data bytes carries."""
        if self.checksum_type is ChecksumType.NONE:
            return 0
        return -(-length // self.bytes_per_checksum) * checksum_size(self.checksum_type)


@dataclass(frozen=True, slots=True)
class ReadHeader:
    container_id: int
    local_id: int
    bcsid: int
    offset: int
    length: int
    token: str = ""
    """The block token (encodedToken, READ)."""


@dataclass(frozen=True, slots=True)
class Packet:
    kind: PacketKind
    offset: int
    length: int
    checksum_bytes: int


@dataclass(frozen=True, slots=True)
class Ack:
    result: int
    acked: int
    member: int = 0
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.result == SUCCESS


# ------------------------------------------------------------------ headers
def encode_header(header: WriteHeader | ReadHeader) -> bytes:
    if isinstance(header, WriteHeader):
        op, body = (
            Op.WRITE,
            {
                "container": header.container_id,
                "local": header.local_id,
                "pipeline": header.pipeline_id,
                "checksum": header.checksum_type.name,
                "bytesPerChecksum": header.bytes_per_checksum,
                "chain": [[h.uuid, h.host, h.port] for h in header.chain],
                "replicaIndex": header.replica_index,
            },
        )
    else:
        op, body = (
            Op.READ,
            {
                "container": header.container_id,
                "local": header.local_id,
                "bcsid": header.bcsid,
                "offset": header.offset,
                "length": header.length,
            },
        )
    if header.token:
        body["token"] = header.token
    raw = json.dumps(body, separators=(",", ":")).encode()
    if len(raw) > MAX_HEADER_BYTES:
        raise StreamProtocolError(f"header of {len(raw)} bytes is above {MAX_HEADER_BYTES}")
    return PREAMBLE.pack(MAGIC, VERSION, op, len(raw)) + raw


def decode_preamble(raw: bytes) -> tuple[Op, int]:
    """The op and the header length that follows."""
    magic, version, op, length = PREAMBLE.unpack(raw)
    if magic != MAGIC:
        raise StreamProtocolError(f"not a datastream connection (starts {magic!r}, not {MAGIC!r})")
    if version != VERSION:
        raise StreamProtocolError(f"version {version} is not supported (this datanode speaks {VERSION})")
    if op not in Op._value2member_map_:
        raise StreamProtocolError(f"unknown op {op}")
    if not 0 < length <= MAX_HEADER_BYTES:
        raise StreamProtocolError(f"header length {length} is outside 1..{MAX_HEADER_BYTES}")
    return Op(op), length


def decode_header(op: Op, raw: bytes) -> WriteHeader | ReadHeader:
    try:
        body = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise StreamProtocolError(f"header is not JSON: {e}") from None
    except RecursionError:
        raise StreamProtocolError("header is not JSON: nested too deep") from None
    if not isinstance(body, dict):
        raise StreamProtocolError("header is not a JSON object")
    if op is Op.READ:
        return ReadHeader(
            _int(body, "container", 1), _int(body, "local", 1), _int(body, "bcsid"),
            _int(body, "offset"), _int(body, "length", 0, MAX_PACKET_BYTES), _token(body),
        )  # fmt: skip
    name = body.get("checksum")
    if not isinstance(name, str) or name not in ChecksumType.__members__:
        raise StreamProtocolError(f"header.checksum {name!r} is not a checksum type")
    chain = body.get("chain")
    if not isinstance(chain, list) or len(chain) > MAX_CHAIN:
        raise StreamProtocolError(f"header.chain must be a list of at most {MAX_CHAIN} members")
    return WriteHeader(
        _int(body, "container", 1),
        _int(body, "local", 1),
        _text(body.get("pipeline"), "header.pipeline"),
        ChecksumType[name],
        _int(body, "bytesPerChecksum", 1, MAX_PACKET_BYTES),
        tuple(_hop(hop, i) for i, hop in enumerate(chain)),
        _int(body, "replicaIndex", 0, 255) if "replicaIndex" in body else 0,
        _token(body),
    )


def _token(body: dict[str, Any]) -> str:
    """The header's token: absent is none (the datanode refuses that when it requires tokens)."""
    if "token" not in body:
        return ""
    return _text(body["token"], "header.token", MAX_ENCODED_TOKEN)


def _int(body: dict[str, Any], name: str, low: int = 0, high: int = (1 << 63) - 1) -> int:
    value = body.get(name)
    if type(value) is not int or not low <= value <= high:
        raise StreamProtocolError(f"header.{name} {value!r} is not an integer in {low}..{high}")
    return value


def _text(value: object, field: str, limit: int = 255) -> str:
    if not isinstance(value, str) or not 0 < len(value) <= limit:
        raise StreamProtocolError(f"{field} must be a string of 1..{limit} characters")
    return value


def _hop(raw: object, i: int) -> Hop:
    field = f"header.chain[{i}]"
    if not isinstance(raw, list) or len(raw) != 3:
        raise StreamProtocolError(f"{field} must be [uuid, host, port]")
    uuid, host, port = raw
    if type(port) is not int or not 0 < port <= 65535:
        raise StreamProtocolError(f"{field} port {port!r} is not a port")
    return Hop(_text(uuid, f"{field} uuid", 64), _text(host, f"{field} host"), port)


# ------------------------------------------------------------------ packets and answers
def encode_packet(kind: PacketKind, offset: int, length: int, checksum_bytes: int) -> bytes:
    return PACKET.pack(kind, offset, length, checksum_bytes)


def decode_packet(raw: bytes | memoryview, header: WriteHeader, expected_offset: int) -> Packet:
    """Checks a packet frame against the stream: packets come in order, with whole checksums."""
    kind, offset, length, checksum_bytes = PACKET.unpack(raw)
    if kind not in PacketKind._value2member_map_:
        raise StreamProtocolError(f"unknown packet kind {kind}")
    if offset != expected_offset:
        raise StreamProtocolError(f"packet at offset {offset}; the block has {expected_offset} bytes so far")
    if kind == PacketKind.END:
        if length or checksum_bytes:
            raise StreamProtocolError("an END packet carries no data")
        return Packet(PacketKind.END, offset, 0, 0)
    if not 0 < length <= MAX_PACKET_BYTES:
        raise StreamProtocolError(f"packet length {length} is outside 1..{MAX_PACKET_BYTES}")
    if checksum_bytes != header.checksum_bytes(length):
        raise StreamProtocolError(
            f"packet of {length} bytes carries {checksum_bytes} checksum bytes, not "
            f"{header.checksum_bytes(length)} ({header.checksum_type.name} per {header.bytes_per_checksum})"
        )
    return Packet(PacketKind.DATA, offset, length, checksum_bytes)


def encode_ack(result: int, acked: int, member: int = 0, message: str = "") -> bytes:
    raw = message.encode("utf-8", "replace")[:MAX_MESSAGE_BYTES]
    return ACK.pack(result, acked, min(member, 255), len(raw)) + raw


def decode_ack_frame(raw: bytes | memoryview) -> tuple[Ack, int]:
    """The ack without its message, and the message's length (read it next)."""
    result, acked, member, length = ACK.unpack(raw)
    if length > MAX_MESSAGE_BYTES:
        raise StreamProtocolError(f"ack message of {length} bytes is above {MAX_MESSAGE_BYTES}")
    return Ack(result, acked, member), length


def encode_read_reply(result: int, length: int, message: str = "") -> bytes:
    raw = message.encode("utf-8", "replace")[:MAX_MESSAGE_BYTES]
    return READ_REPLY.pack(result, length, len(raw)) + raw


def decode_read_reply(raw: bytes | memoryview) -> tuple[int, int, int]:
    """result, data length, message length (the message, then the data, follow)."""
    result, length, message = READ_REPLY.unpack(raw)
    if message > MAX_MESSAGE_BYTES or length > MAX_PACKET_BYTES:
        raise StreamProtocolError(f"read reply of {length} data and {message} message bytes is out of bounds")
    return result, length, message


# ------------------------------------------------------------------ result numbers
def result_number(name: str) -> int:
    """The Result number of `name` (a storage-layer refusal: datanode/storage's Result names are Ozone's)."""
    return pb.Result.Value(name)


# ------------------------------------------------------------------ V2's container-protocol messages
ACKED = pb.ContainerCommandResponseProto(result=pb.SUCCESS)
"""A packet's ack as the writer's answers hold it: what a writeChunk's SUCCESS is to V1 (the writer checks
every chunk's answer alike)."""


def put_block_request(
    location: KeyLocation, block: pb.BlockData, eof: bool
) -> pb.ContainerCommandRequestProto:
    """The putBlock that commits what the stream wrote: sent through the pipeline's log to its leader, with
    the block's token, as V1's."""
    return pb.ContainerCommandRequestProto(
        cmdType=pb.PutBlock,
        containerID=location.container_id,
        pipelineID=location.pipeline.id,
        encodedToken=location.token,
        putBlock=pb.PutBlockRequestProto(blockData=block, eof=eof),
    )
