"""The TALL-masks paper's evaluation protocol for any model: merge, reconstruct and score by normalized accuracy.

``accuracy(vector, task, split)`` scores a flat weight vector on one task's ``"val"`` or ``"test"`` split; from the
pre-trained ``theta_0 [P]`` and fine-tuned ``theta_t [T, P]``, ``evaluate_merging`` fits, for the first ``T'``
tasks of each count ``T'``, Task Arithmetic and TIES (alpha on validation), TALL masks on the TA and TIES multi-task
vectors (lambda_t per task on validation) and Consensus-TA / TIES (k = 2), and reports test accuracy divided by
the fine-tuned model's (the paper's normalized accuracy, Sec. 5).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from icml24._random import RandomState, spawn, torch_generator

from .consensus import ConsensusMerging, mask_statistics
from .regime import task_vector_statistics
from .tall_masks import TALLMasks, random_masks_like
from .task_arithmetic import TaskArithmetic
from .task_vectors import TaskVectors
from .ties import TIESMerging

ALPHAS = tuple(round(0.1 * i, 1) for i in range(1, 11))
LAMBDAS = (0.2, 0.3, 0.4, 0.5, 0.6)
MASKS = ("tall", "none", "random")  # TALL masks, or a null in their slot
METHODS = ("zeroshot", "ta", "ties", "tall_ta", "tall_ties", "consensus_ta", "consensus_ties")
Accuracy = Callable[[torch.Tensor, int, str], float]


def normalized_accuracy(accuracy: Accuracy, vectors, tasks, reference: np.ndarray, split: str) -> np.ndarray:
    """Per-task accuracy / fine-tuned accuracy; ``vectors`` is one vector or a function task -> vector."""
    return np.array([accuracy(vectors(t) if callable(vectors) else vectors, t, split) / max(reference[t], 1e-12)
                     for t in tasks])


class _Unmasked:
    """The null of the reconstruction claims in TALL masks' slot: the multi-task merge (alpha on validation) for
    every task, no mask (all ones, so Consensus keeps every weight)."""

    def __init__(self, merger, tall: TALLMasks):
        self.masks_, self.lambdas_, self.merged = torch.ones_like(tall.masks_), tall.lambdas_, merger.merged_vector()

    def reconstruct(self, task: int) -> torch.Tensor:
        return self.merged


def regime_metrics(base: torch.Tensor, tuned: torch.Tensor) -> tuple[dict[str, float], dict]:
    """The regime the claims depend on: size, alignment and concentration of the task vectors."""
    stats = task_vector_statistics(base, tuned)
    metrics = {"tau_rel_norm_max": float(max(stats["rel_norm"])), "tau_mean_abs_cos": stats["mean_abs_cos"],
               **{f"tau_{k}": float(np.mean(stats[k])) for k in ("rel_norm", "energy_top1", "energy_top5", "kurtosis")}}
    return metrics, stats


def evaluate_count(accuracy: Accuracy, base: torch.Tensor, tuned: torch.Tensor | TaskVectors,
                   individual: dict[str, np.ndarray],
                   num_tasks: int, masks: str = "tall", random_state: RandomState = None,
                   alphas=ALPHAS, lambdas=LAMBDAS, consensus_k: int = 2) -> tuple[dict[str, float], dict]:
    """Every method on the first ``num_tasks`` tasks (metric names without a prefix). ``masks`` puts a null in TALL
    masks' slot: ``"none"`` (the merge itself) or ``"random"`` (TALL's per-task count at random places, drawn
    from ``random_state``); ``consensus_k`` is Consensus's k (2 in the paper; above T it keeps no weight).
    ``tuned``: ``theta_t [T, P]`` or their ``TaskVectors``; every merger shares one task-vector tensor."""
    if masks not in MASKS:
        raise ValueError(f"masks must be one of {MASKS}, got {masks!r}")
    idx = range(num_tasks)
    # one [T', P] task-vector tensor for all six mergers (each keeps a view, none copies)
    tuned = tuned[:num_tasks] if isinstance(tuned, TaskVectors) else TaskVectors(base, tuned[:num_tasks])
    val_ref, test_ref = individual["val"], individual["test"]
    avg_val = lambda vector: float(normalized_accuracy(accuracy, vector, idx, val_ref, "val").mean())  # noqa: E731
    task_val = lambda task, vector: accuracy(vector, task, "val")  # noqa: E731
    fitted = {name: TALLMasks(lambdas, multitask=name).fit(base, tuned, score=task_val) for name in ("ta", "ties")}
    mergers = {"ta": TaskArithmetic(scaling=alphas).fit(base, tuned, score=avg_val),
               "ties": TIESMerging(density=0.2, aggregation="mean", scaling=alphas).fit(base, tuned, score=avg_val)}
    generator = torch_generator(random_state) if masks == "random" else None
    tall = dict(fitted) if masks != "none" else {n: _Unmasked(mergers[n], t) for n, t in fitted.items()}
    for model in fitted.values() if masks == "random" else ():  # same per-task count, random place
        model.masks_ = random_masks_like(model.masks_, generator)  # one stream for both
    for name in ("ta", "ties"):  # Consensus merging: m_cons = 1{sum_t m_t >= k} on tau_MTL
        mergers[f"consensus_{name}"] = ConsensusMerging(k=consensus_k, multitask=name, scaling=alphas).fit(
            base, tuned, tall[name].masks_, score=avg_val)
    normalized = {"zeroshot": normalized_accuracy(accuracy, base, idx, test_ref, "test")}
    normalized.update({n: normalized_accuracy(accuracy, m.merged_vector(), idx, test_ref, "test")
                       for n, m in mergers.items()})
    for name, model in tall.items():
        normalized[f"tall_{name}"] = normalized_accuracy(accuracy, model.reconstruct, idx, test_ref, "test")
    metrics: dict[str, float] = {}
    for name in METHODS:
        metrics[f"{name}_norm_acc"] = float(normalized[name].mean())
        metrics[f"{name}_acc"] = float((normalized[name] * test_ref[:num_tasks]).mean())
    for name in ("ta", "ties"):
        metrics[f"tall_{name}_min_norm_acc"] = float(normalized[f"tall_{name}"].min())
        metrics[f"tall_{name}_density"] = float(tall[name].masks_.float().mean())
    for name in ("ta", "ties", "consensus_ta", "consensus_ties"):
        metrics[f"{name}_alpha"] = mergers[name].scaling_
    stats = mask_statistics(tall["ta"].masks_)
    metrics.update({f"{kind}_frac": stats[kind] for kind in ("catastrophic", "selfish", "general")})
    store = fitted["ta"].compress()  # theta_0, tau_MTL and T packed bit masks against T float32 checkpoints
    metrics["storage_ratio"] = store.nbits / store.separate_nbits
    details = {"normalized": {k: v.tolist() for k, v in normalized.items()}, "histogram": stats["histogram"],
               "lambdas_ta": tall["ta"].lambdas_.tolist(), "lambdas_ties": tall["ties"].lambdas_.tolist()}
    return metrics, details


def evaluate_merging(accuracy: Accuracy, base: torch.Tensor, tuned: torch.Tensor, counts: list[int],
                     masks: str = "tall", random_state: RandomState | Callable[[int], RandomState] = None,
                     alphas=ALPHAS, lambdas=LAMBDAS, consensus_k: int = 2) -> tuple[dict[str, float], dict]:
    """Regime metrics, individual and zero-shot accuracies, then every method for each task count in ``counts``.

    Metrics of count ``T'`` are named ``t{T'}_<name>``; those of the largest count also without the prefix, so a
    claim reads the largest count a setting ran. The random masks of count ``counts[i]`` are drawn from
    ``random_state(count)`` when it is a callable (a caller's named sub-stream), else from the ``i``-th child of
    ``spawn(random_state, len(counts))``.
    ``{kind}_frac_growth`` (largest minus smallest count) and ``{kind}_frac_min_step`` (smallest change between
    consecutive counts) say how the catastrophic and selfish shares move with the number of tasks."""
    counts = check_grid("counts", counts, 2, len(tuned))
    individual = {split: np.array([accuracy(tuned[t], t, split) for t in range(counts[-1])])
                  for split in ("val", "test")}
    zeroshot = {split: np.array([accuracy(base, t, split) for t in range(counts[-1])]) for split in ("val", "test")}
    shared = TaskVectors(base, tuned[:counts[-1]])  # tau computed once; each count and merger reads a view
    regime, stats = regime_metrics(base, shared)
    metrics = {"individual_acc": float(individual["test"].mean()), "zeroshot_acc": float(zeroshot["test"].mean()),
               "individual_val_acc": float(individual["val"].mean()), "zeroshot_val_acc": float(zeroshot["val"].mean()),
               # how many tasks fine-tuning leaves at or below their zero-shot head on validation (0 when it learns)
               "tasks_not_above_zeroshot_val": float((individual["val"] <= zeroshot["val"]).sum()),
               "num_params": float(base.numel()), "num_tasks": float(counts[-1]), **regime}
    details = {f"{name}_{split}": values[split].tolist() for name, values in (("individual", individual),
                                                                                ("zeroshot", zeroshot))
               for split in ("val", "test")}
    details["regime"] = stats
    streams = [random_state(c) for c in counts] if callable(random_state) else spawn(random_state, len(counts))
    for count, stream in zip(counts, streams):
        m, details[f"t{count}"] = evaluate_count(accuracy, base, shared, individual, count, masks, stream, alphas,
                                                 lambdas, consensus_k)
        metrics.update({f"t{count}_{k}": v for k, v in m.items()})
    metrics.update(m)  # the largest count, unprefixed
    for kind in ("catastrophic", "selfish"):
        shares = [metrics[f"t{count}_{kind}_frac"] for count in counts]
        metrics[f"{kind}_frac_growth"] = shares[-1] - shares[0]
        metrics[f"{kind}_frac_min_step"] = float(min(np.diff(shares), default=0.0))
    return metrics, details


def check_grid(name: str, values, low: int, high: int | None = None) -> list[int]:
    """Sorted distinct ints of ``values``, each in ``[low, high]``, else ``ValueError`` naming ``name``."""
    grid = sorted({int(v) for v in values})
    if not grid or grid[0] < low or (high is not None and grid[-1] > high):
        bound = f"between {low} and {high}" if high is not None else f">= {low}"
        raise ValueError(f"{name} must list integers {bound}, got {list(values)}")
    return grid
