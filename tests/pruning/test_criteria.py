"""Pruning criteria: global magnitude against torch.nn.utils.prune, SNIP and GraSP against single-network
autograd, SynFlow and FORCE budgets, per-network independence."""

import pytest
import torch
from torch.nn.utils import prune

from icml24.pruning import (
    BatchedMaskedMLP,
    cubist_spiral,
    force,
    global_magnitude,
    grasp,
    grasp_scores,
    iterative_snip,
    keep_top,
    snip,
    snip_scores,
    synflow,
)


def _model(k=2, widths=(2, 4, 4, 4, 1), seed=0):
    return BatchedMaskedMLP(widths, k, random_state=seed)


def _linears(model, k):
    layers = []
    for w, b in zip(model.weights, model.biases):
        layer = torch.nn.Linear(w.shape[2], w.shape[1])
        with torch.no_grad():
            layer.weight.copy_(w[k])
            layer.bias.copy_(b[k])
        layers.append(layer)
    return layers


def test_global_magnitude_matches_torch_prune_global_unstructured():
    model = _model(k=3)
    ours = global_magnitude(model, 17)
    for k in range(3):
        layers = _linears(model, k)
        total = sum(layer.weight.numel() for layer in layers)
        prune.global_unstructured([(layer, "weight") for layer in layers], pruning_method=prune.L1Unstructured,
                                  amount=total - 17)
        for layer, m in zip(layers, ours):
            assert torch.equal(layer.weight_mask, m[k])


def test_keep_top_keeps_exactly_nnz_per_network_and_respects_allowed():
    scores = [torch.rand(4, 3, 2), torch.rand(4, 1, 3)]
    allowed = [torch.ones(4, 3, 2), torch.zeros(4, 1, 3)]
    kept = keep_top(scores, torch.tensor([0, 1, 3, 6]), allowed)
    assert [int(sum(m[k].sum() for m in kept)) for k in range(4)] == [0, 1, 3, 6]
    assert float(kept[1].sum()) == 0
    with pytest.raises(ValueError, match="nnz must be in"):
        keep_top(scores, 10)


def _single_loss(layers, x, y, temperature=1.0):
    h = x
    for i, layer in enumerate(layers):
        h = layer(h)
        if i < len(layers) - 1:
            h = torch.relu(h)
    return torch.nn.functional.binary_cross_entropy_with_logits(h / temperature, y)


def test_snip_scores_equal_single_network_autograd():
    x, y = cubist_spiral(300)
    model = _model(k=2)
    scores = snip_scores(model, x, y)
    layers = _linears(model, 1)
    grads = torch.autograd.grad(_single_loss(layers, x, y), [layer.weight for layer in layers])
    for s, g, layer in zip(scores, grads, layers):
        assert torch.allclose(s[1], (g * layer.weight).abs(), atol=1e-6)
    assert int(sum(m.sum() for m in snip(model, x, y, 10))) == 2 * 10


def test_grasp_scores_equal_single_network_hessian_gradient_product():
    x, y = cubist_spiral(300)
    model = _model(k=2)
    layers = _linears(model, 0)
    params = [layer.weight for layer in layers]
    for temperature in (1.0, 200.0):  # the official GraSP divides the logits by T = 200
        scores = grasp_scores(model, x, y, temperature=temperature)
        g = torch.autograd.grad(_single_loss(layers, x, y, temperature), params)
        grads = torch.autograd.grad(_single_loss(layers, x, y, temperature), params, create_graph=True)
        hg = torch.autograd.grad(sum((a * b).sum() for a, b in zip(grads, g)), params)
        for s, h, p in zip(scores, hg, params):
            assert torch.allclose(s[0], -p * h, atol=1e-6 / temperature ** 2, rtol=1e-4)
    kept = grasp(model, x, y, 12)
    with pytest.raises(ValueError, match="temperature"):
        grasp_scores(model, x, y, temperature=0.0)
    flat = torch.cat([s[0].flatten() for s in scores])
    chosen = torch.cat([m[0].flatten() for m in kept]).bool()
    assert flat[chosen].max() <= flat[~chosen].min()  # GraSP keeps the lowest scores


def test_synflow_is_data_free_hits_the_budget_and_one_shot_matches_path_norm_scores():
    model = _model(k=2)
    kept = synflow(model, 9, iterations=20)
    assert [int(sum(m[k].sum() for m in kept)) for k in range(2)] == [9, 9]
    one_shot = synflow(model, 9, iterations=1)
    w = [p.detach().abs()[0].double().requires_grad_(True) for p in model.weights]
    h = torch.ones(1, 2, dtype=torch.float64)
    for layer in w:
        h = h @ layer.T
    grads = torch.autograd.grad(h.sum(), w)
    expected = keep_top([(g * p).abs().unsqueeze(0).detach() for g, p in zip(grads, w)], 9)
    for a, b in zip(one_shot, expected):
        assert torch.equal(a[0], b[0])


def test_iterative_snip_and_force_hit_the_budget_and_leave_weights_intact():
    x, y = cubist_spiral(300)
    model = _model(k=2)
    before = [w.detach().clone() for w in model.weights]
    for masks in (iterative_snip(model, x, y, 8, iterations=5), force(model, x, y, 8, iterations=5)):
        assert [int(sum(m[k].sum() for m in masks)) for k in range(2)] == [8, 8]
    assert all(torch.equal(a, b.detach()) for a, b in zip(before, model.weights))
    assert all(bool((m == 1).all()) for m in model.masks)  # the model's own masks are restored
