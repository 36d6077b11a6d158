"""BlockData's stored form: what the write path reads off a record without decoding it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pyozone.hdds.block_data import BlockData, ChunkInfo
from pyozone.hdds.checksum import ChecksumData, ChecksumType
from pyozone.hdds.ids import BlockID

TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=20)


@given(
    st.dictionaries(TEXT, TEXT, max_size=4),
    st.lists(TEXT, max_size=3),
)
def test_json_names_chunks_is_what_the_decoded_record_says(
    metadata: dict[str, str], names: list[str]
) -> None:
    """Metadata may spell `"chunks":[]` in its keys or values: only a record without chunks is taken for
    one."""
    metadata = {**metadata, "chunks": "[]", '"chunks":[]': '"chunks":[]'}
    checksums = ChecksumData(ChecksumType.NONE, 1024, ())
    chunks = tuple(ChunkInfo(name, 10 * i, 10, checksums) for i, name in enumerate(names))
    raw = BlockData(BlockID(1, 2), chunks, tuple(metadata.items())).to_json()
    assert BlockData.json_names_chunks(raw) is bool(BlockData.from_json(raw).chunks)
