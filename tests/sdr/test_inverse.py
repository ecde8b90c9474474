"""SIR, SAVE and directional regression against naive per-slice reference implementations, and their regimes."""

import math

import numpy as np
import pytest

from icml24.sdr import SAVE, SIR, DirectionalRegression, single_index_data, subspace_distance
from icml24.sdr._base import slice_labels


def naive_whiten(X):
    mean = X.mean(axis=0)
    cov = sum(np.outer(x - mean, x - mean) for x in X) / (len(X) - 1)
    values, vectors = np.linalg.eigh(cov)
    root = vectors @ np.diag(values ** -0.5) @ vectors.T
    return (X - mean) @ root, root


def naive_slices(y, h, floor=False):
    order = np.argsort(y)
    n = len(y)
    if floor:
        m = n // h
        sizes = [m] * (h - 1) + [n - m * (h - 1)]
    else:
        sizes = [n // h + (1 if i < n % h else 0) for i in range(h)]
    labels, start = np.empty(n, int), 0
    for i, size in enumerate(sizes):
        labels[order[start:start + size]] = i
        start += size
    return labels


def naive_kernel(method, X, y, h):
    Z, root = naive_whiten(X)
    p = X.shape[1]
    labels = naive_slices(y, h, floor=method == "dr")
    M, A, C = np.zeros((p, p)), np.zeros((p, p)), np.zeros((p, p))
    for s in range(h):
        rows = Z[labels == s]
        weight = len(rows) / len(Z)
        mean = rows.mean(axis=0)
        cov = np.cov(rows, rowvar=False)
        if method == "sir":
            M += weight * np.outer(mean, mean)
        elif method == "save":
            M += weight * (np.eye(p) - cov) @ (np.eye(p) - cov)
        else:
            second = cov + np.outer(mean, mean)
            A += weight * second @ second
            C += weight * np.outer(mean, mean)
    if method == "dr":
        M = 2 * A + 2 * C @ C + 2 * np.trace(C) * C - 2 * np.eye(p)
    values, vectors = np.linalg.eigh(M)
    return root @ vectors[:, -1]


@pytest.mark.parametrize("cls,method,h", [(SIR, "sir", 13), (SAVE, "save", 13), (DirectionalRegression, "dr", 6)])
@pytest.mark.parametrize("model", ["linear", "quadratic", "sine"])
def test_matches_naive_reference(cls, method, h, model):
    X, y, _ = single_index_data(model, np.random.default_rng(7), n=400)
    X = X @ np.random.default_rng(8).standard_normal((10, 10))  # correlated predictors exercise the whitening
    est = cls().fit(X, y)
    assert est.n_slices_ == h  # dr defaults: max(8, p + 3) for SIR/SAVE, ceil(log n) for DR
    assert subspace_distance(est.directions_, naive_kernel(method, X, y, h)) < 1e-8


def test_regimes_of_the_paper():
    """SIR is blind to the symmetric quadratic link; SAVE and DR see it; all recover the linear index."""
    rng = np.random.default_rng(0)
    errors = {cls: [] for cls in (SIR, SAVE, DirectionalRegression)}
    for _ in range(10):  # one sample can be lopsided enough for SIR to catch part of the direction
        X, y, beta = single_index_data("quadratic", rng)
        for cls, values in errors.items():
            values.append(subspace_distance(cls().fit(X, y).directions_, beta))
    assert np.mean(errors[SIR]) > 0.8
    assert np.mean(errors[SAVE]) < 0.3 and np.mean(errors[DirectionalRegression]) < 0.3
    X, y, beta = single_index_data("linear", rng)
    for cls in (SIR, SAVE, DirectionalRegression):
        assert subspace_distance(cls().fit(X, y).directions_, beta) < 0.2


def test_slice_labels():
    y = np.arange(20.0)[::-1]
    balanced = slice_labels(y, 6)
    assert sorted(np.bincount(balanced)) == [3, 3, 3, 3, 4, 4]
    assert np.all(np.diff(balanced[np.argsort(y)]) >= 0)
    assert list(np.bincount(slice_labels(y, 6, sizes="floor"))) == [3, 3, 3, 3, 3, 5]
    tied = np.array([0, 0, 0, 0, 1, 1, 2, 3, 4, 5, 6, 7], dtype=float)
    labels = slice_labels(tied, 3)
    assert len(set(labels[:4])) == 1 and len(set(labels[4:6])) == 1
    assert list(slice_labels(np.array([2.0, 1.0, 2.0, 1.0]), 5)) == [1, 0, 1, 0]  # few values: one slice each
    with pytest.raises(ValueError, match="sizes"):
        slice_labels(y, 3, sizes="odd")


def loop_slice_labels(y, h, floor=False):
    """Slices by sorted position, each tie group in the slice of its first sorted member, renumbered 0, 1, ..."""
    n = len(y)
    if len(set(y)) <= h:
        return np.array([sorted(set(y)).index(v) for v in y])
    sizes = [n // h] * (h - 1) + [n - (h - 1) * (n // h)] if floor else [n // h + (i < n % h) for i in range(h)]
    by_position = [k for k, size in enumerate(sizes) for _ in range(size)]
    ordered = sorted(y)
    first = {v: by_position[ordered.index(v)] for v in set(y)}
    used = sorted(set(first.values()))
    return np.array([used.index(first[v]) for v in y])


@pytest.mark.parametrize("seed", range(6))
def test_slice_labels_match_the_definition(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 120))
    y = [rng.standard_normal(n), np.round(rng.standard_normal(n), 1), rng.integers(0, 6, n).astype(float)][seed % 3]
    for h in (2, 5, 13, n):
        for floor in (False, True):
            labels = slice_labels(y, h, sizes="floor" if floor else "balanced")
            assert labels.dtype == np.int64
            np.testing.assert_array_equal(labels, loop_slice_labels(list(y), h, floor))


def test_several_directions_and_checks():
    X, y, _ = single_index_data("linear", np.random.default_rng(1))
    est = SIR(n_directions=3).fit(X, y)
    assert est.directions_.shape == (10, 3) and est.transform(X).shape == (400, 3)
    np.testing.assert_allclose(np.linalg.norm(est.directions_, axis=0), 1.0)
    with pytest.raises(ValueError, match="n_directions"):
        SIR(n_directions=11).fit(X, y)
    with pytest.raises(ValueError, match="n_slices"):
        SAVE(n_slices=1).fit(X, y)
    assert DirectionalRegression().fit(X[:50], y[:50]).n_slices_ == math.ceil(math.log(50))
