import math

import pytest
import torch

from icml24.core import Context
from icml24.papers import tall_masks as paper
from icml24.papers.tall_masks import experiments

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
    return experiments.text_merging(Context(seed=0, out_dir=tmp_path_factory.mktemp("tm"), cache_dir=cache), **TEXT)


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
    original = experiments.TextMergingSetting.finetune
    monkeypatch.setattr(experiments.TextMergingSetting, "finetune",
                        lambda *a, **k: calls.append(1) or original(*a, **k))
    again = experiments.text_merging(Context(seed=0, out_dir=tmp_path, cache_dir=cache), **TEXT)
    assert calls == [] and again == text_metrics  # loaded, not fine-tuned again: the same numbers
    other = experiments.text_merging(Context(seed=1, out_dir=tmp_path, cache_dir=cache), **TEXT)
    assert len(calls) == 3 and other["tau_rel_norm"] != text_metrics["tau_rel_norm"]  # a new seed fine-tunes anew


def test_the_nulls_fill_the_method_slots(tmp_path, cache, text_metrics):
    ctx = lambda: Context(seed=0, out_dir=tmp_path, cache_dir=cache)  # noqa: E731
    none = experiments.text_merging(ctx(), **TEXT, masks="none")
    assert none["tall_ta_norm_acc"] == none["ta_norm_acc"] == text_metrics["ta_norm_acc"]
    assert none["tall_ta_density"] == 1.0 and none["catastrophic_frac"] == 0.0 == none["selfish_frac_growth"]
    rand = experiments.text_merging(ctx(), **TEXT, masks="random")
    assert rand["tall_ta_density"] == text_metrics["tall_ta_density"]  # same count per task, random places
    empty = experiments.text_merging(ctx(), **TEXT, consensus_k=99)
    assert empty["consensus_ta_norm_acc"] == empty["zeroshot_norm_acc"] == empty["consensus_ties_norm_acc"]
    with pytest.raises(ValueError, match="masks"):
        experiments.text_merging(ctx(), **TEXT, masks="bogus")
    with pytest.raises(ValueError, match="task counts"):
        experiments.text_merging(ctx(), **{**TEXT, "task_counts": [2, 99]})


def test_the_sweep_chooses_on_validation_only_and_its_null_takes_no_step(tmp_path, cache):
    m = experiments.text_regime_sweep(Context(seed=0, out_dir=tmp_path, cache_dir=cache), **SWEEP, tolerance=1.0)
    assert _finite(m) and not any("test" in k or "norm_acc" in k for k in m)
    smallest = min(m[f"lr{i}_s{s}_tau_rel_norm"] for i in (0, 1) for s in (2, 6))
    assert m["chosen_tau_rel_norm"] == smallest and (m["chosen_lr"], m["chosen_steps"]) == (1e-3, 2.0)
    best = experiments.text_regime_sweep(Context(seed=0, out_dir=tmp_path, cache_dir=cache), **SWEEP)  # the best
    accs = {(lr, s): best[f"lr{i}_s{s}_val_acc"] for i, lr in enumerate(SWEEP["lrs"]) for s in SWEEP["steps"]}
    assert best["chosen_val_acc"] == best["best_val_acc"] == max(accs.values())
    assert accs[(best["chosen_lr"], int(best["chosen_steps"]))] == best["best_val_acc"]
    tag = f"lr{SWEEP['lrs'].index(best['chosen_lr'])}_s{int(best['chosen_steps'])}_"
    assert best["chosen_min_gain"] == best[tag + "min_gain"] <= best[tag + "val_acc"] - best["zeroshot_val_acc"]
    null = experiments.text_regime_sweep(Context(seed=0, out_dir=tmp_path, cache_dir=cache), **SWEEP, finetune=False)
    assert null["chosen_val_acc"] == null["zeroshot_val_acc"] and paper.CLAIMS[4].evaluate(null).status == "fails"
    with pytest.raises(ValueError, match="lrs"):
        experiments.text_regime_sweep(Context(seed=0), lrs=[-1.0])


def test_digit_findings_run_and_never_touch_the_global_torch_rng(tmp_path, cache):
    ctx = Context(seed=3, out_dir=tmp_path, cache_dir=cache)  # a Context seeds the global generators when made
    before = torch.random.get_rng_state()
    broad = experiments.merging(ctx, **DIGITS)
    large = experiments.merging_large_vectors(ctx, **LARGE)
    assert torch.equal(torch.random.get_rng_state(), before)
    for m in (broad, large):
        assert _finite(m) and set(REGIME) <= set(m) and "t3_consensus_ta_norm_acc" in m and m["num_tasks"] == 3
    assert experiments.merging(Context(seed=3, out_dir=tmp_path, cache_dir=cache), **DIGITS) == broad
    with pytest.raises(ValueError, match="counts"):
        experiments.merging_large_vectors(Context(seed=0), task_counts=[1])


def test_experiments_compute_one_seed_with_typed_list_parameters():
    for exp in paper.PAPER.experiments.values():  # the MiniLM runs take the run's share of the cores, the MLPs one
        assert "seeds" not in exp.parameters() and exp.threads == (0 if exp.name.startswith("text_") else 1)
        assert exp.seeds["smoke"] == 1 and exp.seeds["quick"] >= 1
        exp.config(setting="smoke")
    assert experiments.text_merging.parameters()["task_counts"] == list[int]
    assert experiments.text_regime_sweep.parameters()["lrs"] == list[float]
    assert max(experiments.text_merging.quick["task_counts"]) == 8
    assert max(experiments.text_merging.full["task_counts"]) == 14


# ---- every claim can fail: a plausible bad metric dict gives `fails`, a good one `holds` -------------------------

GOOD = {
    "tall_ta_norm_acc": 0.995, "tall_ties_norm_acc": 0.992, "ta_norm_acc": 0.80, "ties_norm_acc": 0.82,
    "consensus_ta_norm_acc": 0.83, "consensus_ties_norm_acc": 0.84, "storage_ratio": 0.28, "num_tasks": 8.0,
    "selfish_frac_growth": 0.05, "selfish_frac_min_step": 0.05, "catastrophic_frac_growth": 0.02,
    "catastrophic_frac_min_step": 0.02, "chosen_val_acc": 0.90, "zeroshot_val_acc": 0.60,
}
BAD = [  # (claim index, metrics that break it)
    (0, {"tall_ta_norm_acc": 0.95}), (0, {"tall_ties_norm_acc": 0.985}),
    (0, {"ta_norm_acc": 0.995}),  # the merge alone already recovers the tasks: the masks add nothing
    (1, {"storage_ratio": 0.5}), (1, {"storage_ratio": 0.30}),  # 8 tasks: the format's 0.28 plus 0.01 at most
    (1, {"tall_ta_norm_acc": 0.98}),
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


def test_the_oracle_puts_the_fine_tuned_models_in_the_reconstructions_and_merges_slots(tmp_path, cache, text_metrics,
                                                                                         monkeypatch):
    oracle = experiments.text_merging(Context(seed=0, out_dir=tmp_path, cache_dir=cache), **TEXT, masks="finetuned")
    for slot in experiments.ORACLE_SLOTS:
        for count in (2, 3):
            assert oracle[f"t{count}_{slot}_norm_acc"] == 1.0  # each fine-tuned model over itself
        assert oracle[f"{slot}_acc"] == pytest.approx(oracle["individual_acc"])
    assert oracle["tall_ta_min_norm_acc"] == 1.0
    for key in ("ta_norm_acc", "ties_norm_acc", "zeroshot_norm_acc", "storage_ratio", "selfish_frac_growth"):
        assert oracle[key] == text_metrics[key]  # the merges, masks and storage stay measured
    assert all(c.resolved_oracle.overrides == {"masks": "finetuned"} for c in paper.CLAIMS if c.experiment.name
               in ("text_merging", "merging", "merging_large_vectors") and hasattr(c.resolved_oracle, "overrides"))
    calls = []
    monkeypatch.setattr(experiments.TextMergingSetting, "finetune", lambda *a, **k: calls.append(1))
    perfect = experiments.text_regime_sweep(Context(seed=0, out_dir=tmp_path, cache_dir=cache), **SWEEP, perfect=True)
    assert calls == [] and perfect["chosen_val_acc"] == 1.0 and perfect["chosen_tau_rel_norm"] == 0.0
    assert paper.CLAIMS[4].evaluate(perfect).status == "holds"  # unless the zero-shot head is already >= 95%


def test_fine_tuned_in_slots_scores_each_fine_tuned_model_over_itself():
    metrics = {f"{p}{slot}_{k}": 0.5 for p in ("", "t2_", "t3_") for slot in experiments.ORACLE_SLOTS
               for k in ("norm_acc", "acc")}
    details = {"individual_test": [0.8, 0.0, 0.5], **{f"t{c}": {"normalized": {}} for c in (2, 3)}}
    experiments.fine_tuned_in_slots(metrics, details, [2, 3])
    assert metrics["t2_tall_ta_norm_acc"] == 0.5  # a task its fine-tuned model gets nothing of scores 0 (protocol)
    assert metrics["tall_ties_norm_acc"] == pytest.approx(2 / 3)
    assert metrics["consensus_ta_acc"] == pytest.approx(1.3 / 3)
    assert metrics["tall_ta_min_norm_acc"] == 0.0 and details["t3"]["normalized"]["tall_ta"] == [1.0, 0.0, 1.0]


def test_families_over_task_counts_keep_the_settings_own_instance():
    text, sweep = paper.CLAIMS[0].resolved_family, paper.CLAIMS[4].resolved_family
    assert all(c.resolved_family is text for c in paper.CLAIMS[:4])
    assert list(text.at("quick").values()) == [{}, {"task_counts": [2, 4]}, {"task_counts": [3, 6]}]
    assert {"task_counts": [6, 11]} in text.at("full").values() and text.required(3) == 2 and text.required(4) == 3
    assert list(sweep.at("quick").values()) == [{}, {"num_tasks": 4}, {"num_tasks": 8}]
    assert {"num_tasks": 2} in sweep.at("full").values()  # full's own instance is 4 tasks
    for claim in paper.CLAIMS:
        assert "at least 2 of 3" in claim.text and not claim.resolved_family.cheap


def test_a_rounding_size_difference_does_not_count():
    """1e-12 of normalized accuracy or of a weight share is rounding (one text: >= 5e-4; one weight: >= 1e-9)."""
    assert 1e-12 < paper.claims.ACC_TOL < 5e-4 and 1e-12 < paper.claims.SHARE_TOL < 1e-9
    tied = {**GOOD, "tall_ta_norm_acc": 0.995, "ta_norm_acc": 0.995 - 1e-12}
    assert paper.CLAIMS[0].evaluate(tied).status == "fails" and paper.CLAIMS[1].evaluate(tied).status == "fails"
    below = {**GOOD, "consensus_ta_norm_acc": GOOD["ta_norm_acc"] - 1e-12}
    assert paper.CLAIMS[2].evaluate(below).status == "holds"  # equal up to rounding is not worse
    assert paper.CLAIMS[3].evaluate({**GOOD, "selfish_frac_growth": 1e-12}).status == "fails"
    assert paper.CLAIMS[3].evaluate({**GOOD, "catastrophic_frac_min_step": -1e-12}).status == "holds"
