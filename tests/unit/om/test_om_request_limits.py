"""OM's requests are bounded at the RPC edge (issue 11, defect 2): a name longer than any valid one is
refused with its INVALID_*_NAME before it is parsed, and nothing of it is echoed; a request above OM's
4 MiB is refused before it is buffered (skipped unread, its size known from the frame header)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from google.protobuf.descriptor import FieldDescriptor

from pyozone import rpc
from pyozone.framework.om import OM_SERVICE
from pyozone.hdds.limits import MiB
from pyozone.om.server.limits import MAX_OM_REQUEST_BYTES, NAMES_REQUEST_BYTES, OMRequestLimits
from pyozone.proto import OmClientProtocol_pb2 as pb
from pyozone.protocol.om import SERVICE
from pyozone.rpc import Oversized
from tests.unit.om.om_fakes import FakeScm
from tests.unit.om.test_om_server import failure, om_channel, run, running

CREATE_VOLUME = "/pyozone.om.OzoneManagerService/createVolume"
LIMITS = OMRequestLimits()
SHORT_DETAILS = 200
"""What a refusal may take: no echo of the name (the client's metadata limit is 16 KiB)."""


def bounds(method: str):
    found = LIMITS.bounds(f"/pyozone.om.OzoneManagerService/{method}")
    assert found is not None
    return found


def test_every_string_field_of_every_request_has_a_rule() -> None:
    for method in SERVICE.methods:
        full = f"/{SERVICE.full_name}/{method.name}"
        for field in method.input_type.fields:
            if field.type == FieldDescriptor.TYPE_STRING:
                assert LIMITS.rule(full, field.name) is not None, (method.name, field.name)


def test_the_longest_field_is_found_in_the_raw_bytes() -> None:
    raw = pb.LookupKeyRequest(volume="vol", bucket="b" * 64, key="k" * 2000).SerializeToString()
    assert bounds("lookupKey").oversized(raw) == Oversized("bucket", 64, 63)
    ok = pb.LookupKeyRequest(volume="v" * 63, bucket="b" * 63, key="k" * 1024, clientHost="h" * 255)
    assert bounds("lookupKey").oversized(ok.SerializeToString()) is None
    listing = pb.ListKeysRequest(volume="vol", bucket="buck", prefix="p" * 1025).SerializeToString()
    assert bounds("listKeys").oversized(listing) == Oversized("prefix", 1025, 1024)


def test_a_whole_request_above_its_method_bound() -> None:
    raw = pb.InfoVolumeRequest(volume="vol").SerializeToString() * (NAMES_REQUEST_BYTES // 5 + 1)
    assert bounds("infoVolume").oversized(raw) == Oversized(None, len(raw), NAMES_REQUEST_BYTES)
    blocks = pb.CommitKeyRequest(volume="vol", bucket="buck", key="k")
    blocks.locations.extend(pb.KeyLocation(offset=i, length=1) for i in range(20_000))
    assert bounds("commitKey").oversized(blocks.SerializeToString()) is None


def test_a_length_past_the_end_is_left_to_the_parser() -> None:
    garbage = b"\x0a\xff\xff\xff\xff\x0f" + b"x" * 16  # volume "of 4 GiB", 16 bytes there
    assert bounds("createVolume").oversized(garbage) is None


def test_refusals_name_the_field_and_its_size_only() -> None:
    code, details = LIMITS.refusal(CREATE_VOLUME, Oversized("volume", 30 * MiB, 63))
    assert code is rpc.StatusCode.INVALID_ARGUMENT
    assert details == (
        f"INVALID_VOLUME_NAME: volume of {30 * MiB} bytes is above the limit of 63 bytes for a volume name"
    )
    code, details = LIMITS.refusal(CREATE_VOLUME, Oversized(None, 5000, 4096))
    assert details.startswith("INVALID_REQUEST: createVolume request of 5000 bytes")


def test_huge_names_are_refused_with_their_code_and_om_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """8 concurrent createVolume with 3 MiB names, lookupKey with one: INVALID_*_NAME, a short message.
    Before the fix the details held the name (the client saw RESOURCE_EXHAUSTED, metadata too large), and
    lookupKey parsed it and answered VOLUME_NOT_FOUND."""
    name = "v" * (3 * MiB)

    async def body() -> None:
        async with (
            running(tmp_path, FakeScm()) as (daemon, _),
            om_channel(daemon.rpc_port) as ch,
        ):
            om = rpc.Stub(ch, OM_SERVICE)
            answers = await asyncio.gather(
                *(failure(om.createVolume, pb.CreateVolumeRequest(volume=name)) for _ in range(8)),
                failure(om.lookupKey, pb.LookupKeyRequest(volume="vol", bucket="buck", key=name)),
                failure(om.createBucket, pb.CreateBucketRequest(volume="vol", bucket=name)),
                failure(om.infoVolume, pb.InfoVolumeRequest(volume="v" * 64)),
                failure(om.createVolume, pb.CreateVolumeRequest(volume="vol", owner=name)),
            )
            codes = [details.split(":", 1)[0] for _, details in answers]
            assert codes == ["INVALID_VOLUME_NAME"] * 8 + [
                "INVALID_KEY_NAME",
                "INVALID_BUCKET_NAME",
                "INVALID_VOLUME_NAME",
                "INVALID_REQUEST",
            ]
            assert all(code is rpc.StatusCode.INVALID_ARGUMENT for code, _ in answers)
            assert all(len(details) < SHORT_DETAILS for _, details in answers), answers
            # Above OM's 4 MiB: skipped unread, refused with a short message.
            huge = pb.CreateVolumeRequest(volume="v" * (MAX_OM_REQUEST_BYTES + 1))
            code, details = await failure(om.createVolume, huge)
            assert code is rpc.StatusCode.RESOURCE_EXHAUSTED and len(details) < SHORT_DETAILS
            await om.createVolume(pb.CreateVolumeRequest(volume="vol1"))  # and OM goes on serving

    run(body())
    assert not [r for r in caplog.records if "vvvvvvvv" in r.getMessage()]
