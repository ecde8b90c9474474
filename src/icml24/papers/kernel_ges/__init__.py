"""Optimal Kernel Choice for Score Function-based Causal Discovery (Wang et al., ICML 2024).

GES with a generalized (RKHS) score whose kernel widths are learned by maximising a conditional marginal likelihood
plus a Jacobian term (the "MI" score), against the median-heuristic generalized scores of Huang et al. as
implemented in causal-learn (the CV and marginal-likelihood scores, run through causal-learn's own GES), the
paper's "Marg" ablation and a no-learning median-width version of our score, on the paper's synthetic benchmark.
"""

from icml24.core import Paper

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
        "From that start our L-BFGS-B stops at the 0.2 clamp (the thresholded Jacobian term's value is lowest there "
        "while its gradient points to wider widths) where the official Adam loop walks the child width up to about "
        "0.7, so told which columns are discrete our learned score loses the true edges' local gains on mixed data "
        "(issue #56, two 6-variable graphs at n = 300: 1.68 and 0.06 summed over the true edges, against 2.62 and "
        "2.58 with the Adam loop, 3.67 and 3.31 not told, 1.76 and 0.51 for the official code on its raw data; "
        "tests/fixtures/kernel_ges_mixed_local_gains.json), and the mixed experiment's full setting reports both.",
        "The +0.05 skeleton-F1 margin of the first claim is our own pre-study target, not a number from the paper.",
        "The dense-graph claim compares the share of the best baseline's shortfall from F1 = 1 that the learned score "
        "closes on the densest and on the sparsest graphs, not the raw gaps, since a perfect search's raw gap is that "
        "shortfall (the true CPDAG failed the raw comparison at smoke, the baselines being better on dense graphs).",
        "Quick runs 5 variables at n = 200 on 4 graphs (densities 0.3 and 0.7, 2 seeds) without the Marg ablation "
        "(300 Adam epochs per pair: about 45 s per search at n = 200; full runs it); full runs the paper's 6 "
        "variables at n = 300; no Sachs data (offline).",
    ],
)

from . import claims, experiments  # noqa: E402  (experiments register on PAPER, then the claims on them)
from .claims import CLAIMS, REGIMES  # noqa: E402

__all__ = ["PAPER", "CLAIMS", "REGIMES", "claims", "experiments"]
