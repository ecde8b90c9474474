"""The fused gradient kernel equals autograd through BatchedMaskedMLP.forward, and training through it equals
training through autograd within float32 rounding; models it does not cover are refused or left to autograd."""

import pytest
import torch

from icml24.pruning import BatchedMaskedMLP, cubist_spiral, train_batched
from icml24.pruning.kernels import fill_gradients, supported


def _model(widths, k, seed=0, keep=0.6):
    gen = torch.Generator().manual_seed(seed)
    shapes = [(widths[i + 1], widths[i]) for i in range(len(widths) - 1)]
    masks = [(torch.rand(k, o, i, generator=gen) < keep).float() for o, i in shapes]
    return BatchedMaskedMLP(widths, k, masks, random_state=gen)


@pytest.mark.parametrize("widths", [(2, 3, 3, 3, 1), (2, 3, 4, 5, 1), (2, 8, 8, 8, 1), (2, 16, 3, 7, 1)])
def test_fused_gradients_equal_autograd(widths):
    x, y = cubist_spiral(300)
    model = _model(widths, 17)
    logits = model(x[:128])
    loss = torch.nn.functional.binary_cross_entropy_with_logits(
        logits, y[:128].unsqueeze(0).expand_as(logits), reduction="none").mean((1, 2)).sum()
    params = list(model.weights) + list(model.biases)
    reference = torch.autograd.grad(loss, params)
    fill_gradients(model, x[:128], y[:128])
    for p, r in zip(params, reference):
        assert torch.allclose(p.grad, r, rtol=1e-5, atol=1e-7), (p.grad - r).abs().max()
    for w, m in zip(model.weights, model.masks):  # a masked weight gets no gradient
        assert bool((w.grad[m == 0] == 0).all())


def test_training_through_the_kernel_equals_autograd_within_rounding():
    x, y = cubist_spiral(512)
    runs = []
    for fused in (True, False):
        model = _model((2, 3, 3, 3, 1), 6, seed=3)
        train_batched(model, x, y, epochs=3, batch_size=64, lr=[0.05, 0.1, 0.2] * 2, fused=fused,
                      random_state=1)
        runs.append(model.snapshot())
    for a, b in zip(runs[0]["weights"] + runs[0]["biases"], runs[1]["weights"] + runs[1]["biases"]):
        assert torch.allclose(a, b, atol=1e-4), (a - b).abs().max()


def test_models_the_kernel_does_not_cover():
    x, y = cubist_spiral(256)
    wide = _model((2, 64, 64, 64, 1), 2)
    deep = _model((2, 3, 3, 1), 2)
    assert not supported(wide) and not supported(deep) and supported(_model((2, 3, 3, 3, 1), 2))
    with pytest.raises(ValueError, match="fused=True"):
        train_batched(deep, x, y, epochs=1, batch_size=64, fused=True)
    train_batched(deep, x, y, epochs=1, batch_size=64)  # autograd by default
    assert all(bool(torch.isfinite(w).all()) for w in deep.weights)
