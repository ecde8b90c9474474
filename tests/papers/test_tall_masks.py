import math

import pytest
import torch

from icml24.core import Context
from icml24.papers import tall_masks as paper

TEXT = {"task_counts": [2, 3], "size": "tiny", "steps": 6, "lr": 3e-3, "num_train": 24, "max_length": 12}
SWEEP = {"lrs": [1e-3, 3e-3], "steps": [2, 6], "size": "tiny", "num_train": 24, "max_length": 12}
DIGITS = {"task_counts": [2, 3], "hidden": 16, "depth": 2, "pretrain_epochs": 1, "finetune_steps": 5}
LARGE = {"task_counts": [2, 3], "hidden": 16, "pretrain_epochs": 1, "finetune_epochs": 1}
METHODS = ("zeroshot", "ta", "ties", "tall_ta", "tall_ties", "consensus_ta", "consensus_ties")
REGIME = ("tau_rel_norm", "tau_mean_abs_cos", "tau_energy_top1", "tau_kurtosis", "zeroshot_acc", "individual_acc")


def _finite(metrics):
    return metrics and all(isinstance(v, float) and math.isfinite(v) for v in metrics.values())


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="module")
def text_metrics(tmp_path_factory, cache):
    return paper.text_merging(Context(seed=0, out_dir=tmp_path_factory.mktemp("tm"), cache_dir=cache), **TEXT)


def test_text_merging_reports_every_method_per_count_and_unprefixed_for_the_largest(text_metrics):
    assert _finite(text_metrics) and set(REGIME) <= set(text_metrics)
    for method in METHODS:
        assert f"t2_{method}_norm_acc" in text_metrics
        assert text_metrics[f"t3_{method}_norm_acc"] == text_metrics[f"{method}_norm_acc"]
    assert text_metrics["num_tasks"] == 3.0 and not any("seconds" in k for k in text_metrics)
    assert sum(text_metrics[f"{k}_frac"] for k in ("catastrophic", "selfish", "general")) == pytest.approx(1.0)
    # theta_0 and tau_MTL in float32 plus one bit per weight and task: about (64 + T) / (32 T) of T checkpoints
    assert text_metrics["storage_ratio"] == pytest.approx((64 + 3) / (32 * 3), rel=1e-4)
    assert text_metrics["individual_acc"] > 0 and text_metrics["tau_rel_norm"] > 0


def test_fine_tunings_are_cached_per_task_and_seed(text_metrics, cache, tmp_path, monkeypatch):
    assert len(list(cache.glob("text-finetune-*.pt"))) == 3
    calls = []
    original = paper.TextMergingSetting.finetune
    monkeypatch.setattr(paper.TextMergingSetting, "finetune", lambda *a, **k: calls.append(1) or original(*a, **k))
    again = paper.text_merging(Context(seed=0, out_dir=tmp_path, cache_dir=cache), **TEXT)
    assert calls == [] and again == text_metrics  # loaded, not fine-tuned again: the same numbers
    other = paper.text_merging(Context(seed=1, out_dir=tmp_path, cache_dir=cache), **TEXT)
    assert len(calls) == 3 and other["tau_rel_norm"] != text_metrics["tau_rel_norm"]  # a new seed fine-tunes anew


def test_the_nulls_fill_the_method_slots(tmp_path, cache, text_metrics):
    ctx = lambda: Context(seed=0, out_dir=tmp_path, cache_dir=cache)  # noqa: E731
    none = paper.text_merging(ctx(), **TEXT, masks="none")
    assert none["tall_ta_norm_acc"] == none["ta_norm_acc"] == text_metrics["ta_norm_acc"]
    assert none["tall_ta_density"] == 1.0 and none["catastrophic_frac"] == 0.0 == none["selfish_frac_growth"]
    rand = paper.text_merging(ctx(), **TEXT, masks="random")
    assert rand["tall_ta_density"] == text_metrics["tall_ta_density"]  # same count per task, random places
    empty = paper.text_merging(ctx(), **TEXT, consensus_k=99)
    assert empty["consensus_ta_norm_acc"] == empty["zeroshot_norm_acc"] == empty["consensus_ties_norm_acc"]
    with pytest.raises(ValueError, match="masks"):
        paper.text_merging(ctx(), **TEXT, masks="bogus")
    with pytest.raises(ValueError, match="task counts"):
        paper.text_merging(ctx(), **{**TEXT, "task_counts": [2, 99]})


def test_the_sweep_chooses_on_validation_only_and_its_null_takes_no_step(tmp_path, cache):
    m = paper.text_regime_sweep(Context(seed=0, out_dir=tmp_path, cache_dir=cache), **SWEEP, tolerance=1.0)
    assert _finite(m) and not any("test" in k or "norm_acc" in k for k in m)
    smallest = min(m[f"lr{i}_s{s}_tau_rel_norm"] for i in (0, 1) for s in (2, 6))
    assert m["chosen_tau_rel_norm"] == smallest and (m["chosen_lr"], m["chosen_steps"]) == (1e-3, 2.0)
    best = paper.text_regime_sweep(Context(seed=0, out_dir=tmp_path, cache_dir=cache), **SWEEP)  # default: the best
    accs = {(lr, s): best[f"lr{i}_s{s}_val_acc"] for i, lr in enumerate(SWEEP["lrs"]) for s in SWEEP["steps"]}
    assert best["chosen_val_acc"] == best["best_val_acc"] == max(accs.values())
    assert accs[(best["chosen_lr"], int(best["chosen_steps"]))] == best["best_val_acc"]
    tag = f"lr{SWEEP['lrs'].index(best['chosen_lr'])}_s{int(best['chosen_steps'])}_"
    assert best["chosen_min_gain"] == best[tag + "min_gain"] <= best[tag + "val_acc"] - best["zeroshot_val_acc"]
    null = paper.text_regime_sweep(Context(seed=0, out_dir=tmp_path, cache_dir=cache), **SWEEP, finetune=False)
    assert null["chosen_val_acc"] == null["zeroshot_val_acc"] and paper.CLAIMS[4].evaluate(null).status == "fails"
    with pytest.raises(ValueError, match="lrs"):
        paper.text_regime_sweep(Context(seed=0), lrs=[-1.0])


def test_digit_findings_run_and_never_touch_the_global_torch_rng(tmp_path, cache):
    ctx = Context(seed=3, out_dir=tmp_path, cache_dir=cache)  # a Context seeds the global generators when made
    before = torch.random.get_rng_state()
    broad = paper.merging(ctx, **DIGITS)
    large = paper.merging_large_vectors(ctx, **LARGE)
    assert torch.equal(torch.random.get_rng_state(), before)
    for m in (broad, large):
        assert _finite(m) and set(REGIME) <= set(m) and "t3_consensus_ta_norm_acc" in m and m["num_tasks"] == 3
    assert paper.merging(Context(seed=3, out_dir=tmp_path, cache_dir=cache), **DIGITS) == broad
    with pytest.raises(ValueError, match="counts"):
        paper.merging_large_vectors(Context(seed=0), task_counts=[1])


def test_experiments_compute_one_seed_with_typed_list_parameters():
    for exp in paper.PAPER.experiments.values():  # the MiniLM runs take the run's share of the cores, the MLPs one
        assert "seeds" not in exp.parameters() and exp.threads == (0 if exp.name.startswith("text_") else 1)
        assert exp.seeds["smoke"] == 1 and exp.seeds["quick"] >= 1
        exp.config(setting="smoke")
    assert paper.text_merging.parameters()["task_counts"] == list[int]
    assert paper.text_regime_sweep.parameters()["lrs"] == list[float]
    assert max(paper.text_merging.quick["task_counts"]) == 8 and max(paper.text_merging.full["task_counts"]) == 14


# ---- every claim can fail: a plausible bad metric dict gives `fails`, a good one `holds` -------------------------

GOOD = {
    "tall_ta_norm_acc": 0.995, "tall_ties_norm_acc": 0.992, "ta_norm_acc": 0.80, "ties_norm_acc": 0.82,
    "consensus_ta_norm_acc": 0.83, "consensus_ties_norm_acc": 0.84, "storage_ratio": 0.28,
    "selfish_frac_growth": 0.05, "selfish_frac_min_step": 0.05, "catastrophic_frac_growth": 0.02,
    "catastrophic_frac_min_step": 0.02, "chosen_val_acc": 0.90, "zeroshot_val_acc": 0.60,
}
BAD = [  # (claim index, metrics that break it)
    (0, {"tall_ta_norm_acc": 0.95}), (0, {"tall_ties_norm_acc": 0.985}),
    (0, {"ta_norm_acc": 0.995}),  # the merge alone already recovers the tasks: the masks add nothing
    (1, {"storage_ratio": 0.5}), (1, {"tall_ta_norm_acc": 0.98}),
    (2, {"consensus_ta_norm_acc": 0.79}), (2, {"consensus_ties_norm_acc": 0.81}),
    (3, {"catastrophic_frac_growth": 0.0}), (3, {"selfish_frac_min_step": -0.01}),
    (4, {"chosen_val_acc": 0.62}),
    (5, {"tall_ta_norm_acc": 0.90}), (6, {"tall_ties_norm_acc": 0.70}),
]


def test_every_claim_holds_on_good_metrics():
    assert len(paper.CLAIMS) == 7
    for claim in paper.CLAIMS:
        assert claim.evaluate(GOOD).status == "holds", claim.text


@pytest.mark.parametrize("index,bad", BAD)
def test_every_claim_can_fail(index, bad):
    assert paper.CLAIMS[index].evaluate({**GOOD, **bad}).status == "fails"


def test_every_claim_is_covered_by_a_failing_case():
    assert {index for index, _ in BAD} == set(range(len(paper.CLAIMS)))
