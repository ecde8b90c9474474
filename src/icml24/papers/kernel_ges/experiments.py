"""kernel-ges experiments: GES with each score on the paper's synthetic and mixed benchmarks (one seed each)."""

from __future__ import annotations

import time
from functools import partial

import numpy as np

from icml24.causal import (
    GES,
    LearnedKernelScore,
    MarginalKernelScore,
    MedianKernelScore,
    arrow_f1,
    causallearn_ges,
    dag_to_cpdag,
    generate,
    normalized_shd,
    skeleton_f1,
)
from icml24.core import Null, Oracle, experiment, labelled, select

from . import PAPER

# "mi_adam": the learned score with the official Adam loop (200 epochs, lr 0.005) instead of our L-BFGS-B; on data
# with a discrete column the two part (issue #56: from the official 0.01 start, clamped to 0.2, L-BFGS-B stays at the
# clamp, Adam walks the child width up; tools/parity/kernel_ges_mixed.py), so the mixed experiment reports both at full
OURS = {"mi": LearnedKernelScore, "mi_adam": partial(LearnedKernelScore, optimizer="adam"),
        "marg": MarginalKernelScore, "median": MedianKernelScore}
PEERS = ("cl_cv", "cl_marginal")
BASELINES = ("cl_cv", "cl_marginal", "median")  # the median-heuristic scores


def _cap(max_parents: str) -> int | str | None:
    """The experiment's ``max_parents`` string: "half" (official int(d / 2)), "none", or a non-negative integer."""
    if max_parents in ("half", "none"):
        return None if max_parents == "none" else "half"
    if not max_parents.isdigit():
        raise ValueError(f"max_parents must be 'half', 'none' or a non-negative integer, got {max_parents!r}")
    return int(max_parents)


def _run_method(name: str, data, max_parents: int | str | None) -> tuple[np.ndarray, float]:
    """(CPDAG, CPU seconds of the search): process time, not wall time, so a shared machine does not inflate it."""
    start = time.process_time()
    if name == "empty":  # no search: the graph with no edges
        cpdag = np.zeros_like(data.dag)
    elif name == "truth":  # the oracle: the true DAG's equivalence class, all a score-based search can identify
        cpdag = dag_to_cpdag(data.dag)
    elif name in OURS:
        score = OURS[name]().fit(data.data, data.groups, discrete=data.discrete)
        cpdag = GES(score, max_parents=max_parents).fit().cpdag_
    else:
        cpdag, _ = causallearn_ges(data.data, score=name.removeprefix("cl_"), max_parents=max_parents)
    return cpdag, time.process_time() - start


# What the claims say the learned score beats, in its slot: Huang et al.'s CV generalized score (median-heuristic
# widths, causal-learn's defaults), the strongest baseline measured at quick; its numbers are read as mi_*.
CV_IN_LEARNED_SLOT = Null("causal-learn's CV generalized score (median-heuristic widths) in the learned score's slot",
                          {"learned_score": "cl_cv"})
# What a perfect search returns, in the learned score's slot: the true DAG's CPDAG (cheap: no search at all, but the
# baselines still run, so it costs their share of the quick run)
TRUE_CPDAG = Oracle("the true DAG's CPDAG in the learned score's slot", {"learned_score": "truth"})
SLOT_SCORES = ("mi", "marg", "median", "cl_cv", "cl_marginal", "empty", "truth")
VARIANTS = ("continuous", "mixed", "discrete")


QUICK_METHODS = ["mi", "median", "cl_cv", "cl_marginal"]  # Marg (300 Adam epochs per pair) only at full


@experiment(
    PAPER,
    null=CV_IN_LEARNED_SLOT,
    oracle=TRUE_CPDAG,
    quick={"num_variables": 5, "num_samples": 200, "densities": [0.3, 0.7], "graphs": 1, "seeds": 2,
           "methods": QUICK_METHODS},
    full={"num_variables": 6, "num_samples": 300, "densities": [0.3, 0.5, 0.7], "graphs": 2, "seeds": 5},
    smoke={"num_variables": 4, "num_samples": 40, "densities": [0.3, 0.7], "graphs": 1},
    threads=1,
)
def synthetic(ctx, num_variables: int = 6, num_samples: int = 300, densities: list[float] = (0.3, 0.5, 0.7),
              graphs: int = 1, variant: str = "continuous", methods: list[str] = ("mi", "marg", "median", "cl_cv",
                                                                                 "cl_marginal"),
              max_parents: str = "half", learned_score: str = "mi") -> dict[str, float]:
    """One seed: ``graphs`` random DAGs per density, every method's GES on the same data; skeleton F1, arrow F1,
    normalised SHD and seconds per search, per density (labelled: ``mi_f1[density=0.3]``) and averaged over all
    graphs (``mi_f1``). ``max_parents``: every search's parent cap, "half" (the official maxP = int(d / 2), also
    passed to causal-learn's ges), "none" or an integer.

    The regime is reported: the requested density, the measured edge fraction and n, and the normalised SHD of the
    empty graph (``empty_shd``, what a search must beat to have found anything).

    ``learned_score`` is the score run in the learned score's slot (its metrics are ``mi_*``): "mi" (the method),
    or a null: "cl_cv" (what the claims say it beats), "cl_marginal", "marg", "median", or "empty" (no edges), or
    the oracle "truth" (the true DAG's CPDAG). ``variant`` is the family's instance: the paper's data types
    ("continuous", "mixed": half the columns in 20 bins, "discrete": every column binned; the scores are told which).

    Seconds are CPU seconds of the search. The data-fit term is the official one; an earlier tr(A^-1 K_X) term made
    the median-width score return empty graphs, which is why the empty graph's SHD is reported beside every score.
    """
    return _benchmark(ctx, num_variables, num_samples, densities, graphs, variant, methods, max_parents,
                      learned_score)


def _benchmark(ctx, num_variables, num_samples, densities, graphs, variant, methods, max_parents,
               learned_score) -> dict[str, float]:
    """Every method's GES on the same generated graphs; metrics per density and over all graphs."""
    cap = _cap(max_parents)
    if learned_score not in SLOT_SCORES:
        raise ValueError(f"learned_score must be one of {', '.join(SLOT_SCORES)}, got {learned_score!r}")
    if variant not in VARIANTS:  # "multi" (multi-dimensional variables): causal-learn's baselines take one column each
        raise ValueError(f"variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
    metrics: dict[str, float] = {"num_samples": float(num_samples), "num_variables": float(num_variables)}
    totals: dict[str, list[float]] = {}
    for di, density in enumerate(densities):
        per: dict[str, list[float]] = {}
        for g in range(graphs):
            data = generate(num_variables, num_samples, density, variant=variant, random_state=ctx.rng("graph", di, g))
            per.setdefault("edge_fraction", []).append(data.density)
            per.setdefault("empty_shd", []).append(normalized_shd(data.dag, np.zeros_like(data.dag)))
            for name in methods:
                cpdag, seconds = _run_method(learned_score if name == "mi" else name, data, cap)
                for key, value in (("f1", skeleton_f1(data.dag, cpdag)), ("arrow_f1", arrow_f1(data.dag, cpdag)),
                                   ("shd", normalized_shd(data.dag, cpdag)), ("seconds", seconds)):
                    per.setdefault(f"{name}_{key}", []).append(value)
                ctx.log("density %g %s graph %d: F1 %.2f SHD %.3f %.1fs", density, name, g, per[f"{name}_f1"][-1],
                        per[f"{name}_shd"][-1], seconds)
        for key, values in per.items():
            metrics[labelled(key, density=density)] = float(np.mean(values))  # e.g. mi_f1[density=0.3]
            totals.setdefault(key, []).extend(values)
    for key, values in totals.items():
        metrics[key] = float(np.mean(values))
    if "cl_marginal_f1" in metrics:
        metrics["mi_minus_cl_marginal_f1"] = metrics["mi_f1"] - metrics["cl_marginal_f1"]
    return metrics


@experiment(
    PAPER,
    quick={"num_variables": 5, "num_samples": 200, "densities": [0.3, 0.7], "graphs": 1, "seeds": 2},
    full={"num_variables": 6, "num_samples": 300, "densities": [0.3, 0.5, 0.7], "graphs": 2, "seeds": 5,
          "methods": ["mi", "mi_adam", "median", "cl_marginal"]},
    smoke={"num_variables": 4, "num_samples": 40, "densities": [0.7], "graphs": 1},
    threads=1,
)
def mixed(ctx, num_variables: int = 6, num_samples: int = 300, densities: list[float] = (0.3, 0.5, 0.7),
          graphs: int = 1, methods: list[str] = ("mi", "median", "cl_marginal"),
          max_parents: str = "half") -> dict[str, float]:
    """One seed: the paper's mixed data (official ``Part2Discrete``: half the columns binned into 20 levels, the
    scores told which), the learned score against causal-learn's marginal-score GES and our median widths on the same
    graphs (issue #36: skeleton F1 of the learned score against causal-learn's marginal score over >= 4 graphs).
    ``mi_minus_cl_marginal_f1`` is the per-seed difference of mean skeleton F1. Full adds ``mi_adam`` (the learned
    score with the official Adam loop), which on these data keeps the true edges' gains that our L-BFGS-B loses
    from the official 0.01 child-width start (issue #56; the local gains are recorded in
    tests/fixtures/kernel_ges_mixed_local_gains.json by tools/parity/kernel_ges_mixed.py)."""
    return _benchmark(ctx, num_variables, num_samples, densities, graphs, "mixed", methods, max_parents, "mi")


def _share(gap: float, headroom: float) -> float:
    """The share of the best baseline's shortfall from F1 = 1 (``headroom``) that the learned score closes (1: a
    perfect search; <= 0: no better than the baseline); a perfect baseline leaves nothing to close (0, or -1 when the
    learned score is worse). Gaps and headrooms are means of F1 values in steps of 1/6 or finer, so 1e-9 is rounding."""
    if headroom > 1e-9:
        return gap / headroom
    return 0.0 if gap > -1e-9 else -1.0


@synthetic.summarizer
def _synthetic_summary(per_seed: list[dict[str, float]]) -> dict[str, float]:
    """The best median-heuristic baseline is the one with the highest mean F1 over all seeds and graphs; the gap
    per density is the learned score's F1 minus the best baseline's F1 at that density, the share that gap over the
    best baseline's shortfall from F1 = 1 there (``mi_f1_share[density=]``; the true CPDAG scores 1 everywhere)."""
    mean = {k: float(np.mean([m[k] for m in per_seed])) for k in per_seed[0]}
    baselines = [b for b in BASELINES if f"{b}_f1" in mean]
    best = max(baselines, key=lambda b: mean[f"{b}_f1"])
    out = {"best_baseline_f1": mean[f"{best}_f1"], "best_baseline_shd": mean[f"{best}_shd"],
           "mi_f1_gap": mean["mi_f1"] - mean[f"{best}_f1"], "mi_shd_gap": mean["mi_shd"] - mean[f"{best}_shd"],
           "best_baseline_index": float(BASELINES.index(best))}
    best_per = [(labels["density"], f1, max(mean[labelled(f"{b}_f1", **labels)] for b in baselines))
                for labels, f1 in select(mean, "mi_f1")]  # sorted by density
    gaps = [(density, f1 - best) for density, f1, best in best_per]
    shares = [(density, _share(f1 - best, 1.0 - best)) for density, f1, best in best_per]
    out.update({labelled("mi_f1_gap", density=density): gap for density, gap in gaps})
    out.update({labelled("mi_f1_share", density=density): share for density, share in shares})
    out["dense_mi_f1_gap"] = gaps[-1][1]
    out["dense_minus_sparse_gap"] = gaps[-1][1] - gaps[0][1]
    out["dense_minus_sparse_share"] = shares[-1][1] - shares[0][1]
    if "cl_cv_seconds" in mean and "mi_seconds" in mean:
        out["cv_over_mi_time"] = mean["cl_cv_seconds"] / max(mean["mi_seconds"], 1e-9)
    return out


