"""Optimal Batched Linear Bandits (E4), Ren, Jin & Xu, ICML 2024: E4 beside the batched and sequential baselines.

E4 explores on a D-optimal design, pulls the regret lower bound's optimal allocation, and commits after a Chernoff
stopping test (3 batches) or falls back to phased elimination. We run it beside PhaElimD, rs-OFUL and EndOA (and the
fully sequential LinUCB / LinTS) on End of Optimism and random instances: regret, batches, regret / log T against
the horizon, and when the stopping test passes.
"""

from icml24.core import Paper

PAPER = Paper(
    slug="e4",
    title="Optimal Batched Linear Bandits",
    authors="Xuanfei Ren, Tianyuan Jin, Pan Xu",
    venue="ICML 2024",
    code="https://github.com/panxulab/optimal-batched-linear-bandits",
    summary=(
        "E4 (Explore, Estimate, Eliminate, Exploit) explores on a D-optimal design, pulls the optimal allocation of "
        "the regret lower bound ~alpha log T times, and commits after a Chernoff stopping test (3 batches), or else "
        "falls back to phased elimination. We run E4, PhaElimD, rs-OFUL and EndOA (and LinUCB / LinTS) on the "
        "paper's End of Optimism and random instances, in batches, and check regret, batches and the stopping test."
    ),
    deviations=[
        "The D-optimal design uses Frank-Wolfe with away steps stopped at the Kiefer-Wolfowitz bound; the official "
        "plain Frank-Wolfe (stopped when g moves by < 1e-4) leaves 2-3 pulls on every arm off the design's support "
        "where ours gives 0, and the support counts differ by up to 3 of about 100 (parity fixture "
        "tests/parity/e4.json).",
        "The allocation (Algorithm 1, step 2) is solved exactly by a numpy saddle-point solver instead of cvxpy/SCS "
        "at eps=1e-2, whose allocations are infeasible and under-explore.",
        "A batch that overshoots the horizon is cut in proportion (truncation='proportional'), not in arm order as "
        "the official loop does (truncation='in_order' restores it).",
        "E4's gamma defaults to 1 (T_3 = (log T)^2 < T; the asymptotic analysis needs only gamma > 0) instead of the "
        "official 10, whose batch 3 ((log T)^11 pulls) is longer than any horizon, so the elimination phase never "
        "ran; the official setting stays available as algorithm 'e4-gamma10', and the 3-batch claim is judged "
        "with it because with gamma = 1 the batch-2 cap (log T)^2 keeps the stopping test from passing at any "
        "horizon we can run.",
        "The paper's second exploration rate (O(log T) batches) is implemented as our reading, T_l = 4^l d log(K T^2) "
        "so that eps_l = 2^{-l} (algorithm 'e4-instance'); the minimax rate T_l = T^{1 - 2^{-l}} is the official "
        "code's.",
        "Random instances are run under two protocols: the official arm order with in-order truncation (what the "
        "paper's figure measured) and the arms shuffled per seed (what a user gets); claims read the shuffled one.",
        "rs-OFUL and EndOA's recovery use the exact V^{-1}, without the official code's 1e-5 I fudge.",
        "The batch claim asks for at most 3 batches in 90% of runs (the paper's 'only 3 batches'), not exactly 3: "
        "the oracle (the optimal arm every round) commits in 1; E4 ends within 3 only when its test passes, then in 3.",
        "The quick setting runs fewer seeds (5 on End of Optimism, 3 on random instances) than the paper's 10, and "
        "sequential LinUCB/LinTS only where T <= sequential_max_horizon.",
    ],
)

from . import claims, experiments  # noqa: E402  (experiments register on PAPER, then the claims on them)
from .claims import CLAIMS, REGIMES  # noqa: E402

__all__ = ["PAPER", "CLAIMS", "REGIMES", "claims", "experiments"]
