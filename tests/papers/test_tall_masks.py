import math

import numpy as np
import pytest
import torch

from icml24.core import Context
from icml24.data import TASK_SPECS, pretraining_mixture, pretraining_specs
from icml24.papers import tall_masks as paper

TINY = {"task_counts": [2, 3], "hidden": 16, "depth": 2, "pretrain_epochs": 1, "finetune_steps": 5}
LARGE_TINY = {"task_counts": [2, 3], "hidden": 16, "pretrain_epochs": 1, "finetune_epochs": 1}
METHODS = ("zeroshot", "ta", "ties", "tall_ta", "tall_ties", "consensus_ta", "consensus_ties")
REGIME = ("tau_rel_norm", "tau_mean_abs_cos", "tau_energy_top1", "tau_energy_top5", "tau_kurtosis", "zeroshot_acc",
          "individual_acc")


def _finite(metrics):
    return metrics and all(isinstance(v, float) and math.isfinite(v) for v in metrics.values())


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="module")
def tiny_metrics(tmp_path_factory, cache):
    return paper.merging(Context(seed=0, out_dir=tmp_path_factory.mktemp("tm"), cache_dir=cache), **TINY)


def test_merging_one_seed_metrics_and_regime(tiny_metrics):
    assert _finite(tiny_metrics)
    for method in METHODS:
        assert f"t3_{method}_norm_acc" in tiny_metrics and f"t2_{method}_norm_acc" in tiny_metrics
    assert set(REGIME) <= set(tiny_metrics) and tiny_metrics["tau_rel_norm"] > 0
    fractions = [tiny_metrics[f"t3_{k}_frac"] for k in ("catastrophic", "selfish", "general")]
    assert sum(fractions) == pytest.approx(1.0)
    assert tiny_metrics["t3_tall_ta_min_norm_acc"] <= tiny_metrics["t3_tall_ta_norm_acc"]
    assert not any("seconds" in k for k in tiny_metrics)


def test_storage_arithmetic_is_exact_on_the_compressed_store(tiny_metrics):
    # theta_0 and tau_MTL in float32 plus one bit per weight and task: (2 * 32 + T) / (32 T) of T checkpoints
    assert tiny_metrics["num_params"] % 8 == 0  # no byte padding in the packed masks
    for count in (2, 3):
        assert tiny_metrics[f"t{count}_storage_ratio"] == pytest.approx((64 + count) / (32 * count), rel=1e-12)


def test_the_pretrained_base_is_built_once_and_reused_from_its_artifact(tiny_metrics, cache, tmp_path, monkeypatch):
    assert len(list((cache).glob("broad-base-*.pt"))) == 1  # the fixture's run built and stored it
    builds = []
    original = paper._build_broad_base

    def counting(*args):
        build = original(*args)
        return lambda ctx: builds.append(1) or build(ctx)

    monkeypatch.setattr(paper, "_build_broad_base", counting)
    again = paper.merging(Context(seed=0, out_dir=tmp_path, cache_dir=cache), **TINY)
    other_seed = paper.merging(Context(seed=1, out_dir=tmp_path, cache_dir=cache), **TINY)
    assert builds == [] and again == tiny_metrics  # loaded, not rebuilt: same numbers
    assert (other_seed["individual_acc"], other_seed["t3_ta_acc"]) != (again["individual_acc"], again["t3_ta_acc"])
    paper._BroadBase(Context(seed=0, cache_dir=cache), "digits", 2, 12, 1, 1)
    paper._BroadBase(Context(seed=1, cache_dir=cache), "digits", 2, 12, 1, 1)
    assert builds == [1]  # another base (a different key) is built once, then loaded


def test_the_paper_never_touches_the_global_torch_rng_and_reports_both_regimes(tmp_path):
    ctx = Context(seed=3, out_dir=tmp_path)  # a Context seeds the global generators when it is made
    before = torch.random.get_rng_state()
    paper.regime_sweep(ctx, lrs=[0.03], steps=[3], num_tasks=2, hidden=8, depth=1, pretrain_epochs=1)
    m = paper.merging_large_vectors(ctx, **LARGE_TINY)
    assert torch.equal(torch.random.get_rng_state(), before)
    assert _finite(m) and set(REGIME) <= set(m) and "t3_consensus_ta_norm_acc" in m  # the second setting's regime


def test_the_nulls_fill_the_tall_slot(tmp_path, cache):
    ctx = lambda: Context(seed=0, out_dir=tmp_path, cache_dir=cache)  # noqa: E731
    none = paper.merging(ctx(), **TINY, masks="none")
    rand = paper.merging(ctx(), **TINY, masks="random")
    tall = paper.merging(ctx(), **TINY)
    for count in (2, 3):  # no masks: every task gets the TA / TIES merge, Consensus keeps every weight
        assert none[f"t{count}_tall_ta_norm_acc"] == none[f"t{count}_ta_norm_acc"] == tall[f"t{count}_ta_norm_acc"]
        assert none[f"t{count}_tall_ties_norm_acc"] == none[f"t{count}_ties_norm_acc"]
        assert none[f"t{count}_tall_ta_density"] == 1.0 and none[f"t{count}_catastrophic_frac"] == 0.0
        assert rand[f"t{count}_tall_ta_density"] == tall[f"t{count}_tall_ta_density"]  # same count, random place
    assert rand["t3_catastrophic_frac"] != tall["t3_catastrophic_frac"]
    with pytest.raises(ValueError, match="masks"):
        paper.merging(ctx(), **TINY, masks="bogus")


def test_the_sweep_null_takes_no_fine_tuning_step(tmp_path):
    kwargs = dict(lrs=[0.03], steps=[2, 6], num_tasks=2, hidden=8, depth=1, pretrain_epochs=1)
    m = paper.regime_sweep(Context(seed=0, out_dir=tmp_path), **kwargs, finetune=False)
    assert m["chosen_tau_rel_norm"] == 0.0 and m["tau_growth_min"] == 0.0
    assert m["chosen_val_acc"] == m["zeroshot_val_acc"] and paper.CLAIMS[5].evaluate(m).status == "fails"
    assert paper.regime_sweep(Context(seed=0, out_dir=tmp_path), **kwargs)["tau_growth_min"] > 0


def test_regime_sweep_chooses_on_validation_and_regime_only(tmp_path):
    m = paper.regime_sweep(Context(seed=0, out_dir=tmp_path), lrs=[0.01, 0.1], steps=[2, 6], num_tasks=2, hidden=8,
                           depth=1, pretrain_epochs=1, tolerance=1.0)
    assert _finite(m) and not any("test" in k or "norm_acc" in k for k in m)
    # with tolerance 1 every setting qualifies: the rule takes the smallest task vectors
    smallest = min(m[f"lr{i}_s{s}_tau_rel_norm"] for i in (0, 1) for s in (2, 6))
    assert m["chosen_tau_rel_norm"] == smallest and (m["chosen_lr"], m["chosen_steps"]) == (0.01, 2.0)


def test_experiments_compute_one_seed_with_typed_list_parameters():
    for exp in paper.PAPER.experiments.values():
        assert "seeds" not in exp.parameters() and exp.threads == 1
        assert exp.seeds["smoke"] == 1 and exp.seeds["quick"] >= 1
        exp.config(setting="smoke")
    assert paper.merging.parameters()["task_counts"] == list[int]
    assert paper.regime_sweep.parameters()["lrs"] == list[float]
    assert paper.merging.quick["task_counts"] == [4, 8, 14] == paper.merging.smoke["task_counts"]


def test_bad_grids_say_what_to_fix():
    with pytest.raises(ValueError, match="task_counts"):
        paper.merging(Context(seed=0), task_counts=[1, 99])
    with pytest.raises(ValueError, match="task_counts"):
        paper.merging_large_vectors(Context(seed=0), task_counts=[])
    with pytest.raises(ValueError, match="steps"):
        paper.regime_sweep(Context(seed=0), steps=[0, 3])
    with pytest.raises(ValueError, match="lrs"):
        paper.regime_sweep(Context(seed=0), lrs=[-0.1])
    with pytest.raises(ValueError, match="num_tasks"):
        paper.regime_sweep(Context(seed=0), num_tasks=1)


def test_pretraining_mixture_holds_out_every_task():
    specs = pretraining_specs()
    assert len(specs) >= 30 and not set(specs) & set(TASK_SPECS)
    x, y = pretraining_mixture("digits", specs, indices=np.arange(20))
    assert x.shape == (len(specs), 20, 64) and y.shape == (len(specs), 20) and y.max() <= 9
    assert not np.allclose(x[0], x[specs.index("flip+rot90")])
    with pytest.raises(ValueError, match="10-class"):
        pretraining_mixture("digits", ["parity"], indices=np.arange(20))


def test_derived_head_averages_the_rows_of_its_label_map():
    base = torch.nn.Linear(4, 10)
    head = paper._derived_head(base, "invert+parity", 2)
    assert torch.allclose(head.weight[0], base.weight[0::2].mean(0)) and not head.weight.requires_grad
    assert torch.allclose(paper._derived_head(base, "rot90", 10).bias, base.bias)


# ---- every claim can fail: a plausible bad metric dict gives `fails`, a good one `holds` -------------------------

GOOD = {
    "t8_tall_ta_min_norm_acc": 0.995, "t8_tall_ties_min_norm_acc": 0.992, "t8_zeroshot_norm_acc": 0.45,
    "t14_tall_ta_norm_acc": 0.997,
    "t8_ta_norm_acc": 0.70, "t8_consensus_ta_norm_acc": 0.72, "t8_ties_norm_acc": 0.71,
    "t8_consensus_ties_norm_acc": 0.73, "t14_ta_norm_acc": 0.62, "t14_consensus_ta_norm_acc": 0.65,
    "t14_ties_norm_acc": 0.63, "t14_consensus_ties_norm_acc": 0.66,
    "t4_selfish_frac": 0.20, "t8_selfish_frac": 0.25, "t14_selfish_frac": 0.30,
    "t4_catastrophic_frac": 0.03, "t8_catastrophic_frac": 0.05, "t14_catastrophic_frac": 0.08,
    "chosen_val_acc": 0.97, "zeroshot_val_acc": 0.70,
}
BAD = [  # (claim index, metrics that break it)
    (0, {"t8_tall_ta_min_norm_acc": 0.30}),
    (0, {"t8_tall_ties_min_norm_acc": 0.985}),
    (0, {"t8_zeroshot_norm_acc": 0.99}),  # the base alone already solves the tasks: nothing to recover
    (1, {"t14_tall_ta_norm_acc": 0.95}),
    (2, {"t8_consensus_ta_norm_acc": 0.69}),
    (2, {"t14_consensus_ties_norm_acc": 0.62}),
    (3, {"t14_catastrophic_frac": 0.02}),
    (3, {"t8_selfish_frac": 0.35}),
    (3, {"t4_selfish_frac": 0.30}),  # flat is not growth
    (4, {"t8_tall_ta_min_norm_acc": 0.35}),  # the large-vector setting: TALL stops working
    (5, {"chosen_val_acc": 0.72}),  # the lightly fine-tuned models barely beat the zero-shot base
]


def test_every_claim_holds_on_good_metrics():
    assert len(paper.CLAIMS) == 6
    for claim in paper.CLAIMS:
        assert claim.evaluate(GOOD).status == "holds", claim.text


@pytest.mark.parametrize("index,bad", BAD)
def test_every_claim_can_fail(index, bad):
    assert paper.CLAIMS[index].evaluate({**GOOD, **bad}).status == "fails"


def test_every_claim_is_covered_by_a_failing_case():
    assert {index for index, _ in BAD} == set(range(len(paper.CLAIMS)))
