"""Every claim declares an oracle (or says why none exists) and an instance family (or why one instance is the claim);
each oracle, run at smoke in the method's slot, makes its claims hold (ARCHITECTURE.md, "Nulls, oracles, families").

An oracle is what a perfect method would give in the method's slot (the held-out data as samples, the true graph,
the optimal policy). A claim its oracle cannot reach is a miscalibrated bar: fix the bar or the metric, never the
method.
"""

import pytest

from icml24.core import Family, NoOracle, Oracle, SingleInstance
from icml24.core.registry import discover
from icml24.core.runner import execute, plan
from icml24.core.verdicts import aggregate, claims_of

PAPERS = discover()
CLAIMS = [claim for paper in PAPERS.values() for claim in paper.claims]
ORACLE_RUNS = [(exp, oracle) for paper in PAPERS.values() for exp in paper.experiments.values()
               for oracle in exp.oracles()]
FAMILY_RUNS = [(exp, family, member) for paper in PAPERS.values() for exp in paper.experiments.values()
               for family in exp.families() for member, overrides in family.at("smoke").items() if overrides]


def test_every_claim_declares_an_oracle_or_why_none_exists():
    missing = [f"{c.experiment.key}: {c.text}" for c in CLAIMS
               if not isinstance(c.resolved_oracle, (Oracle, NoOracle))]
    assert not missing, ("declare what a perfect method gives in the method's slot (Oracle on the @experiment or the "
                         "Claim), or NoOracle('why none exists'):\n" + "\n".join(missing))


def test_every_claim_declares_its_family_or_why_one_instance_is_the_claim():
    missing = [f"{c.experiment.key}: {c.text}" for c in CLAIMS
               if not isinstance(c.resolved_family, (Family, SingleInstance))]
    assert not missing, ("declare the instances the claim speaks of (Family on the @experiment or the Claim), or "
                         "SingleInstance('why one instance is the paper's claim'):\n" + "\n".join(missing))


def test_every_family_keeps_the_experiments_own_instance_as_a_member():
    lacking = [f"{e.key}: {f.label}" for paper in PAPERS.values() for e in paper.experiments.values()
               for f in e.families() for setting in ("quick", "full") if {} not in f.at(setting).values()]
    assert not lacking, "a family keeps the fixed instance as one member ({} overrides):\n" + "\n".join(lacking)


def _smoke(exp, overrides, tmp_path):
    tasks = plan([exp], setting="smoke", grid=[overrides], store_folder=tmp_path)
    records = [execute(task) for task in tasks]
    for record in records:
        assert record.status == "ok", record.error
    return aggregate(records, exp)


# Claims whose oracle does not reach them at smoke, found by this test (#56): each is a miscalibrated bar to fix
# (the bar or the metric, never the method). The test requires them still to fail, so a fix takes its entry off.
MISCALIBRATED: dict[tuple[str, int], str] = {}  # none since the tall-masks smoke settings learn their tasks


@pytest.mark.slow
@pytest.mark.parametrize("exp, oracle", ORACLE_RUNS, ids=[f"{e.key}[{o.label}]" for e, o in ORACLE_RUNS])
def test_the_oracle_holds_every_claim_resting_on_it(exp, oracle, tmp_path):
    metrics = _smoke(exp, oracle.overrides, tmp_path)
    resting = [c for c in claims_of(exp)
               if isinstance(c.resolved_oracle, Oracle) and c.resolved_oracle.key == oracle.key]
    assert resting
    for claim in resting:  # a full-only claim's check is still applied to the oracle's smoke metrics
        verdict = claim.evaluate(metrics)
        pending = MISCALIBRATED.get((exp.key, claims_of(exp).index(claim)))
        if pending:
            assert verdict.status == "fails", f"{claim.text!r} now holds for its oracle: take it off MISCALIBRATED"
            continue
        assert verdict.status == "holds", (f"{claim.text!r} {verdict.status} for its oracle {oracle.label!r}: "
                                           f"{verdict.measured} {verdict.message}")


@pytest.mark.slow
@pytest.mark.parametrize("exp, family, member", FAMILY_RUNS,
                         ids=[f"{e.key}[{f.label}: {m}]" for e, f, m in FAMILY_RUNS])
def test_every_family_member_runs_and_is_judged(exp, family, member, tmp_path):
    metrics = _smoke(exp, family.at("smoke")[member], tmp_path)
    for claim in claims_of(exp):
        if claim.resolved_family is family:
            verdict = claim.evaluate(metrics)
            assert verdict.status in ("holds", "fails", "not run"), (f"{claim.text!r} on member {member!r}: "
                                                                     f"{verdict.status} {verdict.message}")
