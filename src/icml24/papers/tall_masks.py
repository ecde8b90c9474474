"""TALL masks and Consensus Merging (Wang et al., ICML 2024), reproduced on small derived-digit tasks.

A small MLP is pre-trained on scikit-learn's digits (or MNIST-1D), then its whole backbone is fine-tuned on T
derived tasks (rotations, pixel permutations, inversion, relabellings), each with its own frozen linear head
(derived from the pre-trained classifier, standing in for CLIP's frozen zero-shot heads). The fine-tuned backbones
are merged with Task Arithmetic, TIES, Consensus-TA and Consensus-TIES, and compressed with TALL masks.

One runner seed is one repetition of the whole task-vector pipeline: its own train/validation/test split, its own
pre-training and fine-tuning streams, then every merge evaluated on that seed's models. The runner averages the
metrics over seeds; no claim needs an across-seed quantity, so there is no summarize (see ``merging``).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn
from torch.func import functional_call

from icml24.core import Claim, Paper, experiment
from icml24.data import TASK_SPECS, ImageTask, image_tasks, label_map, load_source, split_indices
from icml24.merging import (
    ConsensusMerging,
    StateDictLayout,
    TALLMasks,
    TaskArithmetic,
    TIESMerging,
    mask_statistics,
    storage_bits,
)

PAPER = Paper(
    slug="tall-masks",
    title="Localizing Task Information for Improved Model Merging and Compression",
    authors="Ke Wang, Nikolaos Dimitriadis, Guillermo Ortiz-Jimenez, Francois Fleuret, Pascal Frossard",
    venue="ICML 2024",
    code="https://github.com/nik-dim/tall_masks",
    summary=(
        "TALL masks m_t = 1{|tau_t| > lambda_t |tau_MTL - tau_t|} locate, inside the multi-task vector, the weights "
        "each task needs; theta_0 + m_t * tau_MTL recovers the fine-tuned model, so T checkpoints compress to "
        "theta_0, tau_MTL and T bit masks. Consensus Merging keeps only weights used by at least k=2 tasks, "
        "removing 'selfish' (one task) and 'catastrophic' (no task) weights before Task Arithmetic or TIES. We "
        "fine-tune a small pre-trained MLP on 4, 8 and 14 tasks derived from the digits and compare individual, "
        "zero-shot, TA, TIES, TALL reconstruction and Consensus-TA/TIES (normalized accuracy = merged / fine-tuned "
        "test accuracy), with lambda_t and alpha chosen on validation."
    ),
    deviations=[
        "A 2-layer MLP (~82k parameters) pre-trained on scikit-learn's 8x8 digits, fine-tuned on 4/8/14 tasks "
        "derived from the digits, replaces CLIP ViT-B/32 (88M) on the paper's 8/14/20 vision datasets.",
        "Each task's frozen head is the pre-trained digit classifier averaged through the task's label map (for "
        "CLIP's text-derived zero-shot heads), and only the backbone is merged and counted in storage.",
        "Fine-tuning is 15 epochs of SGD with momentum (lr 0.02) on the whole backbone, which gives far larger and "
        "more conflicting task vectors than the paper's CLIP fine-tuning (metric tau_rel_norm).",
        "Validation and test sets are ~360-image splits of the 1797 digits, so one image moves a task's accuracy "
        "by ~0.3 points.",
        "TIES trims the top 20% of each task vector over the whole model and uses the disjoint mean as a baseline "
        "and the disjoint sum inside TALL masks and Consensus-TIES, as the official code does.",
    ],
)

ALPHAS = tuple(round(0.1 * i, 1) for i in range(1, 11))
LAMBDAS = (0.2, 0.3, 0.4, 0.5, 0.6)
_METHODS = ("zeroshot", "ta", "ties", "tall_ta", "tall_ties", "consensus_ta", "consensus_ties")


def _linear(in_features: int, out_features: int, generator: torch.Generator | None = None) -> nn.Linear:
    """``nn.Linear`` with PyTorch's default init (weight and bias ~ U(+-1/sqrt(in))) drawn from ``generator``.

    ``skip_init`` builds the layer without touching the global RNG; without a generator the weights stay
    uninitialized (the caller overwrites them).
    """
    layer = nn.utils.skip_init(nn.Linear, in_features, out_features)
    if generator is not None:
        bound = 1.0 / math.sqrt(in_features)
        with torch.no_grad():
            layer.weight.uniform_(-bound, bound, generator=generator)
            layer.bias.uniform_(-bound, bound, generator=generator)
    return layer


class _Backbone(nn.Module):
    def __init__(self, num_features: int, hidden: int, generator: torch.Generator):
        super().__init__()
        self.layers = nn.Sequential(_linear(num_features, hidden, generator), nn.ReLU(),
                                    _linear(hidden, hidden, generator), nn.ReLU())

    def forward(self, x):
        return self.layers(x)


def _train(backbone: nn.Module, head: nn.Module, x: torch.Tensor, y: torch.Tensor, epochs: int, lr: float,
           generator: torch.Generator, noise: float = 0.0, batch_size: int = 64, optimizer: str = "adam") -> None:
    """Minibatch Adam or SGD with momentum on the backbone (and the head when it requires grad)."""
    params = [p for p in list(backbone.parameters()) + list(head.parameters()) if p.requires_grad]
    if optimizer not in ("adam", "sgd"):
        raise ValueError(f"optimizer must be 'adam' or 'sgd', got {optimizer!r}")
    optimizer = (torch.optim.Adam(params, lr=lr) if optimizer == "adam"
                 else torch.optim.SGD(params, lr=lr, momentum=0.9))
    for _ in range(epochs):
        order = torch.randperm(len(y), generator=generator)
        for start in range(0, len(y), batch_size):
            idx = order[start:start + batch_size]
            inputs = x[idx]
            if noise > 0:
                inputs = inputs + noise * torch.randn(inputs.shape, generator=generator)
            loss = nn.functional.cross_entropy(head(backbone(inputs)), y[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


def _derived_head(base_head: nn.Linear, spec: str, num_classes: int) -> nn.Linear:
    """A frozen task head derived from the pre-trained classifier, as CLIP derives zero-shot heads from text.

    Each task class ``c`` gets the mean weight row of the source digits the task's label map sends to ``c`` (for
    tasks with no label map this is the base head itself; for ``shift:k`` a row permutation).
    """
    mapped = torch.from_numpy(label_map(spec, base_head.out_features))
    assign = torch.zeros(num_classes, base_head.out_features)
    assign[mapped, torch.arange(base_head.out_features)] = 1.0
    assign /= assign.sum(dim=1, keepdim=True).clamp(min=1.0)
    head = _linear(base_head.in_features, num_classes)
    with torch.no_grad():
        head.weight.copy_(assign @ base_head.weight)
        head.bias.copy_(assign @ base_head.bias)
    head.requires_grad_(False)
    return head


class _Evaluator:
    """Accuracy of a flat backbone vector on a task's split, with the task's frozen head."""

    def __init__(self, backbone: nn.Module, layout: StateDictLayout, heads: list[nn.Module], tasks: list[ImageTask]):
        self.backbone, self.layout, self.heads = backbone, layout, heads
        self.data = {split: [(torch.from_numpy(getattr(t, f"x_{split}")), torch.from_numpy(getattr(t, f"y_{split}")))
                             for t in tasks] for split in ("val", "test")}

    @torch.no_grad()
    def accuracy(self, vector: torch.Tensor, task: int, split: str = "val") -> float:
        x, y = self.data[split][task]
        params = self.layout.unflatten(vector)
        logits = self.heads[task](functional_call(self.backbone, params, (x,)))
        return float((logits.argmax(dim=1) == y).float().mean())


class _Pretrained:
    """One seed's pre-trained backbone and digit head, the seed's tasks (one split) and its fine-tuning."""

    def __init__(self, ctx, source: str, num_tasks: int, hidden: int, pretrain_epochs: int):
        split_seed = ctx.child_seed("split")
        self.tasks = image_tasks(source, TASK_SPECS[:num_tasks], seed=split_seed)
        x, y, _ = load_source(source)
        train, _, _ = split_indices(len(y), split_seed)
        generator = ctx.torch_generator("pretrain")
        self.backbone = _Backbone(x.shape[1], hidden, generator)
        self.base_head = _linear(hidden, int(y.max()) + 1, generator)
        _train(self.backbone, self.base_head, torch.from_numpy(x[train]), torch.from_numpy(y[train]),
               pretrain_epochs, 1e-3, generator, noise=0.1)
        self.base_state = {k: v.clone() for k, v in self.backbone.state_dict().items()}
        self.heads = [_derived_head(self.base_head, task.name, task.num_classes) for task in self.tasks]

    def finetune(self, ctx, epochs: int, lr: float, optimizer: str):
        """Fine-tune the whole backbone on each task from theta_0; returns ``(theta_0 [P], theta_t [T, P], ev)``.

        Task ``t`` draws its minibatches from the stream ``("finetune", t)``: adding tasks or epochs leaves the
        earlier tasks' runs (and the first epochs) unchanged.
        """
        finetuned = []
        for t, task in enumerate(ctx.progress(self.tasks, description="fine-tuning tasks", total=len(self.tasks))):
            self.backbone.load_state_dict(self.base_state)
            _train(self.backbone, self.heads[t], torch.from_numpy(task.x_train), torch.from_numpy(task.y_train),
                   epochs, lr, ctx.torch_generator("finetune", t), optimizer=optimizer)
            finetuned.append({k: v.clone() for k, v in self.backbone.state_dict().items()})
        self.backbone.load_state_dict(self.base_state)
        layout = StateDictLayout.from_state_dict(self.base_state)
        ev = _Evaluator(self.backbone, layout, self.heads, self.tasks)
        return layout.flatten(self.base_state), layout.flatten_many(finetuned), ev


def _normalized(ev: _Evaluator, vectors, tasks_idx, reference: np.ndarray, split: str) -> np.ndarray:
    """Per-task accuracy / fine-tuned accuracy; ``vectors`` is one vector or a function task -> vector."""
    return np.array([ev.accuracy(vectors(t) if callable(vectors) else vectors, t, split) / reference[t]
                     for t in tasks_idx])


def _evaluate_count(ev: _Evaluator, base: torch.Tensor, tuned: torch.Tensor, individual: dict[str, np.ndarray],
                    num_tasks: int) -> tuple[dict[str, float], dict]:
    """All methods on the first ``num_tasks`` tasks; alpha and lambda_t chosen on validation."""
    idx = range(num_tasks)
    tuned = tuned[:num_tasks]
    val_ref, test_ref = individual["val"], individual["test"]

    def avg_val(vector):
        return float(_normalized(ev, vector, idx, val_ref, "val").mean())

    def task_val(task, vector):
        return ev.accuracy(vector, task, "val")

    tall = {name: TALLMasks(LAMBDAS, multitask=name).fit(base, tuned, score=task_val) for name in ("ta", "ties")}
    mergers = {
        "ta": TaskArithmetic(scaling=ALPHAS).fit(base, tuned, score=avg_val),
        "ties": TIESMerging(density=0.2, aggregation="mean", scaling=ALPHAS).fit(base, tuned, score=avg_val),
        "consensus_ta": ConsensusMerging(k=2, multitask="ta", scaling=ALPHAS).fit(base, tuned, tall["ta"].masks_,
                                                                                  score=avg_val),
        "consensus_ties": ConsensusMerging(k=2, multitask="ties", scaling=ALPHAS).fit(
            base, tuned, tall["ties"].masks_, score=avg_val),
    }
    normalized = {"zeroshot": _normalized(ev, base, idx, test_ref, "test")}
    normalized.update({name: _normalized(ev, m.merged_vector(), idx, test_ref, "test") for name, m in mergers.items()})
    for name, model in tall.items():
        normalized[f"tall_{name}"] = _normalized(ev, model.reconstruct, idx, test_ref, "test")
    prefix = f"t{num_tasks}_"
    metrics: dict[str, float] = {}
    for name in _METHODS:
        metrics[prefix + f"{name}_norm_acc"] = float(normalized[name].mean())
        metrics[prefix + f"{name}_acc"] = float((normalized[name] * test_ref[:num_tasks]).mean())
    for name in ("ta", "ties"):
        metrics[prefix + f"tall_{name}_min_norm_acc"] = float(normalized[f"tall_{name}"].min())
        metrics[prefix + f"tall_{name}_density"] = float(tall[name].masks_.float().mean())
    for name in ("ta", "ties", "consensus_ta", "consensus_ties"):
        metrics[prefix + f"{name}_alpha"] = mergers[name].scaling_
    stats = mask_statistics(tall["ta"].masks_)
    metrics[prefix + "catastrophic_frac"] = stats["catastrophic"]
    metrics[prefix + "selfish_frac"] = stats["selfish"]
    metrics[prefix + "general_frac"] = stats["general"]
    store = tall["ta"].compress()
    ideal = storage_bits(store.masks.num_params, num_tasks)
    metrics[prefix + "storage_ratio"] = store.nbits / store.separate_nbits
    metrics[prefix + "storage_ratio_formula"] = (2 * 32 + num_tasks) / (32 * num_tasks)
    metrics[prefix + "storage_ideal_ratio"] = ideal["ratio"]
    metrics[prefix + "compressed_kbits"] = store.nbits / 1e3
    metrics[prefix + "separate_kbits"] = store.separate_nbits / 1e3
    details = {"normalized": {k: v.tolist() for k, v in normalized.items()}, "histogram": stats["histogram"],
               "lambdas_ta": tall["ta"].lambdas_.tolist(), "lambdas_ties": tall["ties"].lambdas_.tolist()}
    return metrics, details


def _evaluate(base: torch.Tensor, tuned: torch.Tensor, ev: _Evaluator, counts: list[int]):
    """Individual accuracies, then every method for each T in ``counts`` (the first T tasks)."""
    individual = {split: np.array([ev.accuracy(tuned[t], t, split) for t in range(len(tuned))])
                  for split in ("val", "test")}
    metrics = {"individual_acc": float(individual["test"].mean()), "num_params": float(base.numel()),
               "tau_rel_norm": float((tuned - base).norm(dim=1).mean() / base.norm())}
    details = {"individual_test": individual["test"].tolist()}
    for count in counts:
        m, details[f"t{count}"] = _evaluate_count(ev, base, tuned, individual, count)
        metrics.update(m)
    return metrics, details


def _check_grid(name: str, values: list[int], low: int, high: int | None = None) -> list[int]:
    grid = sorted({int(v) for v in values})
    if not grid or grid[0] < low or (high is not None and grid[-1] > high):
        bound = f"between {low} and {high}" if high is not None else f">= {low}"
        raise ValueError(f"{name} must list integers {bound}, got {list(values)}")
    return grid


def _run_merging(ctx, name: str, source: str, task_counts: list[int], hidden: int, pretrain_epochs: int,
                 finetune_epochs: int, finetune_lr: float, finetune_optimizer: str) -> dict[str, float]:
    counts = _check_grid("task_counts", task_counts, 2, len(TASK_SPECS))
    pretrained = _Pretrained(ctx, source, counts[-1], hidden, pretrain_epochs)
    base, tuned, ev = pretrained.finetune(ctx, finetune_epochs, finetune_lr, finetune_optimizer)
    metrics, details = _evaluate(base, tuned, ev, counts)
    ctx.log(", ".join(f"{k}={v:.3f}" for k, v in metrics.items() if "_norm_acc" in k))
    ctx.artifact(f"{name}_details", {"tasks": list(TASK_SPECS[: counts[-1]]), **details})
    _figures(ctx, name, metrics, counts, details)
    return metrics


def _figures(ctx, name: str, metrics: dict[str, float], counts: list[int], details: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    for method in _METHODS:
        ax1.plot(counts, [100 * metrics[f"t{c}_{method}_norm_acc"] for c in counts], marker="o", label=method)
    ax1.set(xlabel="number of tasks T", ylabel="mean normalized test accuracy (%)", xticks=counts,
            title="Merging and TALL reconstruction vs. T")
    handles, labels = ax1.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(_METHODS), fontsize=8, frameon=False)
    fig.subplots_adjust(bottom=0.2)
    histogram = details[f"t{counts[-1]}"]["histogram"]
    ax2.bar(range(len(histogram)), histogram, color=["tab:red", "tab:orange"] + ["tab:blue"] * (len(histogram) - 2))
    ax2.set(xlabel="number of TALL masks (TA) selecting a weight", ylabel="fraction of weights",
            title=f"Mask overlap, T={counts[-1]} (red: catastrophic, orange: selfish)")
    ctx.figure(f"{name}_accuracy_and_overlap", fig)


_SMOKE = {"hidden": 32, "pretrain_epochs": 2, "finetune_epochs": 1, "seeds": 1}


@experiment(PAPER,
            quick={"source": "digits", "task_counts": [4, 8, 14], "seeds": 2},
            full={"source": "digits", "task_counts": [4, 8, 14], "seeds": 10},
            smoke={"source": "digits", "task_counts": [8, 14], **_SMOKE},
            threads=1)  # the MLP is tiny: intra-op threads only contend
def merging(ctx, source: str = "digits", task_counts: list[int] = (4, 8, 14), hidden: int = 256,
            pretrain_epochs: int = 40, finetune_epochs: int = 15, finetune_lr: float = 0.02,
            finetune_optimizer: str = "sgd") -> dict[str, float]:
    """One seed: individual, zero-shot, TA, TIES, TALL reconstruction and Consensus-TA/TIES on 4, 8 and 14 tasks.

    The seed fixes the data split, pre-training and fine-tuning; the T = 4 and 8 results use the first tasks of the
    14 fine-tuned ones. ``t{T}_tall_{ta,ties}_min_norm_acc`` is the worst task *of this seed*; the claim reads its
    mean over seeds (the worst task of a typical run), as the old in-function loop did.

    Measured (quick, runner seeds 0-1): storage ratio 0.1741 = (64+T)/(32T) exactly; selfish 28.7% and
    catastrophic 10.4% of the weights (T=14); worst-task TALL reconstruction only 0.35 (TA) and 0.61 (TIES) at T=8
    (mean over tasks 0.79 / 0.89), Consensus-TA 0.467 vs TA 0.507 at T=8, TALL-TA 0.78 mean at T=14. (Before the
    runner owned the seeds: 0.30 / 0.47 worst task, Consensus-TA 0.491 vs 0.507, selfish 29.6%, catastrophic
    10.1%.) Our task vectors are large (||tau_t|| / ||theta_0|| ~ 0.33, tau_rel_norm)
    and conflict: rotated, permuted and inverted inputs of an 8x8-pixel MLP share far less than CLIP's vision
    datasets do (finetune_strength follows the results as the task vectors shrink).
    """
    return _run_merging(ctx, "merging", source, task_counts, hidden, pretrain_epochs, finetune_epochs, finetune_lr,
                        finetune_optimizer)


@experiment(PAPER,
            quick={"source": "mnist1d", "task_counts": [8], "seeds": 1},
            full={"source": "mnist1d", "task_counts": [4, 8, 14], "seeds": 5},
            smoke={"source": "mnist1d", "task_counts": [8], **_SMOKE},
            threads=1)
def merging_mnist1d(ctx, source: str = "mnist1d", task_counts: list[int] = (8,), hidden: int = 256,
                    pretrain_epochs: int = 30, finetune_epochs: int = 10,
                    finetune_lr: float = 0.02, finetune_optimizer: str = "sgd") -> dict[str, float]:
    """One seed of the same comparison on tasks derived from MNIST-1D (generated offline), a second data source.

    On 1-D signals a "rotation" is a circular shift by a quarter of the length per 90 degrees.
    """
    return _run_merging(ctx, "merging_mnist1d", source, task_counts, hidden, pretrain_epochs, finetune_epochs,
                        finetune_lr, finetune_optimizer)


_STRENGTH_KEYS = ("individual_acc", "tau_rel_norm", "zeroshot_norm_acc", "ta_norm_acc", "ties_norm_acc",
                  "tall_ta_norm_acc", "tall_ties_norm_acc", "consensus_ta_norm_acc", "consensus_ties_norm_acc",
                  "tall_ta_min_norm_acc", "tall_ties_min_norm_acc")


@experiment(PAPER,
            quick={"epochs": [1, 3, 15], "seeds": 1},
            full={"epochs": [1, 2, 3, 5, 10, 15], "seeds": 5},
            smoke={"epochs": [1], "num_tasks": 2, "hidden": 16, "pretrain_epochs": 2, "seeds": 1},
            threads=1)
def finetune_strength(ctx, epochs: list[int] = (1, 3, 15), num_tasks: int = 8, hidden: int = 256,
                      pretrain_epochs: int = 40, finetune_lr: float = 0.02) -> dict[str, float]:
    """Ablation, one seed: TALL reconstruction and merging as fine-tuning moves further from theta_0 (digits).

    The seed pre-trains once; each entry of ``epochs`` fine-tunes every task from theta_0 for that many epochs (the
    same minibatch stream, so a longer run extends a shorter one) and evaluates every method (``e{E}_...``).

    Measured (quick, runner seed 0): from 1 to 15 epochs tau_rel_norm grows 0.17 -> 0.32 and the individual
    accuracy 0.66 -> 0.94; TALL-TA / TALL-TIES mean normalized accuracy 0.88 / 0.94 -> 0.78 / 0.89; Consensus-TA
    beats TA at 1 epoch (0.650 vs 0.576), not at 15 (0.494 vs 0.513). The previous code's seed had reached 1.03
    (TALL-TIES) at 1 epoch, so the 1-epoch numbers vary a lot between seeds.
    """
    grid = _check_grid("epochs", epochs, 1)
    if not 2 <= num_tasks <= len(TASK_SPECS):
        raise ValueError(f"num_tasks must be between 2 and {len(TASK_SPECS)}, got {num_tasks}")
    pretrained = _Pretrained(ctx, "digits", num_tasks, hidden, pretrain_epochs)
    out: dict[str, float] = {}
    for num_epochs in grid:
        base, tuned, ev = pretrained.finetune(ctx, num_epochs, finetune_lr, "sgd")
        metrics, _ = _evaluate(base, tuned, ev, [num_tasks])
        out.update({f"e{num_epochs}_{k}": metrics[k if k in metrics else f"t{num_tasks}_{k}"] for k in _STRENGTH_KEYS})
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for key in ("tall_ta_norm_acc", "tall_ties_norm_acc", "ta_norm_acc", "consensus_ta_norm_acc"):
        ax.plot([out[f"e{e}_tau_rel_norm"] for e in grid], [100 * out[f"e{e}_{key}"] for e in grid], marker="o",
                label=key.removesuffix("_norm_acc"))
    ax.set(xlabel="mean ||tau_t|| / ||theta_0||", ylabel="normalized test accuracy (%)",
           title=f"{num_tasks} tasks, fine-tuning epochs {grid}")
    ax.legend(fontsize=8)
    ctx.figure("finetune_strength", fig)
    return out


def _consensus_not_worse(m: dict[str, float], count: int) -> bool:
    return (m[f"t{count}_consensus_ta_norm_acc"] >= m[f"t{count}_ta_norm_acc"]
            and m[f"t{count}_consensus_ties_norm_acc"] >= m[f"t{count}_ties_norm_acc"])


CLAIMS = [
    Claim("TALL-mask reconstruction keeps at least 99% normalized accuracy on every task (8 tasks, TA and TIES "
          "multi-task vectors)",
          experiment=merging,
          check=lambda m: min(m["t8_tall_ta_min_norm_acc"], m["t8_tall_ties_min_norm_acc"]) >= 0.99,
          paper="> 99% of single-task accuracy retained (abstract; Table 2, ViT-B/32 8 tasks 99.x%)"),
    Claim("Storing theta_0 + tau_MTL + T bit masks instead of T checkpoints costs (2*32 + T)/(32*T) of the float32 "
          "storage (measured within 1%), while keeping at least 99% normalized accuracy (14 tasks)",
          experiment=merging,
          check=lambda m: (abs(m["t14_storage_ratio"] / m["t14_storage_ratio_formula"] - 1) <= 0.01
                           and m["t14_tall_ta_norm_acc"] >= 0.99),
          paper="20 tasks: 57 Gb -> 8.2 Gb with 99.7% of the performance (abstract)"),
    Claim("Consensus-TA >= TA and Consensus-TIES >= TIES in mean normalized accuracy, on 8 and on 14 tasks",
          experiment=merging,
          check=lambda m: _consensus_not_worse(m, 8) and _consensus_not_worse(m, 14),
          paper="Consensus improves TA and TIES for 8, 14 and 20 tasks (Table 3; +1 to +5 points)"),
    Claim("Selfish (one task) and catastrophic (no task) weights exist: each is more than 1% of the weights "
          "(14 tasks, TA masks)",
          experiment=merging,
          check=lambda m: m["t14_selfish_frac"] > 0.01 and m["t14_catastrophic_frac"] > 0.01,
          paper="Figure 3: a sizable share of weights is selected by no task or by exactly one task"),
    Claim("On MNIST-1D tasks, Consensus-TA >= TA and Consensus-TIES >= TIES (8 tasks)",
          experiment=merging_mnist1d,
          check=lambda m: _consensus_not_worse(m, 8),
          paper="Consensus improves TA and TIES (Table 3)"),
    Claim("With the smallest task vectors of the ablation (1 fine-tuning epoch, 8 tasks), TALL-mask reconstruction "
          "keeps at least 99% mean normalized accuracy with both the TA and the TIES multi-task vector",
          experiment=finetune_strength,
          check=lambda m: min(m["e1_tall_ta_norm_acc"], m["e1_tall_ties_norm_acc"]) >= 0.99,
          paper="> 99% of single-task accuracy retained (abstract), for CLIP task vectors that are small relative "
                "to theta_0"),
]
