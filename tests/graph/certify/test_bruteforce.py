"""Soundness of the injection certificates by exhaustive attack on tiny graphs (exact smoothed probabilities)."""

import numpy as np
import pytest
import torch

from icml24.graph.certify import (
    GCN,
    CollectiveCertificate,
    RowNormalizedGCN,
    attack_all_injections,
    bqclp_optimum,
    clopper_pearson,
    flip_weights,
    lp1,
    lp2,
    lp2_reduced,
    path_cost,
    path_costs,
    samplewise_certified,
    smoothed_votes,
    top_two,
)
from icml24.graph.certify.bruteforce import bqclp_conditions, top_two_probabilities


def reach_classifier(n: int, base: np.ndarray, num_classes: int):
    """A 2-hop classifier: a degree-dependent clean label, shifted by one class if an injected node is 2 hops away."""

    def classify(adj: np.ndarray) -> np.ndarray:
        walks = adj.astype(np.int32)
        walks = walks + walks @ walks
        injected_near = walks[:, :, n:].sum(2) > 0
        degree = adj[:, :, :n].sum(2)
        labels = (base[None, : adj.shape[1]] + (degree > 0)) % num_classes
        return np.where(injected_near, (labels + 1) % num_classes, labels)

    return classify


def gnn_classifier(features: np.ndarray):
    """Sum-aggregation two-layer linear GNN ``argmax(X + A X + A² X)`` on fixed node scores ``X [N, C]``."""

    def classify(adj: np.ndarray) -> np.ndarray:
        a = adj.astype(float)
        one = a @ features
        return (features + one + a @ one).argmax(2)

    return classify


def tiny_graph(rng, n):
    adj = np.zeros((n, n), dtype=bool)
    for v in range(1, n):  # a random tree plus one extra edge
        u = rng.integers(v)
        adj[u, v] = adj[v, u] = True
    u, v = rng.choice(n, 2, replace=False)
    adj[u, v] = adj[v, u] = True
    return adj


CASES = [  # (seed, n, rho, tau, p_e, p_n, classifier kind)
    (0, 4, 1, 2, 0.5, 0.3, "reach"),
    (1, 4, 2, 1, 0.4, 0.4, "reach"),
    (2, 4, 1, 2, 0.3, 0.5, "gnn"),
    (3, 4, 2, 1, 0.6, 0.2, "gnn"),
    (4, 5, 1, 2, 0.5, 0.5, "reach"),
]


@pytest.mark.parametrize("seed,n,rho,tau,p_e,p_n,kind", CASES)
def test_no_certified_node_is_flipped(seed, n, rho, tau, p_e, p_n, kind):
    rng = np.random.default_rng(seed)
    adj = tiny_graph(rng, n)
    num_classes = 3
    if kind == "reach":
        classify = reach_classifier(n, rng.integers(num_classes, size=n + rho), num_classes)
    else:
        features = rng.normal(size=(n + rho, num_classes))
        features[n:] = 0.0
        features[n:, 0] = 6.0  # the attacker's injected features push towards class 0
        classify = gnn_classifier(features)
    targets = np.arange(n)
    result = attack_all_injections(classify, adj, targets, rho, tau, p_e, p_n, num_classes)
    p_a, p_b = top_two_probabilities(result["clean_probs"])
    flipped = result["flipped"]
    # sample-wise (conservative rule): a certified target is never flipped by any injection
    certified = samplewise_certified(p_a, p_b, rho, tau, p_e, p_n, variant="conservative")
    assert not flipped[:, certified].any()
    # collective: under each injection a flipped target satisfies its flip condition, so #flips <= BQCLP* <= LP*
    weights = flip_weights(p_a, p_b)
    c1, c2 = path_costs(p_e, p_n)
    conditions = bqclp_conditions(adj, targets, weights, result["a1"], result["a2"], c1, c2)
    assert not (flipped & ~conditions).any()
    worst = int(flipped.sum(1).max())
    exact = bqclp_optimum(adj, targets, weights, rho, tau, c1, c2)
    assert worst <= exact
    for solve in (lp1, lp2, lp2_reduced):
        assert solve(adj, targets, weights, rho, tau, c1, c2).value >= exact - 1e-7


def test_bruteforce_finds_flips_and_certificates():
    """The exhaustive attack has teeth: on these cases it flips some nodes while others stay certified."""
    rng = np.random.default_rng(0)
    adj = tiny_graph(rng, 4)
    classify = reach_classifier(4, np.zeros(5, dtype=int), 3)
    result = attack_all_injections(classify, adj, np.arange(4), 1, 2, 0.5, 0.3, 3)
    assert result["flipped"].any()
    p_a, p_b = top_two_probabilities(result["clean_probs"])
    result_weak = attack_all_injections(classify, adj, np.arange(4), 1, 1, 0.8, 0.7, 3)
    p_a, p_b = top_two_probabilities(result_weak["clean_probs"])
    assert samplewise_certified(p_a, p_b, 1, 1, 0.8, 0.7, variant="conservative").any()


def test_official_samplewise_rule_can_be_flipped():
    """The official rule p̃ (p̲_A - p̄_B + 1) > 1 assumes independence; a degree-reading classifier breaks it.

    Star with centre 0 and 6 leaves, p_e = 0.5, p_n = 0.2, one injected node with one edge: the centre has
    p_A ≈ 0.763 and is certified by the official rule, yet wiring the injected node to it flips it (p_A' ≈ 0.458).
    """
    n = 7
    adj = np.zeros((n, n), dtype=bool)
    adj[0, 1:] = adj[1:, 0] = True

    def classify(perturbed: np.ndarray) -> np.ndarray:
        has_clean_edge = perturbed[:, :, :n].any(2)
        injected_neighbour = perturbed[:, :, n:].any(2)
        return np.where(has_clean_edge & ~injected_neighbour, 0, 1)

    result = attack_all_injections(classify, adj, np.array([0]), 1, 1, 0.5, 0.2, 2)
    p_a, p_b = top_two_probabilities(result["clean_probs"])
    assert p_a[0] == pytest.approx(0.8 * (1 - 0.6**6))
    assert samplewise_certified(p_a, p_b, 1, 1, 0.5, 0.2, variant="official")[0]
    assert not samplewise_certified(p_a, p_b, 1, 1, 0.5, 0.2, variant="conservative")[0]
    assert result["flipped"][:, 0].any()


def test_collective_condition_is_tight_enough_to_be_tested():
    """A classifier that flips as soon as an injected node is within 2 hops nearly attains the bound: with the
    true path costs no flip escapes its condition, with costs 20% too small some do (so the check can fail)."""
    n, rho, tau, p_e, p_n = 4, 2, 2, 0.6, 0.02
    adj = np.zeros((n, n), dtype=bool)
    adj[np.arange(n - 1), np.arange(1, n)] = adj[np.arange(1, n), np.arange(n - 1)] = True

    def classify(perturbed):
        walks = perturbed.astype(np.int32)
        walks = walks + walks @ walks
        return (walks[:, :, n:].sum(2) > 0).astype(int)

    targets = np.arange(n)
    result = attack_all_injections(classify, adj, targets, rho, tau, p_e, p_n, 2)
    p_a, p_b = top_two_probabilities(result["clean_probs"])
    weights = flip_weights(p_a, p_b)
    c1, c2 = path_costs(p_e, p_n)
    flipped = result["flipped"]
    assert flipped.any()
    assert not (flipped & ~bqclp_conditions(adj, targets, weights, result["a1"], result["a2"], c1, c2)).any()
    too_small = bqclp_conditions(adj, targets, weights, result["a1"], result["a2"], 0.8 * c1, 0.8 * c2)
    assert (flipped & ~too_small).any()
    assert int(flipped.sum(1).max()) <= np.ceil(lp2_reduced(adj, targets, weights, rho, tau, c1, c2).value - 1e-6)


def three_hop_classifier(n: int, num_classes: int):
    """Flips its label as soon as an injected node is within 3 hops (the receptive field of a symmetric GCN)."""

    def classify(adj: np.ndarray) -> np.ndarray:
        a = adj.astype(np.int32)
        walks = a + a @ a + a @ a @ a
        return (walks[:, :, n:].sum(2) > 0).astype(int) % num_classes

    return classify


def sym_gcn_classifier(features: np.ndarray, weight: np.ndarray, bias: np.ndarray):
    """Two-layer GCN with symmetric normalization, ``argmax(S relu(S X W + b) )``: it reads 2-hop degrees."""

    def classify(adj: np.ndarray) -> np.ndarray:
        a = adj.astype(float) + np.eye(adj.shape[1])
        inv = 1.0 / np.sqrt(a.sum(2))
        s = a * inv[:, :, None] * inv[:, None, :]
        hidden = np.maximum(s @ (features @ weight) + bias, 0.0)
        return (s @ hidden).argmax(2)

    return classify


def path_graph(n: int) -> np.ndarray:
    adj = np.zeros((n, n), dtype=bool)
    adj[np.arange(n - 1), np.arange(1, n)] = adj[np.arange(1, n), np.arange(n - 1)] = True
    return adj


def test_three_hop_receptive_field_breaks_the_two_hop_certificate_and_not_the_three_hop_one():
    """A classifier reached through 3-hop paths: flips escape the paper's (2-hop) flip condition, never the 3-hop
    condition (``c3``) and its LP bounds (the LP-level failure of the 2-hop bound: the hub–mid–leaf star below)."""
    n, rho, tau, p_e, p_n = 7, 1, 1, 0.05, 0.05
    adj, targets = path_graph(n), np.arange(n)
    result = attack_all_injections(three_hop_classifier(n, 2), adj, targets, rho, tau, p_e, p_n, 2)
    p_a, p_b = top_two_probabilities(result["clean_probs"])
    weights, (c1, c2), c3 = flip_weights(p_a, p_b), path_costs(p_e, p_n), path_cost(3, p_e, p_n)
    flipped = result["flipped"]
    two = bqclp_conditions(adj, targets, weights, result["a1"], result["a2"], c1, c2)
    three = bqclp_conditions(adj, targets, weights, result["a1"], result["a2"], c1, c2, c3)
    assert (flipped & ~two).any()  # the paper's condition misses 3-hop flips
    assert not (flipped & ~three).any()
    worst = int(flipped.sum(1).max())
    for solve in (lp1, lp2, lp2_reduced):
        assert worst <= np.ceil(solve(adj, targets, weights, rho, tau, c1, c2, c3=c3).value - 1e-6)


@pytest.mark.parametrize("seed,n,rho,tau,p_e,p_n", [(0, 4, 1, 2, 0.2, 0.1), (1, 5, 1, 1, 0.1, 0.1),
                                                    (2, 4, 2, 1, 0.3, 0.2)])
def test_symmetric_gcn_is_covered_by_the_three_hop_certificate(seed, n, rho, tau, p_e, p_n):
    rng = np.random.default_rng(seed)
    adj = tiny_graph(rng, n)
    features = np.r_[rng.normal(size=(n, 3)), np.zeros((rho, 3))]  # featureless injected nodes
    classify = sym_gcn_classifier(features, rng.normal(size=(3, 3)), rng.normal(size=3) * 0.1)
    targets = np.arange(n)
    result = attack_all_injections(classify, adj, targets, rho, tau, p_e, p_n, 3)
    p_a, p_b = top_two_probabilities(result["clean_probs"])
    weights, (c1, c2), c3 = flip_weights(p_a, p_b), path_costs(p_e, p_n), path_cost(3, p_e, p_n)
    flipped = result["flipped"]
    assert not (flipped & ~bqclp_conditions(adj, targets, weights, result["a1"], result["a2"], c1, c2, c3)).any()
    exact = bqclp_optimum(adj, targets, weights, rho, tau, c1, c2, c3)
    assert int(flipped.sum(1).max()) <= exact
    assert lp2_reduced(adj, targets, weights, rho, tau, c1, c2, c3=c3).value >= exact - 1e-7


def hub_mid_leaf_star(num_mids: int = 15):
    """Hub 0, mids 1..k (each tied to the hub), leaves k+1..2k (each tied to one mid): 2k + 1 nodes."""
    mids = np.arange(1, num_mids + 1)
    leaves = mids + num_mids
    edges = np.r_["1", np.stack([np.zeros(num_mids, dtype=int), mids]), np.stack([mids, leaves])]
    return 2 * num_mids + 1, leaves, torch.tensor(np.c_[edges, edges[::-1]])


def degree_reading_gcn(normalization: str):
    """The library's GCN with hand-set weights: a leaf is class 1 iff its mid sees the hub with weight
    ``1/sqrt(d_mid d_hub)`` in (0.05, 0.142), i.e. iff the hub's degree (self-loop included) reaches 17."""
    cls = GCN if normalization == "sym" else RowNormalizedGCN
    model = cls(1, 2, hidden_channels=2, dropout=0.0, input_dropout=False)
    with torch.no_grad():
        model.lin1.weight[:] = torch.tensor([[1.0], [1.0]])
        model.bias1[:] = torch.tensor([-0.05, -0.142])
        model.lin2.weight[:] = torch.tensor([[0.0, 0.0], [1.0, -200.0]])
        model.lin2.bias[:] = torch.tensor([0.0, -1e-4])
    return model.eval()


def test_regression_hub_mid_leaf_star():
    """31-node star, symmetric GCN, one featureless injected node with one edge to the hub (3 hops from every leaf).

    The paper's 2-hop certificate says 5 of 15 leaves are safe, yet that injection flips all 15; the 3-hop
    certificate's bound holds. The row-normalized GCN (2-hop receptive field) is not moved by the same injection.
    """
    num_nodes, leaves, edges = hub_mid_leaf_star(15)
    x = torch.zeros(num_nodes + 1, 1)
    x[0] = 1.0  # the hub carries the only feature; the injected node (last) is featureless
    attacked = torch.cat([edges, torch.tensor([[0, num_nodes], [num_nodes, 0]])], dim=1)
    p_e, p_n, samples = 0.01, 0.01, 4000
    adj = np.zeros((num_nodes, num_nodes))
    adj[edges[0].numpy(), edges[1].numpy()] = 1.0
    flips = {}
    for normalization in ("sym", "row"):
        model = degree_reading_gcn(normalization)
        clean = smoothed_votes(model, x, edges, p_e, p_n, samples, 2, random_state=torch.Generator().manual_seed(0))
        after = smoothed_votes(model, x, attacked, p_e, p_n, samples, 2, random_state=torch.Generator().manual_seed(1))
        order, count_a, count_b = top_two(clean.numpy()[leaves])
        assert (order[:, 0] == 0).all()
        after = after.numpy()[leaves]
        flips[normalization] = int((after[:, 0] <= after[:, 1]).sum())
        p_a, p_b = clopper_pearson(count_a, count_b, samples, 0.01)
        safe = {hops: CollectiveCertificate(p_e, p_n, tau=1, hops=hops).fit(adj, p_a, p_b, leaves, rho=1)
                .certified_count_ for hops in (2, 3)}
        assert flips[normalization] <= leaves.size - safe[3]  # sound for both normalizations
        if normalization == "row":
            assert flips["row"] <= leaves.size - safe[2]  # the paper's certificate is sound for 2-hop models
    assert flips == {"sym": 15, "row": 0}
    assert safe[2] >= 4  # the paper's certificate calls some leaves safe: 15 flips exceed its bound
