"""SQNR, kurtosis, outlier share, channel ratio, flushed share, bimodality and perplexity."""

import math

import torch

from icml24.llm.quantize import (
    channel_ratio,
    exponent_bimodality,
    flushed_share,
    kurtosis,
    outlier_share,
    perplexity,
    sqnr_db,
)


def test_sqnr_of_known_noise():
    x = torch.ones(100)
    assert sqnr_db(x, x) == math.inf
    assert abs(sqnr_db(x, x * 1.1) - 20.0) < 1e-4  # noise power 0.01 (1.1 in float32)


def test_gaussian_regime_versus_outliers():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(200, 64, generator=g)
    assert abs(kurtosis(x) - 3) < 0.3 and outlier_share(x) == 0 and channel_ratio(x) < 2
    x[:, 3] *= 100
    assert kurtosis(x) > 20 and outlier_share(x) > 0.005 and channel_ratio(x) > 30


def test_flushed_share_counts_nonzero_values_that_became_zero():
    x, q = torch.tensor([0.0, 1.0, 2.0, 3.0]), torch.tensor([0.0, 0.0, 2.0, 0.0])
    assert flushed_share(x, q) == 2 / 3


def test_bimodality_separates_two_exponent_modes_from_one():
    g = torch.Generator().manual_seed(0)
    one = torch.randn(4000, generator=g)
    two = torch.cat([torch.randn(2000, generator=g) * 1e-3, torch.randn(2000, generator=g) * 10])
    assert exponent_bimodality(two, random_state=0) > 0.5 > exponent_bimodality(one, random_state=0)


def test_perplexity_of_a_uniform_model_is_the_vocabulary_size():
    class Uniform(torch.nn.Module):
        def forward(self, ids):
            return type("Out", (), {"logits": torch.zeros(*ids.shape, 50)})()

    assert abs(perplexity(Uniform(), torch.zeros(2, 8, dtype=torch.long)) - 50) < 1e-3


def test_block_outlier_share_sees_blocks_with_two_scales():
    import pytest

    from icml24.llm.quantize import block_outlier_share

    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 64, generator=g)
    assert block_outlier_share(x, 64, 16.0) == 0.0  # Gaussian blocks: max/median about 3.5
    x[::4, 0] = 1000.0
    assert block_outlier_share(x, 64, 16.0) == 0.25 and block_outlier_share(x, 32, 16.0) == 0.125
    with pytest.raises(ValueError, match="multiple of block_size"):
        block_outlier_share(x, 48)


def test_perplexity_ratio_interval_is_paired_and_takes_the_best_competitor():
    import numpy as np
    import pytest

    from icml24.llm.quantize import perplexity_ratio_ci

    rng = np.random.default_rng(0)
    base = rng.normal(3.0, 0.5, 40)  # windows differ a lot; the method is 0.05 nats better on every one
    ratio, low, high = perplexity_ratio_ci(base - 0.05, [base, base + 1.0], random_state=0)
    assert ratio == pytest.approx(math.exp(-0.05)) and low == pytest.approx(high) == pytest.approx(ratio)
    ratio, low, high = perplexity_ratio_ci(base + rng.normal(0, 0.2, 40), [base], random_state=0)  # noise: covers 1
    assert low < 1 < high and low < ratio < high
    with pytest.raises(ValueError, match="same >= 2 windows"):
        perplexity_ratio_ci(base, [base[:-1]])
    with pytest.raises(ValueError, match="NaN"):
        perplexity_ratio_ci(base * np.nan, [base])
