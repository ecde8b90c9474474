"""Graph Distillation with Eigenbasis Matching (Liu, Bo & Shi, ICML 2024): accuracy, cross-architecture, speed."""

from __future__ import annotations

import time
from functools import lru_cache

import numpy as np
import torch

from icml24.core import Claim, Paper, experiment
from icml24.core.context import limit_threads
from icml24.graph.distill import (
    GDEM,
    herding_coreset,
    laplacian_eigenpairs,
    prepare_real_graph,
    random_coreset,
    synthetic_label_counts,
    train_on_synthetic,
    train_on_whole_graph,
)
from icml24.graph.distill.spectral import clear_memory_cache

PAPER = Paper(
    slug="gdem",
    title="Graph Distillation with Eigenbasis Matching",
    authors="Yang Liu, Deyu Bo, Chuan Shi",
    venue="ICML 2024",
    code="https://github.com/liuyang-tian/GDEM",
    summary=(
        "GDEM distils a graph into a few synthetic nodes by learning synthetic eigenvectors U' and features X' "
        "whose per-eigenvector feature covariances match the real graph's (eigenbasis matching), with a class "
        "discrimination term and an orthogonality term; the real eigenvalues are copied, so A' = I - U' Lambda U'^T "
        "inherits the real spectrum without any GNN in the loop. We distil CiteSeer (Planetoid public split) at the "
        "official reduction rates, train a 2-layer GCN on the synthetic graph (selected on real validation nodes), "
        "and compare it with random and herding coresets of the same size and with a GCN trained on the whole "
        "graph; we also train SGC, APPNP, ChebNet and an MLP on one GDEM graph and time the distillation."
    ),
    deviations=[
        "Eigenbasis matching uses the exact identity ||aa^T - bb^T||_F^2 = ||a||^4 + ||b||^4 - 2(a.b)^2 instead of "
        "the K x d x d tensor (same value and gradient, tested); everything runs on CPU in float32.",
        "The class means of the real graph average the training nodes inside the largest connected component; the "
        "official code tops them up with same-class LCC nodes from outside the training set (using their labels). "
        "The library keeps that behaviour behind use_non_train_labels=True; we leave it off.",
        "Evaluation GNNs train for 200 epochs in the quick run (2000 in full), still selected on real validation "
        "accuracy after every epoch; quick runs use 2 runs instead of 10 and only CiteSeer at r = 0.25 and 0.5.",
        "Cora is not in the GDEM paper and the official repository has no Cora configuration; the full run uses "
        "CiteSeer's hyper-parameters for Cora, untuned, and no claim reads Cora (one quick check at r = 0.5 gave "
        "GDEM 69.3 below a random coreset's 72.4 and the whole graph's 81.2).",
        "Herding runs on the log-probabilities of the whole-graph GCN (as in GCond's coreset baseline); coresets "
        "are trained on the subgraph the chosen training nodes induce.",
        "ChebNet and SGC follow the official evaluation models (order-1 Chebyshev layer 'X W0 + A X W1'; SGC with "
        "2 hops); APPNP uses 10 hops and teleport 0.1; the MLP is reported but is not a GNN, so it is left out of "
        "the cross-architecture spread.",
        "'Distillation time' is the alternating optimization (the official distill.py); the eigendecomposition "
        "and the feature initialization (official preprocess.py and feat_init.py) are timed separately.",
        "Torch runs single-threaded in these experiments: on the shared 2-core machine this was ~20x faster than "
        "two contended threads.",
    ],
)

# Official hyper-parameters (config/config_distill.json and config/config_init.json of the GDEM repository)
CONFIGS = {
    0.25: dict(eigen_k=30, ratio=1.0, epochs=500, epochs_u=5, epochs_x=1, alpha=1.0, beta=1e-5, gamma=1.0,
               lr_features=1e-4, lr_eigenvectors=0.01),
    0.5: dict(eigen_k=60, ratio=0.8, epochs=1500, epochs_u=10, epochs_x=15, alpha=0.05, beta=1e-5, gamma=0.5,
              lr_features=5e-4, lr_eigenvectors=5e-4),
    1.0: dict(eigen_k=120, ratio=0.95, epochs=500, epochs_u=1, epochs_x=10, alpha=0.001, beta=1e-6, gamma=0.1,
              lr_features=1e-3, lr_eigenvectors=1e-4),
}
INIT = dict(init_epochs=200, init_lr=0.005, init_weight_decay=0.05, mlp_epochs=100, mlp_lr=0.05,
            mlp_weight_decay=5e-4, mlp_dropout=0.0, hidden=256)
GNNS = ("GCN", "SGC", "APPNP", "ChebNet")


@lru_cache(maxsize=4)
def _load(dataset: str):
    """A Planetoid graph with row-normalized features (as in the official loader); ``"csbm"`` is a tiny
    synthetic stand-in (240 nodes, 3 classes, 60 training nodes) for smoke tests."""
    import torch_geometric.transforms as T

    from icml24.data import csbm, planetoid

    if dataset == "csbm":
        data = csbm(num_nodes=240, num_features=32, num_classes=3, homophily=0.8, feature_signal=2.0, seed=0,
                    avg_degree=6.0, split=(0.25, 0.25))
        data.x = data.x.abs()  # non-negative, like bag-of-words features
    else:
        data = planetoid(dataset)
    data = T.NormalizeFeatures()(data)
    return data, prepare_real_graph(data)


def _gdem(rate: float, seed: int) -> GDEM:
    if rate not in CONFIGS:
        raise ValueError(f"no official configuration for reduction rate {rate}; use one of {sorted(CONFIGS)}")
    return GDEM(reduction_rate=rate, seed=seed, **CONFIGS[rate], **INIT)


def _rates(rates: str) -> list[float]:
    return [float(r) for r in rates.split(",") if r.strip()]


def _tag(rate: float) -> str:
    return f"r{int(round(rate * 100)):03d}"


@experiment(PAPER, quick={"datasets": "citeseer", "rates": "0.25,0.5", "runs": 2, "eval_epochs": 200},
            full={"datasets": "citeseer,cora", "rates": "0.25,0.5,1.0", "runs": 10, "eval_epochs": 2000})
def accuracy(ctx, datasets: str = "citeseer", rates: str = "0.25,0.5", runs: int = 2,
             eval_epochs: int = 300) -> dict[str, float]:
    """GCN test accuracy (%) on GDEM, random and herding coresets of the same size, and the whole graph."""
    metrics: dict[str, float] = {}
    table = []
    with limit_threads(1):  # small GCNs: one thread beats contended threads
        for dataset in datasets.split(","):
            data, real = _load(dataset)
            whole, embeddings = [], None
            for run in range(runs):
                result, model = train_on_whole_graph(real, epochs=eval_epochs, seed=ctx.child_seed(run),
                                                     return_model=True)
                whole.append(result["test_acc"])
                if embeddings is None:
                    with torch.no_grad():
                        embeddings = model(real.x, real.adj)
            metrics[f"{dataset}_whole"] = 100 * float(np.mean(whole))
            metrics[f"{dataset}_whole_std"] = 100 * float(np.std(whole))
            train_y = data.y[data.train_mask]
            for rate in _rates(rates):
                counts = synthetic_label_counts(train_y, rate, real.num_classes)
                scores = {"gdem": [], "random": [], "herding": []}
                herd = herding_coreset(data, counts, embeddings=embeddings)
                seconds = []
                for run in ctx.progress(range(runs), description=f"{dataset} r={rate}", total=runs):
                    model = _gdem(rate, ctx.child_seed(100 + run)).fit(data)
                    seconds.append(model.distill_seconds_)
                    eval_seed = ctx.child_seed(200 + run)
                    scores["gdem"].append(train_on_synthetic(model.graph_, real, epochs=eval_epochs, seed=eval_seed))
                    core = random_coreset(data, counts, seed=ctx.child_seed(300 + run))
                    scores["random"].append(train_on_synthetic(core, real, epochs=eval_epochs, seed=eval_seed))
                    scores["herding"].append(train_on_synthetic(herd, real, epochs=eval_epochs, seed=eval_seed))
                tag = f"{dataset}_{{}}_{_tag(rate)}"
                for method, results in scores.items():
                    accs = 100 * np.array([r["test_acc"] for r in results])
                    metrics[tag.format(method)] = float(accs.mean())
                    metrics[tag.format(method) + "_std"] = float(accs.std())
                metrics[tag.format("nodes")] = float(counts.sum())
                metrics[tag.format("distill_seconds")] = float(np.mean(seconds))
                table.append((dataset, rate, metrics[tag.format("gdem")], metrics[tag.format("random")],
                              metrics[tag.format("herding")], metrics[f"{dataset}_whole"]))
                ctx.log(f"{dataset} r={rate}: GDEM {metrics[tag.format('gdem')]:.1f}, random "
                        f"{metrics[tag.format('random')]:.1f}, herding {metrics[tag.format('herding')]:.1f}")
    ctx.artifact("accuracy_table", [dict(zip(("dataset", "rate", "gdem", "random", "herding", "whole"), row))
                                    for row in table])
    _plot_accuracy(ctx, table)
    return metrics


def _plot_accuracy(ctx, table) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(1.6 + 1.8 * len(table), 3.2))
    labels = [f"{d}\nr={r}" for d, r, *_ in table]
    width = 0.25
    for i, (name, color) in enumerate((("GDEM", "C0"), ("random", "C1"), ("herding", "C2"))):
        ax.bar(np.arange(len(table)) + (i - 1) * width, [row[2 + i] for row in table], width, label=name, color=color)
    for j, row in enumerate(table):
        ax.hlines(row[5], j - 0.4, j + 0.4, colors="k", linestyles="--", label="whole graph" if j == 0 else None)
    ax.set_xticks(np.arange(len(table)), labels)
    ax.set_ylabel("GCN test accuracy (%)")
    ax.set_ylim(0, 100)
    ax.legend(loc="lower right", fontsize=8)
    ctx.figure("accuracy", fig)


@experiment(PAPER, quick={"dataset": "citeseer", "rate": 0.5, "runs": 1, "eval_epochs": 200},
            full={"dataset": "citeseer", "rate": 0.5, "runs": 10, "eval_epochs": 2000})
def cross_architecture(ctx, dataset: str = "citeseer", rate: float = 0.5, runs: int = 1,
                       eval_epochs: int = 300) -> dict[str, float]:
    """Test accuracy (%) of GCN, SGC, APPNP, ChebNet and an MLP trained on the same GDEM graph."""
    accs: dict[str, list[float]] = {name: [] for name in (*GNNS, "MLP")}
    with limit_threads(1):  # small GCNs: one thread beats contended threads
        data, real = _load(dataset)
        for run in range(runs):
            graph = _gdem(rate, ctx.child_seed(100 + run)).fit(data).graph_
            for name in accs:
                result = train_on_synthetic(graph, real, architecture=name, epochs=eval_epochs,
                                            seed=ctx.child_seed(200 + run))
                accs[name].append(100 * result["test_acc"])
    metrics = {f"{name.lower()}_acc": float(np.mean(v)) for name, v in accs.items()}
    metrics.update({f"{name.lower()}_acc_std": float(np.std(v)) for name, v in accs.items()})
    gnn = [metrics[f"{name.lower()}_acc"] for name in GNNS]
    metrics["gnn_spread"] = float(max(gnn) - min(gnn))
    metrics["gnn_mean"] = float(np.mean(gnn))
    return metrics


@experiment(PAPER, quick={"dataset": "citeseer", "rates": "0.25,0.5"},
            full={"dataset": "citeseer", "rates": "0.25,0.5,1.0"})
def efficiency(ctx, dataset: str = "citeseer", rates: str = "0.25,0.5") -> dict[str, float]:
    """Seconds for the eigendecomposition (fresh, not cached), feature initialization and distillation."""
    metrics: dict[str, float] = {}
    with limit_threads(1):  # small GCNs: one thread beats contended threads
        data, _ = _load(dataset)
        clear_memory_cache()
        start = time.perf_counter()
        spectrum = laplacian_eigenpairs(data.edge_index, data.num_nodes, cache=False)
        metrics["eigen_seconds"] = time.perf_counter() - start
        metrics["lcc_nodes"] = float(spectrum.num_nodes)
        for rate in _rates(rates):
            model = _gdem(rate, ctx.child_seed(100)).fit(data)
            metrics[f"init_seconds_{_tag(rate)}"] = float(model.init_seconds_)
            metrics[f"distill_seconds_{_tag(rate)}"] = float(model.distill_seconds_)
            metrics[f"epochs_{_tag(rate)}"] = float(model.epochs)
            history = model.history_
            metrics[f"eigen_loss_ratio_{_tag(rate)}"] = float(history["eigen"][-1] / history["eigen"][0])
            if rate == 0.5:
                _plot_history(ctx, history, dataset)
    metrics["max_distill_seconds"] = max(v for k, v in metrics.items() if k.startswith("distill_seconds_"))
    return metrics


def _plot_history(ctx, history, dataset: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(10, 2.8))
    for ax, (name, values) in zip(axes, history.items()):
        ax.plot(values)
        ax.set_title(f"L_{name[0]} ({name})", fontsize=9)
        ax.set_xlabel("epoch")
        ax.set_yscale("log")
    fig.suptitle(f"GDEM losses on {dataset}, r = 0.5", fontsize=10)
    fig.tight_layout()
    ctx.figure("gdem_losses", fig)


CLAIMS = [
    Claim("GDEM on CiteSeer at r = 0.25 and 0.5 reaches within 1 point of the GCN trained on the whole graph",
          experiment=accuracy,
          check=lambda m: min(m["citeseer_gdem_r025"], m["citeseer_gdem_r050"]) >= m["citeseer_whole"] - 1.0,
          paper="GDEM 72.3 / 72.6 at r = 0.25 / 0.5 vs whole graph 71.7 (Table 2); our pre-study 72.3 / 71.7"),
    Claim("GDEM beats a random coreset of the same size by at least 5 points on CiteSeer (r = 0.25 and 0.5)",
          experiment=accuracy,
          check=lambda m: min(m["citeseer_gdem_r025"] - m["citeseer_random_r025"],
                              m["citeseer_gdem_r050"] - m["citeseer_random_r050"]) >= 5.0,
          paper="Table 2 (GCond's coreset numbers): random 54.4 / 64.2 vs GDEM 72.3 / 72.6; pre-study 71.7 vs 60.3"),
    Claim("GNN architectures (GCN, SGC, APPNP, ChebNet) trained on one GDEM graph of CiteSeer (r = 0.5) "
          "agree within 3 points",
          experiment=cross_architecture,
          check=lambda m: m["gnn_spread"] <= 3.0,
          paper="Table 4: GDEM generalizes across architectures with small spread (about 70-73 on CiteSeer)"),
    Claim("Distillation of CiteSeer (after the one-off eigendecomposition) takes under 30 s on 2 CPU cores",
          experiment=efficiency,
          check=lambda m: m["max_distill_seconds"] < 30.0,
          paper="Sec. 5.4: GDEM distils much faster than gradient/trajectory matching (pre-study 3-9 s)"),
]
