"""Pruning schedules: the cubic GMP schedule and IMP's geometric rounds."""

import pytest

from icml24.pruning import BatchedMaskedMLP, GradualMagnitude, cubic_nnz, cubist_spiral, geometric_nnz, train_batched


def test_cubic_and_geometric_schedules_hit_their_end_points():
    assert cubic_nnz(0, 199, 10, 1000, 30) == 1000 and cubic_nnz(1990, 199, 10, 1000, 30) == 30
    assert cubic_nnz(995, 199, 10, 1000, 30) == int(30 + 970 * 0.125)  # half-way: (1 - 1/2)^3
    assert geometric_nnz(0, 5, 1000, 10) == 1000 and geometric_nnz(4, 5, 1000, 10) == 10
    assert geometric_nnz(2, 5, 1000, 10) == 100


def test_gmp_reaches_the_budget_even_on_a_short_run_and_only_prunes_its_networks():
    x, y = cubist_spiral(256)
    model = BatchedMaskedMLP((2, 4, 4, 4, 1), 2, random_state=0)
    train_batched(model, x, y, epochs=3, batch_size=64, on_step=GradualMagnitude(11, events=199, networks=[1]),
                  random_state=1)
    assert int(sum(m[1].sum() for m in model.masks)) == 11
    assert int(sum(m[0].sum() for m in model.masks)) == 8 + 16 + 16 + 4


def test_gmp_rejects_zero_events():
    with pytest.raises(ValueError, match="events"):
        GradualMagnitude(10, events=0)
