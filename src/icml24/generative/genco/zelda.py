"""Zelda-like levels: the playability MILP, an independent BFS checker and a procedural level generator.

A level is a ``height x width`` grid of tiles (``TILES``: wall, empty, enemy, player, key, door). Playable means
(the constraints of the Zelda MILP of Zhang et al. (2020), used as GenCO's game-level task):

- walls on the whole border; exactly one player, one key and one door;
- enemies <= 0.6 x empty tiles;
- the key and the door are reachable from the player through non-wall tiles (4-neighbour moves).

``zelda_milp`` writes these as a MILP over one-hot tile indicators ``x[cell, tile]`` plus two unit flows (player
to key, player to door) that may only use non-wall cells; its argmax ``c^T x`` is the closest playable level to a
generator's scores. ``is_playable`` checks the same rules by breadth-first search, sharing no code with the MILP.
"""

from __future__ import annotations

from collections import deque

import numpy as np
from scipy import sparse

from icml24._random import check_random_state
from icml24._validation import check_positive, check_positive_int

from .solvers import MILPSolver

TILES = ("w", ".", "1", "A", "+", "g")  # wall, empty, enemy, player, key, door
WALL, EMPTY, ENEMY, PLAYER, KEY, DOOR = range(len(TILES))
ENEMY_RATIO = 0.6


def _interior_edges(height: int, width: int) -> np.ndarray:
    """Directed 4-neighbour edges between interior (non-border) cells, as (source, target) cell ids."""
    edges = []
    for r in range(1, height - 1):
        for c in range(1, width - 1):
            for dr, dc in ((0, 1), (1, 0), (0, -1), (-1, 0)):
                r2, c2 = r + dr, c + dc
                if 1 <= r2 < height - 1 and 1 <= c2 < width - 1:
                    edges.append((r * width + c, r2 * width + c2))
    return np.asarray(edges, dtype=int).reshape(-1, 2)


def zelda_milp(height: int = 9, width: int = 13, time_limit: float = 30.0) -> MILPSolver:
    """The playability polytope of ``height x width`` levels; ``solve(c)`` takes ``c`` of shape (H*W*len(TILES),)
    (cell-major: index ``cell * 6 + tile``) and returns the one-hot playable level maximizing ``c^T x``."""
    if height < 3 or width < 4:
        raise ValueError(f"a level needs an interior with room for player, key and door: got {height} x {width}")
    t, cells = len(TILES), height * width
    n_x = cells * t
    edges = _interior_edges(height, width)
    m = len(edges)
    n_vars = n_x + 2 * m  # tile indicators, then flow to the key, then flow to the door

    def var(cell, tile):
        return cell * t + tile

    eq_rows, eq_cols, eq_vals, b_eq = [], [], [], []
    ub_rows, ub_cols, ub_vals, b_ub = [], [], [], []

    def add(rows, cols, vals, rhs, row_cols, row_vals, value):
        row = len(rhs)
        rows += [row] * len(row_cols)
        cols += list(row_cols)
        vals += list(row_vals)
        rhs.append(value)

    for cell in range(cells):  # one tile per cell
        add(eq_rows, eq_cols, eq_vals, b_eq, [var(cell, k) for k in range(t)], [1.0] * t, 1.0)
    for tile in (PLAYER, KEY, DOOR):  # exactly one player, key and door
        add(eq_rows, eq_cols, eq_vals, b_eq, [var(c, tile) for c in range(cells)], [1.0] * cells, 1.0)
    # enemies <= 0.6 * empty
    add(ub_rows, ub_cols, ub_vals, b_ub, [var(c, ENEMY) for c in range(cells)] + [var(c, EMPTY) for c in range(cells)],
        [1.0] * cells + [-ENEMY_RATIO] * cells, 0.0)
    interior = [r * width + c for r in range(1, height - 1) for c in range(1, width - 1)]
    for k, target in enumerate((KEY, DOOR)):  # unit flow player -> target: out - in = player - target
        base = n_x + k * m
        for cell in interior:
            cols = [base + e for e in np.flatnonzero(edges[:, 0] == cell)] + \
                   [base + e for e in np.flatnonzero(edges[:, 1] == cell)]
            vals = [1.0] * int((edges[:, 0] == cell).sum()) + [-1.0] * int((edges[:, 1] == cell).sum())
            add(eq_rows, eq_cols, eq_vals, b_eq, cols + [var(cell, PLAYER), var(cell, target)], vals + [-1.0, 1.0],
                0.0)
        for e, (u, v) in enumerate(edges):  # flow only between non-wall cells
            for cell in (u, v):
                add(ub_rows, ub_cols, ub_vals, b_ub, [base + e, var(cell, WALL)], [1.0, 1.0], 1.0)
    A_eq = sparse.coo_array((eq_vals, (eq_rows, eq_cols)), shape=(len(b_eq), n_vars))
    A_ub = sparse.coo_array((ub_vals, (ub_rows, ub_cols)), shape=(len(b_ub), n_vars))
    lb, ub = np.zeros(n_vars), np.ones(n_vars)
    border = [r * width + c for r in range(height) for c in range(width)
              if r in (0, height - 1) or c in (0, width - 1)]
    lb[[var(c, WALL) for c in border]] = 1.0  # walls on the border
    integrality = np.r_[np.ones(n_x), np.zeros(2 * m)]
    return MILPSolver(n_x, n_vars, A_ub=A_ub, b_ub=np.asarray(b_ub), A_eq=A_eq, b_eq=np.asarray(b_eq), lb=lb, ub=ub,
                      integrality=integrality, sense="max", time_limit=time_limit)


def is_playable(level: np.ndarray) -> bool:
    """The playability rules checked directly on a tile-index grid (H, W) by breadth-first search."""
    level = np.asarray(level)
    if level.ndim != 2:
        raise ValueError(f"a level is a 2-D grid of tile indices, got shape {level.shape}")
    border = np.r_[level[0], level[-1], level[:, 0], level[:, -1]]
    if (border != WALL).any():
        return False
    if any(int((level == tile).sum()) != 1 for tile in (PLAYER, KEY, DOOR)):
        return False
    if (level == ENEMY).sum() > ENEMY_RATIO * (level == EMPTY).sum() + 1e-9:
        return False
    start = tuple(np.argwhere(level == PLAYER)[0])
    seen, queue = {start}, deque([start])
    while queue:
        r, c = queue.popleft()
        for dr, dc in ((0, 1), (1, 0), (0, -1), (-1, 0)):
            nxt = (r + dr, c + dc)
            if 0 <= nxt[0] < level.shape[0] and 0 <= nxt[1] < level.shape[1] and nxt not in seen \
                    and level[nxt] != WALL:
                seen.add(nxt)
                queue.append(nxt)
    return all(tuple(np.argwhere(level == tile)[0]) in seen for tile in (KEY, DOOR))


def parse_level(rows: list[str]) -> np.ndarray:
    """A level from text rows of tile characters (``TILES``), e.g. ``["wwww", "wA+w", ...]``."""
    lookup = {ch: i for i, ch in enumerate(TILES)}
    if len({len(r) for r in rows}) != 1:
        raise ValueError("every row of a level must have the same length")
    try:
        return np.array([[lookup[ch] for ch in row] for row in rows], dtype=int)
    except KeyError as exc:
        raise ValueError(f"unknown tile {exc}; tiles are {''.join(TILES)}") from None


def level_text(level: np.ndarray) -> list[str]:
    return ["".join(TILES[int(t)] for t in row) for row in np.asarray(level)]


def one_hot(levels: np.ndarray) -> np.ndarray:
    """(N, H, W) tile indices to (N, H, W, len(TILES)) one-hot floats."""
    return np.eye(len(TILES))[np.asarray(levels, dtype=int)]


def random_levels(n: int, height: int = 9, width: int = 13, random_state=None,
                  wall_density: tuple[float, float] = (0.1, 0.35), max_tries: int = 10000) -> np.ndarray:
    """``n`` playable levels, procedurally: border walls, random interior walls, then player, key, door and a few
    enemies on random free cells; levels that fail ``is_playable`` are redrawn. Returns (n, H, W) tile indices."""
    check_positive_int("n", n)  # np.stack needs at least one level
    rng = check_random_state(random_state)
    out, tries = [], 0
    while len(out) < n:
        tries += 1
        if tries > max_tries:
            raise RuntimeError(f"drew {max_tries} levels and kept {len(out)}; lower wall_density or enlarge the grid")
        level = np.full((height, width), EMPTY)
        level[[0, -1], :] = WALL
        level[:, [0, -1]] = WALL
        inner = level[1:-1, 1:-1]
        inner[rng.random(inner.shape) < rng.uniform(*wall_density)] = WALL
        free = np.argwhere(inner == EMPTY)
        if len(free) < 4:
            continue
        picks = free[rng.permutation(len(free))]
        for (r, c), tile in zip(picks[:3], (PLAYER, KEY, DOOR)):
            inner[r, c] = tile
        n_enemy = rng.integers(0, max(1, len(free) // 8) + 1)
        for r, c in picks[3:3 + n_enemy]:
            inner[r, c] = ENEMY
        if is_playable(level):
            out.append(level)
    return np.stack(out)


def _tile_indices(name: str, levels) -> np.ndarray:
    """``levels`` as an int array of tile indices ``0..len(TILES) - 1``, or a ValueError naming ``name`` (soft or
    one-hot float levels, and indices outside the tile set, are refused rather than miscounted)."""
    levels = np.asarray(levels)
    whole = levels.dtype.kind in "iu" or (
        levels.dtype.kind == "f" and bool(np.all(np.isfinite(levels) & (levels % 1 == 0))))
    if not whole or (levels.size and (levels.min() < 0 or levels.max() >= len(TILES))):
        raise ValueError(f"{name} must hold tile indices, integers in [0, {len(TILES) - 1}] (dtype {levels.dtype} "
                         "given); decode soft or one-hot levels (..., T) with .argmax(-1) first")
    return levels.astype(int, copy=False)


def wall_fraction(levels: np.ndarray) -> np.ndarray:
    """The share of interior cells that are walls, per level (N, H, W) of tile indices: the design objective
    of our game-level task (more walls, a more maze-like level, still playable)."""
    levels = _tile_indices("levels", levels)
    if levels.ndim != 3 or min(levels.shape[1:]) < 3:
        raise ValueError(f"levels must be (N, H, W) tile indices with H, W >= 3 (a border around an interior), got "
                         f"shape {levels.shape}")
    return (levels[:, 1:-1, 1:-1] == WALL).mean(axis=(1, 2))


def tile_histogram(levels: np.ndarray, pseudo_count: float = 1.0) -> np.ndarray:
    """The share of each tile type over every cell of ``levels`` (N, H, W), with ``pseudo_count`` (a finite
    number >= 0) added to each tile's count (no empty bin, so a KL to it is finite)."""
    levels = _tile_indices("levels", levels)
    check_positive("pseudo_count", pseudo_count, allow_zero=True)
    counts = np.bincount(levels.ravel(), minlength=len(TILES))[: len(TILES)] + float(pseudo_count)
    return counts / counts.sum()


def tile_histogram_kl(levels: np.ndarray, reference: np.ndarray, pseudo_count: float = 1.0) -> float:
    """KL(reference || levels) of the tile histograms: how far generated ``levels`` are from the tile mix of
    ``reference`` levels (0 when the mixes match; the distribution-fit metric of the paper page). ``pseudo_count``
    must be > 0: it keeps every bin non-empty, so the KL is finite."""
    check_positive("pseudo_count", pseudo_count)
    levels, reference = _tile_indices("levels", levels), _tile_indices("reference", reference)
    p, q = tile_histogram(reference, pseudo_count), tile_histogram(levels, pseudo_count)
    return float(np.sum(p * np.log(p / q)))


def wall_loss(x):
    """Individual loss on one-hot (or soft) levels (B, H, W, T), a torch tensor: minus the interior wall share."""
    return -x[:, 1:-1, 1:-1, WALL].mean(dim=(1, 2))


def zelda_penalty(p):
    """A differentiable penalty on soft levels (B, H, W, T) for the counting constraints (border walls, one
    player/key/door, the enemy budget). Reachability has no smooth relaxation here, so the penalty omits it."""
    border = (1 - p[:, 0, :, WALL]).sum(1) + (1 - p[:, -1, :, WALL]).sum(1) \
        + (1 - p[:, 1:-1, 0, WALL]).sum(1) + (1 - p[:, 1:-1, -1, WALL]).sum(1)
    counts = sum((p[..., tile].sum(dim=(1, 2)) - 1) ** 2 for tile in (PLAYER, KEY, DOOR))
    enemies = (p[..., ENEMY].sum(dim=(1, 2)) - ENEMY_RATIO * p[..., EMPTY].sum(dim=(1, 2))).clamp(min=0)
    return border + counts + enemies
