"""LP relaxations of the collective certificate: reduction exactness, relaxation direction, official numbers."""

import os
import random
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from icml24.graph.certify import (
    CollectiveCertificate,
    bqclp_optimum,
    flip_weights,
    lp1,
    lp2,
    lp2_reduced,
    path_cost,
    path_costs,
    three_hop_paths,
)


def random_instance(seed, n=30, num_targets=8, density=0.12):
    rng = np.random.default_rng(seed)
    upper = np.triu(rng.random((n, n)) < density, 1)
    adj = sp.csr_matrix(upper | upper.T, dtype=float)
    targets = rng.choice(n, num_targets, replace=False)
    p_a = rng.uniform(0.6, 1.0, num_targets)
    p_b = np.minimum(1 - p_a, rng.uniform(0.0, 0.3, num_targets))
    return adj, targets, flip_weights(p_a, p_b)


@pytest.mark.parametrize("seed,rho,tau", [(0, 3, 2), (1, 5, 3), (2, 8, 6), (3, 1, 4)])
def test_reduced_lp2_equals_lp2(seed, rho, tau):
    adj, targets, weights = random_instance(seed)
    c1, c2 = path_costs(0.7, 0.6)
    reduced = lp2_reduced(adj, targets, weights, rho, tau, c1, c2).value
    assert lp2(adj, targets, weights, rho, tau, c1, c2).value == pytest.approx(reduced, abs=1e-6)
    assert lp2(adj, targets, weights, rho, tau, c1, c2, restrict=False).value == pytest.approx(reduced, abs=1e-6)


@pytest.mark.parametrize("seed", [0, 1])
def test_relaxations_bound_the_binary_program(seed):
    adj, targets, weights = random_instance(seed, n=6, num_targets=4, density=0.4)
    adj = adj.toarray()
    c1, c2 = path_costs(0.6, 0.5)
    for rho, tau in [(1, 2), (2, 2)]:
        exact = bqclp_optimum(adj, targets, weights, rho, tau, c1, c2)
        assert lp1(adj, targets, weights, rho, tau, c1, c2).value >= exact - 1e-7
        assert lp2(adj, targets, weights, rho, tau, c1, c2).value >= exact - 1e-7


def test_lp_is_monotone_in_budget_and_respects_fixed_nodes():
    adj, targets, weights = random_instance(4, n=60, num_targets=15)
    c1, c2 = path_costs(0.9, 0.8)
    values = [lp2_reduced(adj, targets, weights, rho, 6, c1, c2).value for rho in (5, 20, 60, 200)]
    assert np.all(np.diff(values) >= -1e-7)
    assert values[-1] <= targets.size + 1e-7
    fixed = np.zeros(targets.size, dtype=bool)
    fixed[:5] = True
    assert lp2_reduced(adj, targets, weights, 60, 6, c1, c2, certified_mask=fixed).value <= values[2] + 1e-7
    assert lp2_reduced(adj, targets, weights, 60, 6, c1, c2, certified_mask=np.ones(targets.size, bool)).value == 0


def test_single_target_closed_form():
    """One isolated target and one injected node: m* = (c1 + c2) / w.

    The 2-hop term c2 appears because LP2 bounds z = A2 e by U = min(tau, rho) = 1, not rho - 1 = 0 (as the paper).
    """
    adj = sp.csr_matrix((3, 3))
    c1, c2 = path_costs(0.9, 0.8)
    w = np.array([3 * c1])
    assert lp2_reduced(adj, [0], w, 1, 6, c1, c2).value == pytest.approx((c1 + c2) / w[0])
    assert lp2(adj, [0], w, 1, 6, c1, c2).value == pytest.approx((c1 + c2) / w[0])
    assert lp1(adj, [0], w, 1, 6, c1, c2).value >= c1 / w[0] - 1e-9
    assert lp2_reduced(adj, [0], np.array([0.5 * c1]), 1, 6, c1, c2).value == pytest.approx(1.0)


def test_certificate_estimator():
    adj, targets, weights = random_instance(5, n=40, num_targets=10)
    p_a = np.full(40, 0.99)
    p_b = np.full(40, 0.005)
    cert = CollectiveCertificate(p_e=0.9, p_n=0.8, tau=6).fit(adj, p_a, p_b, targets, rho=50)
    assert 0 <= cert.certified_ratio_ <= 1
    assert cert.certified_count_ == targets.size - int(np.ceil(cert.max_flipped_ - 1e-6))
    with pytest.raises(ValueError, match="relaxation"):
        CollectiveCertificate(relaxation="lp9").fit(adj, p_a, p_b, targets, rho=5)
    assert "lp2_reduced" in repr(cert)


DATA = Path(os.environ.get("ICML24_DATA", "/nonexistent")) / "collective-cert"


@pytest.mark.skipif(not (DATA / "cora_ml_gcn_votes_pe0.9_pn0.8.npz").is_file(), reason="set ICML24_DATA")
def test_official_cora_votes_optimum():
    """Official Cora-ML GCN votes, official split and target sampling (seed 2021): M* = 19.384 at rho = 100."""
    from icml24.data.cert_graphs import cert_graph, cert_split, cert_votes
    from icml24.graph.certify import clopper_pearson

    data, votes = cert_graph("cora_ml"), cert_votes()
    y = data.y.numpy()
    _, _, test = cert_split(y, 50, 2020)
    p_a, p_b = clopper_pearson(votes["count_top"], votes["count_runner_up"], votes["num_samples"], 2 * 0.01 / 7)
    correct = test[votes["top2"][test, 0] == y[test]]
    targets = np.array(random.Random(2021).sample(list(correct), 100))
    ei = data.edge_index.numpy()
    adj = sp.csr_matrix((np.ones(ei.shape[1]), ei), shape=(y.size, y.size))
    cert = CollectiveCertificate(0.9, 0.8, 6, hops=2).fit(adj, p_a, p_b, targets, rho=100)  # the paper's LP2
    assert cert.max_flipped_ == pytest.approx(19.384, abs=1e-3)
    assert cert.certified_ratio_ == pytest.approx(0.80)
    sound = CollectiveCertificate(0.9, 0.8, 6).fit(adj, p_a, p_b, targets, rho=100)  # 3 hops: c3 = 8e-6 is tiny
    assert cert.max_flipped_ < sound.max_flipped_ < cert.max_flipped_ + 0.5


@pytest.mark.skipif(not (DATA / "cora_ml_gcn_votes_pe0.9_pn0.8.npz").is_file(), reason="set ICML24_DATA")
@pytest.mark.parametrize("target_set", [0, 3])
def test_official_cora_votes_reduced_lp2_equals_the_papers_lp2(target_set):
    """The symmetry reduction is exact on the official votes too: the paper's LP2 over all rho x n entries of A1
    (restrict=False) has the reduced LP2's optimum, on official target sets (the identity the paper's report shows
    as a regime, lp2_optimum_gap_max)."""
    from icml24.data.cert_graphs import cert_graph, cert_split, cert_votes
    from icml24.graph.certify import clopper_pearson

    data, votes = cert_graph("cora_ml"), cert_votes()
    y = data.y.numpy()
    _, _, test = cert_split(y, 50, 2020)
    p_a, p_b = clopper_pearson(votes["count_top"], votes["count_runner_up"], votes["num_samples"], 2 * 0.01 / 7)
    correct = test[votes["top2"][test, 0] == y[test]]
    targets = np.array(random.Random(2021 + target_set).sample(list(correct), 100))
    ei = data.edge_index.numpy()
    adj = sp.csr_matrix((np.ones(ei.shape[1]), ei), shape=(y.size, y.size))
    weights = flip_weights(p_a[targets], p_b[targets])
    c1, c2 = path_costs(0.9, 0.8)
    for rho in (3, 8):
        reduced = lp2_reduced(adj, targets, weights, rho, 6, c1, c2)
        full = lp2(adj, targets, weights, rho, 6, c1, c2, restrict=False)
        assert full.num_variables > 10 * reduced.num_variables
        assert full.value == pytest.approx(reduced.value, abs=1e-6)


def test_path_costs_and_three_hop_paths():
    keep = 0.3 * 0.4
    assert path_cost(3, 0.7, 0.6) == pytest.approx(-np.log(1 - keep**3))
    assert path_costs(0.7, 0.6) == (path_cost(1, 0.7, 0.6), path_cost(2, 0.7, 0.6))
    with pytest.raises(ValueError, match="path length"):
        path_cost(0, 0.5, 0.5)
    path = sp.csr_matrix(np.eye(4, k=1) + np.eye(4, k=-1))  # 0-1-2-3
    three = three_hop_paths(path).toarray()
    assert three[0, 2] == 1 and three[1, 3] == 1 and np.trace(three) == 0 and three[0, 3] == 0


@pytest.mark.parametrize("seed,rho,tau", [(0, 3, 2), (2, 8, 6)])
def test_three_hop_term_keeps_the_reduction_exact_and_only_adds(seed, rho, tau):
    adj, targets, weights = random_instance(seed)
    c1, c2 = path_costs(0.7, 0.6)
    c3 = path_cost(3, 0.7, 0.6)
    reduced = lp2_reduced(adj, targets, weights, rho, tau, c1, c2, c3=c3)
    assert lp2(adj, targets, weights, rho, tau, c1, c2, c3=c3).value == pytest.approx(reduced.value, abs=1e-6)
    full = lp2(adj, targets, weights, rho, tau, c1, c2, restrict=False, c3=c3).value
    assert full == pytest.approx(reduced.value, abs=1e-6)  # N²[T] columns suffice
    assert reduced.value >= lp2_reduced(adj, targets, weights, rho, tau, c1, c2).value - 1e-9
    assert lp1(adj, targets, weights, rho, tau, c1, c2, c3=c3).value >= lp1(adj, targets, weights, rho, tau, c1,
                                                                              c2).value - 1e-9
    with pytest.raises(ValueError, match="c3"):
        lp2_reduced(adj, targets, weights, rho, tau, c1, c2, c3=-1.0)


def test_three_hop_term_reaches_targets_two_edges_from_the_injection():
    """Path 0-1-2-3, target 3: an injected edge at node 1 reaches it in 3 hops; only c3 charges it."""
    from icml24.graph.certify.bruteforce import bqclp_conditions

    adj = np.eye(4, k=1) + np.eye(4, k=-1)
    c1, c2 = path_costs(0.5, 0.5)
    c3 = path_cost(3, 0.5, 0.5)
    a1 = np.zeros((4, 1, 4), dtype=np.int8)
    a1[np.arange(4), 0, np.arange(4)] = 1  # one injected edge, at node 0, 1, 2 or 3
    a2 = np.zeros((4, 1, 1), dtype=np.int8)
    weights = np.array([0.9 * c3])
    two = bqclp_conditions(adj, [3], weights, a1, a2, c1, c2)[:, 0]
    three = bqclp_conditions(adj, [3], weights, a1, a2, c1, c2, c3)[:, 0]
    assert two.tolist() == [False, False, True, True] and three.tolist() == [False, True, True, True]


def test_certificate_hops():
    adj, targets, _ = random_instance(6, n=40, num_targets=10)
    p_a, p_b = np.full(40, 0.9), np.full(40, 0.05)
    two = CollectiveCertificate(0.5, 0.5, tau=2, hops=2).fit(adj, p_a, p_b, targets, rho=3)
    three = CollectiveCertificate(0.5, 0.5, tau=2).fit(adj, p_a, p_b, targets, rho=3)
    assert three.hops == 3 and three.max_flipped_ >= two.max_flipped_
    assert three.solution_.num_variables >= two.solution_.num_variables  # N²[T] columns
    with pytest.raises(ValueError, match="hops"):
        CollectiveCertificate(hops=1).fit(adj, p_a, p_b, targets, rho=3)
    assert "hops=3" in repr(three)


@pytest.mark.parametrize("p_lower,p_upper,name", [
    ([0.9, np.nan], [0.1, 0.0], "p_lower"),
    ([0.9, 0.8], [np.inf, 0.0], "p_upper"),
    ([1.5, 0.8], [0.1, 0.0], "p_lower"),
    ([0.9, 0.8], [-0.1, 0.0], "p_upper"),
])
def test_flip_weights_refuse_non_probabilities(p_lower, p_upper, name):
    with pytest.raises(ValueError, match=rf"{name} holds probabilities and must lie in \[0, 1\]"):
        flip_weights(p_lower, p_upper)


def test_flip_weights_take_a_rounding_overshoot_as_the_bound_it_rounds():
    """Bounds computed in floating point reach 1 + 2.2e-16 (the brute-force tests' smoothing): clipped, not refused."""
    np.testing.assert_array_equal(flip_weights([1.0 + 2.2e-16, 0.8], [1e-17 * -1, 0.0]),
                                  flip_weights([1.0, 0.8], [0.0, 0.0]))
