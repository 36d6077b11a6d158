"""Block and container tokens on the wire: the identifier's bytes (a serialized BlockTokenSecretProto or
ContainerTokenSecretProto), TokenProto, and `encodedToken`, the URL-safe base64 of a TokenProto without
padding (Hadoop's Token.encodeToUrlString), which xceiver requests and datastream headers carry.

The rules a token is checked by are the kernel's (`pyozone/hdds/security/block_token.py`); here are the
bytes, and `verify_*` entry points that decode an encoded token and hand the kernel its decoder. Anything
that does not decode is a BlockTokenError (UNDECODABLE), never a crash: tokens come from clients.
"""

from __future__ import annotations

import base64
import binascii
import re
import uuid
from typing import TypeVar

from google.protobuf.message import DecodeError

from pyozone.hdds.ids import BlockID
from pyozone.hdds.security import block_token as bt
from pyozone.hdds.security.block_token import (
    AccessMode,
    BlockTokenError,
    BlockTokenIdentifier,
    ContainerTokenIdentifier,
    KeyLookup,
    Token,
    TokenFailure,
)
from pyozone.hdds.security.secret_key import ManagedSecretKey
from pyozone.proto import hdds_pb2
from pyozone.protocol.common import INT64_MAX

_M = TypeVar("_M", hdds_pb2.BlockTokenSecretProto, hdds_pb2.ContainerTokenSecretProto, hdds_pb2.TokenProto)
_BLOCK_SERVICE = re.compile(r"conID: (\d{1,19}) locID: (\d{1,19})", re.ASCII)

MAX_ENCODED_TOKEN = 2048
"""Characters of an encodedToken; a real one has about 300 (a block id, an owner, a key id, an HMAC)."""


# ------------------------------------------------------------------ identifiers
def block_identifier_to_bytes(ident: BlockTokenIdentifier) -> bytes:
    return hdds_pb2.BlockTokenSecretProto(
        ownerId=ident.owner,
        blockId=ident.service,
        expiryDate=ident.expiry_ms,
        modes=sorted(int(m) for m in ident.modes),
        maxLength=ident.max_length,
        secretKeyId=str(ident.secret_key_id),
    ).SerializeToString(deterministic=True)


def block_identifier_from_bytes(raw: bytes) -> BlockTokenIdentifier:
    proto = _parse(hdds_pb2.BlockTokenSecretProto, raw, "block token identifier")
    try:
        modes = frozenset(AccessMode(m) for m in proto.modes)
    except ValueError as e:
        raise BlockTokenError(TokenFailure.UNDECODABLE, f"block token identifier: {e}") from None
    return BlockTokenIdentifier(
        proto.ownerId,
        _block_id(proto.blockId),
        proto.expiryDate,
        modes,
        proto.maxLength,
        _key_id(proto.secretKeyId, "block"),
    )


def container_identifier_to_bytes(ident: ContainerTokenIdentifier) -> bytes:
    return hdds_pb2.ContainerTokenSecretProto(
        ownerId=ident.owner,
        containerId=ident.container_id,
        expiryDate=ident.expiry_ms,
        secretKeyId=str(ident.secret_key_id),
    ).SerializeToString(deterministic=True)


def container_identifier_from_bytes(raw: bytes) -> ContainerTokenIdentifier:
    proto = _parse(hdds_pb2.ContainerTokenSecretProto, raw, "container token identifier")
    return ContainerTokenIdentifier(
        proto.ownerId, proto.containerId, proto.expiryDate, _key_id(proto.secretKeyId, "container")
    )


def _parse(kind: type[_M], raw: bytes, what: str) -> _M:
    try:
        return kind.FromString(raw)
    except (DecodeError, RuntimeError, ValueError) as e:
        raise BlockTokenError(TokenFailure.UNDECODABLE, f"{what}: {e}") from None


def _block_id(service: str) -> BlockID:
    """ "conID: 1 locID: 2" back into its block id."""
    found = _BLOCK_SERVICE.fullmatch(service)
    if found and max(int(found[1]), int(found[2])) <= INT64_MAX:
        return BlockID(int(found[1]), int(found[2]))
    raise BlockTokenError(TokenFailure.UNDECODABLE, f"block token identifier: blockId {service!r}")


def _key_id(raw: str, what: str) -> uuid.UUID:
    try:
        return uuid.UUID(raw)
    except ValueError:
        raise BlockTokenError(
            TokenFailure.UNDECODABLE, f"{what} token identifier: secretKeyId {raw!r} is not a UUID"
        ) from None


# ------------------------------------------------------------------ issuing
def issue_block_token(ident: BlockTokenIdentifier, key: ManagedSecretKey) -> Token:
    """A block token signed with `key` (the identifier must name it)."""
    if ident.secret_key_id != key.id:
        raise ValueError(f"the identifier names secret key {ident.secret_key_id}, not {key.id}")
    raw = block_identifier_to_bytes(ident)
    return Token(raw, bt.sign(raw, key), bt.BLOCK_TOKEN_KIND, ident.service)


def issue_container_token(ident: ContainerTokenIdentifier, key: ManagedSecretKey) -> Token:
    if ident.secret_key_id != key.id:
        raise ValueError(f"the identifier names secret key {ident.secret_key_id}, not {key.id}")
    raw = container_identifier_to_bytes(ident)
    return Token(raw, bt.sign(raw, key), bt.CONTAINER_TOKEN_KIND, ident.service)


# ------------------------------------------------------------------ TokenProto and encodedToken
def token_to_proto(token: Token) -> hdds_pb2.TokenProto:
    return hdds_pb2.TokenProto(
        identifier=token.identifier, password=token.password, kind=token.kind, service=token.service
    )


def token_from_proto(proto: hdds_pb2.TokenProto) -> Token:
    return Token(proto.identifier, proto.password, proto.kind, proto.service)


def encode_token(token: Token) -> str:
    """encodedToken: URL-safe base64 of the TokenProto, without padding."""
    raw = token_to_proto(token).SerializeToString(deterministic=True)
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def encode_token_proto(proto: hdds_pb2.TokenProto) -> str:
    """encodedToken of a TokenProto as OM sent it (KeyLocation.token); "" for an unset one."""
    if not proto.ByteSize():
        return ""
    return encode_token(token_from_proto(proto))


def decode_token(encoded: str) -> Token | None:
    """The token an encodedToken holds; None for "" (no token sent); BlockTokenError if it does not decode."""
    if not encoded:
        return None
    if len(encoded) > MAX_ENCODED_TOKEN:
        raise BlockTokenError(
            TokenFailure.UNDECODABLE,
            f"encodedToken of {len(encoded)} characters (at most {MAX_ENCODED_TOKEN})",
        )
    try:
        raw = base64.b64decode(encoded + "=" * (-len(encoded) % 4), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError) as e:  # a non-ASCII character is a ValueError too
        raise BlockTokenError(TokenFailure.UNDECODABLE, f"encodedToken is not URL-safe base64: {e}") from None
    return token_from_proto(_parse(hdds_pb2.TokenProto, raw, "encodedToken"))


# ------------------------------------------------------------------ checking
def verify_block_token(
    encoded: str, block: BlockID, mode: AccessMode, keys: KeyLookup, now_ms: int
) -> BlockTokenIdentifier:
    """The identifier of an encodedToken allowing `mode` on `block` at `now_ms` (epoch ms); else
    BlockTokenError naming why."""
    return bt.verify_block_token(
        decode_token(encoded), block_identifier_from_bytes, block, mode, keys, now_ms
    )


def verify_container_token(
    encoded: str, container_id: int, keys: KeyLookup, now_ms: int
) -> ContainerTokenIdentifier:
    return bt.verify_container_token(
        decode_token(encoded), container_identifier_from_bytes, container_id, keys, now_ms
    )
