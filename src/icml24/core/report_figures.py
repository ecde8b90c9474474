"""The report's figures: found in the store's ``runs/`` folder without following links, every seed shown."""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path

from icml24.core.store import RunRecord


@dataclass
class FigureSet:
    """One figure an experiment draws per seed (``curve.png``), with the file of each seed that has it; ``file`` and
    ``caption`` are set once the report has written what it shows."""

    name: str
    seeds: list[tuple[int, Path]] = field(default_factory=list)
    file: str = ""
    caption: str = ""


def find_figure(figure: str, store_folder: Path) -> Path | None:
    """A stored figure path as a regular file inside the store's ``runs/`` folder, or None.

    The path is rebuilt under the store's folder from its parts after the last ``runs`` (the results may have moved
    since), and no link is followed from ``runs`` down (``runs`` itself included): a crafted store row, a ``..`` or a
    symlink under the results folder cannot make the report copy another file.
    """
    parts = Path(figure).parts
    if "runs" not in parts:
        return None
    tail = parts[len(parts) - parts[::-1].index("runs"):]
    if not tail or any(part in ("", ".", "..") for part in tail):
        return None
    try:
        current = store_folder.resolve() / "runs"
        if current.is_symlink():
            return None
        for part in tail:
            current = current / part
            if current.is_symlink():
                return None
        return current if stat.S_ISREG(current.lstat().st_mode) else None
    except OSError:
        return None


def copy_regular(source: Path, target: Path) -> bool:
    """Copy ``source`` to ``target`` if it is a regular file; a link is refused at the last moment too (O_NOFOLLOW)."""
    try:
        fd = os.open(source, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False
    with os.fdopen(fd, "rb") as src:
        if not stat.S_ISREG(os.fstat(src.fileno()).st_mode):
            return False
        with open(target, "wb") as dst:
            shutil.copyfileobj(src, dst)
    return True


def seed_figures(records: list[RunRecord], store_folder: Path) -> list[FigureSet]:
    """The figures of every ``ok`` seed in ``records``, grouped by name (in the order the experiment drew them)."""
    sets: dict[str, FigureSet] = {}
    for record in sorted((r for r in records if r.status == "ok"), key=lambda r: r.seed):
        for stored in record.figures:
            path = find_figure(stored, store_folder)
            if path is not None:
                sets.setdefault(path.name, FigureSet(path.name)).seeds.append((record.seed, path))
    return list(sets.values())


def write_figure_set(figures: FigureSet, folder: Path, prefix: str, num_seeds: int) -> None:
    """Write what the report shows of ``figures`` into ``folder`` and set its ``file`` and ``caption``.

    One seed: its figure. Several: one image with a panel per seed (every seed, none averaged away), so the figure
    never shows seed 0 alone beside a claim about the mean. ``file`` stays empty when nothing could be written.
    """
    stem = Path(figures.name).stem
    seeds = [seed for seed, _ in figures.seeds]
    missing = f"; {num_seeds - len(seeds)} seed(s) drew none" if num_seeds > len(seeds) else ""
    if len(figures.seeds) == 1:
        ((seed, path),) = figures.seeds
        name = f"{prefix}-{figures.name}"
        if copy_regular(path, folder / name):
            figures.file = f"figures/{name}"
            figures.caption = f"{stem}: seed {seed}, the only seed with this figure{missing}"
        return
    name = f"{prefix}-{stem}-all-seeds.png"
    if _montage(figures.seeds, folder / name):
        figures.file = f"figures/{name}"
        figures.caption = (f"{stem}: every seed, one panel each (seeds {_seed_text(seeds)}); the claims read the mean "
                           f"over these seeds{missing}")


def _seed_text(seeds: list[int]) -> str:
    return ", ".join(map(str, seeds)) if len(seeds) <= 6 else f"{seeds[0]}, {seeds[1]}, ..., {seeds[-1]}"


def _montage(seeds: list[tuple[int, Path]], target: Path, columns: int = 4) -> bool:
    """One PNG with each seed's figure in a titled panel; False when a figure cannot be read."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.image as mpimg
    import matplotlib.pyplot as plt

    images = []
    for seed, path in seeds:
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            with os.fdopen(fd, "rb") as handle:
                images.append((seed, mpimg.imread(handle, format="png")))
        except (OSError, ValueError, SyntaxError):  # not a PNG it can read
            return False
    cols = min(columns, len(images))
    rows = -(-len(images) // cols)
    height, width = images[0][1].shape[:2]
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 3.2 * rows * height / max(width, 1) + 0.3 * rows),
                             squeeze=False)
    for ax in axes.flat:
        ax.axis("off")
    for ax, (seed, image) in zip(axes.flat, images, strict=False):
        ax.imshow(image)
        ax.set_title(f"seed {seed}", fontsize=9)
    fig.tight_layout()
    fig.savefig(target, dpi=110)
    plt.close(fig)
    return True
