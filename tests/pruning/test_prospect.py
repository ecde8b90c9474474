"""ProsPr: the meta-gradient through zero steps is SNIP, through a few steps it equals a single-network autograd
reference (explicit SGD with momentum, with and without the official code's detached first momentum buffer), the
budget is met exactly and the masks are deterministic."""

import pytest
import torch

from icml24.pruning import BatchedMaskedMLP, cubist_spiral, prospr, prospr_scores, snip_scores


def _model(k=3, widths=(2, 4, 4, 4, 1), seed=0):
    return BatchedMaskedMLP(widths, k, random_state=seed)


def _reference_scores(model, k, x, y, steps, lr, momentum, batch_size, detach_first):
    """Network k alone: masks of ones on nn.Linear-shaped weights, SGD steps kept in the autograd graph."""
    ones = [torch.ones(w.shape[1:], requires_grad=True) for w in model.weights]
    params = [w[k].detach() * o for w, o in zip(model.weights, ones)] + [b[k].detach().clone().requires_grad_(True)
                                                                        for b in model.biases]

    def loss(p, i):
        xb, yb = x[i * batch_size:(i + 1) * batch_size], y[i * batch_size:(i + 1) * batch_size]
        h = xb
        for layer in range(4):
            h = torch.nn.functional.linear(h, p[layer], p[4 + layer])
            h = torch.relu(h) if layer < 3 else h
        return torch.nn.functional.binary_cross_entropy_with_logits(h, yb)

    velocity = None
    for i in range(steps):
        grads = torch.autograd.grad(loss(params, i), params, create_graph=True)
        if velocity is None:
            velocity = [g.detach() if detach_first else g for g in grads]
        else:
            velocity = [momentum * v + g for v, g in zip(velocity, grads)]
        params = [p - lr * v for p, v in zip(params, velocity)]
    return [g.abs() for g in torch.autograd.grad(loss(params, steps), ones)]


def test_zero_inner_steps_is_snip():
    x, y = cubist_spiral(256)
    model = _model()
    for ours, snip in zip(prospr_scores(model, x, y, steps=0, batch_size=64), snip_scores(model, x[:64], y[:64])):
        assert torch.allclose(ours, snip, atol=1e-7)


def test_meta_gradient_equals_single_network_autograd_through_three_momentum_steps():
    x, y = cubist_spiral(512)
    x, y = x[torch.randperm(len(x), generator=torch.Generator().manual_seed(1))], y
    model = _model(k=2)
    for detach in (True, False):
        ours = prospr_scores(model, x, y, steps=3, lr=0.1, momentum=0.9, batch_size=64, detach_first_momentum=detach)
        for k in range(2):
            ref = _reference_scores(model, k, x, y, steps=3, lr=0.1, momentum=0.9, batch_size=64, detach_first=detach)
            for a, b in zip(ours, ref):
                assert torch.allclose(a[k], b, atol=1e-6, rtol=1e-4)
    exact = prospr_scores(model, x, y, steps=3, batch_size=64, detach_first_momentum=False)
    official = prospr_scores(model, x, y, steps=3, batch_size=64)
    assert not all(torch.allclose(a, b) for a, b in zip(exact, official))  # the detach matters
    snip = snip_scores(model, x[:64], y[:64])
    assert not all(torch.allclose(a, b) for a, b in zip(official, snip))  # the inner steps change the scores


def test_budget_exactly_met_inside_the_current_mask_and_deterministic():
    x, y = cubist_spiral(256)
    model = _model(k=3, widths=(2, 6, 6, 6, 1))
    masks = [torch.ones_like(m) for m in model.masks]
    masks[1][:, :, 3:] = 0  # a pre-masked region (padding) is never chosen
    model.set_masks(masks)
    first = prospr(model, x, y, torch.tensor([5, 11, 20]), batch_size=64)
    assert [int(sum(m[k].sum() for m in first)) for k in range(3)] == [5, 11, 20]
    assert float(first[1][:, :, 3:].sum()) == 0
    again = prospr(model, x, y, torch.tensor([5, 11, 20]), batch_size=64)
    assert all(torch.equal(a, b) for a, b in zip(first, again))


def test_bad_input_is_rejected():
    x, y = cubist_spiral(256)
    with pytest.raises(ValueError, match="steps"):
        prospr_scores(_model(), x, y, steps=-1)
    with pytest.raises(ValueError, match="finite"):
        prospr_scores(_model(), x * float("nan"), y)
