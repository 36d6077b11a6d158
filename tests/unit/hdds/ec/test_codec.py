"""The raw codec: any `data` cells of a stripe rebuild the others, for RS (ISA-L) and XOR."""

from __future__ import annotations

import itertools
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyozone.hdds.ec.codec import ECCodecError, codec_for
from pyozone.hdds.ids import ReplicationConfig

CONFIGS = ["rs-3-2-1024k", "xor-2-1-1024k", "rs-6-3-1024k", "rs-10-4-1024k"]


def _stripe(name: str, length: int) -> tuple[object, dict[int, bytes]]:
    config = ReplicationConfig.parse(name)
    codec = codec_for(config)
    cells = [os.urandom(length) for _ in range(config.ec_data)]
    parity = codec.encode(cells)
    assert all(len(p) == length for p in parity)
    return codec, {i + 1: bytes(c) for i, c in enumerate([*cells, *parity])}


@pytest.mark.parametrize("name", CONFIGS)
@pytest.mark.parametrize("length", [1, 1000, 1001, 4096])
def test_every_choice_of_lost_cells_up_to_parity_is_rebuilt(name, length):
    codec, cells = _stripe(name, length)
    nodes = codec.data + codec.parity
    for lost in range(1, codec.parity + 1):
        for missing in itertools.combinations(range(1, nodes + 1), lost):
            available = {i: c for i, c in cells.items() if i not in missing}
            rebuilt = codec.decode(available, list(missing))
            assert {i: bytes(v) for i, v in rebuilt.items()} == {i: cells[i] for i in missing}


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(CONFIGS), st.binary(min_size=1, max_size=300), st.data())
def test_encode_stripe_equals_encode_of_its_cells_and_decodes_back(name, seed, data):
    config = ReplicationConfig.parse(name)
    codec = codec_for(config)
    length = len(seed)
    stripe = bytes((b + i) % 256 for i in range(config.ec_data) for b in seed)
    cells = [stripe[i * length : (i + 1) * length] for i in range(config.ec_data)]
    parity = [bytes(p) for p in codec.encode_stripe(stripe, length)]
    assert parity == [bytes(p) for p in codec.encode(cells)]
    everything = {i + 1: c for i, c in enumerate([*cells, *parity])}
    missing = data.draw(st.lists(st.sampled_from(sorted(everything)), max_size=config.ec_parity, unique=True))
    available = {i: c for i, c in everything.items() if i not in missing}
    assert {i: bytes(v) for i, v in codec.decode(available, missing).items()} == {
        i: everything[i] for i in missing
    }


def test_xor_parity_is_the_xor_of_the_data_cells():
    codec = codec_for(ReplicationConfig.parse("xor-2-1-1024k"))
    assert bytes(codec.encode([b"\x0f\xf0", b"\xff\x00"])[0]) == b"\xf0\xf0"


def test_too_few_cells_are_refused():
    codec, cells = _stripe("rs-3-2-1024k", 64)
    with pytest.raises(ECCodecError, match="needs 3 cells"):
        codec.decode({1: cells[1], 2: cells[2]}, [3])


def test_cells_of_different_lengths_are_refused():
    codec = codec_for(ReplicationConfig.parse("rs-3-2-1024k"))
    with pytest.raises(ECCodecError, match="one length"):
        codec.encode([b"ab", b"cd", b"e"])


def test_an_index_both_given_and_missing_is_refused():
    codec, cells = _stripe("rs-3-2-1024k", 8)
    with pytest.raises(ECCodecError, match="both given and missing"):
        codec.decode({1: cells[1], 2: cells[2], 3: cells[3]}, [3])


def test_xor_cannot_rebuild_two_cells():
    codec, cells = _stripe("xor-2-1-1024k", 8)
    with pytest.raises(ECCodecError, match="one cell"):
        codec.decode({1: cells[1]}, [2, 3])


# Ozone's RS coder (RSUtil.genCauchyMatrix): parity row i (k <= i < k + m), column j holds 1 / (i ^ j) in
# GF(2^8) over the polynomial 0x11D. pyozone's parity must be exactly Ozone's, byte for byte.
_EXP, _LOG = [0] * 512, [0] * 256
_x = 1
for _i in range(255):
    _EXP[_i], _LOG[_x] = _x, _i
    _x = (_x << 1) ^ (0x11D if _x & 0x80 else 0)
for _i in range(255, 512):
    _EXP[_i] = _EXP[_i - 255]


def _mul(a: int, b: int) -> int:
    return 0 if a == 0 or b == 0 else _EXP[_LOG[a] + _LOG[b]]


def _ozone_parity(cells: list[bytes], data: int, parity: int) -> list[bytes]:
    out = []
    for row in range(data, data + parity):
        coefficients = [_EXP[255 - _LOG[row ^ column]] for column in range(data)]
        cell = bytearray(len(cells[0]))
        for coefficient, source in zip(coefficients, cells, strict=True):
            for n, byte in enumerate(source):
                cell[n] ^= _mul(coefficient, byte)
        out.append(bytes(cell))
    return out


@pytest.mark.parametrize("name", ["rs-3-2-1024k", "rs-6-3-1024k", "rs-10-4-1024k"])
def test_rs_parity_is_the_parity_ozone_writes(name):
    config = ReplicationConfig.parse(name)
    cells = [os.urandom(48) for _ in range(config.ec_data)]
    ours = [bytes(p) for p in codec_for(config).encode(cells)]
    assert ours == _ozone_parity(cells, config.ec_data, config.ec_parity)
