"""ListObjects' folding of OM's pages: common prefixes, markers, truncation, and that a listing always ends
(the scan never moves backwards, even for keys that sort past the jump over a common prefix)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from types import SimpleNamespace

import pytest

from pyozone.hdds.ids import RATIS_THREE
from pyozone.hdds.om_views import KeyInfo
from pyozone.s3g.listing import list_keys


@dataclass
class FakeOm:
    names: list[str]
    calls: int = field(default=0)

    async def list_keys(self, volume: str, bucket: str, prefix: str, start: str, limit: int) -> list[KeyInfo]:
        self.calls += 1
        assert self.calls < 1000, "the listing does not end"
        chosen = sorted(n for n in self.names if n.startswith(prefix) and n.encode() > start.encode())[:limit]
        return [KeyInfo("s3v", "b", n, 1, 0, 0, RATIS_THREE) for n in chosen]


def request(names: list[str]) -> SimpleNamespace:
    om = FakeOm(names)
    gateway = SimpleNamespace(client=SimpleNamespace(om=om), volume="s3v")
    return SimpleNamespace(gateway=gateway, bucket="b")


def listed(names: list[str], prefix: str = "", delimiter: str = "", marker: str = "", max_keys: int = 1000):
    listing = asyncio.run(list_keys(request(names), prefix, delimiter, marker, max_keys))  # type: ignore[arg-type]
    return [k.name for k in listing.contents], listing.prefixes, listing.truncated


NAMES = ["a/1", "a/2", "b/1", "c", "d/x/1", "d/y"]


def test_common_prefixes_and_contents() -> None:
    assert listed(NAMES, delimiter="/") == (["c"], ["a/", "b/", "d/"], False)
    assert listed(NAMES, prefix="d/", delimiter="/") == (["d/y"], ["d/x/"], False)


@pytest.mark.parametrize("max_keys", [1, 2, 3])
def test_pages_cover_everything_once(max_keys: int) -> None:
    seen: list[str] = []
    marker = ""
    while True:
        keys, prefixes, truncated = listed(NAMES, delimiter="/", marker=marker, max_keys=max_keys)
        seen += keys + prefixes
        if not truncated:
            break
        marker = max(keys + prefixes)
    assert sorted(seen) == ["a/", "b/", "c", "d/"]


def test_keys_past_the_jump_over_a_prefix_end_the_listing() -> None:
    names = ["d/\U0010ffffx", "d/\U0010ffffy", "d/a", "e"]
    assert listed(names, delimiter="/", max_keys=2) == (["e"], ["d/"], False)
    assert listed(names, delimiter="/", marker="d/") == (["e"], [], False)
