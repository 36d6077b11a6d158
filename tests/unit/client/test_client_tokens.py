"""The client carries OM's block token from the KeyLocation into every xceiver request for the block (its
encodedToken); a location without one sends no token field at all. (The datastream headers carry it too:
tests/e2e/security/test_e2e_block_tokens.py writes V2 and EC keys through datanodes that require it.)"""

from __future__ import annotations

import uuid

from pyozone.client.block_output import BlockOutputStream
from pyozone.client.config import ClientConfig
from pyozone.config import OzoneConfiguration
from pyozone.framework.datanode import ChannelPool
from pyozone.hdds.checksum import ChecksumType, compute
from pyozone.hdds.chunks import ChunkInfo
from pyozone.hdds.ids import BlockID
from pyozone.hdds.locations import KeyLocation
from pyozone.hdds.security.block_token import AccessMode, BlockTokenIdentifier
from pyozone.hdds.security.secret_key import ManagedSecretKey
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.proto import OmClientProtocol_pb2 as om_pb
from pyozone.proto import ScmBlockLocationProtocol_pb2 as block_pb
from pyozone.proto import hdds_pb2
from pyozone.protocol import data
from pyozone.protocol.chunks import chunk_info_to_proto
from pyozone.protocol.locations import key_location_from_proto, key_location_to_proto
from pyozone.protocol.tokens import decode_token, encode_token, issue_block_token, token_to_proto

KEY = ManagedSecretKey.generate(0, 10**13)
TOKEN = issue_block_token(
    BlockTokenIdentifier("alice", BlockID(7, 1), 10**13, frozenset({AccessMode.READ}), 0, KEY.id), KEY
)


def location(with_token: bool) -> KeyLocation:
    proto = om_pb.KeyLocation(
        blockID=block_pb.BlockID(containerBlockID=block_pb.ContainerBlockID(containerID=7, localID=1)),
        length=10,
        pipeline=hdds_pb2.Pipeline(id=hdds_pb2.PipelineID(id=str(uuid.uuid4()))),
    )
    if with_token:
        proto.token.CopyFrom(token_to_proto(TOKEN))
    return key_location_from_proto(proto)


def test_a_locations_token_is_the_encoded_token_oms_message_holds() -> None:
    assert location(True).token == encode_token(TOKEN)
    assert decode_token(location(True).token) == TOKEN
    assert location(False).token == ""
    assert not key_location_to_proto(location(True)).HasField("token")  # commitKey does not send it back


def test_every_xceiver_request_for_the_block_carries_it() -> None:
    config = ClientConfig.from_conf(OzoneConfiguration(), "127.0.0.1:1")
    pool = ChannelPool()
    sums = compute(b"x" * 10, ChecksumType.CRC32, 16)
    for with_token in (True, False):
        loc = location(with_token)
        writer = BlockOutputStream(loc, config, pool)
        chunk = chunk_info_to_proto("1_chunk_1", 0, 10, sums)
        requests = (
            data.write_chunk_request(loc, 0, chunk, b"x" * 10),
            data.put_block_request(loc, 0, [chunk], 10, {}, eof=True),
            data.put_small_file_request(loc, 0, chunk, b"x" * 10, {}),
            data.watch_request(loc, 3, all_committed=True),
            data.get_block_request(loc, 0),
            data.get_small_file_request(loc),
            data.read_chunk_request(loc, ChunkInfo("1_chunk_1", 0, 10, sums), 0, 10),
            writer._request(pb.PutBlock),  # the datastream writer's putBlock
        )
        for request in requests:
            assert request.encodedToken == loc.token
            assert any(f.name == "encodedToken" for f, _ in request.ListFields()) is with_token
        assert writer.committed(0).token == loc.token  # the block keeps its token through a commit
