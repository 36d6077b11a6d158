"""The rules a datanode checks a token by: each failure is refused with its own reason, in Ozone's order."""

from __future__ import annotations

import uuid
from dataclasses import replace

import pytest

from pyozone.hdds.ids import BlockID
from pyozone.hdds.security.block_token import (
    BLOCK_TOKEN_KIND,
    AccessMode,
    BlockTokenError,
    BlockTokenIdentifier,
    ContainerTokenIdentifier,
    Token,
    TokenFailure,
    check_length,
    verify_block_token,
    verify_container_token,
)
from pyozone.hdds.security.secret_key import ManagedSecretKey
from pyozone.protocol.tokens import (
    block_identifier_from_bytes,
    container_identifier_from_bytes,
    issue_block_token,
    issue_container_token,
)

NOW = 1_767_225_600_000
DAY = 86_400_000
KEY = ManagedSecretKey.generate(NOW - DAY, 9 * DAY)
BLOCK = BlockID(7, 42)
IDENT = BlockTokenIdentifier("alice", BLOCK, NOW + DAY, frozenset({AccessMode.READ}), 4096, KEY.id)


def keys(key_id: uuid.UUID) -> ManagedSecretKey | None:
    return KEY if key_id == KEY.id else None


def check(token: Token | None, block: BlockID = BLOCK, mode: AccessMode = AccessMode.READ) -> None:
    verify_block_token(token, block_identifier_from_bytes, block, mode, keys, NOW)


def refused(token: Token | None, block: BlockID = BLOCK, mode: AccessMode = AccessMode.READ) -> TokenFailure:
    with pytest.raises(BlockTokenError) as e:
        check(token, block, mode)
    return e.value.reason


def test_a_token_for_the_block_and_mode_passes() -> None:
    assert (
        verify_block_token(
            issue_block_token(IDENT, KEY), block_identifier_from_bytes, BLOCK, AccessMode.READ, keys, NOW
        )
        == IDENT
    )


def test_each_failure_has_its_reason() -> None:
    token = issue_block_token(IDENT, KEY)
    assert refused(None) is TokenFailure.MISSING
    assert refused(replace(token, kind="HDDS_CONTAINER_TOKEN")) is TokenFailure.WRONG_KIND
    assert refused(replace(token, identifier=b"\xff\xff")) is TokenFailure.UNDECODABLE
    stranger = ManagedSecretKey.generate(NOW, DAY)
    assert refused(issue_block_token(replace(IDENT, secret_key_id=stranger.id), stranger)) is (
        TokenFailure.UNKNOWN_KEY
    )
    assert refused(replace(token, password=bytes(32))) is TokenFailure.FORGED
    assert refused(issue_block_token(replace(IDENT, expiry_ms=NOW), KEY)) is TokenFailure.EXPIRED
    assert refused(token, BlockID(7, 43)) is TokenFailure.OTHER_BLOCK
    assert refused(token, mode=AccessMode.WRITE) is TokenFailure.MODE_NOT_GRANTED


def test_a_token_whose_secret_key_expired_is_refused() -> None:
    old = ManagedSecretKey.generate(NOW - 10 * DAY, 9 * DAY)
    token = issue_block_token(replace(IDENT, secret_key_id=old.id), old)
    with pytest.raises(BlockTokenError, match=r"secret key .* expired") as e:
        verify_block_token(token, block_identifier_from_bytes, BLOCK, AccessMode.READ, lambda _: old, NOW)
    assert e.value.reason is TokenFailure.EXPIRED


def test_a_forged_identifier_is_refused_before_its_claims_are_believed() -> None:
    """An identifier rewritten to another block and mode, with the original password: a bad signature."""
    token = issue_block_token(IDENT, KEY)
    forged_ident = replace(IDENT, block=BlockID(8, 1), modes=frozenset(AccessMode))
    forged = replace(token, identifier=issue_block_token(forged_ident, KEY).identifier)
    assert refused(forged, BlockID(8, 1), AccessMode.WRITE) is TokenFailure.FORGED


def test_the_message_names_the_reason_and_the_blocks() -> None:
    with pytest.raises(BlockTokenError, match=r"^for another block: .*conID: 7 locID: 42.*conID: 7 locID: 1"):
        check(issue_block_token(IDENT, KEY), BlockID(7, 1))


def test_container_tokens_cover_one_container() -> None:
    ident = ContainerTokenIdentifier("dn", 7, NOW + DAY, KEY.id)
    token = issue_container_token(ident, KEY)
    assert verify_container_token(token, container_identifier_from_bytes, 7, keys, NOW) == ident
    with pytest.raises(BlockTokenError) as e:
        verify_container_token(token, container_identifier_from_bytes, 8, keys, NOW)
    assert e.value.reason is TokenFailure.OTHER_CONTAINER
    with pytest.raises(BlockTokenError) as e:  # a block token is no container token
        verify_container_token(issue_block_token(IDENT, KEY), container_identifier_from_bytes, 7, keys, NOW)
    assert e.value.reason is TokenFailure.WRONG_KIND
    assert token.kind != BLOCK_TOKEN_KIND


def test_a_token_cannot_be_issued_with_another_key_than_it_names() -> None:
    with pytest.raises(ValueError, match="names secret key"):
        issue_block_token(IDENT, ManagedSecretKey.generate(NOW, DAY))


def test_a_write_is_held_to_the_tokens_max_length() -> None:
    """Issue 28 defect 2: up to maxLength (4096) a write passes; one byte more is refused naming it."""
    check_length(IDENT, 4096, "WriteChunk")
    with pytest.raises(BlockTokenError) as e:
        check_length(IDENT, 4097, "WriteChunk")
    assert e.value.reason is TokenFailure.BEYOND_MAX_LENGTH
    assert str(e.value) == (
        f"beyond maxLength: WriteChunk reaches byte 4097 of {BLOCK}; the token of alice allows 4096 bytes "
        "(maxLength)"
    )
