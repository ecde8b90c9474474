"""Residual Propagation against explicit dense-matrix formulas on small graphs."""

import math
import warnings

import numpy as np
import pytest
import torch
from torch_geometric.data import Data

from icml24.graph import GeneralizedRP, ResidualPropagation, normalize_features, normalized_adjacency
from icml24.graph.operators import normalized_gaussian_kernel_matmul


def small_graph(n=14, num_classes=3, seed=0, isolated_val=False):
    rng = np.random.default_rng(seed)
    edges = rng.integers(0, n, (2, 3 * n))
    edges = np.concatenate([edges, [[0, 0], [1, 1]]], axis=1)  # a duplicate and a self-loop
    y = torch.from_numpy(np.arange(n) % num_classes)
    train = torch.zeros(n, dtype=torch.bool)
    train[: 2 * num_classes] = True
    val = torch.zeros(n, dtype=torch.bool)
    val[2 * num_classes: 2 * num_classes + 4] = True
    edge_index = torch.from_numpy(edges).long()
    if isolated_val:  # validation nodes without any edge: their scores never move
        keep = ~(val[edge_index[0]] | val[edge_index[1]])
        edge_index = edge_index[:, keep]
    x = torch.from_numpy(rng.random((n, 5)))
    return Data(x=x, edge_index=edge_index, y=y, train_mask=train, val_mask=val, num_nodes=n)


def dense_operator(data):
    n = data.num_nodes
    a = torch.zeros(n, n, dtype=torch.float64)
    a[data.edge_index[0], data.edge_index[1]] = 1.0
    a = ((a + a.T) > 0).double()
    a.fill_diagonal_(1.0)
    d = a.sum(1).rsqrt()
    return d[:, None] * a * d[None, :]


def explicit_rp(operator, data, steps, lr):
    """The algorithm box with dense matrices: R <- R - lr * P [R_L ; 0]; returns F of every step."""
    n, c = data.num_nodes, int(data.y.max()) + 1
    y = torch.nn.functional.one_hot(data.y, c).double()
    residuals = torch.zeros(n, c, dtype=torch.float64)
    residuals[data.train_mask] = y[data.train_mask]
    history = []
    for _ in range(steps):
        masked = residuals * data.train_mask[:, None]
        residuals = residuals - lr * operator @ masked
        scores = -residuals.clone()
        scores[data.train_mask] += y[data.train_mask]
        history.append(scores)
    return history


def test_normalized_adjacency_matches_dense_formula():
    data = small_graph()
    s = normalized_adjacency(data.edge_index, data.num_nodes)
    torch.testing.assert_close(s.to_dense(), dense_operator(data))


@pytest.mark.parametrize("solver", ["spectral", "iterative"])
def test_one_step_equals_matrix_formula(solver):
    data = small_graph()
    s = dense_operator(data)
    lr, k = 0.7, 2
    no_validation = torch.zeros_like(data.train_mask)
    model = ResidualPropagation(steps=1, lr=lr, k=k, solver=solver).fit(data, val_mask=no_validation)
    y = torch.nn.functional.one_hot(data.y, 3).double()
    r0 = torch.zeros_like(y)
    r0[data.train_mask] = y[data.train_mask]
    r1 = r0 - lr * torch.linalg.matrix_power(s, k) @ r0  # R_1 = R_0 - eta S^k [Y_L ; 0]
    expected = -r1
    expected[data.train_mask] += y[data.train_mask]
    torch.testing.assert_close(model.decision_function(), expected)


@pytest.mark.parametrize("selection", ["first", "last"])
def test_spectral_iterative_and_explicit_agree_over_steps(selection):
    data = small_graph(seed=3)
    s = dense_operator(data)
    steps, lr, k = 9, 0.9, 3
    history = explicit_rp(torch.linalg.matrix_power(s, k), data, steps, lr)
    val = data.val_mask
    expected_acc = np.array([float((h[val].argmax(1) == data.y[val]).double().mean()) for h in history])
    best = int(np.argmax(expected_acc) if selection == "first" else steps - 1 - np.argmax(expected_acc[::-1]))
    models = [ResidualPropagation(steps=steps, lr=lr, k=k, solver=solver, selection=selection).fit(data)
              for solver in ("spectral", "iterative")]
    for model in models:
        np.testing.assert_allclose(model.val_accuracy_, expected_acc)
        assert model.best_step_ == best + 1
        torch.testing.assert_close(model.decision_function(), history[best])


def test_alpha_below_one_uses_personalized_propagation():
    data = small_graph(seed=5)
    s = dense_operator(data)
    alpha, k = 0.6, 3
    # k steps of y <- alpha S y + (1 - alpha) r, a linear map M applied to r
    m = torch.eye(data.num_nodes, dtype=torch.float64)
    for _ in range(k):
        m = alpha * s @ m + (1 - alpha) * torch.eye(data.num_nodes, dtype=torch.float64)
    history = explicit_rp(m, data, 4, 1.0)
    for solver in ("spectral", "iterative"):
        model = ResidualPropagation(steps=4, lr=1.0, k=k, alpha=alpha, solver=solver).fit(data, val_mask=None)
        assert model.best_step_ in range(1, 5)
        torch.testing.assert_close(model.decision_function(), history[model.best_step_ - 1])


def test_generalized_rp_equals_explicit_kernel_formula():
    data = small_graph(seed=7)
    s = dense_operator(data)
    gamma, k, lr, steps = 2.0, 2, 1.5, 5
    x = normalize_features(data.x)
    g = torch.exp(-gamma * torch.cdist(x, x) ** 2)
    dinv = g.sum(1).rsqrt()
    kernel = dinv[:, None] * g * dinv[None, :]
    sk = torch.linalg.matrix_power(s, k)
    history = explicit_rp(sk @ kernel @ sk, data, steps, lr)
    for solver in ("spectral", "iterative"):
        model = GeneralizedRP(steps=steps, lr=lr, k=k, gamma=gamma, solver=solver).fit(data)
        torch.testing.assert_close(model.decision_function(), history[model.best_step_ - 1])
    assert "gamma=2.0" in repr(model)


@pytest.mark.parametrize("density", [1.0, 0.02])
def test_blockwise_kernel_product_equals_dense(density):
    rng = np.random.default_rng(1)
    x = torch.from_numpy(rng.random((11, 40)) * (rng.random((11, 40)) < density))  # 0.02: the sparse path
    z = torch.from_numpy(rng.random((11, 3)))
    g = torch.exp(-0.5 * torch.cdist(x, x) ** 2)
    dinv = g.sum(1).rsqrt()
    expected = (dinv[:, None] * g * dinv[None, :]) @ z
    torch.testing.assert_close(normalized_gaussian_kernel_matmul(x, 0.5, z, block_size=4), expected)


@pytest.mark.parametrize("solver", ["spectral", "iterative"])
def test_unstable_step_size_warns(solver):
    data = small_graph()
    with pytest.warns(RuntimeWarning, match="diverge"):
        ResidualPropagation(steps=3, lr=50.0, k=1, solver=solver).fit(data)


def test_tie_rule_first_versus_last():
    data = small_graph(isolated_val=True)  # validation scores stay 0: same accuracy at every step
    first = ResidualPropagation(steps=6, lr=0.5, k=1, selection="first").fit(data)
    last = ResidualPropagation(steps=6, lr=0.5, k=1, selection="last").fit(data)
    assert np.all(first.val_accuracy_ == first.val_accuracy_[0])
    assert first.best_step_ == 1 and last.best_step_ == 6


def test_predict_proba_and_predict():
    data = small_graph()
    model = ResidualPropagation(steps=5, lr=0.5, k=2).fit(data)
    proba = model.predict_proba()
    assert torch.all(proba >= 0)
    torch.testing.assert_close(proba.sum(1), torch.ones(data.num_nodes, dtype=torch.float64))
    assert model.predict().shape == (data.num_nodes,)
    assert math.isfinite(model.best_val_accuracy_)


def test_input_errors_say_what_to_fix():
    data = small_graph()
    with pytest.raises(ValueError, match="solver"):
        ResidualPropagation(solver="magic").fit(data)
    with pytest.raises(ValueError, match="overlap"):
        ResidualPropagation(steps=2).fit(data, val_mask=data.train_mask.clone())
    with pytest.raises(ValueError, match="train_mask"):
        ResidualPropagation(steps=2).fit(Data(edge_index=data.edge_index, y=data.y, num_nodes=data.num_nodes))
    with pytest.raises(ValueError, match="GiB"):
        GeneralizedRP(max_kernel_nodes=5).fit(data)
    with pytest.raises(ValueError, match="fit"):
        ResidualPropagation().predict()


@pytest.mark.slow
def test_generalized_rp_on_cora_matches_paper():
    from icml24.data import planetoid

    try:
        data = planetoid("cora", download=False)
    except FileNotFoundError:
        pytest.skip("Cora raw files not available")
    model = GeneralizedRP(steps=20000, lr=10, k=3, gamma=1).fit(data)
    accuracy = float((model.predict()[data.test_mask] == data.y[data.test_mask]).float().mean())
    assert accuracy > 0.81  # paper: 82.7


def test_predicting_before_fit_raises_not_fitted():
    from icml24._validation import NotFittedError
    from icml24.graph import GDEM, GeneralizedRP, ResidualPropagation

    for model in (GeneralizedRP(), ResidualPropagation()):
        with pytest.raises(NotFittedError, match="call fit"):
            model.predict()
    with pytest.raises(NotFittedError, match="call fit"):
        _ = GDEM().graph_


def test_labels_that_are_not_class_indices_are_rejected():
    data = small_graph()
    data.y = data.y.double()
    with pytest.raises(ValueError, match="integer class indices"):
        ResidualPropagation(steps=2).fit(data)
    data = small_graph()
    data.y = data.y.clone()
    data.y[data.val_mask.nonzero()[0]] = -1
    with pytest.raises(ValueError, match="label -1"):
        ResidualPropagation(steps=2).fit(data)


def test_a_fit_below_the_majority_class_warns():
    data = small_graph(num_classes=2)
    data.y = data.y.clone()
    data.y[data.train_mask] = 0  # every training label is class 0 ...
    data.y[data.val_mask] = 1  # ... and every validation node is class 1: accuracy 0 against a majority share of 1
    data.y[-1] = 1
    with pytest.warns(RuntimeWarning, match="below the majority class"):
        ResidualPropagation(steps=5, k=2).fit(data)


def test_an_indefinite_operator_warns():
    # a 4-cycle with self-loops: S has eigenvalues 1, 1/3, 1/3, -1/3; with k = 1 and every node labelled, P_LL = S
    edge_index = torch.tensor([[0, 1, 2, 3], [1, 2, 3, 0]])
    data = Data(edge_index=edge_index, y=torch.tensor([0, 1, 0, 1]), num_nodes=4,
                train_mask=torch.ones(4, dtype=torch.bool))
    with pytest.warns(RuntimeWarning, match="negative eigenvalue"):
        model = ResidualPropagation(steps=3, k=1, solver="spectral").fit(data)
    assert model.lambda_min_ == pytest.approx(-1 / 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ResidualPropagation(steps=3, k=2, solver="spectral").fit(data)  # S^2 is positive semi-definite


def test_select_chooses_on_validation_only():
    from icml24.data import csbm

    data = csbm(num_nodes=120, num_features=20, num_classes=3, homophily=0.8, random_state=1, split=(0.2, 0.3))
    grid = {"k": [1, 2], "gamma": [1.0], "lr": [1.0]}
    model = GeneralizedRP.select(data, grid, steps=50)
    table = model.selection_
    assert [row["k"] for row in table] == [1, 2]
    assert model.best_val_accuracy_ == max(row["val_accuracy"] for row in table)
    assert model.k == table[[row["val_accuracy"] for row in table].index(model.best_val_accuracy_)]["k"]
    data.test_mask = ~data.test_mask  # the test split is never read: flipping it changes nothing
    assert GeneralizedRP.select(data, grid, steps=50).k == model.k
    with pytest.raises(ValueError, match="unknown hyperparameters"):
        GeneralizedRP.select(data, {"depth": [1]})


def test_generalized_rp_defaults_are_the_official_cora_settings():
    model = GeneralizedRP()
    assert (model.steps, model.lr, model.k, model.gamma) == (20000, 10.0, 3, 1.0)


@pytest.mark.parametrize("cls", [ResidualPropagation, GeneralizedRP])
@pytest.mark.parametrize("k", [0, -1, 2.0])
def test_k_below_one_is_refused_naming_k_and_its_range(cls, k):
    with pytest.raises(ValueError, match=r"k must be an int >= 1"):
        cls(steps=2, k=k).fit(small_graph())
