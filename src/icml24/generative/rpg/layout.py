"""The split-ratio grammar of RPG's planner and the region layout it describes (Yang et al., ICML 2024, Sec. 3.2).

Grammar (the MLLM's ``Final split ratio:`` line): ``;`` separates rows. With several rows, the first number of a row
is its height and the rest are the widths of its cells (a row with one number is one full-width cell); with a single
row (no ``;``) every number is a cell width. Heights and the widths within a row are normalised by their sum.
``1;1;1`` is three stacked rows, ``1,1,1;1,1,1`` a 2 x 2 grid, ``0.5,0.5`` two columns.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

ROW_SEP = ";"
COL_SEP = ","


def _number(text: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"split ratio {where}: {text!r} is not a number; write e.g. '1,1,1;1,1,1'") from None
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"split ratio {where}: every ratio must be a finite number > 0, got {text!r}")
    return value


@dataclass(frozen=True)
class RegionLayout:
    """Rows from top to bottom, each with its cells from left to right, as fractions of the canvas.

    Attributes:
        row_heights: normalised row heights (sum 1).
        cell_widths: per row, the normalised cell widths (each row sums to 1).
    """

    row_heights: tuple[float, ...]
    cell_widths: tuple[tuple[float, ...], ...]

    @property
    def num_regions(self) -> int:
        return sum(len(row) for row in self.cell_widths)

    @property
    def shape(self) -> tuple[int, ...]:
        """Cells per row."""
        return tuple(len(row) for row in self.cell_widths)

    def boxes(self, height: int, width: int) -> list[tuple[int, int, int, int]]:
        """Integer boxes ``(top, bottom, left, right)`` of every region on a ``height x width`` grid, row-major.

        Boundaries are ``int(n * cumulative fraction)``, rounded down as the released ``cross_attention.py`` slices
        the latent (thirds of 16: 0, 5, 10, 16); neighbouring boxes share their edge and the last edge is ``n``, so
        the boxes tile the grid exactly at every resolution (a region may be empty on a very coarse grid).
        """
        if height < 1 or width < 1:
            raise ValueError(f"grid must be at least 1 x 1, got {height} x {width}")
        row_edges = _edges(self.row_heights, height)
        out = []
        for r, widths in enumerate(self.cell_widths):
            col_edges = _edges(widths, width)
            for c in range(len(widths)):
                out.append((row_edges[r], row_edges[r + 1], col_edges[c], col_edges[c + 1]))
        return out

    def masks(self, height: int, width: int) -> np.ndarray:
        """Boolean ``(num_regions, height, width)`` masks, one per region; every pixel lies in exactly one."""
        masks = np.zeros((self.num_regions, height, width), dtype=bool)
        for k, (t, b, left, right) in enumerate(self.boxes(height, width)):
            masks[k, t:b, left:right] = True
        return masks

    def to_ratio(self) -> str:
        """The split-ratio string of this layout (round-trips through ``parse_split_ratio``)."""
        if len(self.row_heights) == 1:
            return COL_SEP.join(_fmt(w) for w in self.cell_widths[0])
        rows = []
        for h, widths in zip(self.row_heights, self.cell_widths):
            rows.append(COL_SEP.join([_fmt(h)] + ([_fmt(w) for w in widths] if len(widths) > 1 else [])))
        return ROW_SEP.join(rows)


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def _edges(fractions: tuple[float, ...], n: int) -> list[int]:
    """Cell edges on ``n`` latent positions: the running sum of the normalised fractions (added one by one, as the
    official ``list_cumsum``) times ``n``, rounded down (the official ``int(latent * end)``); the last edge is ``n``
    (the official code reaches it when the sum is exactly 1 and shifts the last cell by hand otherwise)."""
    edges, total = [0], 0.0
    for fraction in fractions:
        total += fraction
        edges.append(int(n * total))
    edges[-1] = n
    return edges


def parse_split_ratio(ratio: str) -> RegionLayout:
    """Parse RPG's ``Final split ratio`` string into a ``RegionLayout`` (see the module docstring)."""
    if not isinstance(ratio, str) or not ratio.strip():
        raise ValueError("split ratio must be a non-empty string such as '1,1,1;1,1,1' or '0.5,0.5'")
    text = ratio.strip().rstrip(".")
    if ROW_SEP not in text:  # one row: only widths
        widths = [_number(x.strip(), "cell width") for x in text.split(COL_SEP)]
        return RegionLayout((1.0,), (tuple(w / sum(widths) for w in widths),))
    heights, rows = [], []
    for k, row in enumerate(text.split(ROW_SEP)):
        values = [_number(x.strip(), f"row {k}") for x in row.split(COL_SEP)]
        heights.append(values[0])  # the first number of a row is its height
        widths = values[1:] or [1.0]  # a lone height is one full-width cell
        rows.append(tuple(w / sum(widths) for w in widths))
    return RegionLayout(tuple(h / sum(heights) for h in heights), tuple(rows))


def grid_layout(rows: int, cols: int) -> RegionLayout:
    """A uniform ``rows x cols`` grid."""
    if rows < 1 or cols < 1:
        raise ValueError(f"a grid needs rows, cols >= 1, got {rows} x {cols}")
    return RegionLayout(tuple([1.0 / rows] * rows), tuple(tuple([1.0 / cols] * cols) for _ in range(rows)))


def latent_grid(num_tokens: int, height: int, width: int) -> tuple[int, int]:
    """The ``(h, w)`` feature grid of an attention layer with ``num_tokens`` queries on a ``height x width`` canvas:
    the canvas halved (rounding up) until ``h * w == num_tokens``, as UNets downsample."""
    h, w = height, width
    while h * w > num_tokens:
        h, w = -(-h // 2), -(-w // 2)
    if h * w != num_tokens:
        raise ValueError(f"{num_tokens} attention queries do not match a {height} x {width} canvas halved k times; "
                         "pass the canvas size the model was run at")
    return h, w
