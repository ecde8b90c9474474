"""Sparsest Models Elude Pruning: An Expose of Pruning's Current Capabilities (Zhang & Papyan, ICML 2024).

On the Cubist Spiral, a combinatorial search over eligible weight masks (trained thousands at a time in one
batched MLP) finds very sparse networks that reach high accuracy; eight pruners at the same nonzero budget do not,
they get worse as the starting width grows, leave dead paths, and fail even from the search's width and init.
"""

from __future__ import annotations

import time

import numpy as np

from icml24.core import Claim, Paper, experiment
from icml24.pruning import (
    CombinatorialSearch,
    PrunerComparison,
    cubist_spiral,
    dead_path_counts,
    minimal_widths,
    search_space_size,
)

PAPER = Paper(
    slug="sparsest",
    title="Sparsest Models Elude Pruning: An Expose of Pruning's Current Capabilities",
    authors="Stephen Zhang, Vardan Papyan",
    venue="ICML 2024",
    code="https://github.com/stephenqz/sparsest",
    summary=(
        "A two-phase combinatorial search (minimal widths by neuron masking, then every eligible weight mask of "
        "increasing nonzero count, trained from random init) finds the sparsest 2-d1-d2-d3-1 MLPs that classify "
        "the Cubist Spiral; pruners (magnitude, GMP, IMP with rewinding, SNIP, iterative SNIP, FORCE, GraSP, "
        "SynFlow) at the same nonzero budget fail, more so from wider networks, leaving disconnected paths."
    ),
    deviations=[
        "quick trains on a 4,000-point Cubist Spiral (the exact curve, sampled coarsely) for 1,984 SGD steps "
        "instead of 50,000 points and 19,500 steps; full uses the paper's recipe.",
        "quick trains 32 random eligible masks per nonzero level, all 16 levels in one batched run, one seed, with "
        "one hyperparameter setting (lr 0.1, cosine); the paper trains all 25,992 mask triples with 6 settings.",
        "quick runs IMP for 3 rounds instead of 5 and scores the at-init criteria on 1,024 training points.",
        "ProsPr and RigL are not implemented; the other seven pruners and one-shot magnitude are.",
        "All networks of one run share the same minibatch order (the batched training), where the official code "
        "shuffles independently per run.",
        "Accuracy is on the training set, as in the paper (there is no test split).",
        "Quick trains about 2,000 SGD steps (the paper about 19,500), too few for even the dense 3-3-3 network to "
        "reach 95%, so every claim but the dead-path one is judged on the full setting only.",
    ],
)

RECIPE_QUICK = {"num_points": 4000, "epochs": 64, "lr": 0.1}


def _recipe(epochs: int, lr: float) -> dict:
    return {"epochs": epochs, "batch_size": 128, "lr": lr, "schedule": "cosine"}


@experiment(
    PAPER,
    quick={**RECIPE_QUICK, "max_masks_per_nnz": 32, "levels_per_run": 16, "phase1_grid": [2, 3], "seeds": 1},
    full={"num_points": 50_000, "epochs": 50, "lr": 0.1, "max_masks_per_nnz": 0, "inits": 2,
          "phase1_grid": list(range(1, 17)), "seeds": 1},
    smoke={"num_points": 400, "epochs": 2, "max_masks_per_nnz": 8, "levels_per_run": 2, "max_nnz": 14,
           "phase1_grid": [3],
           "fixed_init_methods": ["snip", "gmp"]},
    threads=1,
)
def search(ctx, widths: list[int] = (3, 3, 3), target: float = 0.95, num_points: int = 50_000, epochs: int = 50,
           lr: float = 0.1, inits: int = 1, max_masks_per_nnz: int = 0, levels_per_run: int = 1, max_nnz: int = 0,
           phase1_grid: list[int] = (1, 2, 3, 4), fixed_init_methods: list[str] = ("snip", "iter_snip", "force",
                                                                                    "grasp", "synflow", "gmp",
                                                                                    "magnitude", "imp"),
           imp_rounds: int = 3) -> dict[str, float]:
    """Phase 1 (minimal widths over phase1_grid^3, neurons masked in a width-16 network), phase 2 (the mask
    search at ``widths``, stopping at the first nonzero count that reaches ``target``), then the "fixed init"
    study: every pruner from the search winner's width and initialisation, at its nonzero count.

    The search's nonzero count includes the dense classifier (d3 weights), biases excluded ('Weight NNZ').

    Measured (quick, seed 0: 3,982 points, 1,984 SGD steps, 32 masks per level): no mask reaches 95%; the best is
    0.794 at 25 nonzeros (427 masks over 16 levels), phase 1 over {2, 3}^3 tops out at 0.650. From that mask's
    init, the pruners reach 0.50-0.80 (gap -0.005). The quick recipe is 10% of the paper's steps and does not
    train (3, 3, 3) networks, dense or sparse, past ~0.8: C1 and the fixed-init claim need `full`."""
    x, y = cubist_spiral(num_points)
    recipe = _recipe(epochs, lr)
    gen = ctx.torch_generator("search")
    metrics = {"target": target, "num_points": float(len(x)), "train_steps": float(epochs * (len(x) // 128)),
               "search_space": float(search_space_size(tuple(widths)))}
    if phase1_grid:
        phase1 = minimal_widths(x, y, target, list(phase1_grid), generator=ctx.torch_generator("phase1"), **recipe)
        best = phase1["widths"]
        metrics["phase1_reached"] = float(best is not None)
        metrics["phase1_best_accuracy"] = max(phase1["accuracy"].values())
        metrics["phase1_width_sum"] = float(sum(best)) if best else float(3 * max(phase1_grid) + 1)
    start = time.perf_counter()
    finder = CombinatorialSearch(tuple(widths), target, inits=inits, max_nnz=max_nnz or None,
                                 max_masks_per_nnz=max_masks_per_nnz or None, levels_per_run=levels_per_run, **recipe)
    finder.fit(x, y, generator=gen, progress=lambda nnz, n, acc: ctx.log("nnz %d: %d masks, best %.4f", nnz, n, acc))
    seconds = time.perf_counter() - start
    metrics.update({
        "search_reached": float(finder.reached_), "search_nnz": float(finder.nnz_),
        "search_accuracy": finder.accuracy_, "masks_evaluated": float(finder.masks_evaluated_),
        "search_seconds": seconds,
    })
    if len(set(widths)) == 1 and fixed_init_methods:
        w = int(widths[0])
        study = PrunerComparison((w,), finder.nnz_, tuple(fixed_init_methods), imp_rounds=imp_rounds, **recipe)
        study.fit(x, y, generator=ctx.torch_generator("fixed-init"), inits={w: finder.init_})
        accs = [study.accuracy_[(m, w)] for m in fixed_init_methods]
        metrics["fixed_init_success_rate"] = float(np.mean([a >= target for a in accs]))
        metrics["fixed_init_best_pruner_accuracy"] = max(accs)
        metrics["fixed_init_gap"] = finder.accuracy_ - max(accs)
        for m, a in zip(fixed_init_methods, accs):
            metrics[f"fixed_init_{m}_accuracy"] = a
    return metrics


@search.summarizer
def _search_summary(per_seed: list[dict[str, float]]) -> dict[str, float]:
    reached = [m["search_nnz"] for m in per_seed if m["search_reached"] > 0]
    return {"search_any_reached": float(bool(reached)),
            "search_min_nnz": float(min(reached)) if reached else float(min(m["search_nnz"] for m in per_seed) + 100),
            "search_best_accuracy": max(m["search_accuracy"] for m in per_seed)}


PRUNERS = ["snip", "iter_snip", "force", "grasp", "synflow", "gmp", "magnitude", "imp"]


@experiment(
    PAPER,
    quick={**RECIPE_QUICK, "widths": [3, 8, 32], "seeds": 3},
    full={"num_points": 50_000, "epochs": 50, "lr": 0.1, "widths": [3, 8, 16, 32, 64, 128, 256], "imp_rounds": 5,
          "seeds": 5},
    smoke={"num_points": 400, "epochs": 2, "widths": [3, 8], "methods": ["snip", "gmp", "imp"],
           "synflow_iterations": 5},
    threads=1,
)
def pruners(ctx, widths: list[int] = (3, 8, 32), nnz: int = 24, target: float = 0.95, num_points: int = 50_000,
            epochs: int = 50, lr: float = 0.1, imp_rounds: int = 3, methods: list[str] = tuple(PRUNERS),
            synflow_iterations: int = 100) -> dict[str, float]:
    """Every pruner at every width, one shared initialisation per width, pruned to ``nnz`` weights (classifier
    included) and trained on the search's recipe; success = training accuracy >= target. Dead paths per network:
    nonzero weights on no input-to-output path, and units left with weights but no input or no output.
    The dense network of each width is the regime check: if it misses the target, pruning is not to blame.

    Measured (quick, 3 seeds, budget 24): no pruner succeeds at any width (0/72); dense accuracy 0.566 / 0.799 /
    0.999 at widths 3 / 8 / 32, so only width 32 is trained to the target. Dead paths: 72% of pruned networks
    keep weights on no input-output path (mean 7.1); at width 32 SNIP, iterative SNIP, FORCE and one-shot magnitude
    usually leave all 24 weights dead (accuracy 0.5), SynFlow almost none, IMP 1-3."""
    x, y = cubist_spiral(num_points)
    study = PrunerComparison(tuple(widths), nnz, tuple(methods), imp_rounds=imp_rounds,
                             synflow_iterations=synflow_iterations, **_recipe(epochs, lr))
    study.fit(x, y, generator=ctx.torch_generator("pruners"))
    metrics = {"target": target, "nnz_budget": float(nnz), "num_points": float(len(x)),
               "train_steps": float(epochs * (len(x) // 128))}
    for w in widths:
        metrics[f"dense_w{w}_accuracy"] = study.accuracy_[("dense", w)]
        for m in methods:
            dead = dead_path_counts([mask.unsqueeze(0) for mask in study.masks_[(m, w)]])
            metrics[f"{m}_w{w}_accuracy"] = study.accuracy_[(m, w)]
            metrics[f"{m}_w{w}_success"] = float(study.accuracy_[(m, w)] >= target)
            metrics[f"{m}_w{w}_nnz"] = float(study.nnz_[(m, w)])
            metrics[f"{m}_w{w}_dead_weights"] = float(dead["dead_weights"][0])
            metrics[f"{m}_w{w}_dead_units"] = float(dead["dead_units"][0])
    return metrics


@pruners.summarizer
def _pruners_summary(per_seed: list[dict[str, float]]) -> dict[str, float]:
    keys = sorted({k[:-len("_success")] for k in per_seed[0] if k.endswith("_success")})
    widths = sorted({int(k.rsplit("_w", 1)[1]) for k in keys})
    mean = lambda key: float(np.mean([m[key] for m in per_seed]))  # noqa: E731
    out = {"max_success_rate": max(mean(f"{k}_success") for k in keys),
           "dead_path_fraction": float(np.mean([m[f"{k}_dead_weights"] > 0 for m in per_seed for k in keys])),
           "mean_dead_weights": float(np.mean([m[f"{k}_dead_weights"] for m in per_seed for k in keys])),
           "dense_min_accuracy_wide": min(mean(f"dense_w{w}_accuracy") for w in widths if w >= 8) if max(widths) >= 8
           else mean(f"dense_w{widths[-1]}_accuracy"),
           "dense_min_accuracy": min(mean(f"dense_w{w}_accuracy") for w in widths)}
    for w in widths:
        at = [k for k in keys if k.endswith(f"_w{w}")]
        out[f"success_rate_w{w}"] = float(np.mean([mean(f"{k}_success") for k in at]))
        out[f"pruned_accuracy_w{w}"] = float(np.mean([mean(f"{k}_accuracy") for k in at]))
    out["success_drop_narrow_to_wide"] = out[f"success_rate_w{widths[0]}"] - out[f"success_rate_w{widths[-1]}"]
    out["accuracy_drop_narrow_to_wide"] = out[f"pruned_accuracy_w{widths[0]}"] - out[f"pruned_accuracy_w{widths[-1]}"]
    return out


CLAIMS = [
    Claim(
        "The combinatorial search reaches >= 95% training accuracy with <= 35 nonzero weights",
        experiment=search,
        check=lambda m: m["search_any_reached"] >= 1 and m["search_min_nnz"] <= 35,
        paper="Sec. 3-4: ideal sparse networks (about 30 nonzeros at 95%) exist far below what pruners find",
        setting="full",
    ),
    Claim(
        "At that budget every pruner succeeds in <= 40% of seeds at every width, while the dense networks of "
        "width >= 8 reach the target (so the failures are pruning's)",
        experiment=pruners,
        check=lambda m: m["max_success_rate"] <= 0.4 and m["dense_min_accuracy_wide"] >= m["target"],
        paper="Fig. 1, Sec. 4: no pruner finds the sparsest networks",
        setting="full",
    ),
    Claim(
        "Over-parameterisation hurts: pruned accuracy and success fall from the narrowest to the widest start, "
        "with the recipe training the dense network of every width to the target",
        experiment=pruners,
        check=lambda m: (m["accuracy_drop_narrow_to_wide"] > 0 and m["success_drop_narrow_to_wide"] >= 0
                         and m["dense_min_accuracy"] >= m["target"]),
        paper="Sec. 4.2: pruning from wider networks performs worse",
        setting="full",
    ),
    Claim(
        "Pruned networks contain disconnected paths: >= 25% of pruned networks keep weights on no "
        "input-to-output path",
        experiment=pruners,
        check=lambda m: m["dead_path_fraction"] >= 0.25 and m["mean_dead_weights"] > 0,
        paper="Sec. 5: pruners leave disconnected paths",
    ),
    Claim(
        "Even from the search winner's width and initialisation, pruners succeed in <= 40% of cases and stay "
        "below the winner's accuracy",
        experiment=search,
        check=lambda m: (m["search_any_reached"] >= 1 and m["fixed_init_success_rate"] <= 0.4
                         and m["fixed_init_gap"] > 0),
        paper="Sec. 5: fixed-init runs (BENCH-95) still get stuck at suboptimal solutions",
        setting="full",
    ),
]

__all__ = ["PAPER", "CLAIMS", "search", "pruners"]
