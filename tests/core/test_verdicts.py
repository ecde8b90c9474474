"""Verdicts: means over seeds, across-seed summaries, partial errors, not run."""

from pathlib import Path

from icml24.core import Claim, Paper, experiment
from icml24.core.runner import plan, run_tasks
from icml24.core.store import RunRecord, Store
from icml24.core.verdicts import aggregate, claims_for_tasks, evaluate_paper, judge

ROOT = Path(__file__).resolve().parents[2]


def test_aggregate_means_and_std():
    records = [RunRecord("p", "e", {}, s, "v", "quick", "ok", {"m": float(s)}) for s in (1, 2, 3)]
    summary = aggregate(records)
    assert summary["m"] == 2.0 and summary["m_std"] == 1.0 and summary["num_seeds"] == 3.0


def test_summarize_reads_every_seed(toy, tmp_path):
    store = Store(tmp_path / "s.sqlite")
    tasks = plan([toy.coin], store_folder=tmp_path)
    run_tasks(tasks, store)
    (result,) = claims_for_tasks(store, tasks, {"toy": toy.PAPER})
    assert result.verdict.status == "holds" and result.num_seeds == 3
    summary = aggregate(result.records, toy.coin)
    heads = [r.metrics["heads"] for r in sorted(result.records, key=lambda r: r.seed)]
    assert summary["heads_fraction"] == sum(heads) / 3


def _record(seed, status="ok", metrics=None):
    return RunRecord("toy", "coin", {}, seed, "v", "quick", status, metrics or {"heads": 1.0},
                     error="" if status == "ok" else "RuntimeError: boom")


def test_partly_errored_seeds_give_error_and_no_rows_give_not_run(toy):
    claim = toy.PAPER.claims[-1]
    verdict = judge(toy.PAPER, claim, [_record(0), _record(1, "error")], "quick").verdict
    assert verdict.status == "error" and "1 of 2 seed(s) failed" in verdict.message
    assert judge(toy.PAPER, claim, [], "quick").verdict.status == "not run"
    assert judge(toy.PAPER, claim, [_record(0), _record(1)], "quick").verdict.status == "holds"


def test_a_broken_summary_is_an_error_verdict():
    paper = Paper(slug="tmp-broken-summary", title="t")

    @experiment(paper, summarize=lambda per_seed: {"x": 1 / 0})
    def e(ctx) -> dict[str, float]:
        return {"a": 1.0}

    claim = Claim("x", experiment=e, check=lambda m: m["x"] > 0)
    record = RunRecord("tmp-broken-summary", "e", {}, 0, "v", "quick", "ok", {"a": 1.0})
    verdict = judge(paper, claim, [record], "quick").verdict
    assert verdict.status == "error" and "summarize failed" in verdict.message


def test_never_run_claims_are_not_run_in_list(toy, tmp_path):
    store = Store(tmp_path / "s.sqlite")
    assert {r.verdict.status for r in evaluate_paper(toy.PAPER, store)} == {"not run"}


def test_a_full_only_claim_is_not_run_on_quick_runs(toy, tmp_path):
    from icml24.core import Claim
    from icml24.core.runner import execute, plan
    from icml24.core.verdicts import judge

    claim = Claim("needs the paper-scale run", experiment=toy.square, check=lambda m: m["value"] > 0, setting="full")
    toy.PAPER.claims.remove(claim)  # keep the toy paper's claim list as the other tests expect it
    records = [execute(t) for t in plan([toy.square], [0], store_folder=tmp_path)]
    quick = judge(toy.PAPER, claim, records, "quick").verdict
    assert quick.status == "not run" and "icml24 run toy:square --full" in quick.message
    assert judge(toy.PAPER, claim, records, "full").verdict.status == "holds"
