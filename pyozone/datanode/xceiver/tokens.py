"""Block and container tokens on the datanode: which requests need which token, checking a request's
token, and signing the datanode's own requests to other datanodes (Ozone's TokenHelper).

With `hdds.block.token.enabled` every block read and write needs a block token for its block (Ozone's
HddsUtils.requireBlockToken): WRITE for WriteChunk, PutBlock, PutSmallFile and FinalizeBlock; READ for
ReadChunk, GetBlock, GetCommittedBlockLength and GetSmallFile. A write must stay within the token's maxLength
(`write_extent`; on the datastream port every packet). With `hdds.container.token.enabled` the container
operations need a container token for their container (requireContainerToken): CreateContainer,
CloseContainer, DeleteContainer, ReadContainer, ListBlock. The rules are the kernel's
(hdds/security/block_token.py), the bytes protocol/tokens.py's, what a request names and writes
protocol/container.py's.

A token is checked where a request enters this datanode from outside: the dispatcher for requests it runs
at once, the pipeline leader before it orders a write into the log (datanode/ratis/groups.py), and each
datastream member for the header it got. Followers apply the leader's log entries without checking again:
the leader checked the client's token before it gave the entry an index, and an entry is applied by every
member alike whatever time it is (a token checked at apply time could expire between members and split
the replicas). The RATIS port is datanode-to-datanode (mutual TLS with datanode certificates when
hdds.grpc.tls.enabled).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from pyozone.common.tls import TlsStore
from pyozone.datanode.settings import TokenSettings
from pyozone.hdds.clock import Clock, SystemClock
from pyozone.hdds.ids import BlockID
from pyozone.hdds.security.block_token import (
    AccessMode,
    BlockTokenIdentifier,
    ContainerTokenIdentifier,
    check_length,
)
from pyozone.hdds.security.secret_key import ManagedSecretKey
from pyozone.hdds.security.users import login_user
from pyozone.hdds.security.x509 import CertRole
from pyozone.protocol.container import CommandType, command_name, request_block_id, write_extent
from pyozone.protocol.tokens import (
    encode_token,
    issue_block_token,
    issue_container_token,
    verify_block_token,
    verify_container_token,
)
from pyozone.rpc.metadata import peer_identity
from pyozone.security.secret_keys import SecretKeyCache

if TYPE_CHECKING:
    from pyozone.proto.DatanodeClientProtocol_pb2 import ContainerCommandRequestProto as Request

BLOCK_MODES: dict[int, AccessMode] = {
    CommandType.WriteChunk: AccessMode.WRITE,
    CommandType.PutBlock: AccessMode.WRITE,
    CommandType.PutSmallFile: AccessMode.WRITE,
    CommandType.FinalizeBlock: AccessMode.WRITE,  # Ozone's BlockTokenVerifier: every request not read-only
    CommandType.ReadChunk: AccessMode.READ,
    CommandType.GetBlock: AccessMode.READ,
    CommandType.GetCommittedBlockLength: AccessMode.READ,
    CommandType.GetSmallFile: AccessMode.READ,
}
"""The requests that need a block token, and the mode each needs."""
CONTAINER_OPS = frozenset(
    {
        CommandType.CreateContainer,
        CommandType.CloseContainer,
        CommandType.DeleteContainer,
        CommandType.ReadContainer,
        CommandType.ListBlock,
    }
)
"""The requests that need a container token."""


class SecretKeys(Protocol):
    """SCM's secret keys as the datanode holds them (pyozone.security.secret_keys.SecretKeyCache)."""

    def current(self) -> ManagedSecretKey: ...

    def get(self, key_id: uuid.UUID) -> ManagedSecretKey | None: ...

    def knows(self, key_id: uuid.UUID) -> bool: ...


class WouldBlock(Exception):
    """The token names a secret key not held here: checking it asks SCM (run `check` off the event loop)."""


class TokenVerifier:
    """Checks the tokens requests carry; raises BlockTokenError (BLOCK_TOKEN_VERIFICATION_FAILED)."""

    def __init__(
        self, keys: SecretKeys, block_tokens: bool, container_tokens: bool, clock: Clock | None = None
    ) -> None:
        self.keys = keys
        self.block_tokens = block_tokens
        self.container_tokens = container_tokens
        self.clock = clock or SystemClock()

    def check(self, request: Request, may_block: bool = True) -> None:
        """Checks the request's token if its type needs one. `may_block` False: WouldBlock instead of
        asking SCM for a secret key not held here (on the event loop)."""
        kind = request.cmdType
        if self.block_tokens and kind in BLOCK_MODES:
            mode = BLOCK_MODES[kind]
            ident = self.check_block(request.encodedToken, request_block_id(request), mode, may_block)
            if ident is not None and mode is AccessMode.WRITE:
                check_length(ident, write_extent(request), command_name(kind))
        elif self.container_tokens and kind in CONTAINER_OPS:
            lookup = self._lookup(may_block)
            verify_container_token(request.encodedToken, request.containerID, lookup, self.clock.wall_ms())

    def check_block(
        self, encoded: str, block: BlockID, mode: AccessMode, may_block: bool = True
    ) -> BlockTokenIdentifier | None:
        """Checks a block token (a datastream header's) when block tokens are required: its identifier
        (whose maxLength the writes must keep to), or None when none is required."""
        if not self.block_tokens:
            return None
        return verify_block_token(encoded, block, mode, self._lookup(may_block), self.clock.wall_ms())

    def check_container(self, encoded: str, container_id: int) -> None:
        """Checks a container token (a replication call's) when container tokens are required."""
        if self.container_tokens:
            verify_container_token(encoded, container_id, self.keys.get, self.clock.wall_ms())

    def _lookup(self, may_block: bool) -> Callable[[uuid.UUID], ManagedSecretKey | None]:
        if may_block:
            return self.keys.get

        def held(key_id: uuid.UUID) -> ManagedSecretKey | None:
            if not self.keys.knows(key_id):
                raise WouldBlock(str(key_id))
            return self.keys.get(key_id)

        return held


@dataclass(frozen=True, slots=True)
class TokenSigner:
    """Signs what this datanode asks of other datanodes (EC reconstruction) with SCM's current secret key,
    as OM signs a client's: block tokens for its block reads and writes, container tokens for its
    container operations, each only when datanodes require that kind."""

    keys: SecretKeys
    owner: str
    lifetime_ms: int
    block_tokens: bool
    container_tokens: bool
    clock: Clock = field(default_factory=SystemClock)

    def signer(self) -> Callable[[Request], Request]:
        """A function that sets a request's encodedToken, bound to the current key (blocking: the key may
        come from SCM; a job signs with one key from start to end)."""
        key = self.keys.current()

        def sign(request: Request) -> Request:
            kind, expiry = request.cmdType, self.clock.wall_ms() + self.lifetime_ms
            if self.block_tokens and kind in BLOCK_MODES:
                mode = BLOCK_MODES[kind]
                length = write_extent(request) if mode is AccessMode.WRITE else 0  # exactly what it writes
                block = request_block_id(request)
                ident = BlockTokenIdentifier(self.owner, block, expiry, frozenset({mode}), length, key.id)
                request.encodedToken = encode_token(issue_block_token(ident, key))
            elif self.container_tokens and kind in CONTAINER_OPS:
                cident = ContainerTokenIdentifier(self.owner, request.containerID, expiry, key.id)
                request.encodedToken = encode_token(issue_container_token(cident, key))
            return request

        return sign

    def container_token(self, container_id: int) -> str:
        """A container token for `container_id` (a replication call's); "" unless container tokens are
        required. Blocking: the key may come from SCM."""
        if not self.container_tokens:
            return ""
        key = self.keys.current()
        ident = ContainerTokenIdentifier(
            self.owner, container_id, self.clock.wall_ms() + self.lifetime_ms, key.id
        )
        return encode_token(issue_container_token(ident, key))


TOKEN_METADATA = "x-ozone-container-token"
"""pyozone: the call metadata a replication call's container token travels in (the replication messages
have no token field, Ozone's neither: it relies on mutual TLS alone)."""


def call_token(context: Any) -> str:
    """The container token a call carries in its metadata ("" for none)."""
    return next((str(v) for k, v in context.invocation_metadata() or () if k == TOKEN_METADATA), "")


def intra_datanode_refusal(context: Any) -> str | None:
    """Why a caller may not use a datanode-to-datanode service (the pipeline log's appendEntries,
    replication), or None. Over mutual TLS only datanode certificates may: a user's certificate there would
    bypass every block token. A plaintext port takes anyone who reaches it, as in Ozone."""
    try:
        identity = peer_identity(context)
    except ValueError as e:
        return f"the caller's certificate names no datanode: {e}"
    if identity is None or identity.role is CertRole.DATANODE:
        return None
    return f"{identity.common_name} is not a datanode: only datanodes call this service"


@dataclass(frozen=True, slots=True)
class DatanodeTokens:
    """A datanode's tokens: the checks of what it is asked, the signing of what it asks other datanodes,
    over one SecretKeyCache reached with the datanode's certificate. `close` when the datanode stops."""

    verifier: TokenVerifier
    signer: TokenSigner
    keys: SecretKeyCache

    @classmethod
    def connect(
        cls,
        settings: TokenSettings,
        certificate: TlsStore | None,
        secret_keys: Callable[[TlsStore], SecretKeyCache],
    ) -> DatanodeTokens | None:
        """None unless hdds.block.token.enabled or hdds.container.token.enabled, and the datanode has a
        certificate (ozone.security.enabled: without it SCM has no secret keys). `secret_keys`: the
        daemon's SecretKeyCache.connect, reaching SCM with the certificate."""
        if certificate is None or not settings.enabled:
            return None
        keys = secret_keys(certificate)
        block, container = settings.block_tokens, settings.container_tokens
        return cls(
            TokenVerifier(keys, block, container),
            TokenSigner(keys, login_user(), settings.block_token_lifetime_ms, block, container),
            keys,
        )

    def close(self) -> None:
        self.keys.close()
