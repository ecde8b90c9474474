"""Sparsest Models Elude Pruning: An Expose of Pruning's Current Capabilities (Zhang & Papyan, ICML 2024).

On the Cubist Spiral, a combinatorial search over eligible weight masks (trained thousands at a time in one
batched MLP) finds very sparse networks that reach high accuracy; ten pruners at the same nonzero budget do not,
they get worse as the starting width grows, leave dead paths, and fail even from the search's width and init.
"""

from icml24.core import Paper

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
        "SynFlow, ProsPr, RigL) at the same nonzero budget fail, more so from wider networks, leaving disconnected "
        "paths."
    ),
    deviations=[
        "quick trains on a 10,000-point Cubist Spiral (the exact curve, sampled coarsely) for 4,928 SGD steps "
        "(64 epochs, batch 128) instead of 50,000 points and 19,500 steps; chosen because the dense networks reach "
        "the target as often as under the paper's recipe (width 8: 6/8 inits in both), full uses the paper's recipe.",
        "The search trains a random subset of each nonzero level's eligible masks with one setting (lr 0.1, cosine): "
        "64 masks x 4 inits at quick, every mask x 2 inits at full, where the paper trains all 25,992 triples with 6 "
        "settings; quick's 64 x 4 was chosen on seeds 0-4 (the weakest strength tried that passed all five; 64 x 2 "
        "passed three) before held-out seeds 7-9 were run (our reading of the paper's exhaustive search as 'strong "
        "enough to find the winner').",
        "The pruners get the official 9 (lr, schedule) settings, but each try keeps the setting of best accuracy on "
        "2,000 validation points at random positions along the same curve (the paper picks on the training points, "
        "where accuracy is also reported); the pruner claims count a success only on seeds whose dense network of "
        "that width reached the target (a per-seed guard; the paper has none).",
        "The pruners are judged at the nonzero count the search found for the same seed (the paper compares at "
        "fixed budgets 15-65); the budget study gives each pruner as many trained networks as the search trained "
        "at that level (tries x 9 settings), and gaps count beyond 2 binomial standard errors of the points.",
        "Fixed init compares each pruner's one network from the winner's init with the search's median mask at "
        "that level (and shows the gap to the winner), a Regime: the paper compares it with the winner alone.",
        "quick runs IMP for 3 rounds instead of 5 and scores SNIP on one minibatch of 128 and GraSP on 25 points "
        "per class at temperature 200 (as the official code) out of 1,024 shuffled training points; iterative "
        "SNIP, FORCE and ProsPr score on those 1,024 (the official FORCE averages gradients over every minibatch).",
        "All networks of one run share the same minibatch order (the batched training), where the official code "
        "shuffles independently per run.",
        "RigL's update steps also take their SGD step (the batch shares one optimizer), where the official "
        "scheduler skips it, and its ERK layer counts are rounded to meet the budget exactly.",
        "Every pruner keeps exactly the budget: the official magnitude pruning keeps 23 of 24 (a strict threshold), "
        "the official GMP schedule ends at 22 (it runs past its last event, where (1 - t)^3 < 0) and ProsPr keeps "
        "25 (a rounded keep fraction); both values are in tests/parity/sparsest.json.",
        "Accuracy is on the training set, as in the paper (there is no test split).",
        "The equal-compute claim (GMP walking the search's nonzero levels with as many trained networks per level, "
        "issue #56) and its null (SNIP in the search's slot) are ours, as are the instance family and the oracle, "
        "a recorded 17-nonzero network that GMP found (a quick-strength search found 22 at best).",
        "The width claim compares the narrowest and widest widths whose dense network reaches the target on at "
        "least two seeds, since the dense 3-3-3 network does not reach 95% from a random init (best 0.87 of 8 "
        "inits at the paper's recipe).",
    ],
)

from . import claims, experiments  # noqa: E402  (experiments register on PAPER, then the claims on them)
from .claims import CLAIMS, REGIMES  # noqa: E402

__all__ = ["PAPER", "CLAIMS", "REGIMES", "claims", "experiments"]
