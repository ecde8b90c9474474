"""Zelda levels: the BFS checker on hand-made levels, the MILP against the checker, the procedural generator."""

import numpy as np
import pytest
import torch

from icml24.generative import (
    is_playable,
    level_text,
    one_hot,
    parse_level,
    random_levels,
    tile_histogram,
    tile_histogram_kl,
    wall_fraction,
    wall_loss,
    zelda_milp,
    zelda_penalty,
)

GOOD = ["wwwwwww",
        "wA..1.w",
        "w.ww..w",
        "w..+.gw",
        "wwwwwww"]


def _edit(rows, r, c, ch):
    rows = list(rows)
    rows[r] = rows[r][:c] + ch + rows[r][c + 1:]
    return rows


def test_hand_made_playable_level():
    assert is_playable(parse_level(GOOD))
    assert level_text(parse_level(GOOD)) == GOOD


@pytest.mark.parametrize("why, rows", [
    ("border gap", _edit(GOOD, 0, 3, ".")),
    ("two players", _edit(GOOD, 1, 2, "A")),
    ("no key", _edit(GOOD, 3, 3, ".")),
    ("no door", _edit(GOOD, 3, 5, ".")),
    ("key walled off", ["wwwwwww", "wA.w+.w", "w..w..w", "w.gw..w", "wwwwwww"]),
    ("door walled off", ["wwwwwww", "wA+.w.w", "w...wgw", "w...w.w", "wwwwwww"]),
    ("too many enemies", ["wwwwwww", "wA1111w", "w11.11w", "w+1.1gw", "wwwwwww"]),
])
def test_hand_made_unplayable_levels(why, rows):
    assert not is_playable(parse_level(rows)), why


def test_enemies_do_not_block_but_walls_do():
    assert is_playable(parse_level(["wwwwww", "wA1.+w", "w.1.gw", "w....w", "wwwwww"]))
    assert not is_playable(parse_level(["wwwwww", "wAw.+w", "wwwgww", "w....w", "wwwwww"]))


def test_parse_rejects_unknown_tiles_and_ragged_rows():
    with pytest.raises(ValueError, match="unknown tile"):
        parse_level(["wwww", "wAxw"])
    with pytest.raises(ValueError, match="same length"):
        parse_level(["wwww", "www"])


def test_milp_outputs_are_playable_by_the_independent_checker_on_random_costs():
    solver = zelda_milp(6, 7)
    costs = np.random.default_rng(0).standard_normal((6, 6 * 7 * 6)) * 3
    levels = solver.solve(costs).reshape(6, 6, 7, 6)
    assert np.allclose(levels.sum(-1), 1)
    assert all(is_playable(level) for level in levels.argmax(-1))


def test_milp_projection_keeps_playable_levels_and_fixes_a_walled_off_key():
    solver = zelda_milp(5, 7)
    good = parse_level(GOOD)
    assert (solver.solve(one_hot(good).ravel()).reshape(5, 7, 6).argmax(-1) == good).all()
    bad = parse_level(["wwwwwww", "wA.w+.w", "w..w..w", "w.gw..w", "wwwwwww"])
    fixed = solver.solve(one_hot(bad).ravel()).reshape(5, 7, 6).argmax(-1)
    assert is_playable(fixed) and (fixed != bad).sum() == 1  # one wall removed, the closest playable level


def test_random_levels_are_playable_and_varied():
    levels = random_levels(20, 6, 8, np.random.default_rng(0))
    assert levels.shape == (20, 6, 8) and all(is_playable(level) for level in levels)
    assert len({level.tobytes() for level in levels}) == 20 and 0 < wall_fraction(levels).mean() < 0.5


def test_losses_on_soft_levels():
    x = torch.as_tensor(one_hot(parse_level(GOOD))[None], dtype=torch.float32)
    assert wall_loss(x).item() == pytest.approx(-2 / 15)
    assert zelda_penalty(x).item() == pytest.approx(0.0)
    soft = torch.full_like(x, 1 / 6)
    assert zelda_penalty(soft).item() > 10


def test_tile_histogram_kl_is_zero_for_the_same_mix_and_grows_with_the_mismatch():
    levels = random_levels(20, 7, 9, np.random.default_rng(0))
    hist = tile_histogram(levels)
    assert hist.shape == (6,) and hist.sum() == pytest.approx(1.0) and (hist > 0).all()
    assert tile_histogram_kl(levels, levels) == 0.0
    assert tile_histogram_kl(levels[::-1], levels) == pytest.approx(0.0, abs=1e-12)  # order does not matter
    walled = levels.copy()
    walled[:, 1:-1, 1:-1][walled[:, 1:-1, 1:-1] == 1] = 0  # every empty cell a wall
    held_out = random_levels(20, 7, 9, np.random.default_rng(1))
    near, far = tile_histogram_kl(held_out, levels), tile_histogram_kl(walled, levels)
    assert 0 < near < far and np.isfinite(far)  # finite although the walled levels have no empty tile


def test_bad_levels_and_pseudo_counts_are_refused_naming_them():
    level = parse_level(GOOD)[None]
    with pytest.raises(ValueError, match=r"pseudo_count must be > 0"):
        tile_histogram_kl(level, level, pseudo_count=-1.0)
    with pytest.raises(ValueError, match=r"pseudo_count must be >= 0"):
        tile_histogram(level, pseudo_count=-0.5)
    soft = np.full(level.shape, 0.4)  # float scores, not tile indices: == WALL would count nothing
    with pytest.raises(ValueError, match=r"levels must hold tile indices, integers in \[0, 5\]"):
        wall_fraction(soft)
    with pytest.raises(ValueError, match=r"levels must hold tile indices"):
        tile_histogram_kl(soft, level)
    with pytest.raises(ValueError, match=r"reference must hold tile indices"):
        tile_histogram_kl(level, level + 6)
    with pytest.raises(ValueError, match=r"levels must be \(N, H, W\)"):
        wall_fraction(one_hot(level).argmax(-1)[0])  # one level without its batch axis
    assert wall_fraction(level.astype(float)) == pytest.approx(wall_fraction(level))  # whole floats are indices


@pytest.mark.parametrize("n", [0, -1, 1.5])
def test_random_levels_refuse_a_count_below_one(n):
    with pytest.raises(ValueError, match=r"n must be a positive integer"):
        random_levels(n, 7, 9, np.random.default_rng(0))
