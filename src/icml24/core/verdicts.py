"""Claim verdicts computed from stored runs: metrics averaged over seeds, then each claim's check."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from icml24.core.registry import Claim, Experiment, Paper, Verdict
from icml24.core.runner import code_version
from icml24.core.store import RunRecord, Store


@dataclass
class ClaimResult:
    """A claim, its verdict, and the runs it rests on."""

    paper: Paper
    claim: Claim
    verdict: Verdict
    mode: str = ""
    num_seeds: int = 0
    seconds: float = 0.0
    records: list[RunRecord] = field(default_factory=list, repr=False)

    def as_json(self) -> dict:
        return {
            "paper": self.paper.slug,
            "experiment": self.claim.experiment.name,
            "claim": self.claim.text,
            "verdict": self.verdict.status,
            "measured": self.verdict.measured,
            "message": self.verdict.message,
            "paper_value": self.claim.paper,
            "mode": self.mode,
            "seeds": self.num_seeds,
            "seconds": round(self.seconds, 3),
        }


def aggregate(records: list[RunRecord]) -> dict[str, float]:
    """Mean of each metric over runs, ``<key>_std`` beside it (unless the run reported one), and ``num_seeds``."""
    if not records:
        return {}
    keys = sorted(set().union(*(r.metrics for r in records)))
    summary: dict[str, float] = {}
    for key in keys:
        values = np.array([r.metrics[key] for r in records if key in r.metrics], dtype=float)
        summary[key] = float(values.mean())
        if f"{key}_std" not in keys and not key.endswith("_std"):
            summary[f"{key}_std"] = float(values.std(ddof=1)) if len(values) > 1 else 0.0
    summary["num_seeds"] = float(len(records))
    return summary


def canonical_records(store: Store, exp: Experiment, full: bool | None = None) -> tuple[str, list[RunRecord]]:
    """Runs of ``exp`` at its own quick/full setting and the current code version.

    With ``full=None`` the full setting is used when it has stored runs, else the quick one.
    Returns (mode, records) with successful runs first-class: errors only when no run succeeded.
    """
    version = code_version(exp)
    modes = [True, False] if full is None else [full]
    for is_full in modes:
        config = exp.config(full=is_full)
        records = store.records(exp.paper.slug, exp.name, config=config, code_version=version)
        if records:
            return ("full" if is_full else "quick"), records
    return "", []


def judge(paper: Paper, claim: Claim, records: list[RunRecord], mode: str) -> ClaimResult:
    """The verdict of ``claim`` on ``records`` (successful runs; errors only when none succeeded)."""
    ok = [r for r in records if r.status == "ok"]
    if ok:
        verdict = claim.evaluate(aggregate(ok))
    elif records:
        first_line = records[-1].error.splitlines()[0] if records[-1].error else "unknown error"
        verdict = Verdict("error", {}, f"the experiment failed: {first_line}")
    else:
        verdict = Verdict("error", {}, "not run yet")
    used = ok or records
    return ClaimResult(paper, claim, verdict, mode, len(ok), sum(r.seconds for r in used), used)


def evaluate_paper(paper: Paper, store: Store, full: bool | None = None) -> list[ClaimResult]:
    """The verdict of every claim of ``paper`` from what ``store`` holds at the canonical settings."""
    results = []
    for claim in paper.claims:
        mode, records = canonical_records(store, claim.experiment, full)
        results.append(judge(paper, claim, records, mode))
    return results


def claims_of(exp: Experiment) -> list[Claim]:
    """The claims that rest on ``exp``."""
    return [c for c in exp.paper.claims if c.experiment is exp]
