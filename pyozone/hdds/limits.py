"""Message size limits of pyozone's RPC services (pyozone.rpc's ChannelSettings and ServerSettings).

The RPC layer refuses (RESOURCE_EXHAUSTED) any message above the receiver's limit from the frame header,
before its body is read, so an oversized request never reaches a handler. Servers and clients of a service
use the same limit.
"""

from __future__ import annotations

KiB = 1 << 10
MiB = 1 << 20

MAX_CHUNK_BYTES = 32 * MiB
"""The largest chunk a WriteChunk or ReadChunk carries (Ozone's OZONE_SCM_CHUNK_MAX_SIZE)."""

MAX_DATA_MESSAGE_BYTES = MAX_CHUNK_BYTES + 1 * MiB
"""XceiverClientProtocolService and IntraDatanodeProtocolService: a largest chunk plus its envelope
(block id, chunk info with one 4-byte checksum per 16 KiB, block metadata)."""

MAX_HEARTBEAT_MESSAGE_BYTES = 16 * MiB
"""StorageContainerDatanodeProtocolService (register, heartbeat). A full container report costs about
80 bytes per replica, so 16 MiB holds some 200,000 replicas: a datanode with 1 PB of 5 GB containers."""

MAX_ADMIN_MESSAGE_BYTES = 4 * MiB
"""ScmAdminProtocolService: listings are paged (listContainer takes a count), so 4 MiB is ample."""

MAX_OM_MESSAGE_BYTES = 32 * MiB
"""OzoneManagerService: a listing of 1000 keys, or lookupKey of a key of some 50,000 blocks (each
KeyLocation carries its pipeline with three datanodes in full, ~600 bytes)."""

REPLICATION_CHUNK_BYTES = 1 * MiB
"""The size of each piece of a container archive streamed by upload and download."""

MAX_ECHO_PAYLOAD_BYTES = 2 * MiB
"""An echo's payload each way (OM's echoRPC, a datanode's Echo: freon ome and dne): enough to time the RPC
floor with a payload, while no echo makes a daemon build a buffer near its message limits."""
