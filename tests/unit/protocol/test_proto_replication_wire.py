"""The wire bytes of every message carrying a replication config, pinned: issue 34 moves the config
above the wire to one ReplicationConfig value, and the bytes must not move (OM's requests openKey,
createBucket, initiateMultipartUpload and setBucketProperty, OM's records and SCM's allocateBlock). The
expected bytes were encoded by main's tree before the change (4bead4f)."""

from __future__ import annotations

import pytest
from google.protobuf.message import Message

from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.om_records import BucketRecord, KeyRecord, MultipartUploadRecord
from pyozone.protocol import block, om_records
from pyozone.protocol import om as wire

NAMES = (None, "RATIS/ONE", "RATIS/THREE", "rs-3-2-1024k", "EC/RS-6-3-1024k", "xor-2-1-1024k")

EXPECTED = {
    "openKey None": "0a01761201621a016b200a42060a0161120162",
    "createBucket None": "0a017612016232016f",
    "initiateMultipartUpload None": "0a01761201621a016b",
    "openKey RATIS/ONE": "0a01761201621a016b200a2801300142060a0161120162",
    "createBucket RATIS/ONE": "0a01761201621801200132016f",
    "initiateMultipartUpload RATIS/ONE": "0a01761201621a016b20012801",
    "BucketInfo RATIS/ONE": "0a017612016218012002280130013a0c4f424a4543545f53544f524552016f",
    "KeyInfo RATIS/ONE": "0a01761201621a016b20052801300238014001",
    "MultipartInfo RATIS/ONE": "0a01761201621a016b2201752801300138014007",
    "AllocateScmBlock RATIS/ONE": "088080401001180120012a026f6d",
    "openKey RATIS/THREE": "0a01761201621a016b200a2801300342060a0161120162",
    "createBucket RATIS/THREE": "0a01761201621801200332016f",
    "initiateMultipartUpload RATIS/THREE": "0a01761201621a016b20012803",
    "BucketInfo RATIS/THREE": "0a017612016218012002280130033a0c4f424a4543545f53544f524552016f",
    "KeyInfo RATIS/THREE": "0a01761201621a016b20052801300238014003",
    "MultipartInfo RATIS/THREE": "0a01761201621a016b2201752801300138034007",
    "AllocateScmBlock RATIS/THREE": "088080401001180120032a026f6d",
    "openKey rs-3-2-1024k": "0a01761201621a016b200a280442060a0161120162620c080310021a02727320808040",
    "createBucket rs-3-2-1024k": "0a017612016218042a0c080310021a0272732080804032016f",
    "initiateMultipartUpload rs-3-2-1024k": "0a01761201621a016b2004420c080310021a02727320808040",
    "BucketInfo rs-3-2-1024k": (
        "0a01761201621801200228043a0c4f424a4543545f53544f524552016f5a0c080310021a02727320808040"
    ),
    "KeyInfo rs-3-2-1024k": "0a01761201621a016b20052801300238046a0c080310021a02727320808040",
    "MultipartInfo rs-3-2-1024k": "0a01761201621a016b220175280130044007620c080310021a02727320808040",
    "AllocateScmBlock rs-3-2-1024k": "08808040100118042a026f6d420c080310021a02727320808040",
    "openKey EC/RS-6-3-1024k": "0a01761201621a016b200a280442060a0161120162620c080610031a02727320808040",
    "createBucket EC/RS-6-3-1024k": "0a017612016218042a0c080610031a0272732080804032016f",
    "initiateMultipartUpload EC/RS-6-3-1024k": "0a01761201621a016b2004420c080610031a02727320808040",
    "BucketInfo EC/RS-6-3-1024k": (
        "0a01761201621801200228043a0c4f424a4543545f53544f524552016f5a0c080610031a02727320808040"
    ),
    "KeyInfo EC/RS-6-3-1024k": "0a01761201621a016b20052801300238046a0c080610031a02727320808040",
    "MultipartInfo EC/RS-6-3-1024k": "0a01761201621a016b220175280130044007620c080610031a02727320808040",
    "AllocateScmBlock EC/RS-6-3-1024k": "08808040100118042a026f6d420c080610031a02727320808040",
    "openKey xor-2-1-1024k": "0a01761201621a016b200a280442060a0161120162620d080210011a03786f7220808040",
    "createBucket xor-2-1-1024k": "0a017612016218042a0d080210011a03786f722080804032016f",
    "initiateMultipartUpload xor-2-1-1024k": "0a01761201621a016b2004420d080210011a03786f7220808040",
    "BucketInfo xor-2-1-1024k": (
        "0a01761201621801200228043a0c4f424a4543545f53544f524552016f5a0d080210011a03786f7220808040"
    ),
    "KeyInfo xor-2-1-1024k": "0a01761201621a016b20052801300238046a0d080210011a03786f7220808040",
    "MultipartInfo xor-2-1-1024k": "0a01761201621a016b220175280130044007620d080210011a03786f7220808040",
    "AllocateScmBlock xor-2-1-1024k": "08808040100118042a026f6d420d080210011a03786f7220808040",
    "setBucketProperty": "0a0d0a0176120162400a480252016f",
}


def requested(name: str | None) -> ReplicationConfig | None:
    """A request's replication, as the request builders take it (a ReplicationConfig since issue 34; a
    name before)."""
    return None if name is None else ReplicationConfig.parse(name)


def samples() -> dict[str, Message]:
    out: dict[str, Message] = {}
    for n in NAMES:
        r = requested(n)
        out[f"openKey {n}"] = wire.open_key_request("v", "b", "k", 10, r, None, {"a": "b"}, None, "", 0, None)
        out[f"createBucket {n}"] = wire.create_bucket_request("v", "b", r, "o")
        out[f"initiateMultipartUpload {n}"] = wire.initiate_multipart_upload_request(
            "v", "b", "k", r, None, None
        )
        if n is None:
            continue
        c = ReplicationConfig.parse(n)
        out[f"BucketInfo {n}"] = om_records.bucket_to_proto(BucketRecord("v", "b", "o", 1, 2, c))
        out[f"KeyInfo {n}"] = om_records.key_to_proto(KeyRecord("v", "b", "k", 5, 1, 2, c))
        out[f"MultipartInfo {n}"] = om_records.multipart_to_proto(
            MultipartUploadRecord("v", "b", "k", "u", 1, c, 7)
        )
        out[f"AllocateScmBlock {n}"] = block.allocate_request_to_proto(
            block.AllocateRequest(1 << 20, 1, c, "om")
        )
    out["setBucketProperty"] = wire.set_bucket_property_request("v", "b", "o", 10, 2)
    return out


SAMPLES = samples()


def test_every_pinned_message_is_sampled() -> None:
    assert SAMPLES.keys() == EXPECTED.keys()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_wire_bytes_are_unchanged(name: str) -> None:
    assert SAMPLES[name].SerializeToString(deterministic=True).hex() == EXPECTED[name]
