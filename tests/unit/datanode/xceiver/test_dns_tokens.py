"""Block and container tokens on the datanode: the dispatcher refuses each kind of bad token with
BLOCK_TOKEN_VERIFICATION_FAILED and its reason, a pipeline leader checks before it orders a write (its
followers trust it), a secret key not held is fetched off the event loop, and the datanode signs its own
requests to other datanodes."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest

from pyozone.datanode.ratis.groups import PipelineGroups
from pyozone.datanode.settings import TokenSettings
from pyozone.datanode.xceiver import Dispatcher
from pyozone.datanode.xceiver.tokens import DatanodeTokens, TokenSigner, TokenVerifier
from pyozone.hdds.clock import ManualClock
from pyozone.hdds.ids import BlockID
from pyozone.hdds.security.block_token import AccessMode, BlockTokenIdentifier, ContainerTokenIdentifier
from pyozone.hdds.security.secret_key import ManagedSecretKey
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.protocol.container import request_block_id
from pyozone.protocol.tokens import (
    block_identifier_from_bytes,
    decode_token,
    encode_token,
    issue_block_token,
    issue_container_token,
)
from pyozone.security.secret_keys import SecretKeyCache
from tests.unit.datanode.dnd_helpers import async_test
from tests.unit.datanode.dns_helpers import (
    PIPELINE,
    Node,
    block_writes,
    close,
    create,
    get,
    lead_alone,
    payload,
    pipeline_groups,
    read,
    request,
    small_file,
)

DAY = 86_400_000
CLOCK = ManualClock()
NOW = CLOCK.wall_ms()
BOTH = frozenset({AccessMode.READ, AccessMode.WRITE})


class FakeKeys:
    """SCM's keys as a SecretKeyCache holds them: `held` are known without asking SCM."""

    def __init__(self) -> None:
        self.key = ManagedSecretKey.generate(NOW - 1000, 9 * DAY)
        self.held = {self.key.id}
        self.fetched: list[uuid.UUID] = []

    def current(self) -> ManagedSecretKey:
        return self.key

    def get(self, key_id: uuid.UUID) -> ManagedSecretKey | None:
        if key_id not in self.held:
            self.fetched.append(key_id)
            self.held.add(key_id)
        return self.key if key_id == self.key.id else None

    def knows(self, key_id: uuid.UUID) -> bool:
        return key_id in self.held


@pytest.fixture
def keys() -> FakeKeys:
    return FakeKeys()


@pytest.fixture
def dispatcher(node_a: Node, keys: FakeKeys) -> Dispatcher:
    tokens = TokenVerifier(keys, block_tokens=True, container_tokens=True, clock=CLOCK)
    return Dispatcher(node_a.containers, node_a.uuid, node_a.full.append, tokens=tokens)


def token(keys: FakeKeys, cid: int, lid: int, modes: frozenset[AccessMode] = BOTH, **change: object) -> str:
    ident = BlockTokenIdentifier("alice", BlockID(cid, lid), NOW + DAY, modes, 1 << 20, keys.key.id)
    key = change.pop("key", keys.key)
    return encode_token(issue_block_token(replace(ident, **change), key))  # type: ignore[arg-type]


def container_token(keys: FakeKeys, cid: int) -> str:
    ident = ContainerTokenIdentifier("dn", cid, NOW + DAY, keys.key.id)
    return encode_token(issue_container_token(ident, keys.key))


def forged(keys: FakeKeys, claims: str, signed: str) -> str:
    """The identifier of one token with the password of another."""
    wanted, genuine = decode_token(claims), decode_token(signed)
    assert wanted is not None and genuine is not None
    return encode_token(replace(wanted, password=genuine.password))


def with_token(req: pb.ContainerCommandRequestProto, encoded: str) -> pb.ContainerCommandRequestProto:
    req.encodedToken = encoded
    return req


def refusal(response: pb.ContainerCommandResponseProto) -> str:
    assert pb.Result.Name(response.result) == "BLOCK_TOKEN_VERIFICATION_FAILED", response
    return response.message


def written(dispatcher: Dispatcher, keys: FakeKeys, cid: int, lid: int) -> list[pb.ChunkInfo]:
    """A block written with a valid token; its chunks."""
    dispatcher.dispatch(with_token(create(cid), container_token(keys, cid)))
    requests, chunks = block_writes(cid, lid, payload(lid, 2048), 1024)
    for r in requests:
        assert dispatcher.dispatch(with_token(r, token(keys, cid, lid))).result == pb.SUCCESS
    return chunks


def test_each_bad_token_is_refused_with_its_reason(dispatcher: Dispatcher, keys: FakeKeys) -> None:
    [first, *_] = written(dispatcher, keys, 7, 1)
    stranger = ManagedSecretKey.generate(NOW, DAY)
    bad = {
        "": "missing",
        "!!": "undecodable",
        container_token(keys, 7): "wrong kind",
        token(keys, 7, 1, key=stranger, secret_key_id=stranger.id): "unknown secret key",
        forged(keys, token(keys, 7, 1, expiry_ms=NOW + 2 * DAY), token(keys, 7, 1)): "bad signature",
        token(keys, 7, 1, expiry_ms=NOW): "expired",
        token(keys, 7, 2): "for another block",
        token(keys, 7, 1, frozenset({AccessMode.WRITE})): "mode not granted",
    }
    for encoded, reason in bad.items():
        assert refusal(dispatcher.dispatch(with_token(read(7, 1, first), encoded))).startswith(reason + ":")
    assert dispatcher.dispatch(with_token(read(7, 1, first), token(keys, 7, 1))).result == pb.SUCCESS


def test_every_block_request_needs_its_mode(dispatcher: Dispatcher, keys: FakeKeys) -> None:
    written(dispatcher, keys, 7, 1)
    read_only = token(keys, 7, 1, frozenset({AccessMode.READ}))
    requests, _ = block_writes(7, 1, payload(2, 1024), 1024)
    for r in requests:  # WriteChunk and PutBlock need WRITE
        assert "grants READ, not WRITE" in refusal(dispatcher.dispatch(with_token(r, read_only)))
    length = request(
        pb.GetCommittedBlockLength, 7,
        getCommittedBlockLength=pb.GetCommittedBlockLengthRequestProto(blockID=get(7, 1).getBlock.blockID),
    )  # fmt: skip
    for r in (get(7, 1), length):  # GetBlock and GetCommittedBlockLength need READ
        assert dispatcher.dispatch(with_token(r, read_only)).result == pb.SUCCESS
        assert "mode not granted" in refusal(
            dispatcher.dispatch(with_token(r, token(keys, 7, 1, frozenset())))
        )


def test_container_operations_need_a_container_token(dispatcher: Dispatcher, keys: FakeKeys) -> None:
    assert refusal(dispatcher.dispatch(create(8))).startswith("missing: ")
    assert refusal(dispatcher.dispatch(with_token(create(8), container_token(keys, 9)))).startswith(
        "for another container:"
    )
    assert refusal(dispatcher.dispatch(with_token(create(8), token(keys, 8, 1)))).startswith("wrong kind:")
    assert dispatcher.dispatch(with_token(create(8), container_token(keys, 8))).result == pb.SUCCESS
    assert refusal(dispatcher.dispatch(close(8))).startswith("missing: ")
    assert dispatcher.dispatch(with_token(close(8), container_token(keys, 8))).result == pb.SUCCESS


def test_a_log_entry_is_applied_without_its_token(dispatcher: Dispatcher, keys: FakeKeys) -> None:
    """The leader checked it before it took an index; a member applies the entry whatever time it is."""
    dispatcher.dispatch(with_token(create(7), container_token(keys, 7)))
    requests, _ = block_writes(7, 1, payload(1, 1024), 1024)
    assert [dispatcher.dispatch(r, index).result for index, r in enumerate(requests, 1)] == [pb.SUCCESS] * 2


def test_a_valid_token_does_not_let_a_write_bypass_the_pipeline_log(
    dispatcher: Dispatcher, keys: FakeKeys, node_a: Node
) -> None:
    """Issue 28 defect 1 with security on: a write token for her own block does not let a user put a
    block (and a BCSID) into a RATIS container's replica outside its pipeline's log."""
    requests, _ = block_writes(7, 1, payload(1, 1024), 1024)
    assert [dispatcher.dispatch(r, index).result for index, r in enumerate(requests, 1)] == [pb.SUCCESS] * 2
    attacks, _ = block_writes(7, 2, payload(2, 1024), 1024, bcsid=1 << 62)
    for attack in attacks:
        attack.ClearField("pipelineID")
        answer = dispatcher.dispatch(with_token(attack, token(keys, 7, 2)))
        assert pb.Result.Name(answer.result) == "UNSUPPORTED_REQUEST", answer
        assert f"replicated by pipeline {PIPELINE}" in answer.message
    container = node_a.containers.require(7)
    assert container.bcsid == 2 and [b.block_id.local_id for b in container.list_blocks()] == [1]


def test_without_tokens_required_nothing_is_checked(node_a: Node, keys: FakeKeys) -> None:
    off = TokenVerifier(keys, block_tokens=False, container_tokens=False, clock=CLOCK)
    dispatcher = Dispatcher(node_a.containers, node_a.uuid, node_a.full.append, tokens=off)
    requests, _ = block_writes(7, 1, payload(1, 1024), 1024)
    assert [dispatcher.dispatch(r).result for r in [create(7), *requests]] == [pb.SUCCESS] * 3


def test_a_key_not_held_is_fetched_off_the_event_loop(dispatcher: Dispatcher, keys: FakeKeys) -> None:
    keys.held.clear()
    requests, _ = block_writes(7, 1, payload(1, 1024), 1024)
    req = with_token(requests[0], token(keys, 7, 1))
    check = dispatcher.check_token(req)
    assert check is not None and keys.fetched == []  # not asked on the loop
    check()
    assert keys.fetched == [keys.key.id]
    assert dispatcher.check_token(req) is None  # held now: checked at once


@pytest.fixture
def groups(dispatcher: Dispatcher, tmp_path: Path) -> Iterator[PipelineGroups]:
    executor = ThreadPoolExecutor(2)
    yield pipeline_groups(dispatcher, tmp_path / "ratis", executor)
    executor.shutdown()


@async_test
async def test_the_leader_refuses_a_write_before_it_takes_an_index(
    groups: PipelineGroups, keys: FakeKeys, node_a: Node
) -> None:
    group = await lead_alone(groups)
    first = group.member.status().last_index  # the leader's first entry (its term's no-op)
    requests, _ = block_writes(7, 1, payload(1, 1024), 1024)
    for r in requests:
        answer = groups.route(with_token(r, token(keys, 7, 2)))
        assert answer is not None and refusal(await answer).startswith("for another block:")
    assert group.member.status().last_index == first and 7 not in node_a.containers
    keys.held.clear()  # the key is fetched off the loop, in the writes' turn
    for r in requests:
        answer = groups.route(with_token(r, token(keys, 7, 1)))
        assert answer is not None and (await answer).result == pb.SUCCESS
    assert group.member.status().last_index == first + 2
    await groups.close()


def test_the_datanode_signs_its_own_requests(dispatcher: Dispatcher, keys: FakeKeys) -> None:
    signer = TokenSigner(keys, "dn", DAY, block_tokens=True, container_tokens=True, clock=CLOCK).signer()
    create_7 = signer(create(7))
    assert decode_token(create_7.encodedToken).kind == "HDDS_CONTAINER_TOKEN"  # type: ignore[union-attr]
    requests, chunks = block_writes(7, 1, payload(1, 1024), 1024)
    answers = [
        dispatcher.dispatch(signer(r)) for r in [create_7, *requests, get(7, 1), read(7, 1, chunks[0])]
    ]
    assert [a.result for a in answers] == [pb.SUCCESS] * 5
    assert request_block_id(requests[1]) == BlockID(7, 1)
    unsigned = TokenSigner(keys, "dn", DAY, block_tokens=False, container_tokens=False).signer()
    assert unsigned(get(7, 1)).encodedToken == ""


def test_a_datanode_has_tokens_with_a_certificate_and_a_kind_required() -> None:
    def never(certificate: object) -> SecretKeyCache:
        raise AssertionError("SCM's secret keys are not asked for")

    on = TokenSettings(block_tokens=True)
    assert DatanodeTokens.connect(on, None, never) is None  # no certificate: ozone.security.enabled is off
    assert DatanodeTokens.connect(TokenSettings(), object(), never) is None  # type: ignore[arg-type]


def test_a_write_beyond_the_tokens_max_length_is_refused(
    dispatcher: Dispatcher, keys: FakeKeys, node_a: Node
) -> None:
    """Issue 28 defect 2: a token for 1 KiB does not let a user store 2 KiB, by writeChunk, putBlock or
    putSmallFile; the refusal names the limit, and nothing beyond it is written."""
    dispatcher.dispatch(with_token(create(7), container_token(keys, 7)))
    small = token(keys, 7, 1, max_length=1024)
    requests, chunks = block_writes(7, 1, payload(1, 2048), 1024)
    first, second, put_both = requests
    assert dispatcher.dispatch(with_token(first, small)).result == pb.SUCCESS  # bytes 0..1024: within
    message = refusal(dispatcher.dispatch(with_token(second, small)))
    assert message.startswith("beyond maxLength: WriteChunk reaches byte 2048 of ")
    assert "allows 1024 bytes (maxLength)" in message
    assert "beyond maxLength: PutBlock reaches byte 2048" in refusal(
        dispatcher.dispatch(with_token(put_both, small))
    )
    container = node_a.containers.require(7)
    assert container.used_bytes == 1024 and not list(container.list_blocks())
    small_file = request(
        pb.PutSmallFile, 7,
        putSmallFile=pb.PutSmallFileRequestProto(
            block=pb.PutBlockRequestProto(blockData=pb.BlockData(blockID=put_both.putBlock.blockData.blockID)),
            chunkInfo=chunks[1], data=payload(1, 2048)[1024:],
        ),
    )  # fmt: skip
    assert "PutSmallFile reaches byte 2048" in refusal(dispatcher.dispatch(with_token(small_file, small)))
    enough = token(keys, 7, 1, max_length=2048)
    assert [dispatcher.dispatch(with_token(r, enough)).result for r in (second, put_both)] == [pb.SUCCESS] * 2


def test_a_small_file_must_fit_its_tokens_max_length(
    dispatcher: Dispatcher, keys: FakeKeys, node_a: Node
) -> None:
    """A whole block in one putSmallFile (the client's path for a key of one chunk) is held to the token's
    maxLength like its writeChunk and putBlock would be: 1 KiB passes a 1 KiB token, 1 KiB + 1 does not
    and writes nothing."""
    dispatcher.dispatch(with_token(create(7), container_token(keys, 7)))
    exact = token(keys, 7, 1, max_length=1024)
    assert dispatcher.dispatch(with_token(small_file(7, 1, payload(1, 1024)), exact)).result == pb.SUCCESS
    over = token(keys, 7, 2, max_length=1024)
    message = refusal(dispatcher.dispatch(with_token(small_file(7, 2, payload(2, 1025)), over)))
    assert "beyond maxLength: PutSmallFile reaches byte 1025" in message
    assert node_a.containers.require(7).used_bytes == 1024


@async_test
async def test_the_leader_refuses_a_write_beyond_max_length_before_it_takes_an_index(
    groups: PipelineGroups, keys: FakeKeys
) -> None:
    group = await lead_alone(groups)
    first = group.member.status().last_index
    requests, _ = block_writes(7, 1, payload(1, 2048), 1024)
    answer = groups.route(with_token(requests[1], token(keys, 7, 1, max_length=1024)))
    assert answer is not None and refusal(await answer).startswith("beyond maxLength:")
    assert group.member.status().last_index == first
    await groups.close()


def test_the_datanodes_own_write_tokens_allow_exactly_what_they_write(keys: FakeKeys) -> None:
    signer = TokenSigner(keys, "dn", DAY, block_tokens=True, container_tokens=False, clock=CLOCK).signer()
    requests, _ = block_writes(7, 1, payload(1, 3000), 1024)
    lengths = []
    for r in requests:
        signed = decode_token(signer(r).encodedToken)
        assert signed is not None
        lengths.append(block_identifier_from_bytes(signed.identifier).max_length)
    assert lengths == [1024, 2048, 3000, 3000]
