"""How Graph Neural Networks Learn: Lessons from Training Dynamics (Yang et al., ICML 2024), reproduced.

Three experiments: (1) node classification on Cora and CiteSeer with Generalized RP (official settings), basic RP,
label propagation and PyG's MLP, GCN and GAT; (2) kernel-graph alignment of the NTK of the paper's GCN during
training on Cora (the paper's alignment figure); (3) CSBM graphs from strong heterophily to strong homophily.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import torch
from torch import nn

from icml24.core import Claim, Paper, experiment
from icml24.core.context import limit_threads
from icml24.data import csbm, planetoid
from icml24.graph import GeneralizedRP, ResidualPropagation, track_gcn_alignment
from icml24.graph.alignment import centered_kernel_alignment, graph_kernel
from icml24.graph.rp import normalize_features, normalized_adjacency

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
        "PubMed (ind.pubmed.allx is not in the offline data) and the OGB and heterophilic benchmarks (downloads) are "
        "not run; the accuracy claim covers Cora and CiteSeer only.",
        "The baselines are PyG's GCN (hidden 16, dropout 0.5), GAT (8 heads x 8, dropout 0.6) and PyG's 2-layer MLP "
        "(hidden 64, no normalization layer), Adam, 200 epochs, test accuracy at the best validation epoch, on "
        "row-normalized features passed as a sparse tensor; the paper's GCN numbers come from its own pipeline. "
        "Basic RP uses lr 1 and picks k from {2, 4, 8, 16} on "
        "validation (the official run.sh has basic-RP settings for OGB only).",
        "Alignment: the NTK is computed in closed form (TwoLayerGCN.ntk, tested equal to torch.func autodiff) with the "
        "official summed-logit convention, biases included. With the official seed 123 (runner seed 0) and lr 0.01 "
        "our run matches the full-graph curve of the official vector figure (Visualization/figs/alignment_cora.pdf) "
        "point for point: A(NTK, S^4) / A(NTK, YY^T) / test accuracy = 0.038/0.028/14.4% at step 0, "
        "0.011/0.008/17.6% at 2000, 0.026/0.085/51.8% at 6000, 0.051/0.199/69.9% at 12000 (figure: identical to 3 "
        "digits). The figure's 10 other curves evaluate the NTK on graphs with 10-99% of the edges dropped; the "
        "pre-study's small values (0.015-0.05) match the 99%-dropped curve's start and the dip every curve takes "
        "in the first ~6000 steps; the rise to ~0.09 / ~0.40 needs ~30000 steps at lr 0.01.",
        "The quick alignment setting trains with lr 0.1 for 1200 steps (the SGD 'time' of 12000 steps at lr 0.01; "
        "the full setting is the official 50000 steps at lr 0.01, ~20 min on CPU). At lr 0.1 the alignments rise "
        "faster (0.079 / 0.354 at step 1200) but test accuracy oscillates (~46% at the last step).",
        "NTK parameter blocks: at initialization the first-layer bias block carries 99% of the centred NTK (a "
        "degree-like kernel aligned with neither S^4 nor YY^T); during training the second-layer weight block (Gram "
        "matrix of the propagated hidden features) takes over (~99%) and carries the alignment; the first-layer "
        "weight block alone is aligned from the start (~0.47 / 0.32) but stays under 1% of the kernel.",
        "Wall time: Generalized RP's whole fit (Gaussian kernel, O(n^2 d); all 20000 steps evaluated) is timed "
        "against 200 epochs of the PyG GCN with per-epoch evaluation, both on CPU; the paper's speed-ups (12-14x per "
        "step) are for basic RP on OGB, whose time we also report (cora_gcn_over_rp_basic_time).",
        "CSBM: the lead's generator (5 classes, 1000 nodes quick / 2000 full, average degree 10, features "
        "0.35 * mu_y + noise, 10% / 20% / 70% train / val / test) replaces the official make_classification-based "
        "script; Generalized RP there uses k = 2, gamma = 1, raw features and lr = 1 / lambda_max(P_LL).",
    ],
)

# Generalized_RP/run.sh: learning rate, propagation steps, kernel width, RP steps
RP_SETTINGS = {
    "cora": {"lr": 10.0, "k": 3, "gamma": 1.0, "steps": 20000},
    "citeseer": {"lr": 10.0, "k": 3, "gamma": 20.0, "steps": 1000},
}
BASIC_RP_K = (2, 4, 8, 16)


# --------------------------------------------------------------------------- baselines (torch_geometric)
class _InputDropout(nn.Module):
    """Dropout of the input features that draws masks for the stored (non-zero) entries only.

    Same distribution as ``F.dropout`` (zeros stay zero either way). Bag-of-words features are ~1% dense and
    are passed as a sparse CSR tensor, which PyG's linear layers accept; this keeps a CPU epoch cheap.
    """

    def __init__(self, p: float):
        super().__init__()
        self.p = p

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0:
            return x
        if x.layout == torch.sparse_csr:
            keep = (torch.rand(x.values().shape[0]) >= self.p).to(x.dtype) / (1.0 - self.p)
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")
                return torch.sparse_csr_tensor(x.crow_indices(), x.col_indices(), x.values() * keep, x.shape,
                                               check_invariants=False)
        return nn.functional.dropout(x, self.p, training=True)


class _GCN(nn.Module):
    def __init__(self, in_features: int, num_classes: int, hidden: int = 16, dropout: float = 0.5):
        super().__init__()
        from torch_geometric.nn import GCNConv

        self.conv1, self.conv2 = GCNConv(in_features, hidden, cached=True), GCNConv(hidden, num_classes, cached=True)
        self.dropout = dropout
        self.input_dropout = _InputDropout(dropout)

    def forward(self, x, edge_index):
        x = self.input_dropout(x)
        x = torch.relu(self.conv1(x, edge_index))
        return self.conv2(nn.functional.dropout(x, self.dropout, self.training), edge_index)


class _GAT(nn.Module):
    def __init__(self, in_features: int, num_classes: int, hidden: int = 8, heads: int = 8, dropout: float = 0.6):
        super().__init__()
        from torch_geometric.nn import GATConv

        self.conv1 = GATConv(in_features, hidden, heads=heads, dropout=dropout)
        self.conv2 = GATConv(hidden * heads, num_classes, heads=1, concat=False, dropout=dropout)
        self.dropout = dropout
        self.input_dropout = _InputDropout(dropout)

    def forward(self, x, edge_index):
        x = self.input_dropout(x)
        x = nn.functional.elu(self.conv1(x, edge_index))
        return self.conv2(nn.functional.dropout(x, self.dropout, self.training), edge_index)


class _MLP(nn.Module):
    def __init__(self, in_features: int, num_classes: int, hidden: int = 64, dropout: float = 0.5):
        super().__init__()
        from torch_geometric.nn import MLP

        self.mlp = MLP([in_features, hidden, num_classes], dropout=dropout, norm=None)

    def forward(self, x, edge_index):
        return self.mlp(x)


_BASELINES = {"gcn": (_GCN, 0.01), "gat": (_GAT, 0.005), "mlp": (_MLP, 0.01)}  # model, Adam learning rate


def train_baseline(kind: str, data, x: torch.Tensor, seed: int, epochs: int) -> tuple[float, float]:
    """Train a PyG baseline full-batch; return (test accuracy at the best validation epoch, seconds)."""
    model_class, lr = _BASELINES[kind]
    torch.manual_seed(seed)
    model = model_class(x.shape[1], int(data.y.max()) + 1)
    if x.layout == torch.strided and float((x != 0).float().mean()) < 0.1:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")
            x = x.to_sparse_csr()  # sparse features: much cheaper first layer
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=5e-4)
    y, train, val, test = data.y, data.train_mask, data.val_mask, data.test_mask
    best_val, best_test = -1.0, 0.0
    start = time.perf_counter()
    for _ in range(epochs):
        model.train()
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x, data.edge_index)[train], y[train]).backward()
        optimizer.step()
        model.eval()
        with torch.no_grad():
            predicted = model(x, data.edge_index).argmax(dim=1)
        val_acc = float((predicted[val] == y[val]).float().mean())
        if val_acc > best_val:
            best_val, best_test = val_acc, float((predicted[test] == y[test]).float().mean())
    return best_test, time.perf_counter() - start


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
@experiment(PAPER, quick={"datasets": "cora,citeseer", "seeds": 3, "epochs": 200},
            full={"datasets": "cora,citeseer", "seeds": 10, "epochs": 200})
def accuracy(ctx, datasets: str = "cora,citeseer", seeds: int = 3, epochs: int = 200,
             rp_steps: int = 0, threads: int = 1) -> dict[str, float]:
    """Generalized RP (official settings), basic RP, LP, MLP, GCN, GAT on Cora/CiteSeer: test accuracy and time."""
    # every method gets the same thread count (default 1): oversubscribed threads on shared cores slowed the
    # small sparse GCN epochs ~10x and made the RP/GCN time ratio depend on the machine's load
    with limit_threads(threads):
        return _accuracy(ctx, datasets, seeds, epochs, rp_steps)


def _accuracy(ctx, datasets: str, seeds: int, epochs: int, rp_steps: int) -> dict[str, float]:
    metrics: dict[str, float] = {}
    names = [name.strip().lower() for name in datasets.split(",") if name.strip()]
    for name in names:
        data = planetoid(name)
        x = normalize_features(data.x)
        settings = dict(RP_SETTINGS[name])
        if rp_steps > 0:  # for smoke tests only
            settings["steps"] = rp_steps
        start = time.perf_counter()
        rp = GeneralizedRP(**settings).fit(data)
        metrics[f"{name}_rp_seconds"] = time.perf_counter() - start
        metrics[f"{name}_rp_acc"] = _test_accuracy(rp.predict(), data)
        metrics[f"{name}_rp_best_step"] = float(rp.best_step_)
        start = time.perf_counter()
        basic_acc, basic_k = _basic_rp(data, steps=min(settings["steps"], 500))
        metrics[f"{name}_rp_basic_seconds"] = time.perf_counter() - start  # all four k, with the selection
        metrics[f"{name}_rp_basic_acc"], metrics[f"{name}_rp_basic_k"] = basic_acc, basic_k
        metrics[f"{name}_lp_acc"] = _label_propagation(data)
        for kind in _BASELINES:
            runs = [train_baseline(kind, data, x, ctx.child_seed(i), epochs)
                    for i in ctx.progress(range(seeds), description=f"{name} {kind}", total=seeds)]
            accuracies, seconds = np.array([r[0] for r in runs]), np.array([r[1] for r in runs])
            metrics[f"{name}_{kind}_acc"] = float(accuracies.mean())
            metrics[f"{name}_{kind}_acc_std"] = float(accuracies.std())
            metrics[f"{name}_{kind}_seconds"] = float(seconds.mean())
        metrics[f"{name}_gcn_over_rp_time"] = metrics[f"{name}_gcn_seconds"] / metrics[f"{name}_rp_seconds"]
        metrics[f"{name}_gcn_over_rp_basic_time"] = metrics[f"{name}_gcn_seconds"] / metrics[f"{name}_rp_basic_seconds"]
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
@experiment(PAPER, quick={"steps": 1200, "every": 200, "lr": 0.1},
            full={"steps": 50000, "every": 2000, "lr": 0.01})
def alignment(ctx, steps: int = 1200, every: int = 200, lr: float = 0.1, convention: str = "summed",
              base_seed: int = 123, threads: int = 1) -> dict[str, float]:
    """Alignment of the GCN's NTK with S^4 and YY^T during training on Cora, and A(S^4, YY^T)."""
    data = planetoid("cora")
    with limit_threads(threads):
        tracker = track_gcn_alignment(data, steps=steps, every=every, lr=lr, convention=convention,
                                      seed=base_seed + ctx.seed)
    curves = tracker.as_arrays()
    metrics = {
        "align_s4_y": tracker.graph_label_alignment,
        "ntk_graph_init": float(curves["ntk_graph"][0]), "ntk_graph_final": float(curves["ntk_graph"][-1]),
        "ntk_label_init": float(curves["ntk_label"][0]), "ntk_label_final": float(curves["ntk_label"][-1]),
        "ntk_graph_peak": float(np.nanmax(curves["ntk_graph"])),
        "ntk_label_peak": float(np.nanmax(curves["ntk_label"])),
        "test_acc_final": float(curves["test_acc"][-1]),
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
@experiment(PAPER, quick={"num_nodes": 1000, "seeds": 2}, full={"num_nodes": 2000, "seeds": 10})
def heterophily(ctx, homophily: str = "0.1,0.3,0.5,0.7,0.9", num_nodes: int = 1000, seeds: int = 2,
                num_classes: int = 5, feature_signal: float = 0.35, epochs: int = 200,
                rp_steps: int = 1000, threads: int = 1) -> dict[str, float]:
    """CSBM from heterophily to homophily: accuracy of Generalized RP, GCN, MLP and A(S^4, YY^T)."""
    with limit_threads(threads):
        return _heterophily(ctx, homophily, num_nodes, seeds, num_classes, feature_signal, epochs, rp_steps)


def _heterophily(ctx, homophily: str, num_nodes: int, seeds: int, num_classes: int, feature_signal: float,
                 epochs: int, rp_steps: int) -> dict[str, float]:
    levels = [float(h) for h in homophily.split(",")]
    results = {key: np.zeros((len(levels), seeds)) for key in ("rp", "gcn", "mlp", "align")}
    for j in ctx.progress(range(seeds), description="CSBM seeds", total=seeds):
        graph_seed = ctx.child_seed(j)
        for i, level in enumerate(levels):
            # one seed per repetition: the same labels and features at every homophily, only the edges change
            data = csbm(num_nodes=num_nodes, num_features=100, num_classes=num_classes, homophily=level,
                        feature_signal=feature_signal, seed=graph_seed, avg_degree=10.0, split=(0.1, 0.2))
            probe = GeneralizedRP(steps=1, lr=1.0, k=2, gamma=1.0, normalize=False).fit(data)
            rp = GeneralizedRP(steps=rp_steps, lr=1.0 / probe.lambda_max_, k=2, gamma=1.0, normalize=False).fit(data)
            results["rp"][i, j] = _test_accuracy(rp.predict(), data)
            results["gcn"][i, j] = train_baseline("gcn", data, data.x, graph_seed, epochs)[0]
            results["mlp"][i, j] = train_baseline("mlp", data, data.x, graph_seed, epochs)[0]
            onehot = nn.functional.one_hot(data.y, num_classes).double()
            operator = normalized_adjacency(data.edge_index, num_nodes)
            results["align"][i, j] = centered_kernel_alignment(graph_kernel(operator, 4), onehot @ onehot.T)
    means = {key: values.mean(axis=1) for key, values in results.items()}
    metrics: dict[str, float] = {}
    for i, level in enumerate(levels):
        for key in results:
            metrics[f"{key}_h{level:g}"] = float(means[key][i])
    gap = means["rp"] - means["mlp"]
    metrics["rp_mlp_gap_low"], metrics["rp_mlp_gap_high"] = float(gap[0]), float(gap[-1])
    for key in ("rp", "gcn", "mlp", "align"):
        metrics[f"{key}_vs_homophily_spearman"] = _spearman(np.array(levels), means[key])
    metrics["gap_vs_homophily_spearman"] = _spearman(np.array(levels), gap)
    metrics["mlp_range"] = float(means["mlp"].max() - means["mlp"].min())
    ctx.figure("csbm_homophily", _homophily_figure(levels, means))
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
    Claim("RP needs no gradient training: on Cora its wall time is at least 5x below GCN's (200 epochs)",
          experiment=accuracy, check=lambda m: m["cora_gcn_over_rp_time"] >= 5.0,
          paper="RP is 12-14x faster per step than GNNs on OGB (basic RP); not reported for Cora"),
    Claim("On Cora, A(S^4, YY^T) = 0.106 +- 0.01", experiment=alignment,
          check=lambda m: abs(m["align_s4_y"] - 0.106) <= 0.01,
          paper="dashed reference line of the Cora alignment figure, ~0.105"),
    Claim("During GCN training the NTK aligns with the graph and the labels: A(NTK, S^4) and A(NTK, YY^T) both "
          "end higher than at initialization", experiment=alignment,
          check=lambda m: m["ntk_graph_final"] > m["ntk_graph_init"] and m["ntk_label_final"] > m["ntk_label_init"],
          paper="Cora figure (full graph): 0.038 -> 0.092 and 0.028 -> 0.40 over 50k SGD steps"),
    Claim("On CSBM, RP's and GCN's accuracy and A(S^4, YY^T) rise with homophily while the MLP's accuracy stays flat",
          experiment=heterophily,
          check=lambda m: (m["rp_vs_homophily_spearman"] >= 0.9 and m["gcn_vs_homophily_spearman"] >= 0.9
                           and m["align_vs_homophily_spearman"] >= 0.9 and m["mlp_range"] <= 0.05),
          paper="Section 5: alignment of the graph with the labels governs GNN generalization"),
    Claim("On CSBM, the accuracy gap RP - MLP falls as homophily falls and is negative at strong heterophily",
          experiment=heterophily,
          check=lambda m: m["gap_vs_homophily_spearman"] >= 0.9 and m["rp_mlp_gap_low"] < 0 < m["rp_mlp_gap_high"],
          paper="RP ranks 4th of 10 on heterophilic graphs; GNNs lose to MLPs under heterophily"),
]
