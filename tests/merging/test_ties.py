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
        TIESMerging(density=0.0).fit(base, tuned)  # checked at fit (the estimator contract)
    with pytest.raises(ValueError, match="aggregation"):
        TIESMerging(aggregation="max").fit(base, tuned)


def test_ties_not_fitted_and_nan_rejected():
    from icml24._validation import NotFittedError

    with pytest.raises(NotFittedError):
        TIESMerging().merged_vector()
    with pytest.raises(ValueError, match="density"):
        TIESMerging(density=float("nan")).fit(torch.zeros(3), torch.ones(2, 3))
    bad = torch.ones(2, 5)
    bad[1, 1] = float("nan")
    with pytest.raises(ValueError, match="task_vectors"):
        trim_top_k(bad, 0.4)
    with pytest.raises(ValueError, match="task_vectors"):
        ties_vector(bad)
    with pytest.raises(ValueError, match="finetuned"):
        TIESMerging().fit(torch.zeros(5), bad)


@pytest.mark.parametrize("aggregation", ["sum", "mean"])
@pytest.mark.parametrize("density", [0.2, 1.0])
def test_one_pass_ties_equals_the_three_steps_bit_for_bit_across_blocks(aggregation, density):
    from icml24.merging.ties import BLOCK

    g = torch.Generator().manual_seed(1)
    tv = torch.randn(3, BLOCK + 77, generator=g)
    tv[:, :50] = tv[:, :50].round()  # magnitude ties at the threshold and zeros
    tv[1, 60:90], tv[2, 60:90] = 3.0, -3.0  # exact cancellation: the sum is 0, the majority sign decides
    tv[:, 90:100] = 0.0
    expected_trim = trim_top_k(tv, density)
    expected = disjoint_merge(expected_trim, elect_sign(expected_trim), aggregation)
    assert torch.equal(ties_vector(tv, density, aggregation), expected)
    flipped = -tv  # the other majority sign
    expected_trim = trim_top_k(flipped, density)
    assert torch.equal(ties_vector(flipped, density, aggregation),
                       disjoint_merge(expected_trim, elect_sign(expected_trim), aggregation))


def test_threshold_is_exactly_torchs_kthvalue():
    from icml24.merging.ties import _kth_largest

    g = torch.Generator().manual_seed(3)
    magnitude = torch.randn(4, 1001, generator=g).abs().round(decimals=1)  # many ties
    for keep in (1, 200, 1001):
        expected = magnitude.kthvalue(1001 - keep + 1, dim=1, keepdim=True).values
        assert torch.equal(_kth_largest(magnitude, keep), expected)
    assert torch.equal(_kth_largest(magnitude.double(), 5), magnitude.double().kthvalue(997, 1, True).values)
