"""OM's block tokens: every location of openKey and allocateBlock carries a READ+WRITE token for the
caller up to the block size, every location of lookupKey a READ one up to its length; without an issuer
(hdds.block.token.enabled off) no location carries one."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from pyozone import rpc
from pyozone.config import OzoneConfiguration
from pyozone.framework.om import OM_SERVICE
from pyozone.hdds.clock import ManualClock
from pyozone.hdds.ec.layout import StripeLayout
from pyozone.hdds.ids import BlockID, ReplicationConfig
from pyozone.hdds.security.block_token import AccessMode, check_length
from pyozone.hdds.security.secret_key import ManagedSecretKey
from pyozone.om.block_tokens import READ, WRITE, BlockTokenIssuer
from pyozone.om.server.limits import server_settings
from pyozone.om.server.service import OzoneManagerService, add_om_service
from pyozone.om.settings import BlockTokenSettings
from pyozone.proto import OmClientProtocol_pb2 as pb
from pyozone.proto import hdds_pb2
from pyozone.protocol.common import ec_config_to_proto
from pyozone.protocol.tokens import encode_token_proto, verify_block_token
from pyozone.rpc.metadata import USER_METADATA
from tests.unit.om.om_fakes import BLOCK, FakeScm, make_om
from tests.unit.om.test_om_ec_keys import EcScm
from tests.unit.om.test_om_server import om_channel

CLOCK = ManualClock()
DAY = 86_400_000


class FakeKeys:
    def __init__(self) -> None:
        self.key = ManagedSecretKey.generate(CLOCK.wall_ms(), 9 * DAY)
        self.closed = False

    def current(self) -> ManagedSecretKey:
        return self.key

    def get(self, key_id: uuid.UUID) -> ManagedSecretKey | None:
        return self.key if key_id == self.key.id else None

    def close(self) -> None:
        self.closed = True


def verify(location: pb.KeyLocation, keys: FakeKeys, mode: AccessMode, at_ms: int = 0) -> object:
    block = BlockID(location.blockID.containerBlockID.containerID, location.blockID.containerBlockID.localID)
    encoded = encode_token_proto(location.token)
    return verify_block_token(encoded, block, mode, keys.get, at_ms or CLOCK.wall_ms())


@asynccontextmanager
async def serving(
    tmp_path: Path, issuer: BlockTokenIssuer | None, scm: FakeScm | None = None
) -> AsyncIterator[rpc.Stub]:
    core = make_om(tmp_path, scm or FakeScm())
    executor = ThreadPoolExecutor(2)
    server = rpc.Server(server_settings())
    add_om_service(server, OzoneManagerService(core, executor, "om-1", "CID-test", tokens=issuer))
    port = await server.start("127.0.0.1", 0)
    try:
        async with om_channel(port) as channel:
            yield rpc.Stub(channel, OM_SERVICE)
    finally:
        await server.stop(None)
        executor.shutdown()
        core.store.close()


async def write_key(stub: rpc.Stub, size: int) -> tuple[pb.OpenKeyResponse, list]:
    alice = ((USER_METADATA, "alice"),)
    await stub.createVolume(pb.CreateVolumeRequest(volume="vol"), metadata=alice)
    await stub.createBucket(pb.CreateBucketRequest(volume="vol", bucket="bkt"), metadata=alice)
    opened = await stub.openKey(
        pb.OpenKeyRequest(volume="vol", bucket="bkt", key="k", dataSize=size, type=hdds_pb2.RATIS,
                          factor=hdds_pb2.THREE),
        metadata=alice,
    )  # fmt: skip
    more = await stub.allocateBlock(
        pb.AllocateBlockRequest(volume="vol", bucket="bkt", key="k", clientID=opened.clientID), metadata=alice
    )
    return opened, [*opened.keyInfo.locations, more.location]


def test_write_and_read_locations_carry_tokens_for_the_caller(tmp_path: Path) -> None:
    keys = FakeKeys()
    issuer = BlockTokenIssuer(keys, DAY, CLOCK)  # type: ignore[arg-type]

    async def body() -> None:
        async with serving(tmp_path, issuer) as stub:
            opened, locations = await write_key(stub, BLOCK)
            assert len(locations) == 2
            for location in locations:
                ident = verify(location, keys, AccessMode.WRITE)
                assert ident.owner == "alice" and ident.max_length == BLOCK  # type: ignore[attr-defined]
                assert ident.modes == {AccessMode.READ, AccessMode.WRITE}  # type: ignore[attr-defined]
            committed = [
                pb.KeyLocation(blockID=loc.blockID, offset=10 * i, length=10)
                for i, loc in enumerate(locations)
            ]
            commit = pb.CommitKeyRequest(
                volume="vol",
                bucket="bkt",
                key="k",
                clientID=opened.clientID,
                dataSize=20,
                locations=committed,
            )
            await stub.commitKey(commit)
            looked = await stub.lookupKey(pb.LookupKeyRequest(volume="vol", bucket="bkt", key="k"))
            for location in looked.keyInfo.locations:
                ident = verify(location, keys, AccessMode.READ)
                assert ident.modes == READ and ident.max_length == 10  # type: ignore[attr-defined]
                assert ident.owner != "alice"  # the lookup's caller claimed no user
            expired_at = CLOCK.wall_ms() + DAY
            try:
                verify(looked.keyInfo.locations[0], keys, AccessMode.READ, expired_at)
            except Exception as e:
                assert "expired" in str(e)
            else:
                raise AssertionError("a token outlived hdds.block.token.expiry.time")

    asyncio.run(asyncio.wait_for(body(), 20))
    issuer.close()
    assert keys.closed


def test_an_ec_write_token_allows_what_a_full_group_puts_on_each_replica(tmp_path: Path) -> None:
    """Issue 28 (dn2 defect 3): OM signed maxLength = ozone.scm.block.size, but an EC group holds the block
    size on each data index (Ozone's ECKeyOutputStream), so its first data index and its parity indexes
    hold a whole cell more than that when the block size is not a multiple of the cell (rs-3-2-1024k with
    1000-byte blocks: 3000 bytes on index 1), and the datanodes refused a legitimate EC write. A write token
    allows what a full group puts on its fullest replica; a replicated block's stays the block size."""
    keys = FakeKeys()
    issuer = BlockTokenIssuer(keys, DAY, CLOCK)  # type: ignore[arg-type]
    config = ReplicationConfig.parse("rs-3-2-1024k")
    layout = StripeLayout.of(config)
    group = config.ec_data * BLOCK

    async def body() -> None:
        async with serving(tmp_path, issuer, EcScm()) as stub:
            _, ratis = await write_key(stub, BLOCK)  # creates the volume
            assert {verify(x, keys, AccessMode.WRITE).max_length for x in ratis} == {BLOCK}  # type: ignore[attr-defined]
            b = {"volume": "vol", "bucket": "ecb"}
            ec = ec_config_to_proto(config, "ec")
            await stub.createBucket(pb.CreateBucketRequest(**b, type=hdds_pb2.EC, ecReplicationConfig=ec))
            opened = await stub.openKey(pb.OpenKeyRequest(**b, key="k"))
            more = await stub.allocateBlock(pb.AllocateBlockRequest(**b, key="k", clientID=opened.clientID))
            for location in (*opened.keyInfo.locations, more.location):
                assert location.length == group
                ident = verify(location, keys, AccessMode.WRITE)
                for index in range(1, config.required_nodes + 1):  # what the EC writer puts on each
                    check_length(ident, layout.index_length(group, index), "a full group's replica")  # type: ignore[arg-type]
                assert ident.max_length == layout.index_length(group, 1) == group  # type: ignore[attr-defined]

    asyncio.run(asyncio.wait_for(body(), 20))


def test_without_an_issuer_no_location_carries_a_token(tmp_path: Path) -> None:
    async def body() -> None:
        async with serving(tmp_path, None) as stub:
            _, locations = await write_key(stub, BLOCK)
            assert locations and not any(loc.HasField("token") for loc in locations)

    asyncio.run(asyncio.wait_for(body(), 20))


def test_the_issuer_exists_with_block_tokens_and_a_certificate_only() -> None:
    on = BlockTokenSettings.from_conf(OzoneConfiguration({"hdds.block.token.enabled": "true"}))
    off = BlockTokenSettings.from_conf(OzoneConfiguration())
    assert BlockTokenIssuer.of(on, None, pytest.fail) is None
    assert BlockTokenIssuer.of(off, object(), pytest.fail) is None  # type: ignore[arg-type]
    keys = FakeKeys()
    issuer = BlockTokenIssuer.of(on, object(), lambda _: keys)  # type: ignore[arg-type]
    assert issuer is not None and issuer.keys is keys and issuer.lifetime_ms == DAY


def test_a_small_keys_token_allows_only_what_was_allocated(tmp_path: Path) -> None:
    """Issue 28, defect 2: a key opened with dataSize=1 got a token for a whole block (maxLength the block
    size) while SCM allocated its block 1 byte; the token carries the allocated length, as Ozone's."""
    keys = FakeKeys()
    issuer = BlockTokenIssuer(keys, DAY, CLOCK)  # type: ignore[arg-type]

    async def body() -> None:
        async with serving(tmp_path, issuer) as stub:
            _, (small, more) = await write_key(stub, 1)
            assert verify(small, keys, AccessMode.WRITE).max_length == 1  # type: ignore[attr-defined]
            assert small.length == 1
            assert verify(more, keys, AccessMode.WRITE).max_length == BLOCK  # type: ignore[attr-defined]

    asyncio.run(asyncio.wait_for(body(), 20))
    issuer.close()


def test_oms_own_read_token_for_a_length_check() -> None:
    """What OM sends with its own GetCommittedBlockLength (om/stored_lengths.py)."""
    keys = FakeKeys()
    issuer = BlockTokenIssuer(keys, DAY, CLOCK)  # type: ignore[arg-type]
    block = BlockID(7, 3)
    ident = verify_block_token(
        issuer.block_token(block, "om", READ), block, AccessMode.READ, keys.get, CLOCK.wall_ms()
    )
    assert ident.owner == "om" and ident.modes == READ  # type: ignore[attr-defined]


def test_oms_own_write_token_for_a_finalize() -> None:
    """What OM sends with its own FinalizeBlock (om/stored_lengths.py): WRITE, as Ozone's datanode requires
    of every request that is not read-only, and no room to write (maxLength 0)."""
    keys = FakeKeys()
    issuer = BlockTokenIssuer(keys, DAY, CLOCK)  # type: ignore[arg-type]
    block = BlockID(7, 3)
    ident = verify_block_token(
        issuer.block_token(block, "om", WRITE), block, AccessMode.WRITE, keys.get, CLOCK.wall_ms()
    )
    assert ident.owner == "om" and ident.modes == WRITE and ident.max_length == 0  # type: ignore[attr-defined]
