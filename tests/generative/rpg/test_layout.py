"""The split-ratio grammar on the paper's examples, and region boxes that tile every grid."""

import numpy as np
import pytest

from icml24.generative.rpg.layout import RegionLayout, grid_layout, latent_grid, parse_split_ratio


def test_three_stacked_rows():
    layout = parse_split_ratio("1;1;1")
    assert layout.shape == (1, 1, 1)
    assert layout.row_heights == pytest.approx((1 / 3, 1 / 3, 1 / 3))
    assert layout.boxes(6, 4) == [(0, 2, 0, 4), (2, 4, 0, 4), (4, 6, 0, 4)]


def test_two_by_two_first_number_of_a_row_is_its_height():
    layout = parse_split_ratio("1,1,1;1,1,1")
    assert layout.shape == (2, 2) and layout.num_regions == 4
    assert layout.boxes(4, 4) == [(0, 2, 0, 2), (0, 2, 2, 4), (2, 4, 0, 2), (2, 4, 2, 4)]


def test_single_row_has_only_widths():
    layout = parse_split_ratio("0.5,0.5")
    assert layout.shape == (2,) and layout.row_heights == (1.0,)
    assert layout.boxes(4, 8) == [(0, 4, 0, 4), (0, 4, 4, 8)]


def test_uneven_rows_and_normalisation():
    layout = parse_split_ratio("2,1,3;1,1")  # heights 2:1, row 0 widths 1:3, row 1 one cell
    assert layout.row_heights == pytest.approx((2 / 3, 1 / 3))
    assert layout.cell_widths[0] == pytest.approx((0.25, 0.75)) and layout.cell_widths[1] == (1.0,)
    again = parse_split_ratio(layout.to_ratio())
    assert [list(r) for r in again.cell_widths] == [pytest.approx(list(r)) for r in layout.cell_widths]


@pytest.mark.parametrize("ratio", ["1;1;1", "1,1,1;1,1,1", "0.5,0.5", "0.3,0.2,0.5", "1,1,2,3;2,5,1;1", "7"])
@pytest.mark.parametrize("size", [(1, 1), (2, 3), (4, 4), (7, 5), (16, 16), (13, 29)])
def test_masks_tile_the_canvas_exactly(ratio, size):
    masks = parse_split_ratio(ratio).masks(*size)
    assert (masks.sum(axis=0) == 1).all()  # every pixel in exactly one region


def test_edges_round_down_as_the_official_code():
    layout = parse_split_ratio("1,1,1")  # thirds of 16: int(16 / 3) = 5, int(32 / 3) = 10 (half-up gave 11)
    assert [b[2:] for b in layout.boxes(1, 16)] == [(0, 5), (5, 10), (10, 16)]
    assert [b[2:] for b in layout.boxes(1, 8)] == [(0, 2), (2, 5), (5, 8)]
    assert [b[2:] for b in layout.boxes(1, 4)] == [(0, 1), (1, 2), (2, 4)]
    five = parse_split_ratio("1,1,1,1;1,1,1")  # 3 over 2: rows 0-8, 8-16; top thirds, bottom halves
    assert five.boxes(16, 16) == [(0, 8, 0, 5), (0, 8, 5, 10), (0, 8, 10, 16), (8, 16, 0, 8), (8, 16, 8, 16)]


@pytest.mark.parametrize("bad", ["", "1,,1", "a;b", "1,-1", "0;1", "nan,1"])
def test_bad_ratios_are_refused_with_the_fix(bad):
    with pytest.raises(ValueError, match="split ratio"):
        parse_split_ratio(bad)


def test_grid_and_latent_grid():
    assert grid_layout(2, 3).shape == (3, 3)
    assert latent_grid(64, 16, 16) == (8, 8) and latent_grid(15, 12, 20) == (3, 5) and latent_grid(6, 12, 20) == (2, 3)
    with pytest.raises(ValueError, match="canvas"):
        latent_grid(10, 16, 16)
    assert isinstance(grid_layout(1, 1), RegionLayout) and np.all(grid_layout(1, 1).masks(3, 3))
