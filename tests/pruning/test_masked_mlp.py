"""Batched masked MLPs: one batched run equals single training, masks stay applied, schedules, bad input."""

import math

import pytest
import torch

from icml24.pruning import BatchedMaskedMLP, cubist_spiral, lr_at, train_batched


def _single_reference(model, k, mask, x, y, epochs, lr, order_gen):
    """Network k trained alone the official way: nn.Linear layers, torch.optim.SGD, mask applied before and
    after every step (FourLayerMLP.apply_mask), the same batch order."""
    layers = [torch.nn.Linear(i, o) for o, i in model.shapes]
    with torch.no_grad():
        for layer, w, b in zip(layers, model.weights, model.biases):
            layer.weight.copy_(w[k])
            layer.bias.copy_(b[k])
    net = torch.nn.Sequential(layers[0], torch.nn.ReLU(), layers[1], torch.nn.ReLU(), layers[2], torch.nn.ReLU(),
                              layers[3])
    bias_masks = [(mask[l + 1].sum(0) > 0).float() for l in range(3)] + [torch.ones(1)]

    def apply():
        with torch.no_grad():
            for layer, m, bm in zip(layers, mask, bias_masks):
                layer.weight.mul_(m)
                layer.bias.mul_(bm)

    opt = torch.optim.SGD(net.parameters(), lr=lr, momentum=0.9, weight_decay=5e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, epochs)
    for _ in range(epochs):
        order = torch.randperm(len(x), generator=order_gen)
        for i in range(len(x) // 16):
            idx = order[i * 16:(i + 1) * 16]
            apply()
            opt.zero_grad()
            torch.nn.functional.binary_cross_entropy_with_logits(net(x[idx]), y[idx]).backward()
            opt.step()
            apply()
        sched.step()
    return [layer.weight.detach() for layer in layers]


def test_batched_training_equals_single_training_for_each_mask():
    x, y = cubist_spiral(200)
    torch.manual_seed(0)
    masks = [(torch.rand(3, o, i) > 0.3).float() for o, i in [(3, 2), (4, 3), (3, 4), (1, 3)]]
    model = BatchedMaskedMLP((2, 3, 4, 3, 1), 3, masks, random_state=1)
    start = model.snapshot()
    train_batched(model, x, y, epochs=3, batch_size=16, lr=0.1, random_state=2)
    for k in range(3):
        fresh = BatchedMaskedMLP((2, 3, 4, 3, 1), 3, masks)
        fresh.load_snapshot(start)
        ref = _single_reference(fresh, k, [m[k] for m in masks], x, y, 3, 0.1, torch.Generator().manual_seed(2))
        for w, r in zip(model.weights, ref):
            assert torch.allclose(w[k], r, atol=1e-5), (k, (w[k] - r).abs().max())
        assert all(bool((w[k][m[k] == 0] == 0).all()) for w, m in zip(model.weights, masks))  # masks held


def test_a_network_trains_the_same_alone_or_in_a_batch():
    x, y = cubist_spiral(200)
    batch = BatchedMaskedMLP((2, 3, 3, 3, 1), 4, random_state=0)
    alone = BatchedMaskedMLP((2, 3, 3, 3, 1), 1)
    alone.load_snapshot({k: [v[2:3].clone() for v in vs] for k, vs in batch.snapshot().items()})
    train_batched(batch, x, y, epochs=2, batch_size=32, random_state=5)
    train_batched(alone, x, y, epochs=2, batch_size=32, random_state=5)
    for a, b in zip(batch.weights, alone.weights):
        assert torch.allclose(a[2], b[0], atol=1e-6)


def test_bias_of_a_unit_without_outgoing_weights_is_dropped_and_nnz_counts_weights():
    masks = [torch.ones(3, 2), torch.tensor([[1.0, 1, 0]] * 3), torch.ones(3, 3), torch.ones(1, 3)]
    model = BatchedMaskedMLP((2, 3, 3, 3, 1), 1, masks)
    assert model.bias_masks[0].tolist() == [[1.0, 1.0, 0.0]] and float(model.biases[0].detach()[0, 2]) == 0.0
    assert int(model.weight_nnz()[0]) == 6 + 6 + 9 + 3


def test_lr_schedules_follow_the_paper():
    assert lr_at(0, 50, 0.1, "cosine") == pytest.approx(0.1) and lr_at(25, 50, 0.1, "cosine") == pytest.approx(0.05)
    assert lr_at(14, 50, 0.1, "step") == 0.1 and lr_at(15, 50, 0.1, "step") == pytest.approx(0.01)
    assert lr_at(30, 50, 0.1, "step") == pytest.approx(0.001) and lr_at(49, 50, 0.1, "constant") == 0.1
    with pytest.raises(ValueError, match="schedule"):
        lr_at(0, 5, 0.1, "linear")
    assert math.isfinite(lr_at(50, 50, 0.1, "cosine"))


def test_one_batch_of_several_settings_trains_each_network_as_torch_sgd_would_alone():
    x, y = cubist_spiral(200)
    settings = [(0.05, "cosine"), (0.2, "step"), (0.1, "constant")]
    batch = BatchedMaskedMLP((2, 3, 3, 3, 1), 3, random_state=0)
    start = batch.snapshot()
    train_batched(batch, x, y, epochs=4, batch_size=32, lr=[a for a, _ in settings],
                  schedule=[b for _, b in settings], random_state=5)
    for k, (lr, schedule) in enumerate(settings):
        alone = BatchedMaskedMLP((2, 3, 3, 3, 1), 1)
        alone.load_snapshot({key: [v[k:k + 1].clone() for v in vs] for key, vs in start.items()})
        train_batched(alone, x, y, epochs=4, batch_size=32, lr=lr, schedule=schedule,
                      random_state=5)
        for a, b in zip(batch.weights, alone.weights):
            assert torch.allclose(a[k], b[0], atol=1e-5), (k, (a[k] - b[0]).abs().max())
    with pytest.raises(ValueError, match="one per network"):
        train_batched(batch, x, y, epochs=1, batch_size=32, lr=[0.1, 0.2])
    with pytest.raises(ValueError, match="lr must be finite"):
        train_batched(batch, x, y, epochs=1, batch_size=32, lr=float("inf"))
    with pytest.raises(ValueError, match="schedule"):
        train_batched(batch, x, y, epochs=1, batch_size=32, schedule=["cosine", "step", "cyclic"])
    with pytest.raises(ValueError, match="epochs"):
        train_batched(batch, x, y, epochs=0, batch_size=32)


def test_bad_input_is_rejected_with_a_message():
    with pytest.raises(ValueError, match="must hold only 0/1"):
        BatchedMaskedMLP((2, 3, 1), 1, [torch.full((3, 2), 0.5), torch.ones(1, 3)])
    with pytest.raises(ValueError, match=r"must be \[1, 3, 2\]"):
        BatchedMaskedMLP((2, 3, 1), 1, [torch.ones(2, 2), torch.ones(1, 3)])
    with pytest.raises(ValueError, match="init_widths"):
        BatchedMaskedMLP((2, 3, 1), 1, init_widths=(2, 2, 1))
    x = torch.zeros(64, 2)
    x[0, 0] = float("nan")
    with pytest.raises(ValueError, match="x contains NaN"):
        train_batched(BatchedMaskedMLP((2, 3, 1), 1), x, torch.zeros(64, 1), epochs=1, batch_size=32)
