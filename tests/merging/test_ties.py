import numpy as np
import pytest
import torch

from icml24.merging import TIESMerging, disjoint_merge, elect_sign, ties_vector, trim_top_k


def test_trim_keeps_top_fraction_per_task():
    g = torch.Generator().manual_seed(0)
    tv = torch.randn(3, 50, generator=g)
    trimmed = trim_top_k(tv, 0.2)
    for t in range(3):
        order = np.argsort(-tv[t].abs().numpy())
        expected = np.zeros(50, bool)
        expected[order[:10]] = True
        assert np.array_equal(trimmed[t].numpy() != 0, expected)
        assert torch.equal(trimmed[t][trimmed[t] != 0], tv[t][trimmed[t] != 0])


def test_ties_matches_hand_computed_example():
    tv = torch.tensor([[1.0, -2.0, 3.0, 0.0], [2.0, 1.0, -1.0, 0.0], [-4.0, -1.0, 2.0, 0.0]])
    sign = elect_sign(tv)  # sums: -1, -2, 4, 0 -> signs -1, -1, 1, majority(-1)
    assert sign.tolist() == [-1.0, -1.0, 1.0, -1.0]
    mean = disjoint_merge(tv, sign, "mean")
    assert torch.allclose(mean, torch.tensor([-4.0, -1.5, 2.5, 0.0]))
    assert torch.allclose(disjoint_merge(tv, sign, "sum"), torch.tensor([-4.0, -3.0, 5.0, 0.0]))
    assert torch.allclose(ties_vector(tv, density=1.0), mean)


def test_ties_estimator_and_validation():
    base = torch.zeros(4)
    tuned = torch.tensor([[1.0, 0.0, 0.0, 0.0], [3.0, 0.0, 0.0, 0.0]])
    m = TIESMerging(density=1.0, scaling=0.5).fit(base, tuned)
    assert torch.allclose(m.merge(), torch.tensor([1.0, 0, 0, 0]))
    with pytest.raises(ValueError, match="density"):
        TIESMerging(density=0.0)
    with pytest.raises(ValueError, match="aggregation"):
        TIESMerging(aggregation="max")


def test_ties_not_fitted_and_nan_rejected():
    from icml24._validation import NotFittedError

    with pytest.raises(NotFittedError):
        TIESMerging().merged_vector()
    with pytest.raises(ValueError, match="density"):
        TIESMerging(density=float("nan"))
    bad = torch.ones(2, 5)
    bad[1, 1] = float("nan")
    with pytest.raises(ValueError, match="task_vectors"):
        trim_top_k(bad, 0.4)
    with pytest.raises(ValueError, match="task_vectors"):
        ties_vector(bad)
    with pytest.raises(ValueError, match="finetuned"):
        TIESMerging().fit(torch.zeros(5), bad)
