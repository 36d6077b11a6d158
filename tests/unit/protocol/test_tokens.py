"""The token codec: identifiers and encodedToken round-trip, any flipped bit fails verification, and
whatever a client sends is decoded or refused as UNDECODABLE, never a crash."""

from __future__ import annotations

import base64
import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyozone.hdds.ids import BlockID
from pyozone.hdds.security.block_token import (
    AccessMode,
    BlockTokenError,
    BlockTokenIdentifier,
    ContainerTokenIdentifier,
    Token,
    TokenFailure,
)
from pyozone.hdds.security.secret_key import ManagedSecretKey
from pyozone.proto import hdds_pb2
from pyozone.protocol.tokens import (
    MAX_ENCODED_TOKEN,
    block_identifier_from_bytes,
    block_identifier_to_bytes,
    container_identifier_from_bytes,
    container_identifier_to_bytes,
    decode_token,
    encode_token,
    encode_token_proto,
    issue_block_token,
    token_to_proto,
    verify_block_token,
)

NOW = 1_767_225_600_000
KEY = ManagedSecretKey.generate(NOW - 1000, 9 * 86_400_000)
ids = st.integers(1, 2**63 - 1)
block_idents = st.builds(
    BlockTokenIdentifier,
    owner=st.text(max_size=40),
    block=st.builds(BlockID, ids, ids),
    expiry_ms=st.integers(NOW + 1, 2**63 - 1),
    modes=st.frozensets(st.sampled_from(AccessMode), min_size=1),
    max_length=st.integers(0, 2**63 - 1),
    secret_key_id=st.just(KEY.id),
)


def keys(key_id: uuid.UUID) -> ManagedSecretKey | None:
    return KEY if key_id == KEY.id else None


@given(block_idents)
def test_block_identifier_and_encoded_token_round_trip(ident: BlockTokenIdentifier) -> None:
    assert block_identifier_from_bytes(block_identifier_to_bytes(ident)) == ident
    token = issue_block_token(ident, KEY)
    assert decode_token(encode_token(token)) == token
    assert "=" not in encode_token(token) and len(encode_token(token)) < MAX_ENCODED_TOKEN
    mode = min(ident.modes)
    assert verify_block_token(encode_token(token), ident.block, mode, keys, NOW) == ident


@given(st.builds(ContainerTokenIdentifier, st.text(max_size=40), ids, ids, st.builds(uuid.uuid4)))
def test_container_identifier_round_trips(ident: ContainerTokenIdentifier) -> None:
    assert container_identifier_from_bytes(container_identifier_to_bytes(ident)) == ident


@given(block_idents, st.data())
def test_any_flipped_bit_of_identifier_or_password_fails(
    ident: BlockTokenIdentifier, data: st.DataObject
) -> None:
    token = issue_block_token(ident, KEY)
    part = data.draw(st.sampled_from(["identifier", "password"]))
    raw = bytearray(getattr(token, part))
    bit = data.draw(st.integers(0, 8 * len(raw) - 1))
    raw[bit // 8] ^= 1 << (bit % 8)
    flipped = Token(**{**_fields(token), part: bytes(raw)})
    with pytest.raises(BlockTokenError) as e:
        verify_block_token(encode_token(flipped), ident.block, min(ident.modes), keys, NOW)
    assert e.value.reason in (TokenFailure.FORGED, TokenFailure.UNDECODABLE, TokenFailure.UNKNOWN_KEY)


@given(st.text(max_size=300))
def test_any_text_decodes_or_is_undecodable(encoded: str) -> None:
    try:
        decode_token(encoded)
    except BlockTokenError as e:
        assert e.reason is TokenFailure.UNDECODABLE


@given(st.binary(max_size=200))
def test_any_bytes_as_an_identifier_decode_or_are_undecodable(raw: bytes) -> None:
    try:
        block_identifier_from_bytes(raw)
    except BlockTokenError as e:
        assert e.reason is TokenFailure.UNDECODABLE


def test_no_token_is_none_and_an_oversized_one_is_refused() -> None:
    assert decode_token("") is None
    with pytest.raises(BlockTokenError, match="characters"):
        decode_token("A" * (MAX_ENCODED_TOKEN + 1))
    with pytest.raises(BlockTokenError, match="base64"):
        decode_token("not base64!")


def test_encoded_token_is_url_safe_base64_of_token_proto() -> None:
    token = issue_block_token(
        BlockTokenIdentifier("u", BlockID(1, 2), NOW + 1, frozenset({AccessMode.READ}), 0, KEY.id), KEY
    )
    encoded = encode_token(token)
    raw = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
    proto = hdds_pb2.TokenProto.FromString(raw)
    assert (proto.kind, proto.service) == ("HDDS_BLOCK_TOKEN", "conID: 1 locID: 2")
    assert hdds_pb2.BlockTokenSecretProto.FromString(proto.identifier).blockId == "conID: 1 locID: 2"
    assert encode_token_proto(token_to_proto(token)) == encoded
    assert encode_token_proto(hdds_pb2.TokenProto()) == ""


def test_a_bad_block_id_or_key_id_is_undecodable() -> None:
    for proto in (
        hdds_pb2.BlockTokenSecretProto(blockId="conID: x locID: 2", secretKeyId=str(KEY.id)),
        hdds_pb2.BlockTokenSecretProto(blockId="conID: 1 locID: 2", secretKeyId="nope"),
        hdds_pb2.BlockTokenSecretProto(blockId="conID: 1 locID: 2", secretKeyId=str(KEY.id), modes=[9]),
    ):
        with pytest.raises(BlockTokenError) as e:
            block_identifier_from_bytes(proto.SerializeToString())
        assert e.value.reason is TokenFailure.UNDECODABLE


def _fields(token: Token) -> dict[str, object]:
    return {
        "identifier": token.identifier,
        "password": token.password,
        "kind": token.kind,
        "service": token.service,
    }
