"""Graph Distillation with Eigenbasis Matching (Liu, Bo & Shi, ICML 2024): accuracy, cross-architecture, speed."""

from __future__ import annotations

import time
from functools import lru_cache

import numpy as np
import torch

from icml24.core import Claim, Null, Paper, experiment
from icml24.data import planetoid_missing
from icml24.graph import (
    GDEM,
    GCond,
    herding_coreset,
    laplacian_eigenpairs,
    normalize_features,
    prepare_real_graph,
    random_coreset,
    select_gdem,
    synthetic_label_counts,
    train_on_synthetic,
    train_on_whole_graph,
)

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
        "and compare it with GCond (gradient-matching condensation) and random and herding coresets of the same "
        "size, and with a GCN trained on the whole graph (accuracy, and time against GCond); we also train SGC, "
        "APPNP, ChebNet and an MLP on one GDEM graph and time the distillation."
    ),
    deviations=[
        "Eigenbasis matching uses the exact identity ||aa^T - bb^T||_F^2 = ||a||^4 + ||b||^4 - 2(a.b)^2 instead of "
        "the K x d x d tensor (same value and gradient, tested), on CPU in float32.",
        "The real class means average the training nodes inside the largest connected component, without the "
        "official top-up by labelled non-training nodes (use_non_train_labels=True restores it).",
        "Evaluation GNNs train for 200 epochs in the quick setting (2000 in full) with 2 seeds, only on CiteSeer at "
        "r = 0.25 and 0.5.",
        "Cora (not in the paper, no official configuration) runs in the full setting with GDEM's hyper-parameters "
        "chosen on the real validation nodes among CiteSeer's three official configurations (select_gdem); no "
        "claim reads it.",
        "GCond is our port of the official CiteSeer script (SGC, 600 epochs, 20 outer / 15 inner steps, lr 1e-4) "
        "with exact S^2 X on the real side instead of sampled neighbours.",
        "Quick runs GCond for 10 of its 600 epochs with its time projected linearly to 600 (every epoch does the "
        "same work), so the GDEM-vs-GCond accuracy claim is judged on full only.",
        "Herding runs on the log-probabilities of the whole-graph GCN (as GCond's coreset baseline), and coresets "
        "train on the subgraph their nodes induce.",
        "SGC (2 hops), ChebNet (order-1 'X W0 + A X W1') and APPNP (10 hops, teleport 0.1) follow the official "
        "evaluation models; the MLP is reported but left out of the cross-architecture spread.",
        "'Distillation time' is the alternating optimization (official distill.py), timed apart from the "
        "eigendecomposition and the feature initialization.",
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
GCOND_EPOCHS = 600  # official scripts/run_main.sh for CiteSeer (--epoch=600)


@lru_cache(maxsize=4)
def _load(dataset: str):
    """A Planetoid graph with row-normalized features (as in the official loader); ``"csbm"`` is a tiny
    synthetic stand-in (240 nodes, 3 classes, 60 training nodes) for smoke runs."""
    from icml24.data import csbm, planetoid

    if dataset == "csbm":
        data = csbm(num_nodes=240, num_features=32, num_classes=3, homophily=0.8, feature_signal=2.0, random_state=0,
                    avg_degree=6.0, split=(0.25, 0.25))
        data.x = data.x.abs()  # non-negative, like bag-of-words features
    else:
        data = planetoid(dataset)
    data.x = normalize_features(data.x)
    return data, prepare_real_graph(data)


def _gdem(rate: float, seed: int, distill_epochs: int = 0) -> GDEM:
    if rate not in CONFIGS:
        raise ValueError(f"no official configuration for reduction rate {rate}; use one of {sorted(CONFIGS)}")
    config = dict(CONFIGS[rate], **({"epochs": distill_epochs} if distill_epochs > 0 else {}))
    return GDEM(reduction_rate=rate, random_state=seed, **config, **INIT)


def _has_official_config(dataset: str) -> bool:
    return dataset in ("citeseer", "csbm")  # the CSBM stand-in (smoke runs) borrows CiteSeer's


def _fit_gdem(dataset: str, data, real, rate: float, seed: int, eval_epochs: int, distill_epochs: int = 0):
    """The official configuration where there is one; else the best of CiteSeer's official configurations on
    the real validation nodes (``select_gdem``), as one would serve a new graph."""
    if _has_official_config(dataset):
        model = _gdem(rate, seed, distill_epochs).fit(data)
        model.config_rate_ = rate  # the official configuration of this rate
        return model
    override = {"epochs": distill_epochs} if distill_epochs > 0 else {}
    model, scores = select_gdem(data, [dict(config, **override) for config in CONFIGS.values()], rate,
                                random_state=seed, eval_epochs=eval_epochs, real=real, **INIT)
    best = int(np.argmax([s["val_acc"] for s in scores]))  # select_gdem keeps the first best
    model.config_rate_ = list(CONFIGS)[best]  # the CiteSeer rate whose official configuration validation chose
    return model


def _tag(rate: float) -> str:
    return f"r{int(round(rate * 100)):03d}"


@experiment(PAPER, quick={"datasets": ["citeseer"], "rates": [0.25, 0.5], "eval_epochs": 200, "gcond_epochs": 10,
                          "seeds": 2},
            full={"datasets": ["citeseer", "cora"], "rates": [0.25, 0.5, 1.0], "eval_epochs": 2000,
                  "gcond_epochs": GCOND_EPOCHS, "seeds": 10},
            smoke={"datasets": ["citeseer"], "rates": [0.25, 0.5], "eval_epochs": 60, "distill_epochs": 3,
                   "gcond_epochs": 1, "seeds": 1},
            threads=1, null=Null("the random coreset of the same size in GDEM's slot", {"method": "random"}),
            data=lambda config: planetoid_missing(config["datasets"]))
def accuracy(ctx, datasets: list[str] = ("citeseer",), rates: list[float] = (0.25, 0.5), eval_epochs: int = 300,
             distill_epochs: int = 0, gcond_epochs: int = GCOND_EPOCHS, method: str = "gdem") -> dict[str, float]:
    """GCN test accuracy (%) on GDEM, GCond, random and herding coresets of the same size, and the whole graph;
    and the time of GDEM against GCond.

    One seed trains one whole-graph GCN (its log-probabilities drive herding), distils one GDEM graph and one GCond
    graph per rate and draws one random coreset, so every baseline gets exactly as many seeds as GDEM; all four
    evaluation GCNs start from the same initialization (``ctx.torch_generator(dataset, rate, "eval")``).
    GDEM uses the official configuration on CiteSeer and, on a graph without one (Cora), the best of CiteSeer's
    three official configurations on the real validation nodes (``select_gdem``).
    Baselines: GCond with the official CiteSeer script's settings (SGC, 20 outer / 15 inner steps, lr 1e-4,
    ``gcond_epochs`` of its 600 epochs); random coreset stratified by class; herding on the whole-graph GCN's
    log-probabilities (GCond's coreset baseline). Time: GDEM's eigendecomposition + initialization + distillation
    against GCond's whole fit, projected linearly to 600 epochs when ``gcond_epochs`` is smaller
    (``*_seconds_ratio``). ``distill_epochs > 0`` replaces the official distillation epochs (smoke runs only).
    Torch runs single-threaded (declared): on the shared 2-core machine this was ~20x faster than two contended
    threads.
    """
    if method not in SLOT_METHODS:
        raise ValueError(f"method must be one of {SLOT_METHODS}, got {method!r}")
    metrics: dict[str, float] = {}
    table = []
    for dataset in datasets:
        data, real = _load(dataset)
        result, model = train_on_whole_graph(real, epochs=eval_epochs,
                                             random_state=ctx.torch_generator(dataset, "whole"), return_model=True)
        metrics[f"{dataset}_whole"] = 100 * result["test_acc"]
        with torch.no_grad():
            embeddings = torch.log_softmax(model(real.x, real.adj), dim=1)
        train_y = data.y[data.train_mask]
        for rate in rates:
            counts = synthetic_label_counts(train_y, rate, int(data.y.max()) + 1)
            if method == "gdem":
                gdem = _fit_gdem(dataset, data, real, rate, ctx.child_seed(dataset, _tag(rate), "gdem"), eval_epochs,
                                 distill_epochs)
            gcond = GCond(reduction_rate=rate, epochs=gcond_epochs,
                          random_state=ctx.child_seed(dataset, _tag(rate), "gcond")).fit(data)
            start = time.perf_counter()
            coreset = random_coreset(data, counts, random_state=ctx.child_seed(dataset, _tag(rate), "random"))
            coreset_seconds = time.perf_counter() - start
            if method != "gdem":  # the null in GDEM's slot: the baseline's own graph and seconds
                gdem = _Slot(coreset, coreset_seconds) if method == "random" else _Slot(gcond.graph_, _timing(
                    _Slot(None, 1.0), gcond)["gcond_seconds"])
            graphs = {"gdem": gdem.graph_, "gcond": gcond.graph_, "random": coreset,
                      "herding": herding_coreset(data, counts, embeddings=embeddings)}
            tag = f"{dataset}_{{}}_{_tag(rate)}"
            for name, graph in graphs.items():  # not `method`: that would overwrite the slot's method
                result = train_on_synthetic(graph, real, epochs=eval_epochs,
                                            random_state=ctx.torch_generator(dataset, _tag(rate), "eval"))
                metrics[tag.format(name)] = 100 * result["test_acc"]
            metrics[tag.format("nodes")] = float(counts.sum())
            # the configuration GDEM ran with: the CiteSeer rate whose official configuration it is (chosen on
            # the real validation nodes where the graph has none; -1 for a null in GDEM's slot)
            metrics[tag.format("config_rate")] = float(getattr(gdem, "config_rate_", -1.0))
            metrics[tag.format("distill_seconds")] = float(gdem.distill_seconds_)
            metrics.update({tag.format(k): v for k, v in _timing(gdem, gcond).items()})
            table.append((dataset, rate, metrics[tag.format("gdem")], metrics[tag.format("random")],
                          metrics[tag.format("herding")], metrics[f"{dataset}_whole"], metrics[tag.format("gcond")]))
            ctx.log(f"{dataset} r={rate}: GDEM {metrics[tag.format('gdem')]:.1f} (CiteSeer r = "
                    f"{metrics[tag.format('config_rate')]:g} configuration), GCond "
                    f"{metrics[tag.format('gcond')]:.1f}, random {metrics[tag.format('random')]:.1f}, herding "
                    f"{metrics[tag.format('herding')]:.1f}; GCond/GDEM time "
                    f"{metrics[tag.format('seconds_ratio')]:.1f}x")
    ctx.artifact("accuracy_table", [dict(zip(("dataset", "rate", "gdem", "random", "herding", "whole", "gcond"), row))
                                    for row in table])
    _plot_accuracy(ctx, table)
    return metrics


SLOT_METHODS = ("gdem", "random", "gcond")


class _Slot:
    """A null in GDEM's slot: its graph, and its seconds as GDEM's (all counted as distillation)."""

    def __init__(self, graph, seconds: float):
        self.graph_, self.eigen_seconds_, self.init_seconds_, self.distill_seconds_ = graph, 0.0, 0.0, seconds


def _timing(gdem: GDEM, gcond: GCond) -> dict[str, float]:
    """Seconds of GDEM (eigendecomposition + initialization + distillation) and of GCond (its fit, projected
    linearly to the official 600 epochs), and their ratio ``seconds_ratio = GCond / GDEM``."""
    gdem_seconds = float(gdem.eigen_seconds_ + gdem.init_seconds_ + gdem.distill_seconds_)
    setup = gcond.seconds_ - gcond.condense_seconds_
    gcond_seconds = float(setup + gcond.condense_seconds_ / gcond.epochs * GCOND_EPOCHS)
    return {"gdem_seconds": gdem_seconds, "gcond_seconds": gcond_seconds, "gcond_epochs": float(gcond.epochs),
            "gcond_measured_seconds": float(gcond.seconds_), "seconds_ratio": gcond_seconds / gdem_seconds}


def _plot_accuracy(ctx, table) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(1.6 + 1.8 * len(table), 3.2))
    labels = [f"{d}\nr={r}" for d, r, *_ in table]
    width = 0.2
    for i, (name, column, color) in enumerate((("GDEM", 2, "C0"), ("GCond", 6, "C3"), ("random", 3, "C1"),
                                               ("herding", 4, "C2"))):
        ax.bar(np.arange(len(table)) + (i - 1.5) * width, [row[column] for row in table], width, label=name,
               color=color)
    for j, row in enumerate(table):
        ax.hlines(row[5], j - 0.4, j + 0.4, colors="k", linestyles="--", label="whole graph" if j == 0 else None)
    ax.set_xticks(np.arange(len(table)), labels)
    ax.set_ylabel("GCN test accuracy (%)")
    ax.set_ylim(0, 100)
    ax.legend(loc="lower right", fontsize=8)
    ctx.figure("accuracy", fig)


@experiment(PAPER, quick={"dataset": "citeseer", "rate": 0.5, "eval_epochs": 200},
            full={"dataset": "citeseer", "rate": 0.5, "eval_epochs": 2000, "seeds": 10},
            smoke={"dataset": "csbm", "rate": 0.25, "eval_epochs": 3, "distill_epochs": 3}, threads=1,
            null=Null("a random coreset of the same size in GDEM's slot", {"method": "random"}),
            data=lambda config: planetoid_missing([config["dataset"]]))
def cross_architecture(ctx, dataset: str = "citeseer", rate: float = 0.5, eval_epochs: int = 300,
                       distill_epochs: int = 0, method: str = "gdem") -> dict[str, float]:
    """Test accuracy (%) of GCN, SGC, APPNP, ChebNet and an MLP trained on the same GDEM graph (``method="random"``:
    on a stratified random coreset of the same size, the null).

    One seed distils one graph and trains every architecture on it from ``ctx.torch_generator("eval", name)``;
    the claim reads the spread of the mean accuracies over seeds.
    """
    if method not in ("gdem", "random"):
        raise ValueError(f"method must be 'gdem' or 'random', got {method!r}")
    data, real = _load(dataset)
    if method == "gdem":
        graph = _gdem(rate, ctx.child_seed("gdem"), distill_epochs).fit(data).graph_
    else:
        counts = synthetic_label_counts(data.y[data.train_mask], rate, int(data.y.max()) + 1)
        graph = random_coreset(data, counts, random_state=ctx.child_seed("random"))
    metrics = {}
    for name in (*GNNS, "MLP"):
        result = train_on_synthetic(graph, real, architecture=name, epochs=eval_epochs,
                                    random_state=ctx.torch_generator("eval", name))
        metrics[f"{name.lower()}_acc"] = 100 * result["test_acc"]
    metrics.update(_spread(metrics))
    return metrics


def _spread(metrics: dict[str, float]) -> dict[str, float]:
    gnn = [metrics[f"{name.lower()}_acc"] for name in GNNS]
    return {"gnn_spread": float(max(gnn) - min(gnn)), "gnn_mean": float(np.mean(gnn))}


@cross_architecture.summarizer
def _spread_of_means(per_seed: list[dict[str, float]]) -> dict[str, float]:
    """The spread of the architectures' mean accuracies over seeds (as Table 4 compares means)."""
    return _spread({f"{name.lower()}_acc": float(np.mean([m[f"{name.lower()}_acc"] for m in per_seed]))
                    for name in GNNS})


@experiment(PAPER, quick={"dataset": "citeseer", "rates": [0.25]},
            full={"dataset": "citeseer", "rates": [0.25, 0.5, 1.0]},
            smoke={"dataset": "csbm", "rates": [0.25]}, threads=1,
            null=Null("no alternating optimization (the initial eigenbasis)", {"optimize": False}),
            data=lambda config: planetoid_missing([config["dataset"]]))
def efficiency(ctx, dataset: str = "citeseer", rates: list[float] = (0.25, 0.5),
               optimize: bool = True) -> dict[str, float]:
    """Seconds for the eigendecomposition (fresh, not cached), feature initialization and distillation, and the
    decrease of the eigenbasis-matching loss (no claim reads these since the claims compare GDEM's time with
    GCond's in ``accuracy``; quick runs r = 0.25 only). ``optimize=False`` (the null) runs one epoch, whose
    recorded L_e is the initial eigenbasis's: final / initial is then that of no optimization.
    """
    metrics: dict[str, float] = {}
    data, _ = _load(dataset)
    start = time.perf_counter()
    spectrum = laplacian_eigenpairs(data.edge_index, data.num_nodes, recompute=True)
    metrics["eigen_seconds"] = time.perf_counter() - start
    metrics["lcc_nodes"] = float(spectrum.num_nodes)
    for rate in rates:
        model = _gdem(rate, ctx.child_seed("gdem", _tag(rate)), 0 if optimize else 1).fit(data)
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


GCOND_NULL = Null("GCond (its own graph and projected seconds) in GDEM's slot", {"method": "gcond"})

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
    Claim("GDEM is more accurate than GCond (gradient matching) at equal reduction rate on CiteSeer "
          "(r = 0.25 and 0.5)",
          experiment=accuracy, null=GCOND_NULL,
          check=lambda m: min(m["citeseer_gdem_r025"] - m["citeseer_gcond_r025"],
                              m["citeseer_gdem_r050"] - m["citeseer_gcond_r050"]) > 0.0,
          paper="Table 2: GDEM 72.3 / 72.6 vs GCond 70.5 / 70.6 at r = 0.25 / 0.5 (judged on full only, GCond at "
                "its official 600 epochs: quick truncates it to 10, a baseline below its strength, and reports "
                "this claim as not run with the command; the recorded full run in papers/records judges it)",
          setting="full"),
    Claim("GDEM (eigendecomposition + initialization + distillation) is at least 2x faster than GCond at equal "
          "reduction rate on CiteSeer (r = 0.25 and 0.5)",
          experiment=accuracy, null=GCOND_NULL,
          check=lambda m: min(m["citeseer_seconds_ratio_r025"], m["citeseer_seconds_ratio_r050"]) >= 2.0,
          paper="Sec. 5.4: GDEM distils much faster than gradient matching (GCond's 600 epochs; quick projects "
                "its time linearly from 10 epochs)"),
    Claim("GDEM's alternating optimization lowers the eigenbasis-matching loss L_e on CiteSeer (r = 0.25)",
          experiment=efficiency,
          check=lambda m: m["eigen_loss_ratio_r025"] < 1.0,
          paper="Eq. (7) is the objective GDEM minimizes (final / initial L_e; the official r = 0.25 config)"),
]
