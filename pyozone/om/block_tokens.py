"""OM's block tokens (hdds.block.token.enabled): a token with every block location OM hands out (Ozone's
OzoneBlockTokenSecretManager behind KeyManagerImpl and OMKeyRequest).

A block to write (openKey, allocateBlock; multipart parts open through openKey) gets READ and WRITE up to
the most bytes one replica of it holds (`write_max_length`: ozone.scm.block.size, or more on an EC group's
fullest replica; a key announced smaller than a block, the most one replica holds of its size); a block to
read (lookupKey) READ up to its length. The owner is the
caller (its certificate, the user an S3 gateway acts for, or the user a plaintext client claims: contract 4
of issue 15), the lifetime hdds.block.token.expiry.time, and the key SCM's current secret key, which OM gets
from SCM with its own certificate (SecretKeyCache). Tokens travel in KeyLocation.token.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from pyozone.common.tls import TlsStore
from pyozone.hdds.clock import Clock, SystemClock
from pyozone.hdds.ids import BlockID, ReplicationConfig
from pyozone.hdds.security.acl import caller_name
from pyozone.hdds.security.block_token import AccessMode, BlockTokenIdentifier, Token
from pyozone.om.replication import block_capacity, replica_bytes
from pyozone.om.settings import BlockTokenSettings
from pyozone.protocol import om as wire
from pyozone.protocol.tokens import encode_token, issue_block_token
from pyozone.rpc.metadata import USER_METADATA, peer_identity
from pyozone.security.secret_keys import SecretKeyCache

if TYPE_CHECKING:
    from pyozone.proto import OmClientProtocol_pb2 as pb

READ = frozenset({AccessMode.READ})
WRITE = frozenset({AccessMode.WRITE})
READ_WRITE = frozenset({AccessMode.READ, AccessMode.WRITE})


class BlockTokenIssuer:
    def __init__(self, keys: SecretKeyCache, lifetime_ms: int, clock: Clock | None = None) -> None:
        if lifetime_ms <= 0:
            raise ValueError(f"hdds.block.token.expiry.time must be positive, got {lifetime_ms} ms")
        self.keys = keys
        self.lifetime_ms = lifetime_ms
        self.clock = clock or SystemClock()

    @classmethod
    def of(
        cls,
        settings: BlockTokenSettings,
        certificate: TlsStore | None,
        secret_keys: Callable[[TlsStore], SecretKeyCache],
    ) -> BlockTokenIssuer | None:
        """OM's issuer over SCM's secret keys, which `secret_keys` reaches with OM's `certificate`; None
        without hdds.block.token.enabled (or without ozone.security.enabled: no certificate, no secret
        keys). `close` it when OM stops."""
        if certificate is None or not settings.enabled:
            return None
        return cls(secret_keys(certificate), settings.lifetime_ms)

    def sign(
        self,
        locations: Iterable[pb.KeyLocation],
        owner: str,
        modes: frozenset[AccessMode],
        max_length: int = 0,
    ) -> None:
        """Sets each location's token (blocking: the current key may come from SCM; run it off the event
        loop). `max_length` 0: each location's own length."""
        key = self.keys.current()
        expiry = self.clock.wall_ms() + self.lifetime_ms

        def token(block: BlockID, length: int) -> Token:
            ident = BlockTokenIdentifier(owner, block, expiry, modes, max_length or length, key.id)
            return issue_block_token(ident, key)

        wire.sign(locations, token)

    def block_token(self, block: BlockID, owner: str, modes: frozenset[AccessMode]) -> str:
        """An encodedToken for OM's own request on `block` (blocking, as `sign`)."""
        key = self.keys.current()
        ident = BlockTokenIdentifier(owner, block, self.clock.wall_ms() + self.lifetime_ms, modes, 0, key.id)
        return encode_token(issue_block_token(ident, key))

    def close(self) -> None:
        self.keys.close()


def write_max_length(config: ReplicationConfig, block_size: int) -> int:
    """A write token's maxLength: the most bytes one replica of a block of `config` may hold, which the
    datanodes enforce (issue 28 defect 2). Ozone signs ozone.scm.block.size and enforces nothing; but an EC
    group holds the block size on each data index (Ozone's ECKeyOutputStream), which puts up to a cell
    more on its first data index and its parity indexes when the block size is not a multiple of the cell
    (rs-3-2-1024k with 256 KB blocks: 786432 bytes on each)."""
    return replica_bytes(config, block_capacity(config, block_size))


def token_owner(context: Any) -> str:
    """Who a token is for: the caller of an RPC request, as ACLs name it (hdds/security/acl.caller_name);
    a claim that names no valid user is the caller's own business: the token is then the anonymous one's."""
    claimed = next((v for k, v in context.invocation_metadata() or () if k == USER_METADATA), None)
    peer = peer_identity(context)
    try:
        return caller_name(peer, claimed)[0]
    except ValueError:
        return caller_name(peer, None)[0]
