"""What the report opens with: one row per paper (claims held of total, the nulls' verdicts) and a verdict matrix."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from icml24._extras import require_module
from icml24.core.registry import Paper
from icml24.core.verdicts import ClaimResult

VERDICTS = ("holds", "fails", "error", "not run")
# parity fixtures (numbers of the official code on fixed inputs) live with the tests of a source checkout
PARITY_FOLDER = Path(__file__).resolve().parents[3] / "tests" / "parity"
# papers with no official code to record a fixture from, and why (from the paper notes); the report says so
NO_OFFICIAL_CODE = {
    "est": "OpenDFM/EST, the repository the abstract names, holds only a 'Coming Soon' README, and no third-party "
           "implementation was found",
    "ridgeless": "the paper is mainly theory and links no code, and no implementation of it was found",
    "genco": "the authors link only the OpenReview page, a reviewer noted that none came with the paper, and the "
             "closest repository (milp_constrained_gan) is a precursor, not GenCO",
}
_CELL_COLORS = {"holds": "#1a7f37", "fails": "#cf222e", "error": "#d4a72c", "not run": "#d0d7de"}


@dataclass
class PaperSummary:
    """One paper at a glance: how many claims hold, and how many nulls fail as they should."""

    paper: Paper
    counts: dict[str, int]  # verdict -> number of claims
    nulls_failing: int  # stored nulls that fail (as they should)
    nulls_holding: int  # stored nulls that hold: those verdicts do not tell the method from its null
    nulls_stored: int

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def claims_text(self) -> str:
        rest = ", ".join(f"{n} {v}" for v, n in self.counts.items() if n and v != "holds")
        return f"{self.counts['holds']} of {self.total} hold" + (f" ({rest})" if rest else "")

    def nulls_text(self) -> str:
        if not self.nulls_stored:
            return "not run"
        held = f", {self.nulls_holding} hold" if self.nulls_holding else ""
        return f"{self.nulls_failing} of {self.nulls_stored} fail{held}"


def parity_text(slug: str, folder: Path | None = None) -> str:
    """The paper's parity fixture in a few words: official repository, commit, cases and tolerances; without one,
    why not (``NO_OFFICIAL_CODE``) or "no fixture"."""
    path = (folder or PARITY_FOLDER) / f"{slug}.json"
    if not path.exists():
        if slug in NO_OFFICIAL_CODE:
            return f"no official code: {NO_OFFICIAL_CODE[slug]}"
        return "no fixture" if (folder or PARITY_FOLDER).exists() else "fixtures ship with the source checkout"
    try:
        data = json.loads(path.read_text())
        source, cases = data["source"], data["cases"]
        worst = max(float(t) for c in cases for t in _entries(c["tolerance"]))
        per_entry = any(isinstance(c["tolerance"], (list, dict)) for c in cases)
    except (ValueError, KeyError, TypeError):
        return "unreadable fixture"
    kind = " (third-party)" if source.get("third_party") else ""
    reference = sum(1 for c in cases if "reference" in c)  # cases against a reference derived from the paper
    against = (f"{len(cases) - reference} case(s) vs {source['repository']}@{str(source['commit'])[:7]}{kind}"
               + (f" and {reference} vs a reference from the paper's definition" if reference else ""))
    return f"{against}, tolerance ≤ {worst:g}" + (" (per entry)" if per_entry else "")


def _entries(tolerance) -> list:
    """A case's tolerances: one number, or one per entry in lists and dicts shaped like the values."""
    if isinstance(tolerance, dict):
        return [t for item in tolerance.values() for t in _entries(item)]
    if isinstance(tolerance, list):
        return [t for item in tolerance for t in _entries(item)]
    return [tolerance]


def summarize(paper: Paper, results: list[ClaimResult]) -> PaperSummary:
    counts = dict.fromkeys(VERDICTS, 0)
    for r in results:
        counts[r.verdict.status] += 1
    nulls = [r.null.verdict.status for r in results if r.null is not None]
    return PaperSummary(paper, counts, nulls.count("fails"), nulls.count("holds"), len(nulls))


def held_at(results: list[ClaimResult], mode: str) -> tuple[int, int]:
    """(claims holding, claims judged) at ``mode`` ("quick" or "full"): judged means holds or fails."""
    judged = [r for r in results if r.mode.startswith(mode) and r.verdict.status in ("holds", "fails")]
    return sum(r.verdict.status == "holds" for r in judged), len(judged)


def evaluate_per_setting(paper, store) -> dict[str, list[ClaimResult]]:
    """The claims of ``paper`` judged at quick and at full, each on its own setting's runs (with ``full=None`` a paper
    with a full run would hide its quick verdicts, and its quick instance families, behind the full ones)."""
    from icml24.core.verdicts import evaluate_paper

    return {mode: evaluate_paper(paper, store, full=mode == "full") for mode in ("quick", "full")}


def plot_verdict_matrix(rows: list[tuple[str, list[ClaimResult]]], path: Path) -> Path | None:
    """Papers as rows, their claims as cells coloured by verdict (a dot where the claim's null also holds)."""
    if not rows or not any(results for _, results in rows):
        return None
    require_module("matplotlib", "the report's verdict figure")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_rgb
    from matplotlib.patches import Patch

    width = max(len(results) for _, results in rows)
    image = [[to_rgb("#ffffff")] * width for _ in rows]
    fig, ax = plt.subplots(figsize=(1.6 + 0.38 * width, 0.8 + 0.32 * len(rows)))
    for i, (_, results) in enumerate(rows):
        for j, r in enumerate(results):
            image[i][j] = to_rgb(_CELL_COLORS[r.verdict.status])
            if r.null is not None and r.null.verdict.status == "holds":
                ax.plot(j, i, "o", color="white", markersize=4)
    ax.imshow(image, aspect="auto", interpolation="nearest")
    ax.set_yticks(range(len(rows)), [slug for slug, _ in rows], fontsize=8)
    ax.set_xticks(range(width), [str(j + 1) for j in range(width)], fontsize=7)
    ax.set_xlabel("claim")
    ax.set_xticks([x - 0.5 for x in range(1, width)], minor=True)
    ax.set_yticks([y - 0.5 for y in range(1, len(rows))], minor=True)
    ax.grid(which="minor", color="white", linewidth=1.5)
    ax.tick_params(which="minor", length=0)
    handles = [Patch(color=_CELL_COLORS[v], label=v) for v in VERDICTS]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=7, frameon=False,
              title="verdict (dot: null also holds)", title_fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
