"""StripeLayout: every byte of a block group has one place, and replica lengths add up."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyozone.hdds.ec.layout import StripeLayout, padded
from pyozone.hdds.ids import ReplicationConfig

layouts = st.builds(StripeLayout, st.integers(1, 10), st.integers(1, 4), st.integers(1, 64))


def test_of_takes_data_parity_and_cell_size_from_the_config():
    assert StripeLayout.of(ReplicationConfig.parse("rs-6-3-1024k")) == StripeLayout(6, 3, 1024 * 1024)


@given(layouts, st.integers(0, 5000))
def test_data_replicas_hold_the_whole_group_and_parity_replicas_match_the_first(layout, length):
    data = [layout.index_length(length, i) for i in range(1, layout.data + 1)]
    parity = [layout.index_length(length, i) for i in range(layout.data + 1, layout.nodes + 1)]
    assert sum(data) == length
    assert all(p == data[0] for p in parity)
    assert data == sorted(data, reverse=True)  # the last stripe fills cells from index 1 on


@given(layouts, st.integers(0, 3000), st.integers(0, 3000))
def test_cells_cover_a_range_once_in_order_and_stay_inside_their_replica(layout, a, b):
    start, end = min(a, b), max(a, b)
    cells = list(layout.cells(start, end))
    assert sum(c.length for c in cells) == end - start
    position = start
    for cell in cells:
        assert cell.group_offset == position
        assert 1 <= cell.index <= layout.data
        assert 0 < cell.length <= layout.cell
        assert cell.index_offset + cell.length <= layout.index_length(end, cell.index)
        position += cell.length


@given(layouts, st.integers(0, 3000))
def test_stripe_cell_lengths_agree_with_replica_lengths(layout, length):
    per_index = [0] * layout.data
    for stripe in range(layout.stripes(length)):
        for i, n in enumerate(layout.stripe_cell_lengths(length, stripe)):
            per_index[i] += n
    assert per_index == [layout.index_length(length, i) for i in range(1, layout.data + 1)]


def test_an_index_outside_the_group_is_refused():
    with pytest.raises(ValueError, match=r"outside 1\.\.5"):
        StripeLayout(3, 2, 10).index_length(35, 6)


def test_a_layout_needs_positive_sizes():
    with pytest.raises(ValueError):
        StripeLayout(3, 2, 0)


def test_a_group_holds_a_block_on_each_data_index():
    assert StripeLayout(6, 3, 1024).group_capacity(256 << 20) == 6 * (256 << 20)


@given(layouts, st.integers(0, 3000))
def test_a_parity_cell_is_as_long_as_its_stripes_first_cell(layout, length):
    for stripe in range(layout.stripes(length)):
        first = layout.cell_length(length, stripe, 1)
        assert all(
            layout.cell_length(length, stripe, p) == first for p in range(layout.data + 1, layout.nodes + 1)
        )


def test_padded_pads_only_a_short_cell():
    cell = b"abc"
    assert padded(cell, 3) is cell
    assert padded(cell, 5) == b"abc\x00\x00"
