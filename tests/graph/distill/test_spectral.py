import numpy as np
import pytest
import torch

from icml24.graph.distill.spectral import (
    _adjacency,
    clear_memory_cache,
    laplacian_eigenpairs,
    largest_connected_component,
    normalized_laplacian,
    select_eigenpairs,
)


def two_components(seed=0):
    """A 30-node connected random graph plus a separate 4-node path."""
    rng = np.random.default_rng(seed)
    big = np.array([(i, j) for i in range(30) for j in range(i + 1, 30) if rng.random() < 0.2] +
                   [(i, i + 1) for i in range(29)]).T
    small = np.array([[30, 31, 32], [31, 32, 33]])
    return torch.as_tensor(np.concatenate([big, small], axis=1)), 34


def test_largest_connected_component():
    edges, n = two_components()
    np.testing.assert_array_equal(largest_connected_component(edges, n), np.arange(30))


def test_eigenpairs_satisfy_eigen_equation():
    edges, n = two_components()
    spec = laplacian_eigenpairs(edges, n)
    adj = _adjacency(edges, n)[spec.lcc_index][:, spec.lcc_index]
    lap = normalized_laplacian(adj).toarray()
    # closed form of the renormalized Laplacian for one entry: 1 - 1/deg~ on the diagonal
    deg = adj.toarray().sum(1) + 1
    np.testing.assert_allclose(np.diag(lap), 1 - 1 / deg)
    u, lam = spec.eigenvectors, spec.eigenvalues
    np.testing.assert_allclose(lap @ u, u * lam, atol=1e-10)
    np.testing.assert_allclose(u.T @ u, np.eye(30), atol=1e-10)
    assert lam.min() > -1e-10 and lam.max() < 2
    assert abs(lam[0]) < 1e-10  # connected: one zero eigenvalue


def test_sparse_path_matches_dense():
    edges, n = two_components(1)
    dense = laplacian_eigenpairs(edges, n)
    sparse = laplacian_eigenpairs(edges, n, num_smallest=4, num_largest=3, dense_limit=10)
    assert not sparse.complete and sparse.num_smallest == 4
    values_d, _ = select_eigenpairs(dense, 6, 0.5)
    values_s, vectors_s = select_eigenpairs(sparse, 6, 0.5)
    np.testing.assert_allclose(values_s, values_d, atol=1e-6)
    adj = _adjacency(edges, n)[sparse.lcc_index][:, sparse.lcc_index]
    np.testing.assert_allclose(normalized_laplacian(adj) @ vectors_s, vectors_s * values_s, atol=1e-5)
    with pytest.raises(ValueError, match="smallest"):
        select_eigenpairs(sparse, 10, 0.9)


def test_select_counts_and_disk_cache_only_when_asked(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    edges, n = two_components(2)
    clear_memory_cache()
    laplacian_eigenpairs(edges, n)
    assert not any(tmp_path.rglob("*"))  # the default writes nothing
    spec = laplacian_eigenpairs(edges, n, cache_dir=tmp_path / "eig", recompute=True)
    assert len(list((tmp_path / "eig").glob("*.npz"))) == 1 and spec.seconds > 0
    clear_memory_cache()
    assert laplacian_eigenpairs(edges, n, cache_dir=tmp_path / "eig").seconds == 0.0  # read back from disk
    values, vectors = select_eigenpairs(spec, 10, 0.75)  # K1 = ceil(7.5) = 8 smallest, K2 = 2 largest
    np.testing.assert_allclose(values[:8], spec.eigenvalues[:8])
    np.testing.assert_allclose(values[8:], spec.eigenvalues[-2:])
    assert vectors.shape == (30, 10)
