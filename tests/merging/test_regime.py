import math

import pytest
import torch

from icml24.merging import task_vector_statistics


def test_hand_made_pair_of_task_vectors():
    base = torch.tensor([3.0, 0.0, 4.0, 0.0] + [0.0] * 96)  # ||theta_0|| = 5
    tau_a = torch.zeros(100)
    tau_a[0] = 1.0  # all energy in one entry (the top 1%)
    tau_b = torch.zeros(100)
    tau_b[0], tau_b[1] = 1.0, 1.0  # cos(tau_a, tau_b) = 1 / sqrt(2)
    stats = task_vector_statistics(base, torch.stack([base + tau_a, base - tau_b]))
    assert stats["rel_norm"] == pytest.approx([1 / 5, math.sqrt(2) / 5])
    assert stats["mean_abs_cos"] == pytest.approx(1 / math.sqrt(2)) == stats["max_abs_cos"]  # |cos|: sign ignored
    assert stats["energy_top1"] == pytest.approx([1.0, 0.5])  # top 1% of 100 entries is 1 entry
    assert stats["energy_top5"] == pytest.approx([1.0, 1.0])
    # one spike among 100 entries: kurtosis (n - 2 + 1 / (n - 1)) ~ 98, far above a Gaussian's 3
    assert stats["kurtosis"][0] == pytest.approx(98.01, rel=1e-3)


def test_orthogonal_dense_gaussian_vectors_look_like_the_wrong_regime():
    g = torch.Generator().manual_seed(0)
    base = torch.randn(20_000, generator=g)
    tuned = base + 0.01 * torch.randn(4, 20_000, generator=g)
    stats = task_vector_statistics(base, tuned)
    assert stats["mean_abs_cos"] < 0.03  # nearly orthogonal
    assert all(0.07 < e < 0.10 for e in stats["energy_top1"])  # dense: the top 1% holds ~8.5% of the energy
    assert all(2.8 < k < 3.2 for k in stats["kurtosis"])
    assert all(r == pytest.approx(0.01, rel=0.05) for r in stats["rel_norm"])


def test_one_task_and_bad_inputs():
    stats = task_vector_statistics(torch.ones(10), torch.ones(1, 10) * 2)
    assert math.isnan(stats["mean_abs_cos"])
    with pytest.raises(ValueError, match="all zeros"):
        task_vector_statistics(torch.ones(10), torch.ones(2, 10))
    with pytest.raises(ValueError, match="finetuned"):
        task_vector_statistics(torch.ones(3), torch.tensor([[1.0, float("nan"), 2.0]]))
    with pytest.raises(ValueError, match="top"):
        task_vector_statistics(torch.ones(3), torch.zeros(1, 3), top=(0.0,))
