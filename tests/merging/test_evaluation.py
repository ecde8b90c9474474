import math

import pytest
import torch

from icml24.merging import evaluate_merging, regime_metrics
from icml24.merging.evaluation import check_grid


def _localized_setting(num_tasks=4, width=50, seed=0):
    """Task t moves only its own block of weights; accuracy decays with the distance to theta_t."""
    g = torch.Generator().manual_seed(seed)
    base = torch.randn(num_tasks * width, generator=g)
    tuned = base.repeat(num_tasks, 1)
    for t in range(num_tasks):
        tuned[t, t * width:(t + 1) * width] += 0.5 * torch.randn(width, generator=g)

    def accuracy(vector, task, split):
        return math.exp(-float((vector - tuned[task]).square().sum()) / 10.0)

    return base, tuned, accuracy


def test_tall_masks_recover_localized_tasks_and_metrics_are_keyed_by_count():
    base, tuned, accuracy = _localized_setting()
    metrics, details = evaluate_merging(accuracy, base, tuned, [2, 4])
    assert metrics["t4_tall_ta_min_norm_acc"] == metrics["tall_ta_min_norm_acc"] > 0.99
    assert metrics["num_tasks"] == 4 and "t2_ta_norm_acc" in metrics and "t2_tall_ta_norm_acc" in metrics
    assert metrics["tall_ta_norm_acc"] > metrics["ta_norm_acc"] and metrics["zeroshot_norm_acc"] < 0.5
    assert 0 < metrics["storage_ratio"] < 1 and len(details["t4"]["histogram"]) == 5
    below = sum(i <= z for i, z in zip(details["individual_val"], details["zeroshot_val"]))
    assert metrics["tasks_not_above_zeroshot_val"] == below and len(details["zeroshot_test"]) == 4
    assert metrics["zeroshot_val_acc"] == pytest.approx(sum(details["zeroshot_val"]) / 4)
    assert metrics["selfish_frac"] > 0.9  # each weight belongs to one task
    unmasked, _ = evaluate_merging(accuracy, base, tuned, [4], masks="none")
    assert unmasked["tall_ta_norm_acc"] == pytest.approx(unmasked["ta_norm_acc"])
    assert unmasked["tall_ta_min_norm_acc"] < 0.99
    random, _ = evaluate_merging(accuracy, base, tuned, [4], masks="random",
                                 random_state=lambda count: torch.Generator().manual_seed(count))
    assert random["tall_ta_min_norm_acc"] < 0.99
    again, _ = evaluate_merging(accuracy, base, tuned, [2, 4], masks="random", random_state=5)  # spawned streams
    assert again == evaluate_merging(accuracy, base, tuned, [2, 4], masks="random", random_state=5)[0]


def test_regime_metrics_and_bad_arguments():
    base, tuned, accuracy = _localized_setting()
    regime, stats = regime_metrics(base, tuned)
    assert regime["tau_mean_abs_cos"] == pytest.approx(0.0, abs=1e-9)  # disjoint supports
    assert regime["tau_energy_top1"] > 0.03 and len(stats["rel_norm"]) == 4
    with pytest.raises(ValueError, match="counts"):
        evaluate_merging(accuracy, base, tuned, [1, 4])
    with pytest.raises(ValueError, match="counts"):
        evaluate_merging(accuracy, base, tuned, [8])
    with pytest.raises(ValueError, match="masks"):
        evaluate_merging(accuracy, base, tuned, [4], masks="nope")
    assert check_grid("x", [3, 2, 3], 2) == [2, 3]


def test_growth_of_mask_shares_and_consensus_k():
    base, tuned, accuracy = _localized_setting(num_tasks=4)
    metrics, _ = evaluate_merging(accuracy, base, tuned, [2, 3, 4])
    for kind in ("catastrophic", "selfish"):
        shares = [metrics[f"t{c}_{kind}_frac"] for c in (2, 3, 4)]
        assert metrics[f"{kind}_frac_growth"] == pytest.approx(shares[-1] - shares[0])
        assert metrics[f"{kind}_frac_min_step"] == pytest.approx(min(shares[1] - shares[0], shares[2] - shares[1]))
    single, _ = evaluate_merging(accuracy, base, tuned, [4])
    assert single["selfish_frac_growth"] == 0.0 == single["catastrophic_frac_min_step"]  # one count: no growth
    empty, _ = evaluate_merging(accuracy, base, tuned, [4], consensus_k=99)  # k > T keeps no weight: the base
    assert empty["consensus_ta_norm_acc"] == empty["zeroshot_norm_acc"] == empty["consensus_ties_norm_acc"]
