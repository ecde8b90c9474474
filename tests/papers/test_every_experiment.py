"""Every registered experiment, at its smoke setting: finite floats, same seed same numbers, claims decidable.

This generalizes tests/papers/test_lowrank_bandits.py: a new paper gets it for free by declaring ``smoke={...}``.
"""

import pytest

from icml24.core.labels import parse
from icml24.core.registry import BROKEN, discover
from icml24.core.runner import execute, plan
from icml24.core.verdicts import aggregate, claims_of, judge

PAPERS = discover()


def _timing(key: str) -> bool:
    """A wall-clock key: ``seconds`` in it, or a timing ratio whose name ends in ``_time`` (``x_time``,
    ``x_time[variant=a]``, and their ``_std``)."""
    key = key.removesuffix("_std")
    return "seconds" in key or (parse(key) or (key,))[0].endswith("_time")


def _measured(metrics: dict[str, float]) -> dict[str, float]:
    """Metrics without wall-clock measurements, which no seed can fix."""
    return {k: v for k, v in metrics.items() if not _timing(k)}
EXPERIMENTS = [exp for paper in PAPERS.values() for exp in paper.experiments.values()]


def test_every_paper_module_imports():
    assert not BROKEN, BROKEN


def test_every_experiment_declares_a_smoke_setting_and_a_claim_or_regime():
    assert EXPERIMENTS
    no_smoke = [e.key for e in EXPERIMENTS if e.smoke is None]
    assert not no_smoke, f"add smoke={{...}} to the @experiment of: {', '.join(no_smoke)}"
    for exp in EXPERIMENTS:
        for setting in ("quick", "full", "smoke"):
            exp.config(setting=setting)  # every setting names real parameters and fills every one
    unread = [e.key for e in EXPERIMENTS if not claims_of(e) and not any(r.experiment is e for r in e.paper.regimes)]
    assert not unread, f"experiments no claim or regime measurement reads: {', '.join(unread)}"


@pytest.mark.slow
@pytest.mark.parametrize("exp", EXPERIMENTS, ids=[e.key for e in EXPERIMENTS])
def test_smoke_runs_are_finite_deterministic_and_decidable(exp, tmp_path):
    tasks = plan([exp], setting="smoke", store_folder=tmp_path)
    records = [execute(task) for task in tasks]
    for record in records:
        assert record.status == "ok", record.error
        assert record.metrics and all(isinstance(v, float) for v in record.metrics.values())
    again = execute(tasks[0])
    assert _measured(again.metrics) == _measured(records[0].metrics), "the same seed must give the same numbers"
    for claim in claims_of(exp):
        verdict = judge(exp.paper, claim, records, "smoke").verdict
        if claim.setting == "full":  # judged on full runs only; its check must still decide on these metrics
            assert verdict.status == "not run" and "--full" in verdict.message
            verdict = claim.evaluate(aggregate(records, exp))
        assert verdict.status in ("holds", "fails"), f"{claim.text}: {verdict.status}: {verdict.message}"
    summary = aggregate(records, exp)
    for regime in (r for r in exp.paper.regimes if r.experiment is exp):  # shown beside the verdicts: measured
        missing = [k for k in regime.metrics if k not in summary]
        assert not missing, f"regime {regime.text!r} reads metrics the experiment does not return: {missing}"


def test_deviations_are_one_sentence_each():
    """Measurement stories belong in the experiment docstring (ARCHITECTURE.md)."""
    import re

    sentence_break = re.compile(r"(?<!\bal)(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)[.!?]\s+[A-Z]")
    long = [f"{slug}: {d[:80]}..." for slug, paper in PAPERS.items() for d in paper.deviations
            if sentence_break.search(d)]
    assert not long, "split or shorten:\n" + "\n".join(long)
