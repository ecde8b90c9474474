import math

import pytest
import torch

from icml24.core import Context
from icml24.papers import tall_masks as paper

TINY = {"source": "digits", "task_counts": [2, 3], "hidden": 32, "pretrain_epochs": 2, "finetune_epochs": 1}
METHODS = ("zeroshot", "ta", "ties", "tall_ta", "tall_ties", "consensus_ta", "consensus_ties")


def _finite(metrics):
    return metrics and all(isinstance(v, float) and math.isfinite(v) for v in metrics.values())


@pytest.fixture(scope="module")
def tiny_metrics(tmp_path_factory):
    return paper.merging(Context(seed=0, out_dir=tmp_path_factory.mktemp("tm")), **TINY)


def test_merging_one_seed_metrics(tiny_metrics):
    assert _finite(tiny_metrics)
    for method in METHODS:
        assert f"t3_{method}_norm_acc" in tiny_metrics and f"t2_{method}_norm_acc" in tiny_metrics
    fractions = [tiny_metrics[f"t3_{k}_frac"] for k in ("catastrophic", "selfish", "general")]
    assert sum(fractions) == pytest.approx(1.0)
    assert tiny_metrics["t3_storage_ratio"] == pytest.approx((64 + 3) / 96, rel=1e-3)
    assert tiny_metrics["t3_tall_ta_min_norm_acc"] <= tiny_metrics["t3_tall_ta_norm_acc"]
    assert not any("seconds" in k or "spread" in k for k in tiny_metrics)  # timings are the runner's; std too


def test_same_seed_same_numbers_other_seed_other_numbers(tiny_metrics, tmp_path):
    assert paper.merging(Context(seed=0, out_dir=tmp_path), **TINY) == tiny_metrics
    other = paper.merging(Context(seed=1, out_dir=tmp_path), **TINY)
    assert other["individual_acc"] != tiny_metrics["individual_acc"] or other["t3_ta_acc"] != tiny_metrics["t3_ta_acc"]


def test_the_paper_never_touches_the_global_torch_rng(tmp_path):
    ctx = Context(seed=3, out_dir=tmp_path)
    before = torch.random.get_rng_state()
    paper.finetune_strength(ctx, epochs=[1], num_tasks=2, hidden=8, pretrain_epochs=1)
    assert torch.equal(torch.random.get_rng_state(), before)


def test_experiments_compute_one_seed_with_typed_list_parameters():
    for exp in paper.PAPER.experiments.values():
        assert "seeds" not in exp.parameters() and exp.threads == 1
        assert exp.seeds["smoke"] == 1 and exp.seeds["quick"] >= 1
        exp.config(setting="smoke")
    assert paper.merging.parameters()["task_counts"] == list[int]
    assert paper.finetune_strength.parameters()["epochs"] == list[int]
    assert paper.merging.seeds["quick"] == 2 and paper.merging.quick["task_counts"] == [4, 8, 14]


def test_mnist1d_and_ablation_one_seed(tmp_path):
    pytest.importorskip("mnist1d")
    m = paper.merging_mnist1d(Context(seed=1, out_dir=tmp_path), **{**TINY, "source": "mnist1d", "task_counts": [2]})
    assert _finite(m) and "t2_consensus_ta_norm_acc" in m
    a = paper.finetune_strength(Context(seed=1, out_dir=tmp_path), epochs=[2, 1], num_tasks=2, hidden=16,
                                pretrain_epochs=2)
    assert _finite(a) and {"e1_tall_ta_norm_acc", "e2_tall_ties_norm_acc", "e2_tau_rel_norm"} <= set(a)
    assert a["e2_tau_rel_norm"] > a["e1_tau_rel_norm"] > 0  # a longer run extends the shorter one


def test_bad_grids_say_what_to_fix():
    with pytest.raises(ValueError, match="task_counts"):
        paper.merging(Context(seed=0), task_counts=[1, 99])
    with pytest.raises(ValueError, match="task_counts"):
        paper.merging(Context(seed=0), task_counts=[])
    with pytest.raises(ValueError, match="epochs"):
        paper.finetune_strength(Context(seed=0), epochs=[0, 3])
    with pytest.raises(ValueError, match="num_tasks"):
        paper.finetune_strength(Context(seed=0), epochs=[1], num_tasks=1)


def test_derived_head_averages_the_rows_of_its_label_map():
    base = torch.nn.Linear(4, 10)
    head = paper._derived_head(base, "invert+parity", 2)
    assert torch.allclose(head.weight[0], base.weight[0::2].mean(0)) and not head.weight.requires_grad
    assert torch.allclose(paper._derived_head(base, "rot90", 10).bias, base.bias)


# ---- every claim can fail: a plausible bad metric dict gives `fails`, a good one `holds` -------------------------

GOOD = {
    "t8_tall_ta_min_norm_acc": 0.995, "t8_tall_ties_min_norm_acc": 0.992,
    "t14_storage_ratio": 0.1741, "t14_storage_ratio_formula": 0.1741, "t14_tall_ta_norm_acc": 0.997,
    "t8_ta_norm_acc": 0.70, "t8_consensus_ta_norm_acc": 0.72, "t8_ties_norm_acc": 0.71,
    "t8_consensus_ties_norm_acc": 0.73, "t14_ta_norm_acc": 0.62, "t14_consensus_ta_norm_acc": 0.65,
    "t14_ties_norm_acc": 0.63, "t14_consensus_ties_norm_acc": 0.66,
    "t14_selfish_frac": 0.12, "t14_catastrophic_frac": 0.05,
    "e1_tall_ta_norm_acc": 1.0, "e1_tall_ties_norm_acc": 0.995,
}
BAD = [  # (claim index, metrics that break it)
    (0, {"t8_tall_ta_min_norm_acc": 0.30}),
    (0, {"t8_tall_ties_min_norm_acc": 0.985}),
    (1, {"t14_storage_ratio": 0.20}),
    (1, {"t14_tall_ta_norm_acc": 0.95}),
    (2, {"t8_consensus_ta_norm_acc": 0.69}),
    (2, {"t14_consensus_ties_norm_acc": 0.62}),
    (3, {"t14_catastrophic_frac": 0.005}),
    (3, {"t14_selfish_frac": 0.0}),
    (4, {"t8_consensus_ties_norm_acc": 0.70}),
    (5, {"e1_tall_ties_norm_acc": 0.95}),
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
