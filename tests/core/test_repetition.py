"""Repetition is the runner's: seeds declared per setting, one task per seed, summaries across seeds."""

import pytest

from icml24.core import Claim, Context, Paper, experiment
from icml24.core.runner import execute, plan, run_tasks
from icml24.core.store import RunRecord, Store
from icml24.core.verdicts import aggregate, claims_for_tasks, evaluate_paper, judge


def test_settings_declare_seeds_and_the_runner_plans_one_task_each(toy, tmp_path):
    assert toy.coin.default_seeds() == [0, 1, 2]
    assert toy.coin.default_seeds(setting="full") == [0, 1, 2]  # full inherits quick's count
    assert toy.coin.default_seeds(setting="smoke") == [0, 1]
    assert toy.square.default_seeds(full=True) == [0, 1]
    assert [t.seed for t in plan([toy.coin], store_folder=tmp_path)] == [0, 1, 2]
    assert [t.seed for t in plan([toy.coin], [4, 9], store_folder=tmp_path)] == [4, 9]  # --seeds overrides
    assert "seeds" not in toy.coin.config()


def test_an_experiment_may_not_loop_over_its_own_seeds():
    paper = Paper(slug="tmp-own-seeds", title="t")
    with pytest.raises(ValueError, match="repetition is the runner's job"):
        @experiment(paper, quick={"seeds": 3})
        def looping(ctx, seeds: int = 3) -> dict[str, float]:
            return {}
    with pytest.raises(ValueError, match="positive int"):
        @experiment(paper, quick={"seeds": 0})
        def zero(ctx) -> dict[str, float]:
            return {}


def test_summarize_reads_every_seed(toy, tmp_path):
    store = Store(tmp_path / "s.sqlite")
    tasks = plan([toy.coin], store_folder=tmp_path)
    run_tasks(tasks, store)
    (result,) = claims_for_tasks(store, tasks, {"toy": toy.PAPER})
    assert result.verdict.status == "holds" and result.num_seeds == 3
    summary = aggregate(result.records, toy.coin)
    heads = [r.metrics["heads"] for r in sorted(result.records, key=lambda r: r.seed)]
    assert summary["heads_fraction"] == sum(heads) / 3


def test_threads_are_set_by_the_runner(toy, tmp_path):
    (task,) = plan([toy.coin], [0], store_folder=tmp_path)
    assert execute(task).metrics["threads"] == 1.0


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


def test_seed_keys_give_independent_reproducible_streams():
    ctx = Context(seed=3)
    assert ctx.rng() is ctx.rng()
    assert ctx.rng("a", 1).random() == Context(seed=3).rng("a", 1).random()
    assert ctx.rng("a", 1).random() != ctx.rng("a", 2).random()
    assert ctx.child_seed("cora") == Context(seed=3).child_seed("cora") != ctx.child_seed("citeseer")
    assert ctx.child_seed(5) == Context(seed=3).child_seed(5) != Context(seed=4).child_seed(5)
    with pytest.raises(TypeError, match="ints or strings"):
        ctx.child_seed(1.5)
