"""How Graph Neural Networks Learn: Lessons from Training Dynamics (Yang et al., ICML 2024), reproduced.

Three experiments: (1) node classification on Cora and CiteSeer with Generalized RP (official settings), basic RP,
label propagation and PyG's MLP, GCN and GAT; (2) kernel-graph alignment of the NTK of the paper's GCN during
training on Cora (the paper's alignment figure); (3) CSBM graphs from strong heterophily to strong homophily.
"""

from __future__ import annotations

import copy
import time

import numpy as np
import torch
from torch import nn

from icml24.core import Claim, Null, Paper, experiment, labelled, select
from icml24.data import csbm, planetoid, planetoid_missing
from icml24.graph import (
    GAT,
    GCN,
    MLP,
    GeneralizedRP,
    ResidualPropagation,
    centered_kernel_alignment,
    fit_node_classifier,
    graph_kernel,
    normalize_features,
    normalized_adjacency,
    sparse_features,
    track_gcn_alignment,
)

PAPER = Paper(
    slug="rp",
    title="How Graph Neural Networks Learn: Lessons from Training Dynamics",
    authors="Chenxiao Yang, Qitian Wu, David Wipf, Ruoyu Sun, Junchi Yan",
    venue="ICML 2024",
    code="https://github.com/chr26195/ResidualPropagation",
    summary=(
        "In function space, gradient descent on a GNN moves predictions by the empirical NTK applied to the training "
        "residuals; the paper shows the NTK aligns with the graph operator S^{2L} and with the optimal kernel YY^T "
        "during training, which explains why GNNs generalize on homophilic graphs and fail on heterophilic ones. "
        "Replacing the NTK by a graph kernel gives Residual Propagation (R <- R - eta S^k [R_L; 0]) and Generalized RP "
        "(S^k K S^k with a Gaussian feature kernel K), parameter-free algorithms that compete with trained GNNs. "
        "We run Generalized RP with the official run.sh settings beside basic RP, label propagation and PyG's MLP, "
        "GCN and GAT on Cora and CiteSeer (public split), track the alignment of the official two-layer GCN's NTK "
        "on Cora with the exact analytic NTK, and sweep homophily on CSBM graphs."
    ),
    deviations=[
        "PubMed (not in the offline data), OGB and the heterophilic benchmarks (downloads) are not run; the accuracy "
        "claim covers Cora and CiteSeer only.",
        "The baselines are icml24.graph's GCN (hidden 16), GAT (8 heads x 8) and MLP (hidden 64) with the PyG "
        "examples' settings (Adam, 200 epochs, test accuracy at the best validation epoch), not the paper's pipeline.",
        "Basic RP uses lr 1 and picks k from {2, 4, 8, 16} on validation (the official run.sh has basic-RP settings "
        "for OGB only).",
        "The alignment study uses the exact analytic NTK of the official two-layer GCN (summed-logit convention, "
        "biases included) instead of autodiff Jacobians.",
        "Quick trains the NTK-alignment GCN 12000 of the official 50000 steps at lr 0.01, where it has fit its "
        "training labels (the claim checks training accuracy >= 0.9); full trains all 50000.",
        "The wall-time claim times basic RP (with its validation choice of k) against 200 GCN epochs on Cora, while "
        "the paper's 12-14x speed-ups are per step on OGB; Generalized RP's O(n^2 d) kernel is timed separately.",
        "CSBM graphs come from our generator (5 classes, average degree 10, 10/20/70% split, features 0.35 * mu_y + "
        "noise) instead of the official make_classification script, with Generalized RP at k = 2, gamma = 1, raw "
        "features and lr = 1 / lambda_max(P_LL).",
    ],
)

# Generalized_RP/run.sh: learning rate, propagation steps, kernel width, RP steps
RP_SETTINGS = {
    "cora": {"lr": 10.0, "k": 3, "gamma": 1.0, "steps": 20000},
    "citeseer": {"lr": 10.0, "k": 3, "gamma": 20.0, "steps": 1000},
}
BASIC_RP_K = (2, 4, 8, 16)


# --------------------------------------------------------------------------- baselines
# the PyG examples' settings (gcn.py, gat.py; the MLP as PyG's MLP([d, 64, C])): model, Adam learning rate
BASELINES = {
    "gcn": (lambda d, c: GCN(d, c, hidden_channels=16, dropout=0.5), 0.01),
    "gat": (lambda d, c: GAT(d, c, hidden_channels=64, heads=8, dropout=0.6), 0.005),
    "mlp": (lambda d, c: MLP(d, c, hidden_channels=64, dropout=0.5, input_dropout=False), 0.01),
}


def train_baseline(kind: str, data, generator: torch.Generator, epochs: int) -> tuple[float, float]:
    """Train a baseline full-batch (weight decay 5e-4); return (test accuracy at the best validation epoch, seconds)."""
    build, lr = BASELINES[kind]
    model = build(data.x.shape[1], int(data.y.max()) + 1)
    fit = fit_node_classifier(model, data, epochs=epochs, lr=lr, weight_decay=5e-4, random_state=generator)
    return fit.test_acc, fit.seconds


def _with_features(data, x: torch.Tensor):
    """A shallow copy of ``data`` with features ``x`` (sparse CSR when mostly zero: a much cheaper first layer)."""
    data = copy.copy(data)
    data.x = sparse_features(x)
    return data


def _without_edges(data):
    """A shallow copy of ``data`` with no edges: ``S = I`` (self-loops only), the graph removed from RP's slot."""
    data = copy.copy(data)
    data.edge_index = data.edge_index[:, :0]
    return data


def _test_accuracy(predicted: torch.Tensor, data) -> float:
    return float((predicted[data.test_mask] == data.y[data.test_mask]).float().mean())


def _label_propagation(data) -> float:
    from torch_geometric.nn import LabelPropagation

    scores = LabelPropagation(num_layers=50, alpha=0.9)(data.y, data.edge_index, mask=data.train_mask)
    return _test_accuracy(scores.argmax(dim=1), data)


def _basic_rp(data, steps: int) -> tuple[float, float]:
    """Basic RP with k chosen on validation; returns (test accuracy, k)."""
    fits = [ResidualPropagation(steps=steps, lr=1.0, k=k).fit(data) for k in BASIC_RP_K]
    best = max(range(len(fits)), key=lambda i: (fits[i].best_val_accuracy_, -i))
    return _test_accuracy(fits[best].predict(), data), float(BASIC_RP_K[best])


# --------------------------------------------------------------------------- experiment 1: accuracy
def _time_ratios(per_seed: list[dict[str, float]]) -> dict[str, float]:
    """GCN over RP wall time as a ratio of the mean times over seeds (RP is deterministic, GCN's time varies)."""
    def mean_seconds(dataset: str, method: str) -> float:
        return float(np.mean([m[labelled("seconds", dataset=dataset, method=method)] for m in per_seed]))

    out = {}
    for labels, _ in select(per_seed[0], "seconds", method="gcn"):
        name = labels["dataset"]
        for rp, key in (("rp", "gcn_over_rp_time"), ("rp_basic", "gcn_over_rp_basic_time")):
            out[f"{name}_{key}"] = mean_seconds(name, "gcn") / mean_seconds(name, rp)
    return out


NO_GRAPH_RP = Null("RP with the graph removed (S = I: Generalized RP is kernel regression on the features, basic RP "
                   "propagates nothing), in RP's slot beside the same GCN", {"rp_graph": "none"})


@experiment(PAPER, quick={"datasets": ["cora", "citeseer"], "epochs": 200, "seeds": 3},
            full={"datasets": ["cora", "citeseer"], "epochs": 200, "seeds": 10},
            smoke={"datasets": ["cora", "citeseer"], "epochs": 30, "rp_steps": 1000}, threads=1,
            summarize=_time_ratios, null=NO_GRAPH_RP, data=lambda config: planetoid_missing(config["datasets"]))
def accuracy(ctx, datasets: list[str] = ("cora", "citeseer"), epochs: int = 200,
             rp_steps: int = 0, rp_graph: str = "data") -> dict[str, float]:
    """Generalized RP (official settings), basic RP, LP, MLP, GCN, GAT on Cora/CiteSeer: test accuracy and time
    (wall seconds labelled ``seconds[dataset=cora,method=gcn]``).

    One seed trains each baseline once (``ctx.torch_generator(dataset, baseline)``); RP and LP are deterministic
    and rerun (and timed) on every seed. The time claim reads the ratio of the mean times over seeds. Every
    method runs on one thread (declared on the experiment): oversubscribed threads on shared cores slowed the
    small sparse GCN epochs ~10x and made the RP/GCN time ratio depend on the machine's load.
    ``rp_steps > 0`` replaces the official RP step counts (smoke runs only). ``rp_graph="none"`` (the null) runs
    both RPs on the same data with every edge removed (``S = I``), at the same settings; LP and the baselines keep
    the graph, and the metric keys stay ``*_rp_*``.
    """
    if rp_graph not in ("data", "none"):
        raise ValueError(f"rp_graph must be 'data' (the dataset's graph) or 'none' (no edges), got {rp_graph!r}")
    metrics: dict[str, float] = {}
    names = [name.strip().lower() for name in datasets if name.strip()]
    for name in names:
        data = planetoid(name)
        rp_data = data if rp_graph == "data" else _without_edges(data)
        settings = dict(RP_SETTINGS[name])
        if rp_steps > 0:
            settings["steps"] = rp_steps
        start = time.perf_counter()
        rp = GeneralizedRP(**settings).fit(rp_data)
        seconds = {"rp": time.perf_counter() - start}
        metrics[f"{name}_rp_acc"] = _test_accuracy(rp.predict(), data)
        metrics[f"{name}_rp_best_step"] = float(rp.best_step_)
        start = time.perf_counter()
        basic_acc, basic_k = _basic_rp(rp_data, steps=min(settings["steps"], 500))
        seconds["rp_basic"] = time.perf_counter() - start  # all four k, with the selection
        metrics[f"{name}_rp_basic_acc"], metrics[f"{name}_rp_basic_k"] = basic_acc, basic_k
        metrics[f"{name}_lp_acc"] = _label_propagation(data)
        baseline_data = _with_features(data, normalize_features(data.x))
        for kind in BASELINES:
            metrics[f"{name}_{kind}_acc"], seconds[kind] = train_baseline(kind, baseline_data,
                                                                          ctx.torch_generator(name, kind), epochs)
        metrics.update({labelled("seconds", dataset=name, method=k): v for k, v in seconds.items()})
        metrics[f"{name}_gcn_over_rp_time"] = seconds["gcn"] / seconds["rp"]
        metrics[f"{name}_gcn_over_rp_basic_time"] = seconds["gcn"] / seconds["rp_basic"]
        if name == names[0]:
            ctx.figure(f"rp_validation_{name}", _validation_figure(rp, name))
    ctx.figure("accuracy", _accuracy_figure(metrics, names))
    return metrics


def _validation_figure(model, name: str):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3))
    ax.plot(np.arange(1, len(model.val_accuracy_) + 1), model.val_accuracy_)
    ax.axvline(model.best_step_, color="grey", linestyle="--", label=f"selected step {model.best_step_}")
    ax.set(xlabel="RP step", ylabel="validation accuracy", title=f"Generalized RP on {name}", xscale="log")
    ax.legend()
    return fig


def _accuracy_figure(metrics: dict[str, float], names: list[str]):
    import matplotlib.pyplot as plt

    methods = ["rp", "rp_basic", "lp", "mlp", "gcn", "gat"]
    fig, ax = plt.subplots(figsize=(7, 3))
    width = 0.8 / len(names)
    for i, name in enumerate(names):
        values = [100 * metrics[f"{name}_{m}_acc"] for m in methods]
        ax.bar(np.arange(len(methods)) + i * width, values, width, label=name)
    ax.set_xticks(np.arange(len(methods)) + 0.4 - width / 2, ["Gen. RP", "RP", "LP", "MLP", "GCN", "GAT"])
    ax.set(ylabel="test accuracy (%)", ylim=(30, 90))
    ax.legend()
    return fig


# --------------------------------------------------------------------------- experiment 2: NTK alignment
# The official script's --seed 123 (Visualization/main_realworld.py), for runner seed 0: with it our initialization is
# the official one and the curve matches the official figure; other runner seeds draw ctx.child_seed("init").
OFFICIAL_SEEDS = {0: 123}


def _random_graph(data, rng: np.random.Generator):
    """A shallow copy of ``data`` whose edges are a uniform random graph G(n, m) with the data's number ``m`` of
    undirected edges (no self-loops, no duplicates): the same nodes, features and labels, a graph blind to them."""
    n = int(data.num_nodes)
    edges = data.edge_index
    m = int((edges[0] < edges[1]).sum())
    keys = np.empty(0, dtype=np.int64)
    while keys.size < m:  # pairs i < j as keys i n + j; drop self-loops, keep each pair's first draw
        i, j = rng.integers(0, n, size=(2, 2 * m))
        keep = i != j
        keys = np.concatenate([keys, np.minimum(i, j)[keep] * n + np.maximum(i, j)[keep]])
        keys = keys[np.sort(np.unique(keys, return_index=True)[1])]
    low, high = torch.from_numpy(keys[:m] // n), torch.from_numpy(keys[:m] % n)
    data = copy.copy(data)
    data.edge_index = torch.stack([torch.cat([low, high]), torch.cat([high, low])])
    return data


UNTRAINED_GCN = Null("the untrained GCN (no SGD steps: the NTK at initialization is also the final one)",
                     {"steps": 0}, cheap=True)
RANDOM_GRAPH_CORA = Null("a uniform random graph with Cora's node and edge counts in the graph's slot (the GCN left "
                         "untrained: A(S^4, YY^T) reads the graph alone)", {"graph": "random", "steps": 0},
                         cheap=True)


@experiment(PAPER, quick={"steps": 12000, "every": 2000, "lr": 0.01},
            full={"steps": 50000, "every": 2000, "lr": 0.01},
            smoke={"steps": 4, "every": 2, "lr": 0.01}, threads=1, null=UNTRAINED_GCN,
            data=lambda config: planetoid_missing(["cora"]))
def alignment(ctx, steps: int = 1000, every: int = 500, lr: float = 0.01,
              convention: str = "summed", graph: str = "cora") -> dict[str, float]:
    """Alignment of the GCN's NTK with S^4 and YY^T during training on Cora, and A(S^4, YY^T).

    The model's initialization seed is the official one for runner seed 0 (``OFFICIAL_SEEDS``, a fixed mapping
    rather than an offset, so that seed 0 reproduces the official figure and every other seed is an independent
    ``ctx.child_seed("init")``); training itself is deterministic full-batch SGD.

    With the official seed and lr 0.01 our run follows the full-graph curve of the official vector figure
    (Visualization/figs/alignment_cora.pdf); the figure's 10 other curves evaluate the NTK on graphs with 10-99% of
    the edges dropped, and every curve dips in the first few thousand steps before it rises. At a larger lr the
    alignments rise faster but test accuracy oscillates, so quick trains at the paper's lr 0.01 too, for 12000
    steps (the loss reads only the training rows' 1-hop support, ``TwoLayerGCN.rows_forward``), where the GCN has
    fit its training labels (the regime the claim's "end of training" needs; the claim checks it).
    ``graph="random"`` (a null) replaces Cora's edges by a uniform random graph with as many edges
    (``ctx.rng("random_graph")``) for S^4, the GCN and its NTK; ``steps=0`` (a null) leaves the GCN untrained.
    NTK parameter blocks: at initialization the first-layer bias block carries almost all of the centred NTK (a
    degree-like kernel aligned with neither S^4 nor YY^T); during training the second-layer weight block (Gram
    matrix of the propagated hidden features) takes over and carries the alignment; the first-layer weight block
    alone is aligned from the start but stays a small share of the kernel (the ``*_w1_*``/``*_b1_*``/``*_w2_*``
    metrics).
    """
    if graph not in ("cora", "random"):
        raise ValueError(f"graph must be 'cora' or 'random' (a uniform random graph of Cora's size), got {graph!r}")
    data = planetoid("cora")
    if graph == "random":
        data = _random_graph(data, ctx.rng("random_graph"))
    seed = OFFICIAL_SEEDS[ctx.seed] if ctx.seed in OFFICIAL_SEEDS else ctx.child_seed("init")
    tracker = track_gcn_alignment(data, steps=steps, every=every, lr=lr, convention=convention, random_state=seed)
    curves = tracker.as_arrays()
    metrics = {
        "align_s4_y": tracker.graph_label_alignment,
        "ntk_graph_init": float(curves["ntk_graph"][0]), "ntk_graph_final": float(curves["ntk_graph"][-1]),
        "ntk_label_init": float(curves["ntk_label"][0]), "ntk_label_final": float(curves["ntk_label"][-1]),
        "ntk_graph_peak": float(np.nanmax(curves["ntk_graph"])),
        "ntk_label_peak": float(np.nanmax(curves["ntk_label"])),
        "test_acc_final": float(curves["test_acc"][-1]), "train_acc_final": float(curves["train_acc"][-1]),
    }
    for block, short in (("lin1.weight", "w1"), ("lin1.bias", "b1"), ("lin2.weight", "w2")):
        for key in ("ntk_graph", "ntk_label", "share"):
            values = curves.get(f"{key}[{block}]")
            if values is not None:
                metrics[f"{key}_{short}_init"], metrics[f"{key}_{short}_final"] = float(values[0]), float(values[-1])
    ctx.artifact("alignment_curves", {key: values.tolist() for key, values in curves.items()})
    ctx.figure("alignment_cora", _alignment_figure(curves, tracker.graph_label_alignment))
    return metrics


def _alignment_figure(curves: dict[str, np.ndarray], reference: float):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(12, 3))
    axes[0].plot(curves["step"], 100 * curves["test_acc"])
    axes[0].set(xlabel="SGD step", ylabel="test accuracy (%)")
    axes[1].plot(curves["step"], curves["ntk_graph"], label="A(NTK, S^4)")
    axes[1].plot(curves["step"], curves["ntk_label"], label="A(NTK, YY^T)")
    axes[1].axhline(reference, color="red", linestyle="--", label="A(S^4, YY^T)")
    axes[1].set(xlabel="SGD step", ylabel="alignment")
    axes[1].legend()
    for block in ("lin1.weight", "lin1.bias", "lin2.weight"):
        if f"share[{block}]" in curves:
            axes[2].plot(curves["step"], curves[f"share[{block}]"], label=block)
    axes[2].set(xlabel="SGD step", ylabel="share of centred NTK norm")
    axes[2].legend()
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------- experiment 3: heterophily (CSBM)
def _homophily_levels(metrics: dict[str, float]) -> list[float]:
    """The homophily levels of one run: the ``homophily`` labels of its ``rp[homophily=...]`` metrics."""
    return [labels["homophily"] for labels, _ in select(metrics, "rp")]


def _homophily_trends(means: dict[str, np.ndarray], levels: list[float]) -> dict[str, float]:
    """Trend metrics of accuracy/alignment curves over the homophily levels."""
    gap = means["rp"] - means["mlp"]
    metrics = {"rp_mlp_gap_low": float(gap[0]), "rp_mlp_gap_high": float(gap[-1]),
               "gap_vs_homophily_spearman": _spearman(np.array(levels), gap),
               "mlp_range": float(means["mlp"].max() - means["mlp"].min())}
    for key in ("rp", "gcn", "mlp", "align"):
        metrics[f"{key}_vs_homophily_spearman"] = _spearman(np.array(levels), means[key])
    return metrics


def _mean_curves(per_seed: list[dict[str, float]]) -> dict[str, float]:
    """The trends of the mean curves over seeds (as the paper's figure): rank correlations, gaps and the MLP's range."""
    levels = _homophily_levels(per_seed[0])
    means = {key: np.array([np.mean([m[labelled(key, homophily=level)] for m in per_seed]) for level in levels])
             for key in ("rp", "gcn", "mlp", "align")}
    return _homophily_trends(means, levels)


NO_HOMOPHILY_GRAPH = Null("a graph carrying no homophily signal at every level (the CSBM at homophily 1/C: the same "
                          "labels, features and split, uniformly random edges)", {"graph": "random"})


@experiment(PAPER, quick={"num_nodes": 1000, "seeds": 2}, full={"num_nodes": 2000, "seeds": 10},
            smoke={"homophily": [0.1, 0.5, 0.9], "num_nodes": 300, "epochs": 50, "rp_steps": 200}, threads=1,
            summarize=_mean_curves, null=NO_HOMOPHILY_GRAPH)
def heterophily(ctx, homophily: list[float] = (0.1, 0.3, 0.5, 0.7, 0.9), num_nodes: int = 1000,
                num_classes: int = 5, feature_signal: float = 0.35, epochs: int = 200,
                rp_steps: int = 1000, graph: str = "csbm") -> dict[str, float]:
    """CSBM from heterophily to homophily: accuracy of Generalized RP, GCN, MLP and A(S^4, YY^T).

    Every homophily level draws its own graph, labels, features and split (``ctx.child_seed("csbm", level)``), so
    the MLP's flat curve is a measurement (its accuracy moves with the draw, not with the edges it ignores) rather
    than the identity it was when the levels shared one feature draw. The claims read the trends of the mean
    curves over seeds (the summary); each seed also reports its own trends. ``graph="random"`` (the null) draws
    each level's CSBM at homophily 1/C instead, with the level's seed: the generator's draws do not depend on
    the homophily, so labels, features and split are the level's own and only the edges lose the labels.
    """
    if graph not in ("csbm", "random"):
        raise ValueError(f"graph must be 'csbm' or 'random' (edges blind to the labels), got {graph!r}")
    levels = sorted(float(h) for h in homophily)
    curves = {key: np.zeros(len(levels)) for key in ("rp", "gcn", "mlp", "align")}
    for i, level in enumerate(ctx.progress(levels, description="CSBM homophily", total=len(levels))):
        data = csbm(num_nodes=num_nodes, num_features=100, num_classes=num_classes,
                    homophily=level if graph == "csbm" else 1.0 / num_classes,
                    feature_signal=feature_signal, random_state=ctx.child_seed("csbm", f"{level:g}"),
                    avg_degree=10.0,
                    split=(0.1, 0.2))
        probe = GeneralizedRP(steps=1, lr=1.0, k=2, gamma=1.0, normalize=False).fit(data)
        rp = GeneralizedRP(steps=rp_steps, lr=1.0 / probe.lambda_max_, k=2, gamma=1.0, normalize=False).fit(data)
        curves["rp"][i] = _test_accuracy(rp.predict(), data)
        baseline_data = _with_features(data, data.x)
        curves["gcn"][i] = train_baseline("gcn", baseline_data, ctx.torch_generator("gcn", i), epochs)[0]
        curves["mlp"][i] = train_baseline("mlp", baseline_data, ctx.torch_generator("mlp", i), epochs)[0]
        onehot = nn.functional.one_hot(data.y, num_classes).double()
        operator = normalized_adjacency(data.edge_index, num_nodes)
        curves["align"][i] = centered_kernel_alignment(graph_kernel(operator, 4), onehot @ onehot.T)
    metrics = {labelled(key, homophily=level): float(curves[key][i])  # e.g. rp[homophily=0.1]
               for i, level in enumerate(levels) for key in curves}
    metrics.update(_homophily_trends(curves, levels))
    ctx.figure("csbm_homophily", _homophily_figure(levels, curves))
    return metrics


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman rank correlation (ties get average ranks); 0 when one side is constant."""
    from scipy.stats import spearmanr

    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return 0.0
    return float(spearmanr(a, b).statistic)


def _homophily_figure(levels: list[float], means: dict[str, np.ndarray]):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3))
    for key, label in (("rp", "Generalized RP"), ("gcn", "GCN"), ("mlp", "MLP")):
        ax.plot(levels, means[key], marker="o", label=label)
    ax.plot(levels, means["align"], marker="s", linestyle="--", label="A(S^4, YY^T)")
    ax.set(xlabel="edge homophily", ylabel="test accuracy / alignment")
    ax.legend()
    return fig


# --------------------------------------------------------------------------- claims
def _rp_matches_gcn(m) -> bool:
    return all(m[f"{name}_rp_acc"] >= m[f"{name}_gcn_acc"] - 0.005 for name in ("cora", "citeseer"))


CLAIMS = [
    Claim("Generalized RP reaches GCN's test accuracy (within 0.5 points) on Cora and CiteSeer",
          experiment=accuracy, check=_rp_matches_gcn,
          paper="README table: Cora 82.7 vs GCN 81.9, CiteSeer 73.0 vs 71.6"),
    Claim("Basic RP (k chosen on validation, all four candidates timed) reaches GCN's Cora accuracy within 1 point "
          "in at most a fifth of GCN's training time (200 epochs, same thread); Generalized RP's cost is reported "
          "beside it", experiment=accuracy,
          check=lambda m: (m["cora_gcn_over_rp_basic_time"] >= 5.0
                           and m["cora_rp_basic_acc"] >= m["cora_gcn_acc"] - 0.01),
          paper="RP is 12-14x faster per step than GNNs on OGB (basic RP) at comparable accuracy"),
    Claim("On Cora, A(S^4, YY^T) = 0.106 +- 0.01", experiment=alignment,
          check=lambda m: abs(m["align_s4_y"] - 0.106) <= 0.01, null=RANDOM_GRAPH_CORA,
          paper="dashed reference line of the Cora alignment figure, ~0.105"),
    Claim("During GCN training the NTK aligns with the graph and the labels: once the GCN has fit its training "
          "labels (training accuracy >= 0.9), A(NTK, S^4) and A(NTK, YY^T) both end higher than at initialization",
          experiment=alignment,
          check=lambda m: (m["train_acc_final"] >= 0.9 and m["ntk_graph_final"] > m["ntk_graph_init"]
                           and m["ntk_label_final"] > m["ntk_label_init"]),
          paper="Cora figure (full graph): 0.038 -> 0.092 and 0.028 -> 0.40 over 50k SGD steps"),
    Claim("On CSBM, RP's and GCN's accuracy and A(S^4, YY^T) rise with homophily while the MLP's accuracy stays flat",
          experiment=heterophily,
          check=lambda m: (m["rp_vs_homophily_spearman"] >= 0.9 and m["gcn_vs_homophily_spearman"] >= 0.9
                           and m["align_vs_homophily_spearman"] >= 0.9 and m["mlp_range"] <= 0.05),
          paper="Section 5: alignment of the graph with the labels governs GNN generalization"),
    Claim("On CSBM the graph helps or hurts by homophily: RP loses to the MLP at the strongest heterophily and beats "
          "it by at least 10 points at the strongest homophily",
          experiment=heterophily,
          check=lambda m: m["rp_mlp_gap_low"] < 0 and m["rp_mlp_gap_high"] >= 0.10,
          paper="RP ranks 4th of 10 on heterophilic graphs; GNNs lose to MLPs under heterophily"),
]
