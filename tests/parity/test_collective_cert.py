"""Collective certificate against the official code (Yuni-Lai/CollectiveLPCert): target set, Clopper-Pearson
bounds and the LP optimum M* on the official Cora-ML GCN votes (the fixture's notes: HiGHS instead of MOSEK)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from parity_fixture import assert_close, case, load_fixture

from icml24.data import cert_graph, cert_split, cert_votes
from icml24.graph.certify import CollectiveCertificate, clopper_pearson
from icml24.papers.collective_cert.experiments import _official_targets

FIXTURE = load_fixture("collective-cert")
RECIPE = case(FIXTURE, "bounds")["inputs"]


@pytest.fixture(scope="module")
def official_inputs():
    data, votes = cert_graph("cora_ml"), cert_votes(dataset="cora_ml", model="gcn", p_e=0.9, p_n=0.8)
    y, ei = data.y.numpy(), data.edge_index.numpy()
    adj = sp.csr_matrix((np.ones(ei.shape[1]), ei), shape=(data.num_nodes, data.num_nodes))
    _, _, test = cert_split(y, 50, 2020)
    correct = test[votes["top2"][test, 0] == y[test]]
    p_lower, p_upper = clopper_pearson(votes["count_top"], votes["count_runner_up"], votes["num_samples"],
                                       RECIPE["alpha"])
    return adj, _official_targets(correct, 0), p_lower, p_upper


def test_targets_and_bounds_match_official(official_inputs):
    _, targets, p_lower, p_upper = official_inputs
    assert targets.tolist() == RECIPE["targets"]
    c = case(FIXTURE, "bounds")
    assert_close(p_lower[targets], c["values"]["p_lower"], c["tolerance"], "p_A lower")
    assert_close(p_upper[targets], c["values"]["p_upper"], c["tolerance"], "p_B upper")


@pytest.mark.parametrize("name,relaxation", [("lp2_rho20", "lp2_reduced"), ("lp2_rho100", "lp2_reduced"),
                                             ("lp1_rho20", "lp1")])
def test_lp_optimum_matches_official(official_inputs, name, relaxation):
    c = case(FIXTURE, name)
    adj, targets, p_lower, p_upper = official_inputs
    cert = CollectiveCertificate(RECIPE["p_e"], RECIPE["p_n"], RECIPE["tau"], hops=2, relaxation=relaxation)
    cert.fit(adj, p_lower, p_upper, targets, c["inputs"]["rho"])
    assert_close(cert.max_flipped_, c["values"]["optimum"], c["tolerance"], f"{name}: M*", rtol=1e-6)
    assert cert.certified_ratio_ == pytest.approx(c["values"]["certified_ratio"])
