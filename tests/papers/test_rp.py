"""The rp reproduction: one seed per run, across-seed summaries, the official alignment seed, claims that can fail.

The shared smoke test (tests/papers/test_every_experiment.py) runs every smoke setting at seed 0; here the
summaries and the seed mapping are checked directly.
"""

import math

import numpy as np
import pytest
import torch

from icml24.core import Context, labelled
from icml24.core.params import parse_value
from icml24.core.runner import execute, plan
from icml24.core.verdicts import aggregate, claims_of
from icml24.papers import rp as paper


def finite_floats(metrics):
    return all(isinstance(v, float) and math.isfinite(v) for v in metrics.values())


@pytest.fixture(scope="module")
def planetoid_available():
    from icml24.data import planetoid

    try:
        planetoid("cora", download=False)
        planetoid("citeseer", download=False)
    except FileNotFoundError:
        pytest.skip("Planetoid raw files not available (set ICML24_DATA)")


def test_accuracy_smoke(planetoid_available, tmp_path):
    exp = paper.accuracy
    metrics = exp(Context(seed=0, out_dir=tmp_path), **exp.config(setting="smoke"))
    assert finite_floats(metrics)
    for name in ("cora", "citeseer"):
        assert 0.0 <= metrics[f"{name}_rp_acc"] <= 1.0 and metrics[labelled("seconds", dataset=name, method="rp")] > 0
        assert {f"{name}_{kind}_acc" for kind in paper.BASELINES} <= set(metrics)
    for claim in claims_of(exp):
        assert claim.evaluate({**metrics, **exp.summarize([metrics])}).status in {"holds", "fails"}


def test_time_ratio_is_a_ratio_of_mean_times():
    per_seed = [{labelled("seconds", dataset="cora", method=method): t for method, t in times.items()}
                for times in ({"gcn": 1.0, "rp": 1.0, "rp_basic": 0.5}, {"gcn": 3.0, "rp": 3.0, "rp_basic": 0.5})]
    summary = paper._time_ratios(per_seed)
    assert summary == {"cora_gcn_over_rp_time": 1.0, "cora_gcn_over_rp_basic_time": 4.0}


def test_alignment_runner_seed_zero_is_the_official_seed(planetoid_available, tmp_path, monkeypatch):
    metrics = paper.alignment(Context(seed=0, out_dir=tmp_path), **paper.alignment.config(setting="smoke"))
    assert finite_floats(metrics)
    # the official seed's initialization gives the official figure's step-0 values on the full graph
    assert metrics["ntk_graph_init"] == pytest.approx(0.038, abs=0.002)
    assert metrics["align_s4_y"] == pytest.approx(0.106, abs=0.002)
    seeds = []

    def capture(data, random_state, **kwargs):
        seeds.append(random_state)
        raise RuntimeError("stop")

    monkeypatch.setattr(paper, "track_gcn_alignment", capture)
    for runner_seed in (0, 1, 2):
        with pytest.raises(RuntimeError):
            paper.alignment(Context(seed=runner_seed), steps=1, every=1)
    assert seeds[0] == 123 and seeds[1] == Context(seed=1).child_seed("init") and len(set(seeds)) == 3


def test_heterophily_two_seeds_through_the_runner(tmp_path):
    exp = paper.heterophily
    records = [execute(task) for task in plan([exp], seeds=[0, 1], setting="smoke", store_folder=tmp_path)]
    assert [r.status for r in records] == ["ok", "ok"], [r.error for r in records]
    assert records[0].metrics != records[1].metrics
    again = execute(plan([exp], seeds=[0], setting="smoke", store_folder=tmp_path)[0])
    assert again.metrics == records[0].metrics
    summary = aggregate(records, exp)
    assert finite_floats(summary)
    for claim in claims_of(exp):
        assert claim.evaluate(summary).status in {"holds", "fails"}


def test_every_homophily_level_draws_its_own_features(monkeypatch):
    """The MLP ignores edges: with one feature draw for every level its flat curve was an identity, not a finding."""
    drawn = []

    def capture(**kwargs):
        drawn.append(kwargs["random_state"])
        raise RuntimeError("stop")

    monkeypatch.setattr(paper, "csbm", capture)
    for level in (0.2, 0.8):
        with pytest.raises(RuntimeError):
            paper.heterophily(Context(seed=0), homophily=[level])
    assert drawn[0] != drawn[1]


def test_heterophily_summary_reads_the_mean_curves():
    # seed A rises with homophily, seed B is flat but higher: the mean curve still rises
    def curve(key, low, high):
        return {labelled(key, homophily=0.1): low, labelled(key, homophily=0.9): high}

    seed_a = {**curve("rp", 0.2, 0.8), **curve("gcn", 0.2, 0.9), **curve("mlp", 0.5, 0.5), **curve("align", 0.0, 0.3)}
    seed_b = {**seed_a, **curve("rp", 0.6, 0.6), "mlp[homophily=0.9]": 0.54}
    summary = paper._mean_curves([seed_a, seed_b])
    assert summary["rp_vs_homophily_spearman"] == pytest.approx(1.0) and summary["mlp_range"] == pytest.approx(0.02)
    assert summary["rp_mlp_gap_low"] == pytest.approx(-0.1) and summary["rp_mlp_gap_high"] == pytest.approx(0.18)


def test_list_parameters_are_typed():
    assert parse_value(paper.accuracy, "datasets", "cora,citeseer") == ["cora", "citeseer"]
    assert parse_value(paper.heterophily, "homophily", "0.2,0.8") == [0.2, 0.8]


@pytest.mark.parametrize("claim_index,bad", [
    (0, {"cora_rp_acc": 0.80, "cora_gcn_acc": 0.816, "citeseer_rp_acc": 0.727, "citeseer_gcn_acc": 0.702}),
    (1, {"cora_gcn_over_rp_basic_time": 3.4, "cora_rp_basic_acc": 0.80, "cora_gcn_acc": 0.81}),
    (1, {"cora_gcn_over_rp_basic_time": 40.0, "cora_rp_basic_acc": 0.75, "cora_gcn_acc": 0.81}),
    (2, {"align_s4_y": 0.13}),
    (3, {"ntk_graph_init": 0.038, "ntk_graph_final": 0.011, "ntk_label_init": 0.028, "ntk_label_final": 0.35,
         "train_acc_final": 0.95}),
    (3, {"ntk_graph_init": 0.038, "ntk_graph_final": 0.05, "ntk_label_init": 0.028, "ntk_label_final": 0.35,
         "train_acc_final": 0.45}),  # not yet trained: the end of training is not reached
    (4, {"rp_vs_homophily_spearman": 1.0, "gcn_vs_homophily_spearman": 1.0, "align_vs_homophily_spearman": 1.0,
         "mlp_range": 0.12}),
    (5, {"rp_mlp_gap_low": 0.05, "rp_mlp_gap_high": 0.4}),
    (5, {"rp_mlp_gap_low": -0.05, "rp_mlp_gap_high": 0.06}),
])
def test_every_claim_can_fail(claim_index, bad):
    assert paper.CLAIMS[claim_index].evaluate(bad).status == "fails"


def test_every_experiment_has_a_claim_and_settings():
    assert {claim.experiment.name for claim in paper.CLAIMS} == set(paper.PAPER.experiments)
    assert len(paper.CLAIMS) == 6
    for exp in paper.PAPER.experiments.values():
        assert exp.threads == 1
        for setting in ("quick", "full", "smoke"):
            exp.config(setting=setting)
    assert paper.accuracy.seeds == {"quick": 3, "full": 10, "smoke": 1}


def test_null_graphs_keep_the_nodes_and_drop_the_signal():
    from torch_geometric.data import Data

    from icml24.graph import normalized_adjacency

    ring = torch.tensor([[0, 1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 0]])
    data = Data(x=torch.eye(6), edge_index=torch.cat([ring, ring.flip(0)], dim=1), y=torch.arange(6), num_nodes=6)
    bare = paper._without_edges(data)
    assert torch.equal(normalized_adjacency(bare.edge_index, 6).to_dense(), torch.eye(6, dtype=torch.float64))
    assert data.edge_index.shape[1] == 12 and bare.x is data.x  # the original is untouched, features shared
    random_graph = paper._random_graph(data, np.random.default_rng(0))
    edges = random_graph.edge_index
    assert edges.shape == data.edge_index.shape and bool((edges[0] != edges[1]).all())
    assert torch.unique(edges[0] * 6 + edges[1]).numel() == 12  # 6 distinct undirected edges, both directions
    assert torch.equal(paper._random_graph(data, np.random.default_rng(0)).edge_index, edges)


def test_heterophily_null_changes_only_the_edges(monkeypatch):
    """The CSBM generator's draws do not depend on the homophily: at 1/C the labels, features and split are the
    level's own, and only the edges are blind to the labels."""
    from icml24.data import csbm

    common = dict(num_nodes=200, num_features=10, num_classes=5, feature_signal=0.35, random_state=7, avg_degree=10.0,
                  split=(0.1, 0.2))
    homophilic, blind = csbm(homophily=0.9, **common), csbm(homophily=0.2, **common)
    assert torch.equal(homophilic.x, blind.x) and torch.equal(homophilic.y, blind.y)
    assert torch.equal(homophilic.train_mask, blind.train_mask)
    same = lambda d: float((d.y[d.edge_index[0]] == d.y[d.edge_index[1]]).float().mean())  # noqa: E731
    assert same(homophilic) > 0.8 and abs(same(blind) - 0.2) < 0.05
    with pytest.raises(ValueError, match="graph must be"):
        paper.heterophily(Context(seed=0), graph="none")
    with pytest.raises(ValueError, match="rp_graph must be"):
        paper.accuracy(Context(seed=0), rp_graph="random")
    with pytest.raises(ValueError, match="graph must be"):
        paper.alignment(Context(seed=0), graph="citeseer")
