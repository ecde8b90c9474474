"""Optimal Kernel Choice for Score Function-based Causal Discovery (Wang et al., ICML 2024).

GES with a generalized (RKHS) score whose kernel widths are learned by maximising a conditional marginal likelihood
plus a Jacobian term (the "MI" score), against the median-heuristic generalized scores of Huang et al. as
implemented in causal-learn (the CV and marginal-likelihood scores, run through causal-learn's own GES), the
paper's "Marg" ablation and a no-learning median-width version of our score, on the paper's synthetic benchmark.
"""

from __future__ import annotations

import time

import numpy as np

from icml24.causal import (
    GES,
    LearnedKernelScore,
    MarginalKernelScore,
    MedianKernelScore,
    arrow_f1,
    causallearn_ges,
    generate,
    normalized_shd,
    skeleton_f1,
)
from icml24.core import Claim, Null, Paper, Regime, experiment, labelled, select

PAPER = Paper(
    slug="kernel-ges",
    title="Optimal Kernel Choice for Score Function-based Causal Discovery",
    authors="Wenjie Wang, Biwei Huang, Feng Liu, Xinge You, Tongliang Liu, Kun Zhang, Mingming Gong",
    venue="ICML 2024",
    code="https://github.com/wenjiewang3/Optimal-Kernel-Choice-for-Score-Function-based-Causal-Discovery",
    summary=(
        "The generalized score of Huang et al. fixes its kernel widths by the median heuristic. The paper instead "
        "learns the parents' widths, the child's width (through the Jacobian of the feature map) and the noise "
        "variance by maximising the marginal likelihood of the child's kernel features for every (child, parents) "
        "pair that GES queries. We run GES with the learned score and the median-heuristic scores on random DAGs "
        "with nonlinear post-nonlinear relations and compare skeleton F1, arrow F1, normalised SHD and search time."
    ),
    deviations=[
        "Our GES is ours (causal-learn's ges takes no custom score); the peers run through causal-learn's own ges.",
        "The MI score's widths are optimised with L-BFGS-B capped at 30 iterations / 30 evaluations (ftol 1e-6) "
        "instead of 200 Adam epochs, to fit CPU time, on the closed-form gradient of the same objective; the "
        "official Adam loop is available (optimizer='adam') and equals the official code's to 1e-6 (parity fixture).",
        "The Marg ablation's local score is the official -log p divided by n^2 (the MI score's normalisation), a "
        "constant factor no GES step can see; its clamps and Adam loop (300 epochs) are the official ones.",
        "Every column is standardised before any score sees it (the official code feeds raw data).",
        "The generator applies its linear and trigonometric post-transforms to the noisy f(sum of parents); the "
        "official code applies them to the noiseless sum, overwriting f and the noise.",
        "SHD counts on 0/1 adjacencies (cdt's double_for_anticausal); the official code passes causal-learn's "
        "-1/1 matrices to cdt, which doubles every count.",
        "Every search, causal-learn's included, uses the official parent cap maxP = int(d / 2) with the official "
        "rule (an insertion into Y is tried while Y has <= maxP directed parents); our reading is that the paper's "
        "causal-learn baselines ran with it too.",
        "On data with any discrete column every child width starts at 0.01 (clamped to 0.2), as the official code "
        "does for its discrete and mixed datasets; our reading is that a user's discrete mask plays that flag's role.",
        "The +0.05 skeleton-F1 margin of the first claim is our own pre-study target, not a number from the paper.",
        "Quick runs 5 variables at n = 200 on 4 graphs (densities 0.3 and 0.7, 2 seeds) without the Marg ablation "
        "(300 Adam epochs per pair: about 45 s per search at n = 200; full runs it); full runs the paper's 6 "
        "variables at n = 300; no Sachs data (offline).",
    ],
)

OURS = {"mi": LearnedKernelScore, "marg": MarginalKernelScore, "median": MedianKernelScore}
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
SLOT_SCORES = ("mi", "marg", "median", "cl_cv", "cl_marginal", "empty")


QUICK_METHODS = ["mi", "median", "cl_cv", "cl_marginal"]  # Marg (300 Adam epochs per pair) only at full


@experiment(
    PAPER,
    null=CV_IN_LEARNED_SLOT,
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
    or a null: "cl_cv" (what the claims say it beats), "cl_marginal", "marg", "median", or "empty" (no edges).

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
    full={"num_variables": 6, "num_samples": 300, "densities": [0.3, 0.5, 0.7], "graphs": 2, "seeds": 5},
    smoke={"num_variables": 4, "num_samples": 40, "densities": [0.7], "graphs": 1},
    threads=1,
)
def mixed(ctx, num_variables: int = 6, num_samples: int = 300, densities: list[float] = (0.3, 0.5, 0.7),
          graphs: int = 1, methods: list[str] = ("mi", "median", "cl_marginal"),
          max_parents: str = "half") -> dict[str, float]:
    """One seed: the paper's mixed data (official ``Part2Discrete``: half the columns binned into 20 levels, the
    scores told which), the learned score against causal-learn's marginal-score GES and our median widths on the same
    graphs (issue #36: skeleton F1 of the learned score against causal-learn's marginal score over >= 4 graphs).
    ``mi_minus_cl_marginal_f1`` is the per-seed difference of mean skeleton F1."""
    return _benchmark(ctx, num_variables, num_samples, densities, graphs, "mixed", methods, max_parents, "mi")


@synthetic.summarizer
def _synthetic_summary(per_seed: list[dict[str, float]]) -> dict[str, float]:
    """The best median-heuristic baseline is the one with the highest mean F1 over all seeds and graphs; the gap
    per density is the learned score's F1 minus the best baseline's F1 at that density."""
    mean = {k: float(np.mean([m[k] for m in per_seed])) for k in per_seed[0]}
    baselines = [b for b in BASELINES if f"{b}_f1" in mean]
    best = max(baselines, key=lambda b: mean[f"{b}_f1"])
    out = {"best_baseline_f1": mean[f"{best}_f1"], "best_baseline_shd": mean[f"{best}_shd"],
           "mi_f1_gap": mean["mi_f1"] - mean[f"{best}_f1"], "mi_shd_gap": mean["mi_shd"] - mean[f"{best}_shd"],
           "best_baseline_index": float(BASELINES.index(best))}
    gaps = [(labels["density"], f1 - max(mean[labelled(f"{b}_f1", **labels)] for b in baselines))
            for labels, f1 in select(mean, "mi_f1")]  # sorted by density
    out.update({labelled("mi_f1_gap", density=density): gap for density, gap in gaps})
    out["dense_mi_f1_gap"] = gaps[-1][1]
    out["dense_minus_sparse_gap"] = gaps[-1][1] - gaps[0][1]
    if "cl_cv_seconds" in mean and "mi_seconds" in mean:
        out["cv_over_mi_time"] = mean["cl_cv_seconds"] / max(mean["mi_seconds"], 1e-9)
    return out


TIE = 1e-9  # F1 gaps closer than this are equal (means of a few F1 values in steps of 1/6 or 1/9)

# Runtime is a reported metric (seconds per search of every method, cv_over_mi_time), not a claim: the paper makes no
# speed claim; issue 21 asks for runtime to be reported against causal-learn's CV score.
CLAIMS = [
    Claim(
        "The learned-kernel score's mean skeleton F1 is >= the best median-heuristic baseline's + 0.05 (our own "
        "pre-study target, not the paper's number; best of causal-learn CV, causal-learn marginal, our median-width "
        "score), and its normalised SHD is no worse",
        experiment=synthetic,
        check=lambda m: m["mi_f1_gap"] >= 0.05 and m["mi_shd_gap"] <= 0.0,
        paper="Tables 1-2 / TL;DR: the learned kernel beats the median-heuristic generalized scores",
    ),
    Claim(
        "On the densest graphs the learned score's F1 beats the best median-heuristic baseline's, by more than its "
        "gap on the sparsest graphs",
        experiment=synthetic,
        # equal gaps (a difference at rounding, 1e-16 at quick) are no advantage "especially on dense graphs"
        check=lambda m: m["dense_mi_f1_gap"] > 0.0 and m["dense_minus_sparse_gap"] > TIE,
        paper="TL;DR: the learned kernel beats the median-heuristic scores, especially on dense graphs",
    ),
]

REGIMES = [
    Regime("Normalised SHD of the empty graph (no search) beside the learned score's and the best baseline's",
           experiment=synthetic, metrics=["empty_shd", "mi_shd", "best_baseline_shd"],
           paper="issue #36: with the old data-fit term the empty graph scored 0.23, the learned score 0.22"),
    Regime("The median-width baseline at full strength: its skeleton F1 and SHD (non-empty graphs on data with "
           "signal) beside the empty graph's SHD",
           experiment=synthetic, metrics=["median_f1", "median_shd", "empty_shd"],
           paper="issue #36: with the old data-fit term the median widths returned empty graphs"),
    Regime("Mixed data (half the columns binned, official Part2Discrete): skeleton F1 of the learned score, "
           "causal-learn's marginal-score GES and the median widths, and the learned-minus-marginal difference",
           experiment=mixed, metrics=["mi_f1", "cl_marginal_f1", "median_f1", "mi_minus_cl_marginal_f1", "mi_shd",
                                      "cl_marginal_shd", "empty_shd"],
           paper="the paper's discrete/mixed experiments; issue #36 acceptance: learned >= causal-learn marginal"),
]
