"""Every claim in the verdict count is run against its null at smoke and must fail (ARCHITECTURE.md, "Nulls").

A null puts what the claim says the method beats (or nothing: an untrained model, random search, the baseline) in
the method's slot. A claim that holds for its null does not tell the method from it: it becomes a property test or a
``Regime`` measurement, never a verdict.
"""

import pytest

from icml24.core.registry import discover
from icml24.core.runner import execute, plan
from icml24.core.verdicts import aggregate, claims_of

PAPERS = discover()
CLAIMS = [claim for paper in PAPERS.values() for claim in paper.claims]
NULL_RUNS = [(exp, null) for paper in PAPERS.values() for exp in paper.experiments.values() for null in exp.nulls()]


def test_every_claim_declares_a_null():
    missing = [f"{c.experiment.key}: {c.text}" for c in CLAIMS if c.resolved_null is None]
    assert not missing, ("declare what each claim beats (Null on the @experiment or the Claim), or make it a Regime "
                         "measurement or a property test:\n" + "\n".join(missing))


@pytest.mark.slow
@pytest.mark.parametrize("exp, null", NULL_RUNS, ids=[f"{e.key}[{n.label}]" for e, n in NULL_RUNS])
def test_the_null_fails_every_claim_it_stands_against(exp, null, tmp_path):
    tasks = plan([exp], setting="smoke", grid=[null.overrides], store_folder=tmp_path)
    records = [execute(task) for task in tasks]
    for record in records:
        assert record.status == "ok", record.error
    metrics = aggregate(records, exp)
    against = [c for c in claims_of(exp) if c.resolved_null is not None and c.resolved_null.key == null.key]
    assert against
    for claim in against:  # a full-only claim's check is still applied to the null's smoke metrics
        verdict = claim.evaluate(metrics)
        assert verdict.status == "fails", (f"{claim.text!r} {verdict.status} for its null {null.label!r}: "
                                           f"{verdict.measured} {verdict.message}")
