"""RigL: the ERK allocation by hand, the cosine drop fraction, one drop-and-grow step by hand, the budget kept
exactly through training (per layer), padding never grown into, and determinism."""

import math

import pytest
import torch

from icml24.pruning import BatchedMaskedMLP, RigL, cubist_spiral, drop_fraction, erk_counts, rigl_update, train_batched


def test_erk_counts_by_hand():
    # (3,3,3): raw (n_in + n_out) / (n_in n_out) = 5/6, 6/9, 6/9, 4/3 on 6, 9, 9, 3 weights -> eps = 12 / 21,
    # wanted 2.86, 3.43, 3.43, 2.29 -> floors 2, 3, 3, 2 and the 2 left go to the largest remainders (layers 0, 1)
    assert erk_counts([(3, 2), (3, 3), (3, 3), (1, 3)], 12) == [3, 4, 3, 2]
    # width 32, 24 weights: wanted 4.18, 7.88, 7.88, 4.06
    assert erk_counts([(32, 2), (32, 32), (32, 32), (1, 32)], 24) == [4, 8, 8, 4]
    # a layer that would pass density 1 is kept dense and the rest re-solved
    counts = erk_counts([(3, 2), (3, 3), (3, 3), (1, 3)], 24)
    assert sum(counts) == 24 and counts[3] == 3 and all(c <= n for c, n in zip(counts, (6, 9, 9, 3)))
    for nnz in range(4, 28):
        counts = erk_counts([(3, 2), (3, 3), (3, 3), (1, 3)], nnz)
        assert sum(counts) == nnz and min(counts) >= 1
    with pytest.raises(ValueError, match="nnz must be in"):
        erk_counts([(3, 2), (1, 3)], 1)


def test_cosine_drop_fraction():
    assert drop_fraction(0, 0.3, 1000) == pytest.approx(0.3)
    assert drop_fraction(500, 0.3, 1000) == pytest.approx(0.15)
    assert drop_fraction(1000, 0.3, 1000) == pytest.approx(0.0)
    assert drop_fraction(250, 0.3, 1000) == pytest.approx(0.15 * (1 + math.cos(math.pi / 4)))


def test_one_drop_and_grow_step_by_hand():
    w = torch.tensor([[[0.5, -0.1, 0.3, 0.0, 0.0]]])
    m = torch.tensor([[[1.0, 1.0, 1.0, 0.0, 0.0]]])
    g = torch.tensor([[[0.0, 0.2, 5.0, 0.9, 0.4]]])
    support = torch.ones(1, 1, 5)
    # 3 active, fraction 0.4 -> drop floor(1.2) = 1: the smallest |w| (-0.1); grow 1 among the others: |g| 0.9
    (new,) = rigl_update([w], [m], [g], [support], 0.4)
    assert new.tolist() == [[[1.0, 0.0, 1.0, 1.0, 0.0]]]
    # outside the support nothing grows, and a just-dropped weight may come back
    (new,) = rigl_update([w], [m], [g], [torch.tensor([[[1.0, 1.0, 1.0, 0.0, 0.0]]])], 0.4)
    assert new.tolist() == [[[1.0, 1.0, 1.0, 0.0, 0.0]]]


def _run(seed=0, delta=5):
    x, y = cubist_spiral(512)
    model = BatchedMaskedMLP((2, 6, 6, 6, 1), 3, random_state=seed)
    masks = [m.clone() for m in model.masks]
    for m in masks:  # network 2 is a width-4 network padded to 6
        m[2, 4:, :] = 0
        if m.shape[2] == 6:
            m[2, :, 4:] = 0
    model.set_masks(masks)
    hook = RigL(15, networks=[0, 2], delta=delta, random_state=seed)
    counts = []

    def watch(model, step, total, **kwargs):
        hook(model, step, total, **kwargs)
        counts.append([[int(m[k].sum()) for m in model.masks] for k in range(3)])
        hook.total = total

    train_batched(model, x, y, epochs=3, batch_size=64, random_state=seed, on_step=watch)
    return model, hook, counts


def test_budget_kept_exactly_per_layer_padding_respected_and_deterministic():
    model, hook, counts = _run()
    assert hook.total == 21 and hook.updates_ == 2  # 506 points: 7 steps x 3 epochs; updates at 5, 10 < 0.75 * 21
    for k, shapes in ((0, [(6, 2), (6, 6), (6, 6), (1, 6)]), (2, [(4, 2), (4, 4), (4, 4), (1, 4)])):
        assert all(c[k] == erk_counts(shapes, 15) for c in counts)  # every layer keeps its ERK count, every step
    assert counts[-1][1] == [12, 36, 36, 6]  # the network RigL does not own stays dense
    assert float(model.masks[1][2, 4:].sum() + model.masks[1][2, :, 4:].sum()) == 0  # padding never grown into
    first = [m[[0, 2]] for m in _run()[0].masks]
    assert all(torch.equal(a, b[[0, 2]]) for a, b in zip(first, model.masks))
    other = _run(seed=1)[0]
    assert not all(torch.equal(a[[0, 2]], b[[0, 2]]) for a, b in zip(other.masks, model.masks))


def test_masks_change_and_grown_weights_start_at_zero_with_zero_momentum():
    x, y = cubist_spiral(256)
    model = BatchedMaskedMLP((2, 4, 4, 4, 1), 1, random_state=0)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    hook = RigL(10, delta=1, alpha=0.5, end_fraction=1.0, random_state=0)
    hook(model, 0, 100)
    before = [m.clone() for m in model.masks]
    for p in model.parameters():  # fill momentum everywhere
        optimizer.state[p]["momentum_buffer"] = torch.ones_like(p)
    hook(model, 1, 100, batch=(x[:64], y[:64]), optimizer=optimizer)
    grown = [(m > 0) & (b == 0) for m, b in zip(model.masks, before)]
    assert sum(int(g.sum()) for g in grown) > 0
    for w, m, g in zip(model.weights, model.masks, grown):
        buf = optimizer.state[w]["momentum_buffer"]
        assert float(w.detach()[g].abs().sum()) == 0 and float(buf[m == 0].abs().sum()) == 0


def test_bad_settings_are_rejected():
    with pytest.raises(ValueError, match="delta"):
        RigL(10, delta=0)
    with pytest.raises(ValueError, match="alpha"):
        RigL(10, alpha=1.5)


@pytest.mark.parametrize("step,end,message", [(0, 0, r"end must be a number of steps > 0"),
                                               (1, -5, r"end must be a number of steps > 0"),
                                               (-1, 10, r"step must be >= 0")])
def test_drop_fraction_refuses_a_schedule_without_steps(step, end, message):
    with pytest.raises(ValueError, match=message):
        drop_fraction(step, 0.3, end)
