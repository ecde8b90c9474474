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
    assert exponent_bimodality(two) > 0.5 > exponent_bimodality(one)


def test_perplexity_of_a_uniform_model_is_the_vocabulary_size():
    class Uniform(torch.nn.Module):
        def forward(self, ids):
            return type("Out", (), {"logits": torch.zeros(*ids.shape, 50)})()

    assert abs(perplexity(Uniform(), torch.zeros(2, 8, dtype=torch.long)) - 50) < 1e-3
