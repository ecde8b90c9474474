import numpy as np
import pytest
import torch

from icml24.merging import (
    compute_tall_masks,
    consensus_mask,
    disjoint_merge,
    elect_sign,
    kernels,
    mask_counts,
    ties_vector,
)
from icml24.merging.ties import trim_top_k


def _reference_kth(row: np.ndarray, keep: int) -> float:
    nonzero = np.abs(row[row != 0])
    return 0.0 if len(nonzero) < keep else float(np.partition(nonzero, len(nonzero) - keep)[len(nonzero) - keep])


def test_kth_largest_when_the_sample_misses_the_large_values():
    """A strided sample that sees only the small entries (large ones sit between its strides): the bracket misses
    and the exact fallback still returns the true k-th largest magnitude."""
    num_params = 4 * kernels.SAMPLE  # stride 4: the sample reads indices 0, 4, 8, ...
    rng = np.random.default_rng(0)
    row = rng.uniform(0.0, 1e-3, num_params).astype(np.float32)
    row[1::4] = rng.uniform(1.0, 2.0, num_params // 4)  # a quarter of the entries, never sampled
    rows = np.stack([row, -row[::-1].copy()])
    keep = num_params // 5
    thresholds, finite = kernels.kth_largest_magnitudes(rows, keep)
    assert finite
    assert thresholds.tolist() == [_reference_kth(r, keep) for r in rows]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_kth_largest_with_ties_zeros_and_few_nonzeros(dtype):
    g = torch.Generator().manual_seed(2)
    tv = (torch.randn(3, 3 * kernels.SAMPLE + 11, generator=g) * 4).round().to(dtype)  # many exact ties
    tv[2, 100:] = 0.0  # fewer nonzeros than kept: threshold 0
    keep = tv.shape[1] // 5
    thresholds, finite = kernels.kth_largest_magnitudes(tv.numpy(), keep)
    assert finite and thresholds.tolist() == [_reference_kth(r, keep) for r in tv.numpy()]
    bad = tv.clone()
    bad[1, 5] = float("nan")
    assert not kernels.kth_largest_magnitudes(bad.numpy(), keep)[1]


@pytest.mark.parametrize("aggregation", ["sum", "mean"])
def test_fused_ties_equals_the_three_steps_in_float64_and_with_a_negative_majority(aggregation):
    g = torch.Generator().manual_seed(4)
    tv = torch.randn(5, kernels.BLOCK * 2 + 3, generator=g, dtype=torch.float64) - 0.3  # negative majority
    tv[:, :40] = 0.0
    tv[0, :40], tv[1, :40] = 2.0, -2.0  # exact cancellations decided by the (negative) majority
    trimmed = trim_top_k(tv, 0.3)
    assert elect_sign(trimmed)[:40].eq(-1).all()
    assert torch.equal(ties_vector(tv, 0.3, aggregation), disjoint_merge(trimmed, elect_sign(trimmed), aggregation))


def test_nan_reaches_the_caller_as_a_clear_error():
    tv = torch.randn(2, 300)
    tv[1, 7] = float("inf")
    with pytest.raises(ValueError, match="task_vectors"):
        ties_vector(tv, 0.2)
    with pytest.raises(ValueError, match="task_vectors"):
        ties_vector(tv, 1.0)
    mtl = torch.randn(300)
    mtl[3] = float("nan")
    with pytest.raises(ValueError, match="multitask_vector"):
        compute_tall_masks(torch.randn(2, 300), mtl, 0.4)


def test_fused_tall_masks_and_consensus_equal_the_formulas():
    g = torch.Generator().manual_seed(5)
    tv = torch.randn(4, 10_001, generator=g)
    tv[:, :100] = 0.0  # strict '>' keeps zero entries out
    mtl = tv.sum(0)
    lambdas = [0.0, 0.2, 0.4, 1.0]
    masks = compute_tall_masks(tv, mtl, lambdas)
    expected = tv.abs() > torch.tensor(lambdas).unsqueeze(1) * (mtl - tv).abs()
    assert torch.equal(masks, expected)
    for k in range(6):
        assert torch.equal(consensus_mask(masks, k), mask_counts(masks) >= k)
