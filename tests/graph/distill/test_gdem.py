import numpy as np
import pytest
import torch

from icml24.data import csbm
from icml24.graph.distill import GDEM, synthetic_label_counts, synthetic_labels
from icml24.graph.distill.initialization import sbm_eigenvectors


@pytest.fixture(scope="module")
def graph():
    return csbm(num_nodes=150, num_features=20, num_classes=3, homophily=0.8, feature_signal=2.0, random_state=0,
                avg_degree=6.0, split=(0.4, 0.2))


def small_gdem(**kw):
    params = dict(reduction_rate=0.5, eigen_k=12, ratio=0.75, epochs=40, epochs_u=3, epochs_x=2, mlp_epochs=20,
                  init_epochs=20, hidden=16, random_state=0)
    params.update(kw)
    return GDEM(**params)


def test_label_allocation_matches_rule():
    labels = torch.tensor([0] * 20 + [1] * 7 + [2] * 3)  # 30 training nodes, r = 0.25 -> 7 synthetic
    counts = synthetic_label_counts(labels, 0.25)
    # classes by ascending count: 2 -> max(int(0.75), 1) = 1, 1 -> int(1.75) = 1, 0 gets the rest 7 - 2 = 5
    np.testing.assert_array_equal(counts, [5, 1, 1])
    np.testing.assert_array_equal(synthetic_labels(labels, 0.25).numpy(), [2, 1, 0, 0, 0, 0, 0])


def test_random_state_is_stored_verbatim_and_a_generator_gives_its_ints_streams(graph):
    """One seed name (#46): ``random_state`` is a parameter (clone keeps it); ``default_rng(0)`` is used as is."""
    from sklearn.base import clone

    generator = np.random.default_rng(0)
    model = small_gdem(epochs=3, random_state=generator)
    assert model.get_params()["random_state"] is generator and clone(small_gdem()).random_state == 0
    by_int = small_gdem(epochs=3).fit(graph)
    torch.testing.assert_close(model.fit(graph).graph_.x, by_int.graph_.x)
    np.testing.assert_array_equal(sbm_eigenvectors(9, 3, 5), sbm_eigenvectors(9, 3, np.random.default_rng(5)))


def test_sbm_eigenvectors_orthonormal():
    u = sbm_eigenvectors(17, 3, np.random.default_rng(0))
    np.testing.assert_allclose(u.T @ u, np.eye(17), atol=1e-10)


def test_fit_shapes_and_history(graph):
    model = small_gdem().fit(graph)
    n_syn = int(graph.train_mask.sum() * 0.5)
    out = model.graph_
    assert out.x.shape == (n_syn, 20) and out.y.shape == (n_syn,) and out.adj.shape == (n_syn, n_syn)
    assert model.eigenvectors_.shape == (n_syn, 12) and model.eigenvalues_.shape == (12,)
    assert torch.allclose(out.adj, out.adj.T, atol=1e-6)
    assert all(np.isfinite(v).all() and len(v) == 40 for v in model.history_.values())
    assert "reduction_rate=0.5" in repr(model)
    # the first block of kept eigenvalues is the smallest of the real spectrum: 0 for a connected LCC
    assert abs(model.eigenvalues_[0].item()) < 1e-5


def test_alternating_updates_touch_only_one_block(graph):
    frozen_x = small_gdem(epochs_u=1, epochs_x=0, epochs=5).fit(graph)
    base = small_gdem(epochs=0).fit(graph)
    torch.testing.assert_close(frozen_x.graph_.x, base.graph_.x)  # X' never stepped
    assert not torch.allclose(frozen_x.eigenvectors_, base.eigenvectors_)


def test_synthetic_spectrum_equals_kept_eigenvalues_when_orthonormal(graph):
    model = small_gdem(epochs=0).fit(graph)
    q, _ = torch.linalg.qr(torch.randn(model.eigenvectors_.shape, dtype=torch.float64))
    model.eigenvectors_, model.eigenvalues_ = q.float(), model.eigenvalues_
    syn = model.synthetic_graph(model.graph_.x, model.graph_.y)
    spectrum = torch.linalg.eigvalsh((torch.eye(q.shape[0]) - syn.adj).double())
    kept = model.eigenvalues_.double()
    expected = torch.sort(torch.cat([kept, torch.zeros(q.shape[0] - len(kept), dtype=torch.float64)])).values
    torch.testing.assert_close(spectrum, expected, atol=1e-5, rtol=0)


def test_deterministic_and_validation(graph):
    a, b = small_gdem(epochs=10).fit(graph), small_gdem(epochs=10).fit(graph)
    torch.testing.assert_close(a.graph_.adj, b.graph_.adj)
    torch.testing.assert_close(a.graph_.x, b.graph_.x)
    bad = graph.clone()
    del bad.train_mask
    with pytest.raises(ValueError, match="train_mask"):
        small_gdem().fit(bad)


def test_top_up_uses_non_training_lcc_nodes(graph):
    model = small_gdem(use_non_train_labels=True)
    lcc = np.arange(graph.num_nodes)[np.arange(graph.num_nodes) % 2 == 0]  # pretend half the nodes form the LCC
    rows = model._train_rows_in_lcc(graph, lcc, np.random.default_rng(0))
    y, train = graph.y.numpy(), graph.train_mask.numpy()
    in_lcc = np.zeros(graph.num_nodes, bool)
    in_lcc[lcc] = True
    train_counts = np.bincount(y[train], minlength=3)
    inside = np.bincount(y[train & in_lcc], minlength=3)
    pool = np.bincount(y[~train & in_lcc], minlength=3)
    np.testing.assert_array_equal(np.bincount(y[lcc[rows]], minlength=3),
                                  np.minimum(train_counts, inside + pool))
    assert len(np.unique(rows)) == len(rows)
    assert len(small_gdem()._train_rows_in_lcc(graph, lcc, np.random.default_rng(0))) == inside.sum()


@pytest.mark.parametrize("params,message", [
    ({"epochs": -1}, r"epochs must be an integer >= 0"),
    ({"epochs": 2.5}, r"epochs must be an integer >= 0"),
    ({"mlp_epochs": -3}, r"mlp_epochs must be an integer >= 0"),
    ({"epochs_u": -1}, r"epochs_u must be an integer >= 0"),
    ({"hidden": 0}, r"hidden must be an integer >= 1"),
    ({"ratio": 1.5}, r"ratio must lie in \[0, 1\]"),
    ({"mlp_dropout": 1.0}, r"mlp_dropout must lie in \[0, 1\)"),
    ({"lr_features": -1e-3}, r"lr_features must be a finite learning rate > 0"),
])
def test_bad_hyperparameters_are_refused_at_fit_naming_them(graph, params, message):
    model = small_gdem(**params)  # the constructor only stores (scikit-learn's protocol)
    with pytest.raises(ValueError, match=message):
        model.fit(graph)
