"""KeyAddress: the one address of a volume, bucket or key above the edges that spell one (sh, ofs)."""

from __future__ import annotations

import pytest

from pyozone.hdds.addresses import KeyAddress, Level


@pytest.mark.parametrize(
    ("address", "level", "name"),
    [
        (KeyAddress(), Level.ROOT, ""),
        (KeyAddress("v"), Level.VOLUME, "v"),
        (KeyAddress("v", "b"), Level.BUCKET, "v/b"),
        (KeyAddress("v", "b", "a/k"), Level.KEY, "v/b/a/k"),
    ],
)
def test_an_address_knows_its_level_and_name(address: KeyAddress, level: Level, name: str) -> None:
    assert (address.level, str(address)) == (level, name)


def test_what_lies_below_an_address() -> None:
    assert KeyAddress("v", "b").prefix == ""
    assert KeyAddress("v", "b", "dir").prefix == "dir/"
    assert KeyAddress("v", "b", "dir").child("dir/k") == KeyAddress("v", "b", "dir/k")
