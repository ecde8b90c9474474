"""Sweeps in the report: every stored configuration of an experiment besides its canonical quick/full one."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from icml24._extras import require_module
from icml24.core.registry import Experiment
from icml24.core.store import RunRecord, Store, config_hash
from icml24.core.verdicts import ClaimResult, claims_of, judge
from icml24.core.versioning import code_version


@dataclass
class SweepPoint:
    """One non-canonical configuration: what differs from the quick setting, its runs and claim verdicts."""

    changed: dict[str, Any]
    records: list[RunRecord]
    claims: list[ClaimResult]


def sweep_points(store: Store, exp: Experiment) -> list[SweepPoint]:
    """Configurations of ``exp`` stored at the current code version other than its quick and full settings (and
    their nulls' configurations, shown beside the claims instead)."""
    canonical = {config_hash(exp.config(full=False)), config_hash(exp.config(full=True))}
    canonical |= {config_hash(exp.null_config(null, full=full)) for null in exp.nulls() for full in (False, True)}
    base = exp.config(full=False)
    groups: dict[tuple[str, str], list[RunRecord]] = {}
    for record in store.records(exp.paper.slug, exp.name, code_version=code_version(exp)):
        key = config_hash(record.config)
        if key not in canonical:  # one point per configuration and setting (a quick and a full sweep stay apart)
            groups.setdefault((key, record.mode), []).append(record)
    points = []
    for records in groups.values():
        config = records[0].config
        changed = {k: v for k, v in config.items() if base.get(k) != v}
        claims = [judge(exp.paper, claim, records, records[0].mode) for claim in claims_of(exp)]
        points.append(SweepPoint(changed, records, claims))
    return sorted(points, key=lambda p: sorted((k, str(v)) for k, v in p.changed.items()))


def swept_axis(points: list[SweepPoint]) -> str | None:
    """The one numeric parameter a sweep varies (for a plot), or None."""
    names = {k for p in points for k in p.changed}
    if len(points) < 2 or len(names) != 1:
        return None
    (name,) = names
    values = [p.changed.get(name) for p in points]
    return name if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values) else None


def plot_sweep(points: list[SweepPoint], axis: str, path: Path) -> Path | None:
    """Each measured metric the claims read, against the swept parameter (a point per configuration)."""
    require_module("matplotlib", "the report's sweep figure")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series: dict[str, list[tuple[float, float]]] = {}
    for point in points:
        for result in point.claims:
            for key, value in result.verdict.measured.items():
                series.setdefault(key, []).append((float(point.changed[axis]), float(value)))
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(5, 3.2))
    for key, xy in sorted(series.items()):
        xy = sorted(set(xy))
        ax.plot([x for x, _ in xy], [y for _, y in xy], marker="o", label=key)
    ax.set_xlabel(axis)
    ax.set_ylabel("measured")
    ax.legend(fontsize=7)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path
