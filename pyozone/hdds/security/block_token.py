"""Block and container tokens (Ozone 1.4+): what one allows, how it is signed, and the rules a datanode
checks before it touches a block or a container.

A token is an identifier (what it allows: owner, block or container, expiry, access modes, the id of the
SCM secret key that signed it), a password (the HMAC of the identifier's bytes under that key), a kind and
a service. OM issues block tokens with every block location; a datanode issues its own for what it does on
another datanode (EC reconstruction, Ozone's TokenHelper). The identifier's bytes are a serialized
BlockTokenSecretProto or ContainerTokenSecretProto: `pyozone/protocol/tokens.py` holds that codec and
hands its decoder to the checks here, so the wire has one definition (the .proto) and the rules one too.

Checks run in Ozone's order (ShortLivedTokenVerifier): the token is there, of the right kind, decodable;
its secret key is known and not expired; the password is the identifier's HMAC; the token has not
expired; it names the block (container) asked for; it grants the access mode. Each failure is a
BlockTokenError naming its reason, which the datanode answers as BLOCK_TOKEN_VERIFICATION_FAILED.
A write is also held to the token's maxLength (`check_length`, issue 28 defect 2): no byte of the block
beyond it is taken, so a user cannot store more than OM handed out (Ozone carries maxLength unchecked).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum, IntEnum
from typing import TypeVar

from pyozone.hdds.ids import BlockID
from pyozone.hdds.security.secret_key import ManagedSecretKey

BLOCK_TOKEN_KIND = "HDDS_BLOCK_TOKEN"
CONTAINER_TOKEN_KIND = "HDDS_CONTAINER_TOKEN"


class AccessMode(IntEnum):
    """hdds.proto AccessModeProto, by number."""

    READ = 1
    WRITE = 2
    COPY = 3
    DELETE = 4


class TokenFailure(Enum):
    """Why a token is refused; the value starts the refusal's message."""

    MISSING = "missing"
    UNDECODABLE = "undecodable"
    WRONG_KIND = "wrong kind"
    UNKNOWN_KEY = "unknown secret key"
    FORGED = "bad signature"
    EXPIRED = "expired"
    OTHER_BLOCK = "for another block"
    OTHER_CONTAINER = "for another container"
    MODE_NOT_GRANTED = "mode not granted"
    BEYOND_MAX_LENGTH = "beyond maxLength"


class BlockTokenError(Exception):
    """A token refused; `reason` says why, the message adds what was asked and what the token holds."""

    def __init__(self, reason: TokenFailure, detail: str) -> None:
        super().__init__(f"{reason.value}: {detail}")
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Token:
    """hdds.proto TokenProto: the identifier's bytes, their HMAC, the kind and the service."""

    identifier: bytes
    password: bytes
    kind: str
    service: str


@dataclass(frozen=True, slots=True)
class BlockTokenIdentifier:
    owner: str
    block: BlockID
    expiry_ms: int
    """Epoch milliseconds."""
    modes: frozenset[AccessMode]
    max_length: int
    secret_key_id: uuid.UUID

    @property
    def service(self) -> str:
        """Ozone's token service of a block: its container block id, "conID: 1 locID: 2"."""
        return str(self.block)


@dataclass(frozen=True, slots=True)
class ContainerTokenIdentifier:
    owner: str
    container_id: int
    expiry_ms: int
    secret_key_id: uuid.UUID

    @property
    def service(self) -> str:
        return str(self.container_id)


_I = TypeVar("_I", BlockTokenIdentifier, ContainerTokenIdentifier)

KeyLookup = Callable[[uuid.UUID], ManagedSecretKey | None]
"""The secret key with an id, or None when SCM has no such key."""


def sign(identifier: bytes, key: ManagedSecretKey) -> bytes:
    """The password of a token whose identifier's bytes are `identifier`."""
    return key.sign(identifier)


def verify_block_token(
    token: Token | None,
    decode: Callable[[bytes], BlockTokenIdentifier],
    block: BlockID,
    mode: AccessMode,
    keys: KeyLookup,
    now_ms: int,
) -> BlockTokenIdentifier:
    """The identifier of a token allowing `mode` on `block` at `now_ms` (epoch ms); else BlockTokenError."""
    ident = _authentic(token, BLOCK_TOKEN_KIND, decode, keys, now_ms)
    if ident.block != block:
        raise BlockTokenError(
            TokenFailure.OTHER_BLOCK, f"the token of {ident.owner} is for {ident.block}, not {block}"
        )
    if mode not in ident.modes:
        granted = ", ".join(m.name for m in sorted(ident.modes)) or "nothing"
        raise BlockTokenError(
            TokenFailure.MODE_NOT_GRANTED, f"the token for {block} grants {granted}, not {mode.name}"
        )
    return ident


def check_length(ident: BlockTokenIdentifier, end: int, what: str) -> None:
    """Raises BlockTokenError unless a write (`what`) that reaches byte `end` of the block stays within
    the token's maxLength."""
    if end > ident.max_length:
        raise BlockTokenError(
            TokenFailure.BEYOND_MAX_LENGTH,
            f"{what} reaches byte {end} of {ident.block}; the token of {ident.owner} allows "
            f"{ident.max_length} bytes (maxLength)",
        )


def verify_container_token(
    token: Token | None,
    decode: Callable[[bytes], ContainerTokenIdentifier],
    container_id: int,
    keys: KeyLookup,
    now_ms: int,
) -> ContainerTokenIdentifier:
    """The identifier of a token that allows operations on `container_id`; else BlockTokenError."""
    ident = _authentic(token, CONTAINER_TOKEN_KIND, decode, keys, now_ms)
    if ident.container_id != container_id:
        raise BlockTokenError(
            TokenFailure.OTHER_CONTAINER,
            f"the token of {ident.owner} is for container {ident.container_id}, not {container_id}",
        )
    return ident


def _authentic(
    token: Token | None, kind: str, decode: Callable[[bytes], _I], keys: KeyLookup, now_ms: int
) -> _I:
    """The identifier of a token of `kind` signed by a known, unexpired key, itself unexpired."""
    if token is None:
        raise BlockTokenError(TokenFailure.MISSING, f"the request carries no {kind}")
    if token.kind != kind:
        raise BlockTokenError(
            TokenFailure.WRONG_KIND, f"a {token.kind or 'kindless'} token where {kind} is needed"
        )
    ident = decode(token.identifier)
    key = keys(ident.secret_key_id)
    if key is None:
        raise BlockTokenError(
            TokenFailure.UNKNOWN_KEY,
            f"SCM knows no secret key {ident.secret_key_id} (token of {ident.owner})",
        )
    if key.is_expired(now_ms):
        raise BlockTokenError(
            TokenFailure.EXPIRED,
            f"its secret key {key.id} expired at {key.expiry_ms} (token of {ident.owner})",
        )
    if not key.is_valid_signature(token.identifier, token.password):
        raise BlockTokenError(
            TokenFailure.FORGED, f"the password is not the identifier's signature (token of {ident.owner})"
        )
    if now_ms >= ident.expiry_ms:
        raise BlockTokenError(
            TokenFailure.EXPIRED,
            f"the token of {ident.owner} for {ident.service} expired at {ident.expiry_ms}",
        )
    return ident
