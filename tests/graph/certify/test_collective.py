"""LP relaxations of the collective certificate: reduction exactness, relaxation direction, official numbers."""

import os
import random
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from icml24.graph.certify import CollectiveCertificate, bqclp_optimum, flip_weights, lp1, lp2, lp2_reduced, path_costs


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
    cert = CollectiveCertificate(0.9, 0.8, 6).fit(adj, p_a, p_b, targets, rho=100)
    assert cert.max_flipped_ == pytest.approx(19.384, abs=1e-3)
    assert cert.certified_ratio_ == pytest.approx(0.80)
